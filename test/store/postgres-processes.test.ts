// Several processes on one PostgreSQL database, as several nodes would be: appending to one
// conversation at once (seqs 1..N across them, each process's appends in its own order), and a writer
// SIGKILLed mid-stream (every append that had resolved is there, nothing torn, the sequence goes on).
// Skipped, with the reason, without PostgreSQL binaries.

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { guarded } from '../hang-guard.ts';
import { PostgresConversationStore } from '../../src/store/postgres-store.ts';
import type { Entry } from '../../src/store/store.ts';
import { type Child, runAppendChild } from './helpers.ts';
import { findPostgres, type PostgresServer, postgresForSuite } from './postgres-server.ts';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'pg-append-child.ts');
const alice = { principal: 'alice', sessionId: 's', harness: 'super-pi-code' };
/** How long a child's whole run may take on a loaded machine: a hang guard, not a speed claim. */
const CHILD_GUARD_MS = 120_000;

/** Starts the append child; with `killAfter`, the parent SIGKILLs it once it has reported that many appends. */
function startChild(url: string, conversationId: string, count: number, tag: string, options: { waitForGo?: boolean; killAfter?: number } = {}): Child {
  const child = runAppendChild(CHILD, [url, conversationId, String(count), tag], options);
  return { ...child, done: guarded(child.done, `append child ${tag}`, CHILD_GUARD_MS) };
}

const range = (n: number) => Array.from({ length: n }, (_, k) => k + 1);
const tagOf = (e: Entry) => (e.payload as { tag: string }).tag;
const indexOf = (e: Entry) => (e.payload as { i: number }).i;

const cases: [string, (server: PostgresServer) => Promise<void>][] = [];

cases.push(['two processes appending to one conversation at once: seqs 1..2N, each process in its own order', async (server) => {
  const url = await server.createDatabase();
  const store = await PostgresConversationStore.open(url);
  try {
    const c = await store.createConversation(alice);
    const count = 200;
    const children = [startChild(url, c.id, count, 'p1', { waitForGo: true }), startChild(url, c.id, count, 'p2', { waitForGo: true })];
    await Promise.all(children.map((child) => child.ready));
    for (const child of children) child.go();
    const runs = await Promise.all(children.map((child) => child.done));
    for (const run of runs) {
      assert.is(run.code, 0, run.stderr);
      assert.is(run.seqs.length, count);
    }
    const entries = (await store.entries(c.id, 'alice')) ?? [];
    assert.equal(entries.map((e) => e.seq), range(2 * count), 'one sequence across both processes, no gap, no duplicate');
    // The writes really were interleaved (not one process after the other), or the test proves little.
    const tags = entries.map(tagOf);
    const switches = tags.filter((t, k) => k > 0 && t !== tags[k - 1]).length;
    assert.ok(switches >= 10, `only ${switches} switches between the two writers`);
    for (const [i, tag] of ['p1', 'p2'].entries()) {
      const mine = entries.filter((e) => tagOf(e) === tag);
      assert.equal(mine.map(indexOf), Array.from({ length: count }, (_, k) => k), `${tag}: in its own order`);
      assert.equal(mine.map((e) => e.seq), runs[i]!.seqs, `${tag}: the seqs it was told are the ones stored`);
    }
  } finally {
    await store.close();
  }
}]);

cases.push(['a process SIGKILLed mid-stream keeps every append that had resolved, nothing torn; the sequence goes on', async (server) => {
  const url = await server.createDatabase();
  const store = await PostgresConversationStore.open(url);
  try {
    const c = await store.createConversation(alice);
    const run = await startChild(url, c.id, 1_000_000, 'mid', { killAfter: 150 }).done;
    assert.is(run.signal, 'SIGKILL', run.stderr);
    const entries = (await store.entries(c.id, 'alice', { limit: 100_000 })) ?? [];
    // Reported appends are committed; at most the one in flight when the kill landed is there too.
    assert.ok(entries.length >= run.seqs.length, `${entries.length} entries, ${run.seqs.length} reported`);
    assert.ok(entries.length <= run.seqs.length + 1, `${entries.length} entries, ${run.seqs.length} reported`);
    assert.equal(entries.map(indexOf), Array.from({ length: entries.length }, (_, k) => k));
    assert.equal(entries.slice(0, run.seqs.length).map((e) => e.seq), run.seqs);
    const next = await store.append(c.id, 'final', 'after the crash');
    assert.is(next.seq, entries.length + 1);
  } finally {
    await store.close();
  }
}]);

const found = findPostgres();
if (found.ok) {
  const postgres = postgresForSuite(test, found);
  for (const [name, fn] of cases) {
    test(name, () => {
      return fn(postgres());
    });
  }
} else {
  console.log(`  (skipped: the PostgreSQL cross-process tests need a PostgreSQL server: ${found.reason})`);
  for (const [name] of cases) test.skip(name, () => undefined);
  test('without PostgreSQL binaries the skip says why', () => {
    assert.match(found.reason, 'PostgreSQL');
  });
}

test.run();
