// What the PostgreSQL store adds to the contract (contract.ts): migrations from an empty database,
// once, under the advisory lock even when several stores (nodes) open at once, all-or-nothing, a newer
// schema refused; seq uniqueness enforced by the database itself; many stores appending at once;
// durable commits required; owners by node. Skipped, with the reason, without PostgreSQL binaries.

import pg from 'pg';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { nodeOwnership } from '../../src/store/node-ownership.ts';
import { POSTGRES_MIGRATIONS, type PostgresMigration, VERSION_TABLE } from '../../src/store/postgres-migrations.ts';
import { PostgresConversationStore, type PostgresStoreOptions } from '../../src/store/postgres-store.ts';
import { typedPostgresReads } from '../../src/store/postgres-typed-reads.ts';
import { type Entry, type EntryType, MAX_ENTRIES_LIMIT } from '../../src/store/store.ts';
import { rejectsStoreError } from './contract.ts';
import { guarded } from '../hang-guard.ts';
import { findPostgres, type PostgresServer, startPostgres } from './postgres-server.ts';

const alice = { principal: 'alice', sessionId: 's', harness: 'super-pi-code' };
const found = findPostgres();
let server: PostgresServer | null = null;
const stores: PostgresConversationStore[] = [];

function running(): PostgresServer {
  if (server === null) throw new Error('the PostgreSQL server did not start');
  return server;
}

function dbName(url: string): string {
  return new URL(url).pathname.slice(1);
}

/** Opens a store that the test's `after.each` closes. */
async function open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresConversationStore> {
  const store = await PostgresConversationStore.open(url, options);
  stores.push(store);
  return store;
}

/** The real migrations, each recording in `runs` that it ran; `extra` ones after them, likewise. */
function counted(runs: number[], extra: PostgresMigration[] = []): PostgresMigration[] {
  return [...POSTGRES_MIGRATIONS, ...extra].map((m) => ({
    ...m,
    async up(client) {
      runs.push(m.version);
      await m.up(client);
    },
  }));
}

async function names(url: string, sql: string): Promise<string[]> {
  const { rows } = await running().query<{ name: string }>(dbName(url), sql);
  return rows.map((r) => r.name);
}

/** A node of an EXPLAIN (ANALYZE, FORMAT JSON) plan, as far as rowsReadFrom reads it. */
interface PlanNode {
  readonly 'Relation Name'?: string;
  readonly 'Actual Rows': number;
  readonly 'Actual Loops': number;
  readonly 'Rows Removed by Filter'?: number;
  readonly 'Rows Removed by Index Recheck'?: number;
  readonly Plans?: readonly PlanNode[];
}

/** The rows the plan's scans of `table` read: those they passed on and those their filters dropped, every loop. */
function rowsReadFrom(table: string, node: PlanNode): number {
  const own = node['Relation Name'] === table ? (node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) * node['Actual Loops'] : 0;
  return own + (node.Plans ?? []).reduce((sum, child) => sum + rowsReadFrom(table, child), 0);
}

const cases: [string, () => Promise<void>][] = [];
const pgTest = (name: string, fn: () => Promise<void>) => cases.push([name, fn]);

pgTest('an empty database gets every migration: version, tables, keys, checks and indexes', async () => {
  const url = await running().createDatabase();
  const runs: number[] = [];
  await open(url, { migrations: counted(runs) });
  assert.equal(runs, POSTGRES_MIGRATIONS.map((m) => m.version));
  const version = await running().query<{ version: number }>(dbName(url), `SELECT version FROM ${VERSION_TABLE}`);
  assert.equal(version.rows, [{ version: POSTGRES_MIGRATIONS.length }]);
  assert.equal(await names(url, "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1"), ['cluster_nodes', 'consumed_request_states', 'conversations', 'entries', 'session_checkpoints', 'session_event_heads', 'session_events', VERSION_TABLE]);
  assert.equal(
    await names(url, "SELECT indexname AS name FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1"),
    ['cluster_nodes_pkey', 'consumed_request_states_expiry', 'consumed_request_states_pkey', 'conversations_by_principal', 'conversations_by_session', 'conversations_expiry', 'conversations_lease', 'conversations_pkey', 'conversations_running', 'entries_by_type', 'entries_seq_unique', 'session_checkpoints_pkey', 'session_event_heads_age', 'session_event_heads_pkey', 'session_events_age', 'session_events_seq_unique', `${VERSION_TABLE}_pkey`],
  );
  const key = await names(url, "SELECT pg_get_constraintdef(oid) AS name FROM pg_constraint WHERE conname = 'entries_seq_unique'");
  assert.equal(key, ['PRIMARY KEY (conversation_id, seq)']);
});

