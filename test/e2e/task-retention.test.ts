// Retention of 2026-07-28 tasks end to end (docs/tasks-extension.md#retention): two stdio processes on one
// SUPERPI_HOME, as two hosts launch them, with raw JSON-RPC. A runs with SUPERPI_TASK_TTL (a few seconds),
// B without. A task A creates says its ttlMs, completes, then reads as unknown (-32602) on both processes
// once its retention passed — B, which has no retention and sweeps nothing, asks the store too — and A's
// sweep deletes its conversation and entries from the file. A task B created (ttlMs null) and a session's
// conversation without a retention, older than any, are still there after A swept: nothing without a
// retention is ever deleted. No timed assertions: every wait polls with a generous deadline.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ScriptStep } from '../model/fixtures/scripted-server.ts';
import { pollUntil } from '../hang-guard.ts';
import { type Message, type StdioTaskServer } from './task-listen-wire.ts';
import { startTwoStdioProcesses, type TwoStdioProcesses } from './two-nodes.ts';
import { databasePath } from '../../src/store/location.ts';
import { openSqlite, type SqliteDatabase } from '../../src/store/sqlite-driver.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';

const TTL_SECONDS = 4;
const answer = (text: string): ScriptStep => ({ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: text } }] } });

const t = suite('task retention across two stdio processes on one SQLite file');
const script: ScriptStep[] = [];
let procs: TwoStdioProcesses | undefined;
let home: string;
let a: StdioTaskServer;
let b: StdioTaskServer;

const submit = async (server: StdioTaskServer, prompt: string): Promise<Message> => {
  const created = await server.ask('tools/call', { name: 'harness_task', arguments: { harness: 'super-pi-assistant', prompt } });
  assert.is(created.result?.resultType, 'task', JSON.stringify(created));
  return created;
};

const settled = (server: StdioTaskServer, taskId: string) => pollUntil(`task ${taskId} to settle`, async () => {
  const got = await server.ask('tasks/get', { taskId });
  return got.result?.status === 'working' ? null : got;
}, 30_000);

/** Rows the file holds for a conversation: its row, and its entries. */
function rows(db: SqliteDatabase, id: string): { conversation: number; entries: number } {
  const conversation = db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM conversations WHERE id = ?').get(id)?.n ?? 0;
  const entries = db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM entries WHERE conversation_id = ?').get(id)?.n ?? 0;
  return { conversation: Number(conversation), entries: Number(entries) };
}

t.before(async () => {
  procs = await startTwoStdioProcesses(script, { SUPERPI_TASK_TTL: String(TTL_SECONDS) }, {});
  ({ home, a, b } = procs);
});

t.after(async () => {
  await procs?.stop();
});

t('a task with a retention expires on both processes and is swept from the file; a task and a conversation without one stay', async () => {
  // A session's conversation (no retention), finished a day ago: older than anything the sweep deletes.
  const file = databasePath(home);
  const legacyStore = SqliteConversationStore.open(file, { now: () => Date.now() - 24 * 3600_000 });
  const legacy = legacyStore.createConversation({ principal: 'local', sessionId: 'an-old-session', harness: 'super-pi-code' });
  legacyStore.append(legacy.id, 'user', { text: 'old' });
  legacyStore.setStatus(legacy.id, 'completed');
  legacyStore.close();

  script.push(answer('Done in B.'));
  const plain = await submit(b, 'Finish in B.');
  assert.is(plain.result?.ttlMs, null, 'without --task-ttl: no retention');
  const plainId = String(plain.result?.taskId);
  assert.is((await settled(b, plainId)).result?.status, 'completed');

  script.push(answer('Done in A.'));
  const kept = await submit(a, 'Finish in A.');
  assert.is(kept.result?.ttlMs, TTL_SECONDS * 1000, 'the CreateTaskResult says the retention');
  const taskId = String(kept.result?.taskId);
  const done = await settled(a, taskId);
  assert.is(done.result?.status, 'completed', JSON.stringify(done));
  const shown = done.result?.ttlMs as number;
  assert.ok(Number.isInteger(shown) && shown >= TTL_SECONDS * 1000, `the DetailedTask's ttlMs counts from creation: ${shown}`);

  // B has no retention and sweeps nothing, but the store tells it the task expired.
  const gone = await pollUntil('the expired task to read as unknown on B', async () => {
    const got = await b.ask('tasks/get', { taskId });
    return got.error === undefined ? null : got;
  }, 30_000);
  assert.is(gone.error?.code, -32602, JSON.stringify(gone));
  for (const [method, params] of [['tasks/get', { taskId }], ['tasks/cancel', { taskId }], ['tasks/update', { taskId, inputResponses: {} }]] as const) {
    assert.is((await a.ask(method, params)).error?.code, -32602, `${method} on A`);
  }

  const db = openSqlite(file, { busyTimeoutMs: 5000 });
  try {
    await pollUntil('A to sweep the expired task out of the file', () => {
      const left = rows(db, taskId);
      return left.conversation === 0 && left.entries === 0 ? true : null;
    }, 30_000);
    assert.equal(rows(db, plainId).conversation, 1, 'the task without a retention is kept');
    assert.ok(rows(db, plainId).entries >= 2);
    assert.equal(rows(db, legacy.id), { conversation: 1, entries: 1 }, 'the session\'s conversation is kept');
  } finally {
    db.close();
  }
  for (const server of [a, b]) {
    const still = await server.ask('tasks/get', { taskId: plainId });
    assert.equal([still.result?.status, still.result?.ttlMs], ['completed', null], JSON.stringify(still));
  }
});

t.run();
