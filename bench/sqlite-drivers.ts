// node:sqlite against better-sqlite3 for the embedded store, in one run, through the same seam the store
// uses (src/store/sqlite-driver.ts), on a file set up as the store sets it (WAL, synchronous=FULL):
//   - append: the store's append transaction (IMMEDIATE; bump the conversation's counter RETURNING it,
//     insert the entry), one call timed at a time: p50 and p99;
//   - read: pages of 100 entries after a random seq, for READ_MS: rows per second.
// Rounds alternate the drivers so a busy machine weighs on both alike. Ratios are better-sqlite3 ÷ node:sqlite
// for latencies and node:sqlite ÷ better-sqlite3 for throughput (above 1: node:sqlite is better).
// Usage (Node >= 22.13; better-sqlite3 built for that Node, e.g. by `npm i --prefix DIR better-sqlite3`):
//   node --import tsx bench/sqlite-drivers.ts --better-sqlite3 DIR/node_modules/better-sqlite3 [--quick]

import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { fromBetterSqlite3, openSqlite, type SqliteDatabase, type SqliteDriverName } from '../src/store/sqlite-driver.ts';
import { fmt, percentile, table } from './lib/stats.ts';

const quick = process.argv.includes('--quick');
const dirIndex = process.argv.indexOf('--better-sqlite3');
const betterDir = dirIndex > 0 ? process.argv[dirIndex + 1] : undefined;
const ROUNDS = quick ? 1 : 3;
const APPENDS = quick ? 300 : 2000;
const READ_MS = quick ? 300 : 2000;
const PAGE = 100;
const PAYLOAD = JSON.stringify({ text: 'x'.repeat(400), tool: 'edit', path: 'src/a.ts' });

function open(driver: SqliteDriverName, file: string): SqliteDatabase {
  if (driver === 'node:sqlite' || betterDir === undefined) return openSqlite(file, { busyTimeoutMs: 5000, driver });
  const Database = createRequire(import.meta.url)(path.resolve(betterDir)) as typeof BetterSqlite3;
  return fromBetterSqlite3(new Database(file, { timeout: 5000 }));
}

interface Sample { appendUs: number[]; readRowsPerS: number[] }

function round(driver: SqliteDriverName, sample: Sample): void {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'superpi-sqlite-bench-'));
  const db = open(driver, path.join(dir, 'bench.db'));
  try {
    if (db.pragma('journal_mode = WAL') !== 'wal') throw new Error(`${driver}: no WAL`);
    db.pragma('synchronous = FULL');
    db.exec(`CREATE TABLE conversations (id TEXT PRIMARY KEY, last_seq INTEGER NOT NULL, updated_at INTEGER NOT NULL) STRICT;
      CREATE TABLE entries (conversation_id TEXT NOT NULL, seq INTEGER NOT NULL, time INTEGER NOT NULL, type TEXT NOT NULL, payload TEXT NOT NULL, PRIMARY KEY (conversation_id, seq)) STRICT;
      INSERT INTO conversations VALUES ('c1', 0, 0);`);
    const nextSeq = db.prepare<[{ time: number; id: string }], { last_seq: number }>('UPDATE conversations SET last_seq = last_seq + 1, updated_at = max(updated_at, @time) WHERE id = @id RETURNING last_seq');
    const insert = db.prepare<[string, number, number, string, string]>('INSERT INTO entries (conversation_id, seq, time, type, payload) VALUES (?, ?, ?, ?, ?)');
    const append = db.transaction((id: string, time: number) => {
      const row = nextSeq.get({ time, id });
      if (row === undefined) throw new Error('no conversation');
      insert.run(id, row.last_seq, time, 'model', PAYLOAD);
    });
    for (let i = 0; i < APPENDS; i++) {
      const t0 = process.hrtime.bigint();
      append.immediate('c1', i);
      sample.appendUs.push(Number(process.hrtime.bigint() - t0) / 1000);
    }
    const page = db.prepare<[string, number, number], { seq: number; payload: string }>('SELECT seq, time, type, payload FROM entries WHERE conversation_id = ? AND seq > ? ORDER BY seq LIMIT ?');
    let rows = 0;
    const start = performance.now();
    while (performance.now() - start < READ_MS) rows += page.all('c1', Math.floor(Math.random() * (APPENDS - PAGE)), PAGE).length;
    sample.readRowsPerS.push(rows / ((performance.now() - start) / 1000));
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const drivers: SqliteDriverName[] = ['node:sqlite', 'better-sqlite3'];
const samples = new Map<SqliteDriverName, Sample>(drivers.map((d) => [d, { appendUs: [], readRowsPerS: [] }]));
for (let r = 0; r < ROUNDS; r++) {
  for (const d of r % 2 === 0 ? drivers : [...drivers].reverse()) round(d, samples.get(d) ?? { appendUs: [], readRowsPerS: [] });
}

const stat = (d: SqliteDriverName) => {
  const s = samples.get(d) ?? { appendUs: [], readRowsPerS: [] };
  return { p50: percentile(s.appendUs, 50), p99: percentile(s.appendUs, 99), read: percentile(s.readRowsPerS, 50) };
};
const n = stat('node:sqlite');
const b = stat('better-sqlite3');
console.log(`Node ${process.version}, ${ROUNDS} rounds × ${APPENDS} appends (synchronous=FULL, WAL) and ${READ_MS} ms of ${PAGE}-row reads per driver`);
console.log(table(
  ['', 'append p50 (µs)', 'append p99 (µs)', 'read (rows/s, median of rounds)'],
  [
    ['node:sqlite', fmt(n.p50), fmt(n.p99), fmt(n.read, 0)],
    ['better-sqlite3', fmt(b.p50), fmt(b.p99), fmt(b.read, 0)],
    ['ratio (>1: node:sqlite better)', fmt(b.p50 / n.p50, 2), fmt(b.p99 / n.p99, 2), fmt(n.read / b.read, 2)],
  ],
));