pgTest('a version-2 database (before the session event log) migrates to the newest: its conversations stay, and sessions get event logs', async () => {
  const url = await running().createDatabase();
  await (await PostgresConversationStore.open(url, { migrations: POSTGRES_MIGRATIONS.slice(0, 2) })).close();
  // Rows as a super-pi of schema 2 wrote them (today's store writes columns that schema lacks).
  const c = { id: '22222222-2222-4222-8222-222222222222' };
  await running().query(dbName(url), "INSERT INTO conversations (id, principal, session_id, harness, status, title, created_at, updated_at, last_seq, owner) VALUES ($1, 'alice', 's', 'super-pi-code', 'completed', NULL, 1, 1, 1, 'node:v1:[\"old\",\"x\"]')", [c.id]);
  await running().query(dbName(url), `INSERT INTO entries (conversation_id, seq, time, type, payload) VALUES ($1, 1, 1, 'user', '{"text":"go"}')`, [c.id]);
  const store = await open(url);
  const version = await running().query<{ version: number }>(dbName(url), `SELECT version FROM ${VERSION_TABLE}`);
  assert.equal(version.rows, [{ version: POSTGRES_MIGRATIONS.length }]);
  assert.equal((await store.entries(c.id, 'alice'))?.map((e) => e.payload), [{ text: 'go' }]);
  assert.is(await store.appendSessionEvent('s', 'alice', 'standalone', 'first'), 1);
});

pgTest('a version-1 database (before leases) migrates to the newest: its running task gets epoch 0, a lapsed lease, and can be claimed and fenced', async () => {
  const url = await running().createDatabase();
  await (await PostgresConversationStore.open(url, { migrations: POSTGRES_MIGRATIONS.slice(0, 1) })).close();
  // Rows as a super-pi of schema 1 wrote them (today's store writes columns that schema lacks).
  const c = { id: '11111111-1111-4111-8111-111111111111' };
  await running().query(dbName(url), "INSERT INTO conversations (id, principal, session_id, harness, status, title, created_at, updated_at, last_seq, owner) VALUES ($1, 'alice', 's', 'super-pi-code', 'running', NULL, 1, 1, 1, 'node:v1:[\"old\",\"x\"]')", [c.id]);
  await running().query(dbName(url), `INSERT INTO entries (conversation_id, seq, time, type, payload) VALUES ($1, 1, 1, 'user', '{"text":"go"}')`, [c.id]);
  const store = await open(url, { now: () => 5000, leaseClock: () => 5000, leaseMs: 1000 });
  const version = await running().query<{ version: number }>(dbName(url), `SELECT version FROM ${VERSION_TABLE}`);
  assert.equal(version.rows, [{ version: POSTGRES_MIGRATIONS.length }], 'the newest version');
  const row = await running().query(dbName(url), 'SELECT epoch, lease_expires, task_setup FROM conversations');
  assert.equal(row.rows, [{ epoch: '0', lease_expires: '0', task_setup: null }]);
  assert.equal(await store.claimTask(c.id, { maxTurns: 3 }), { conversationId: c.id, epoch: 1, expiresAt: 6000 });
  assert.is((await store.append(c.id, 'model', { text: 'hi' }, 1)).seq, 2);
  await rejectsStoreError(store.append(c.id, 'model', { text: 'stale' }, 0), 'fenced');
});

