// Schema migrations: applied on a fresh file, a no-op on re-open, all-or-nothing, and a database from
// a newer super-pi refused untouched.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { databasePath, openStore } from '../../src/store/location.ts';
import { latestVersion, migrate, type Migration, MIGRATIONS, migrationsProblem, schemaVersion } from '../../src/store/migrations.ts';
import { processOwnership } from '../../src/store/ownership.ts';
import { openSqlite, type SqliteDatabase } from '../../src/store/sqlite-driver.ts';
import { type CutParams, ENTRIES_CUT } from '../../src/store/sqlite-statements.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import { typedReadSql } from '../../src/store/sqlite-typed-reads.ts';
import type { EntryType } from '../../src/store/store.ts';
import { removeHome, tempHome, throwsStoreError } from './helpers.ts';

let home: string;
test.before.each(async () => {
  home = await tempHome();
});
test.after.each(async () => {
  await removeHome(home);
});

/** The file through the same driver the store uses by default on this Node. */
function raw(file: string): SqliteDatabase {
  return openSqlite(file, { busyTimeoutMs: 0 });
}

function tables(db: SqliteDatabase): string[] {
  return db.prepare<[], { name: string }>("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all().map((r) => r.name);
}

function indexes(db: SqliteDatabase): string[] {
  return db.prepare<[], { name: string }>("SELECT name FROM sqlite_schema WHERE type = 'index' AND name NOT LIKE 'sqlite_%' ORDER BY name").all().map((r) => r.name);
}

/** The real migrations followed by extra ones that count their runs. */
function withCountedExtras(extra: number, runs: number[]): Migration[] {
  const list: Migration[] = [...MIGRATIONS];
  for (let i = 0; i < extra; i++) {
    const version = MIGRATIONS.length + i + 1;
    list.push({
      version, description: `extra table ${version}`,
      up(db) {
        runs.push(version);
        db.exec(`CREATE TABLE extra_${version} (x INTEGER) STRICT`);
      },
    });
  }
  return list;
}

test('the real migration list is well formed', () => {
  assert.is(migrationsProblem(MIGRATIONS), null);
  assert.is(latestVersion(), MIGRATIONS.length);
});

test('a fresh file gets every migration: user_version, tables, indexes, WAL', () => {
  openStore({ home }).close();
  const db = raw(databasePath(home));
  assert.is(schemaVersion(db), latestVersion());
  assert.equal(tables(db), ['cluster_nodes', 'consumed_request_states', 'conversations', 'entries', 'session_checkpoints']);
  assert.equal(indexes(db), ['consumed_request_states_expiry', 'conversations_by_principal', 'conversations_by_session', 'conversations_expiry', 'conversations_running', 'entries_by_conversation', 'entries_by_type', 'entries_sizes']);
  assert.is(db.pragma('journal_mode'), 'wal');
  db.close();
});

test('re-opening is a no-op: data kept, no migration runs again', () => {
  const runs: number[] = [];
  const migrations = withCountedExtras(1, runs);
  const file = databasePath(home);
  const first = SqliteConversationStore.open(file, { migrations });
  const c = first.createConversation({ principal: 'alice', sessionId: 's1', harness: 'super-pi-code' });
  first.close();
  assert.equal(runs, [MIGRATIONS.length + 1]);

  const second = SqliteConversationStore.open(file, { migrations });
  assert.equal(second.getConversation(c.id, 'alice'), c);
  second.close();
  assert.equal(runs, [MIGRATIONS.length + 1], 'nothing ran on re-open');

  const db = raw(file);
  assert.equal(migrate(db, file, migrations), { from: migrations.length, to: migrations.length });
  db.close();
});

test('an older database gets only the migrations it lacks', () => {
  const file = databasePath(home);
  openStore({ home }).close();
  const runs: number[] = [];
  const migrations = withCountedExtras(2, runs);
  const db = raw(file);
  assert.equal(migrate(db, file, migrations), { from: MIGRATIONS.length, to: MIGRATIONS.length + 2 });
  assert.equal(runs, [MIGRATIONS.length + 1, MIGRATIONS.length + 2]);
  assert.is(schemaVersion(db), MIGRATIONS.length + 2);
  db.close();
});

test('a failing migration rolls every pending one back and names itself', () => {
  const file = databasePath(home);
  const migrations: Migration[] = [
    ...MIGRATIONS,
    { version: MIGRATIONS.length + 1, description: 'adds a table', up: (db) => db.exec('CREATE TABLE added (x INTEGER)') },
    { version: MIGRATIONS.length + 2, description: 'breaks', up: () => { throw new Error('disk on fire'); } },
  ];
  const error = throwsStoreError(() => SqliteConversationStore.open(file, { migrations }), 'migration_failed');
  assert.match(error.message, `migration ${MIGRATIONS.length + 2} ("breaks") failed; the database stays at version 0: Error: disk on fire`);
  assert.instance(error.cause, Error);
  const db = raw(file);
  assert.is(schemaVersion(db), 0);
  assert.equal(tables(db), [], 'not even the first migrations were kept');
  db.close();
});

test('a database with a newer user_version is refused, with a clear error, and left untouched', () => {
  const file = databasePath(home);
  openStore({ home }).close();
  const newer = latestVersion() + 1;
  const db = raw(file);
  db.pragma(`user_version = ${newer}`);
  db.close();

  const error = throwsStoreError(() => openStore({ home }), 'schema_too_new');
  assert.is(
    error.message,
    `${file}: the database has schema version ${newer}, but this super-pi knows versions up to ${latestVersion()}; ` +
      'it was written by a newer super-pi. Use that version, or point SUPERPI_HOME at another directory.',
  );
  const after = raw(file);
  assert.is(schemaVersion(after), newer);
  after.close();
});

/** A database as super-pi wrote it before seqs were per conversation (schema 1): one global seq. */
function schemaOneDatabase(file: string): SqliteDatabase {
  const db = raw(file);
  migrate(db, file, MIGRATIONS.slice(0, 1));
  const conversation = db.prepare('INSERT INTO conversations (id, principal, session_id, harness, status, title, created_at, updated_at) VALUES (?, ?, ?, ?, ?, NULL, 1, 1)');
  conversation.run('conv-a', 'alice', 's1', 'super-pi-code', 'completed');
  conversation.run('conv-b', 'bob', 's2', 'super-pi-code', 'completed');
  const entry = db.prepare<[string, string, string]>('INSERT INTO entries (conversation_id, time, type, payload) VALUES (?, 5, ?, ?)');
  // Interleaved as two busy principals would leave them: a gets global seqs 1, 3, 5, 6, 8; b gets 2, 4, 7.
  entry.run('conv-a', 'user', '{"text":"edit two files"}');
  entry.run('conv-b', 'user', '{"text":"other"}');
  entry.run('conv-a', 'file_snapshot', '{"path":"a.txt","before":"1","after":"2","id":"c1"}');
  entry.run('conv-b', 'model', '{"text":"b"}');
  entry.run('conv-a', 'file_snapshot', '{"path":"b.txt","before":null,"after":"x","id":"c2"}');
  entry.run('conv-a', 'final', '{"text":"done"}');
  entry.run('conv-b', 'final', '{"text":"b done"}');
  // An undo that reverted both snapshots, by their global seqs (5, 3), and a number that named nothing of a's (4 is b's).
  entry.run('conv-a', 'undo', '{"reverted":[5,3,4],"refused":[]}');
  return db;
}

test('a schema-1 database (one global seq) is renumbered per conversation and stays readable', () => {
  const file = databasePath(home);
  schemaOneDatabase(file).close();
  const store = openStore({ home });
  const a = store.entries('conv-a', 'alice') ?? [];
  const b = store.entries('conv-b', 'bob') ?? [];
  assert.equal(a.map((e) => [e.seq, e.type]), [[1, 'user'], [2, 'file_snapshot'], [3, 'file_snapshot'], [4, 'final'], [5, 'undo']]);
  assert.equal(b.map((e) => [e.seq, e.type]), [[1, 'user'], [2, 'model'], [3, 'final']]);
  assert.equal(a[0]?.payload, { text: 'edit two files' }, 'payloads untouched');
  assert.equal(a[4]?.payload, { reverted: [3, 2], refused: [] }, 'undo names the same snapshots by their new seqs; the stray number is dropped');
  // Each conversation's count goes on from where it stood.
  assert.is(store.append('conv-a', 'user', { text: 'again' }).seq, 6);
  assert.is(store.append('conv-b', 'user', { text: 'again' }).seq, 4);
  store.close();
});

test('(conversation_id, seq) is unique in the schema itself', () => {
  const file = databasePath(home);
  schemaOneDatabase(file).close();
  openStore({ home }).close();
  const db = raw(file);
  const insert = db.prepare("INSERT INTO entries (conversation_id, seq, time, type, payload) VALUES ('conv-b', 2, 9, 'model', '{}')");
  assert.throws(() => insert.run(), /UNIQUE constraint failed: entries\.conversation_id, entries\.seq/);
  db.close();
});

test('a malformed migration list is refused before anything runs', () => {
  const gap: Migration[] = [{ version: 1, description: 'one', up: () => {} }, { version: 3, description: 'three', up: () => {} }];
  assert.is(migrationsProblem(gap), 'migration #2 ("three") has version 3; versions must run 1, 2, 3… in order');
  throwsStoreError(() => SqliteConversationStore.open(databasePath(home), { migrations: gap }), 'invalid_migrations');
  assert.is(migrationsProblem([{ version: 1, description: ' ', up: () => {} }]), 'migration 1 has no description');
});

test('a schema-5 database (before stored task results) keeps its finished tasks, with no stored result: their transcript answers', () => {
  const file = databasePath(home);
  const old = raw(file);
  migrate(old, file, MIGRATIONS.slice(0, 5));
  old.prepare("INSERT INTO conversations (id, principal, session_id, harness, status, title, created_at, updated_at, last_seq) VALUES ('conv-a', 'alice', 's', 'super-pi-code', 'completed', NULL, 1, 1, 2)").run();
  old.prepare('INSERT INTO entries (conversation_id, seq, time, type, payload) VALUES (?, ?, 5, ?, ?)').run('conv-a', 1, 'user', '{"text":"go"}');
  old.prepare('INSERT INTO entries (conversation_id, seq, time, type, payload) VALUES (?, ?, 5, ?, ?)').run('conv-a', 2, 'final', '{"text":"done"}');
  old.close();
  const store = SqliteConversationStore.open(file);
  try {
    const record = store.taskRecord('conv-a', 'alice');
    assert.equal([record?.conversation.status, record?.lastSeq, record?.result], ['completed', 2, null]);
    assert.equal(store.entries('conv-a', 'alice')?.map((e) => e.type), ['user', 'final']);
    store.claimTask('conv-a', {});
    store.setStatus('conv-a', 'completed', undefined, { text: 'again', isError: false, turns: 1, toolCalls: 0 });
    assert.equal(store.taskRecord('conv-a', 'alice')?.result, { text: 'again', isError: false, turns: 1, toolCalls: 0 });
  } finally {
    store.close();
  }
});


test('a schema-4 database (before the node registry) keeps its sessions and gets an empty node registry', () => {
  const file = databasePath(home);
  // Written as a super-pi of schema 4 wrote it (today's store prepares statements that schema lacks).
  const old = raw(file);
  migrate(old, file, MIGRATIONS.slice(0, 4));
  old.prepare("INSERT INTO session_checkpoints (session_id, principal, owner, epoch, bytes, updated_at) VALUES ('s-1', 'alice', 'process:old', 1, x'0102', 1)").run();
  old.close();
  const store = SqliteConversationStore.open(file, { ownership: { self: 'node:v1:["n","i"]', isAlive: () => true } });
  try {
    assert.equal(store.loadCheckpoint('s-1', 'alice')?.bytes, new Uint8Array([1, 2]));
    assert.is(store.nodeOf('node:v1:["n","i"]'), null);
    store.renewNode('http://127.0.0.1:8080');
    assert.equal([store.nodeOf('node:v1:["n","i"]')?.node, store.nodeOf('node:v1:["n","i"]')?.advertiseUrl], ['n', 'http://127.0.0.1:8080']);
  } finally {
    store.close();
  }
});

test('a schema-3 database (before leases) gets epoch 0 and a lapsed lease, and its running task can be claimed and fenced', () => {
  const file = databasePath(home);
  const schema3 = raw(file);
  migrate(schema3, file, MIGRATIONS.slice(0, 3));
  schema3.close();
  // Rows as a super-pi of schema 3 wrote them (today's store writes columns that schema lacks).
  const c = { id: '11111111-1111-4111-8111-111111111111' };
  const before = raw(file);
  before.prepare("INSERT INTO conversations (id, principal, session_id, harness, status, title, created_at, updated_at, last_seq, owner) VALUES (?, 'alice', 's1', 'super-pi-code', 'running', NULL, 1, 1, 1, ?)")
    .run(c.id, processOwnership().self);
  before.prepare(`INSERT INTO entries (conversation_id, seq, time, type, payload) VALUES (?, 1, 1, 'user', '{"text":"go"}')`).run(c.id);
  before.close();
  const store = SqliteConversationStore.open(file, { now: () => 5000, leaseMs: 1000 });
  try {
    assert.is(store.getConversation(c.id, 'alice')?.status, 'running', 'this process still owns it');
    const db = raw(file);
    // Spread: node:sqlite (Node 22+) gives rows without a prototype, which uvu's equal tells from plain objects.
    assert.equal(db.prepare('SELECT epoch, lease_expires, task_setup FROM conversations').all().map((row) => ({ ...(row as object) })), [{ epoch: 0, lease_expires: 0, task_setup: null }]);
    db.close();
    const lease = store.claimTask(c.id, { maxTurns: 3 });
    assert.equal(lease, { conversationId: c.id, epoch: 1, expiresAt: 6000 });
    assert.is(store.append(c.id, 'model', { text: 'hi' }, 1).seq, 2);
    throwsStoreError(() => store.append(c.id, 'model', { text: 'stale' }, 0), 'fenced');
  } finally {
    store.close();
  }
});

test('a schema-8 database (before payload sizes) gets each entry\'s UTF-8 size, and pages by bytes read them', () => {
  const file = databasePath(home);
  const old = raw(file);
  migrate(old, file, MIGRATIONS.slice(0, 8));
  old.prepare("INSERT INTO conversations (id, principal, session_id, harness, status, title, created_at, updated_at, last_seq) VALUES ('conv-a', 'alice', 's', 'super-pi-code', 'completed', NULL, 1, 1, 4)").run();
  // ASCII, two-byte, four-byte and escaped characters: the size is the stored text's UTF-8 bytes, not its length.
  const payloads = ['{"text":"go"}', `{"text":"${'é'.repeat(40)}"}`, `{"text":"${'😀'.repeat(25)}"}`, '{"text":"\\u0000 and \\ud800"}'];
  const insert = old.prepare<[number, string]>("INSERT INTO entries (conversation_id, seq, time, type, payload) VALUES ('conv-a', ?, 5, 'tool_result', ?)");
  payloads.forEach((p, i) => insert.run(i + 1, p));
  old.close();

  const store = SqliteConversationStore.open(file);
  const db = raw(file);
  try {
    assert.is(schemaVersion(db), latestVersion());
    const sizes = db.prepare<[], { seq: number; payload_size: number }>("SELECT seq, payload_size FROM entries WHERE conversation_id = 'conv-a' ORDER BY seq").all();
    assert.equal(sizes.map((r) => r.payload_size), payloads.map((p) => Buffer.byteLength(p, 'utf8')));
    assert.ok(sizes[1]!.payload_size > payloads[1]!.length, 'two-byte characters count twice');
    const [one, two] = payloads.map((p) => Buffer.byteLength(p, 'utf8'));
    assert.equal(store.entriesPage('conv-a', 'alice', { maxBytes: one! + two! })?.entries.map((e) => e.seq), [1, 2]);
    assert.equal(store.entriesPage('conv-a', 'alice', { maxBytes: one! + two! - 1 })?.entries.map((e) => e.seq), [1]);
    // A new entry is measured as the migration measured the old ones.
    store.append('conv-a', 'user', { text: 'ü' });
    assert.is(db.prepare<[], { payload_size: number }>("SELECT payload_size FROM entries WHERE conversation_id = 'conv-a' AND seq = 5").get()?.payload_size, Buffer.byteLength('{"text":"ü"}', 'utf8'));
  } finally {
    db.close();
    store.close();
  }
});

test('the cut of a page bounded by bytes reads the sizes from the covering index alone, never the table (so no payload)', () => {
  openStore({ home }).close();
  const db = raw(databasePath(home));
  try {
    const plan = db.prepare<[CutParams], { detail: string }>(`EXPLAIN QUERY PLAN ${ENTRIES_CUT}`).all({ id: 'c', after: 0, limit: 10, max: 100 }).map((r) => r.detail);
    assert.ok(plan.some((d) => d.startsWith('SEARCH entries USING COVERING INDEX entries_sizes')), plan.join('\n'));
    assert.ok(!plan.some((d) => /SCAN entries\b|SEARCH entries USING (?!COVERING)/.test(d)), plan.join('\n'));
    assert.ok(plan.some((d) => d.includes('USING COVERING INDEX entries_sizes')), plan.join('\n'));
  } finally {
    db.close();
  }
});

test('a read of some entry types walks the type index, one ordered range per type merged by seq, for its rows and its cut', () => {
  openStore({ home }).close();
  const db = raw(databasePath(home));
  try {
    const plans = (types: readonly EntryType[]) => {
      // Each with only the parameters it names: node:sqlite (Node 22 and later) refuses an unknown one.
      const explain = (sql: string, params: Partial<CutParams>) => db.prepare<[Partial<CutParams>], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`).all(params).map((r) => r.detail);
      const { after, cut } = typedReadSql(types);
      return [explain(after, { id: 'c', after: 0, limit: 10 }), explain(cut, { id: 'c', after: 0, limit: 10, max: 100 })];
    };
    for (const types of [['file_snapshot'], ['file_snapshot', 'undo'], ['undo', 'model', 'user']] as EntryType[][]) {
      const [rows, cut] = plans(types);
      for (const plan of [rows!, cut!]) {
        const searches = plan.filter((d) => /\b(SEARCH|SCAN) entries\b/.test(d));
        assert.is(searches.length, types.length, plan.join('\n'));
        assert.ok(searches.every((d) => /USING (COVERING )?INDEX entries_by_type \(conversation_id=\? AND type=\? AND seq>\?\)/.test(d)), plan.join('\n'));
        assert.ok(!plan.some((d) => d.includes('TEMP B-TREE')), `merged in seq order, not sorted: ${plan.join('\n')}`);
        if (types.length > 1) assert.ok(plan.includes('MERGE (UNION ALL)'), plan.join('\n'));
      }
      assert.ok(cut!.filter((d) => d.includes('entries_by_type')).every((d) => d.includes('COVERING INDEX')), `the cut reads no row: ${cut!.join('\n')}`);
    }
  } finally {
    db.close();
  }
});

test.run();