pgTest('a version-2 database (before the node registry) keeps its sessions and gets an empty node registry on the database clock', async () => {
  const url = await running().createDatabase();
  const old = await PostgresConversationStore.open(url, { migrations: POSTGRES_MIGRATIONS.slice(0, 2) });
  await old.claimSession('s-1', 'alice');
  await old.saveCheckpoint('s-1', 1, new Uint8Array([1, 2]));
  await old.close();
  const self = nodeOwnership('node-a', 'i1');
  const store = await open(url, { ownership: self });
  assert.equal((await store.loadCheckpoint('s-1', 'alice'))?.bytes, new Uint8Array([1, 2]));
  assert.is(await store.nodeOf(self.self), null);
  await store.renewNode('http://127.0.0.1:8080');
  assert.equal(await store.nodeOf(self.self).then((n) => [n?.node, n?.advertiseUrl, n?.fresh]), ['node-a', 'http://127.0.0.1:8080', true]);
  const lease = await running().query<{ type: string }>(dbName(url), "SELECT data_type AS type FROM information_schema.columns WHERE table_name = 'cluster_nodes' AND column_name = 'lease_expires'");
  assert.equal(lease.rows, [{ type: 'timestamp with time zone' }], 'the lease is a time on the database clock, not a node\'s milliseconds');
});

pgTest('a version-9 database (before payload sizes) gets each entry\'s UTF-8 size, and pages by bytes read them', async () => {
  const url = await running().createDatabase();
  await (await PostgresConversationStore.open(url, { migrations: POSTGRES_MIGRATIONS.slice(0, 9) })).close();
  // Rows as a super-pi of schema 9 wrote them (today's store writes a column that schema lacks).
  const c = { id: '99999999-9999-4999-8999-999999999999' };
  await running().query(dbName(url), "INSERT INTO conversations (id, principal, session_id, harness, status, title, created_at, updated_at, last_seq, owner) VALUES ($1, 'alice', 's', 'super-pi-code', 'completed', NULL, 1, 1, 3, 'node:v1:[\"old\",\"x\"]')", [c.id]);
  const payloads = ['{"text":"go"}', `{"text":"${'é'.repeat(40)}"}`, `{"text":"${'😀'.repeat(25)}"}`];
  for (const [i, p] of payloads.entries()) {
    await running().query(dbName(url), "INSERT INTO entries (conversation_id, seq, time, type, payload) VALUES ($1, $2, 1, 'tool_result', $3)", [c.id, i + 1, p]);
  }
  const store = await open(url);
  const sizes = await running().query<{ payload_size: string }>(dbName(url), 'SELECT payload_size FROM entries WHERE conversation_id = $1 ORDER BY seq', [c.id]);
  assert.equal(sizes.rows.map((r) => Number(r.payload_size)), payloads.map((p) => Buffer.byteLength(p, 'utf8')));
  const [one, two] = payloads.map((p) => Buffer.byteLength(p, 'utf8')) as [number, number];
  assert.equal((await store.entriesPage(c.id, 'alice', { maxBytes: one + two }))?.entries.map((e) => e.seq), [1, 2]);
  assert.equal((await store.entriesPage(c.id, 'alice', { maxBytes: one + two - 1 }))?.entries.map((e) => e.seq), [1]);
  const column = await running().query<{ nullable: string }>(dbName(url), "SELECT is_nullable AS nullable FROM information_schema.columns WHERE table_name = 'entries' AND column_name = 'payload_size'");
  assert.equal(column.rows, [{ nullable: 'NO' }], 'an insert that does not measure its payload fails');
});

pgTest('a read of some entry types finds its rows through entries_by_type, not by walking the conversation', async () => {
  const url = await running().createDatabase();
  const store = await open(url);
  const c = await store.createConversation(alice);
  // A long conversation of messages with a few snapshots among them, as the planner then sees it.
  await running().query(dbName(url), `INSERT INTO entries (conversation_id, seq, time, type, payload, payload_size)
    SELECT $1, n, 1, CASE WHEN n % 500 = 0 THEN 'file_snapshot' ELSE 'tool_result' END, '{}', 2 FROM generate_series(1, 20000) AS n`, [c.id]);
  await running().query(dbName(url), 'UPDATE conversations SET last_seq = 20000 WHERE id = $1', [c.id]);
  await running().query(dbName(url), 'ANALYZE entries');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const plan = async (sql: string, params: unknown[]) => (await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params)).rows.map((r) => r['QUERY PLAN']).join('\n');
    for (const types of [['file_snapshot'], ['file_snapshot', 'undo']] satisfies EntryType[][]) {
      const rows = await plan(typedPostgresReads(types).entries, [c.id, 'alice', 0, 100, Date.now()]);
      assert.match(rows, /Index (Only )?Scan using entries_by_type on entries/, rows);
      assert.not.match(rows, /Seq Scan on entries/, rows);
      const page = await plan(typedPostgresReads(types).page, [c.id, 'alice', 0, 100, Date.now(), 1_000_000]);
      assert.match(page, /Index (Only )?Scan using entries_by_type on entries/, page);
      assert.not.match(page, /Seq Scan on entries/, page);
    }
  } finally {
    await client.end();
  }
  // And the read itself: the 40 snapshots, in seq order.
  const snapshots = await store.entries(c.id, 'alice', { types: ['file_snapshot'] });
  assert.equal(snapshots?.map((e) => e.seq), Array.from({ length: 40 }, (_, i) => (i + 1) * 500));
});

pgTest('a page of some entry types reads the entries it returns, not every one after afterSeq: undo\'s walk is linear in its snapshots', async () => {
  const url = await running().createDatabase();
  const store = await open(url);
  const c = await store.createConversation(alice);
  // 20,000 entries, every fourth a snapshot (5,000) of one size, vacuumed as autovacuum leaves a table.
  await running().query(dbName(url), `INSERT INTO entries (conversation_id, seq, time, type, payload, payload_size)
    SELECT $1, n, 1, t, p, octet_length(convert_to(p, 'UTF8')) FROM (
      SELECT n, CASE WHEN n % 4 = 0 THEN 'file_snapshot' ELSE 'tool_result' END AS t,
             CASE WHEN n % 4 = 0 THEN '{"path":"f.txt","before":"a","after":"' || lpad(n::text, 5, '0') || '"}' ELSE '{}' END AS p
      FROM generate_series(1, 20000) AS n) s`, [c.id]);
  await running().query(dbName(url), 'UPDATE conversations SET last_seq = 20000 WHERE id = $1', [c.id]);
  await running().query(dbName(url), 'VACUUM ANALYZE entries');
  const size = Buffer.byteLength('{"path":"f.txt","before":"a","after":"00004"}', 'utf8');
  // What the store sends, as it sends it: each pool query of the walk below, replayed under EXPLAIN ANALYZE.
  const sent: { text: string; values: unknown[] }[] = [];
  const query = pg.Pool.prototype.query;
  const walk = async (pageBytes: number): Promise<number[]> => {
    const seqs: number[] = [];
    pg.Pool.prototype.query = function (this: pg.Pool, ...args: unknown[]) {
      if (typeof args[0] === 'string') sent.push({ text: args[0], values: args[1] as unknown[] });
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
    try {
      for (;;) {
        const page = await store.entriesPage(c.id, 'alice', { afterSeq: seqs.at(-1) ?? 0, limit: MAX_ENTRIES_LIMIT, maxBytes: pageBytes, types: ['file_snapshot', 'undo'] });
        seqs.push(...(page?.entries.map((e) => e.seq) ?? []));
        if (page?.more !== true) return seqs;
      }
    } finally {
      pg.Pool.prototype.query = query;
    }
  };
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const read = async (): Promise<number[]> => {
      const counts: number[] = [];
      for (const { text, values } of sent.splice(0)) {
        const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, values);
        counts.push(rowsReadFrom('entries', rows[0]!['QUERY PLAN'][0].Plan));
      }
      return counts;
    };
    // One page of 10 snapshots (by bytes) out of 5,000: about its 10 entries (the cut reads one past them), not 5,000.
    assert.equal(await walk(10 * size).then((seqs) => seqs.slice(0, 10)), Array.from({ length: 10 }, (_, i) => (i + 1) * 4));
    const [first] = await read();
    assert.ok(first !== undefined && first <= 3 * 10 + 5, `the first page of 10 read ${first} rows of entries`);
    // undo's walk, 100 snapshots a page: 50 pages, each reading about its own; no page reads what the later ones will.
    const seqs = await walk(100 * size);
    assert.is(seqs.length, 5000);
    const pages = await read();
    assert.is(pages.length, 50);
    assert.ok(Math.max(...pages) <= 3 * 100 + 5, `the most a page of 100 read: ${Math.max(...pages)} rows`);
    const total = pages.reduce((a, b) => a + b, 0);
    assert.ok(total <= 3 * 5000, `the whole walk read ${total} rows of entries`);
  } finally {
    await client.end();
  }
});

pgTest('re-opening a migrated database runs no migration', async () => {
  const url = await running().createDatabase();
  await (await PostgresConversationStore.open(url)).close();
  const runs: number[] = [];
  await open(url, { migrations: counted(runs) });
  assert.equal(runs, []);
});

pgTest('stores opening an empty database at once migrate it exactly once (the advisory lock)', async () => {
  const url = await running().createDatabase();
  const runs: number[] = [];
  // A slow last migration holds the window open in which an unlocked second opener would also find
  // the database unmigrated.
  const slow: PostgresMigration = {
    version: POSTGRES_MIGRATIONS.length + 1,
    description: 'a slow extra table',
    async up(client) {
      await client.query('SELECT pg_sleep(0.5)');
      await client.query('CREATE TABLE extra_slow (x integer)');
    },
  };
  const migrations = counted(runs, [slow]);
  const opened = await Promise.all([open(url, { migrations }), open(url, { migrations }), open(url, { migrations })]);
  assert.is(opened.length, 3);
  assert.equal(runs, migrations.map((m) => m.version), 'each migration ran once, in order');
  const c = await opened[2]!.createConversation(alice);
  assert.is((await opened[0]!.getConversation(c.id, 'alice'))?.id, c.id);
});

pgTest('a failing migration rolls every pending one back, names itself, and leaves the database usable', async () => {
  const url = await running().createDatabase();
  const broken: PostgresMigration = {
    version: POSTGRES_MIGRATIONS.length + 1,
    description: 'a migration that fails',
    async up(client) {
      await client.query('CREATE TABLE half_done (x integer)');
      await client.query('SELECT * FROM no_such_table');
    },
  };
  const error = await rejectsStoreError(PostgresConversationStore.open(url, { migrations: [...POSTGRES_MIGRATIONS, broken] }), 'migration_failed');
  assert.match(error.message, `migration ${broken.version} ("a migration that fails") failed; the database stays at version 0`);
  assert.equal(await names(url, "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'"), [], 'nothing of the earlier migrations either');
  const store = await open(url);
  assert.is((await store.createConversation(alice)).status, 'running');
});

pgTest('a database from a newer super-pi is refused untouched; a malformed migration list is refused', async () => {
  const url = await running().createDatabase();
  await (await PostgresConversationStore.open(url)).close();
  await running().query(dbName(url), `UPDATE ${VERSION_TABLE} SET version = 99`);
  const error = await rejectsStoreError(PostgresConversationStore.open(url), 'schema_too_new');
  assert.match(error.message, 'schema version 99');
  assert.not.match(error.message, 'postgres@', 'the message names the database, not its credentials');
  const version = await running().query<{ version: number }>(dbName(url), `SELECT version FROM ${VERSION_TABLE}`);
  assert.equal(version.rows, [{ version: 99 }]);
  const skipping: PostgresMigration = { version: POSTGRES_MIGRATIONS.length + 2, description: 'skips one', up: async () => undefined };
  await rejectsStoreError(PostgresConversationStore.open(await running().createDatabase(), { migrations: [...POSTGRES_MIGRATIONS, skipping] }), 'invalid_migrations');
});

pgTest('seq uniqueness is the database\'s: a duplicate (conversation_id, seq), a seq of 0, a bad type or status, an unmeasured or negative payload size are refused', async () => {
  const url = await running().createDatabase();
  const store = await open(url);
  const c = await store.createConversation(alice);
  await store.append(c.id, 'user', 'hi');
  const insert = "INSERT INTO entries (conversation_id, seq, time, type, payload, payload_size) VALUES ($1, $2, 0, $3, 'null', 4)";
  const refused = async (sql: string, params: unknown[], code: string) => {
    try {
      await running().query(dbName(url), sql, params);
    } catch (error) {
      assert.is((error as { code?: string }).code, code, String(error));
      return;
    }
    assert.unreachable(`${sql} ${JSON.stringify(params)} was accepted`);
  };
  await refused(insert, [c.id, 1, 'user'], '23505'); // unique_violation
  await refused(insert, [c.id, 0, 'user'], '23514'); // check_violation
  await refused(insert, [c.id, 2, 'thought'], '23514');
  await refused(insert, ['no-such-conversation', 1, 'user'], '23503'); // foreign_key_violation
  await refused("INSERT INTO entries (conversation_id, seq, time, type, payload) VALUES ($1, 2, 0, 'user', 'null')", [c.id], '23502'); // not_null_violation: an unmeasured payload
  await refused("INSERT INTO entries (conversation_id, seq, time, type, payload, payload_size) VALUES ($1, 2, 0, 'user', 'null', -1)", [c.id], '23514');
  await refused('UPDATE conversations SET status = $1 WHERE id = $2', ['paused', c.id], '23514');
  assert.equal((await store.entries(c.id, 'alice'))?.map((e) => e.seq), [1]);
});

pgTest('four stores (four pools, as four nodes) appending to two conversations at once: each counts 1..N', async () => {
  const url = await running().createDatabase();
  const nodes = await Promise.all([1, 2, 3, 4].map((n) => open(url, { ownership: nodeOwnership(`node-${n}`), poolSize: 4 })));
  const conversations = [await nodes[0]!.createConversation(alice), await nodes[1]!.createConversation(alice)];
  const perNode = 50;
  const calls: Promise<Entry>[] = [];
  for (let i = 0; i < perNode; i++) {
    for (const [n, node] of nodes.entries()) {
      for (const c of conversations) calls.push(node.append(c.id, 'model', { n, i }));
    }
  }
  const told = await Promise.all(calls);
  for (const c of conversations) {
    const stored = (await nodes[3]!.entries(c.id, 'alice')) ?? [];
    assert.equal(stored.map((e) => e.seq), Array.from({ length: 4 * perNode }, (_, k) => k + 1), `${c.id}: 1..N, no gap, no duplicate`);
    assert.equal(told.filter((e) => e.conversationId === c.id).sort((x, y) => x.seq - y.seq), stored, 'each append was told the seq it is stored under');
    // Each node's appends to a conversation kept their order only if it awaited them; here it did not,
    // so only the set is checked: every (n, i) exactly once.
    const pairs = new Set(stored.map((e) => JSON.stringify(e.payload)));
    assert.is(pairs.size, 4 * perNode);
  }
});

pgTest('a database with synchronous_commit off is refused: a reported entry could be lost in a crash', async () => {
  const url = await running().createDatabase();
  await running().query('postgres', `ALTER DATABASE ${dbName(url)} SET synchronous_commit = off`);
  const error = await rejectsStoreError(PostgresConversationStore.open(url), 'open_failed');
  assert.match(error.message, 'synchronous_commit is off');
  await running().query('postgres', `ALTER DATABASE ${dbName(url)} SET synchronous_commit = local`);
  await open(url);
});

pgTest('an unreachable server is open_failed, and the message does not show the password', async () => {
  // Port 1 on loopback: nothing listens there, so the connection is refused at once.
  const error = await rejectsStoreError(PostgresConversationStore.open('postgres://someone:hunter2@127.0.0.1:1/db', { connectTimeoutMs: 5000 }), 'open_failed');
  assert.match(error.message, 'postgres://127.0.0.1:1/db');
  assert.not.match(error.message, 'hunter2');
});

pgTest('node owners: a restarted node interrupts its earlier run; another node\'s running conversations are left alone', async () => {
  const url = await running().createDatabase();
  const before = await open(url, { ownership: nodeOwnership('node-1', 'run-1') });
  const mine = await before.createConversation(alice);
  const theirs = await (await open(url, { ownership: nodeOwnership('node-2', 'run-1') })).createConversation(alice);
  // node-1 comes back (a new process: a new incarnation); node-2 is still up.
  const after = await open(url, { ownership: nodeOwnership('node-1', 'run-2') });
  assert.is((await after.getConversation(mine.id, 'alice'))?.status, 'interrupted');
  assert.equal((await after.entries(mine.id, 'alice'))?.map((e) => e.type), ['interrupted']);
  assert.is((await after.getConversation(theirs.id, 'alice'))?.status, 'running', 'another node cannot be judged from here');
  // A third node starting up judges neither.
  await after.setStatus(mine.id, 'running');
  const third = await open(url, { ownership: nodeOwnership('node-3') });
  assert.is((await third.getConversation(mine.id, 'alice'))?.status, 'running');
  assert.is((await third.getConversation(theirs.id, 'alice'))?.status, 'running');
});

pgTest('a conversation resumed by another node between the open\'s read and its write is not interrupted', async () => {
  const url = await running().createDatabase();
  const first = await open(url, { ownership: nodeOwnership('node-a', 'run-1') });
  const c = await first.createConversation(alice);
  const pg = (await import('pg')).default;
  const resumer = new pg.Client({ connectionString: url });
  await resumer.connect();
  try {
    // Another node takes the conversation over, in a transaction not yet committed: its row is locked.
    await resumer.query('BEGIN');
    await resumer.query("UPDATE conversations SET owner = 'node:v1:[\"node-b\",\"run-1\"]' WHERE id = $1", [c.id]);
    // node-a restarts: it reads the conversation as its earlier run's (the takeover is not committed),
    // and its interrupt waits on the row lock.
    const reopening = open(url, { ownership: nodeOwnership('node-a', 'run-2') });
    const waiting = async () => {
      const { rows } = await running().query<{ n: string }>('postgres', "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'", [dbName(url)]);
      return rows[0]?.n === '1';
    };
    await guarded((async () => {
      while (!(await waiting())) await new Promise((resolve) => setTimeout(resolve, 20));
    })(), 'the reopening store waiting on the row lock');
    await resumer.query('COMMIT');
    const reopened = await guarded(reopening, 'the reopening store');
    assert.is((await reopened.getConversation(c.id, 'alice'))?.status, 'running', 'node-b runs it now');
    assert.equal(await reopened.entries(c.id, 'alice'), [], 'no interrupted entry either');
  } finally {
    await resumer.end();
  }
});

if (found.ok) {
  test.before(async () => {
    server = await startPostgres(found);
  });
  test.after.each(async () => {
    for (const s of stores.splice(0)) await s.close();
  });
  test.after(async () => {
    await server?.stop();
  });
  for (const [name, fn] of cases) test(name, fn);
} else {
  console.log(`  (skipped: the PostgreSQL store tests need a PostgreSQL server: ${found.reason})`);
  for (const [name] of cases) test.skip(name, () => undefined);
  test('without PostgreSQL binaries the skip says why', () => {
    assert.match(found.reason, 'PostgreSQL');
  });
}

test.run();
