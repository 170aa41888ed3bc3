// A 2026-07-28 `harness_task` call that becomes a task (Tasks extension), on a session whose connection
// actor is killed for real (its scheduler thread terminated) in the instant between the task-marked
// `runTool` effect and its answer: the test holds the task's creation in the store (a PostgreSQL lock on
// the conversations table, taken from its own connection), waits until the server is blocked inside it,
// kills the thread, then lets the creation go on. The call must be answered with its task (not -32010,
// "effect unknown"), `tasks/get` must find it, and exactly one task must exist.
// Without PostgreSQL binaries the test is reported skipped, with the reason.

import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Application } from '../../src/server/application.ts';
import { createLogger } from '../../src/log/logger.ts';
import type { RegisteredSession } from '../../src/server/session-registry.ts';
import { type ScriptedServer, startScriptedServer } from '../model/fixtures/scripted-server.ts';
import { findPostgres, type PostgresServer, startPostgres } from '../store/postgres-server.ts';
import { killSessionThread, until } from './actor-crash.ts';
import { meta, type Message, WITH_TASKS } from '../e2e/task-listen-wire.ts';

const NAME = 'the actor is killed while its call\'s task is being created: the call is answered with the task, which exists once';
const found = findPostgres();
/** Writes to the conversations table waiting for a lock (an INSERT waits at its parse, before pg_stat_activity shows its text). */
const WRITERS_WAITING = "SELECT count(*) AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'conversations' AND l.mode = 'RowExclusiveLock' AND NOT l.granted";
const MODEL_ENV = ['SUPERPI_MODEL_URL', 'SUPERPI_MODEL', 'SUPERPI_API_KEY'] as const;

if (found.ok) {
  const creation = suite('a task created across a killed connection actor');
  let server: PostgresServer | null = null;
  let model: ScriptedServer | null = null;
  let ws = '';
  const envBefore = new Map(MODEL_ENV.map((k) => [k, process.env[k]]));

  creation.before(async () => {
    server = await startPostgres(found);
    model = await startScriptedServer([{ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: 'Done.' } }] } }]);
    ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-create-crash-ws-')));
    // The node's own model: a task-marked call runs detached (detached-tasks.ts reads the process's environment).
    Object.assign(process.env, { SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted', SUPERPI_API_KEY: 'sk-test' });
  });

  creation.after(async () => {
    for (const [k, v] of envBefore) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await model?.close();
    await server?.stop();
    if (ws !== '') await rm(ws, { recursive: true, force: true });
  });

  creation(NAME, async () => {
    if (server === null) throw new Error('PostgreSQL did not start');
    const url = await server.createDatabase();
    const application = await Application.start({
      workspace: ws, harness: 'super-pi-code', pageSize: 50, toolTimeoutMs: 30_000, threads: 1, toolThreads: 1,
      chaos: {}, logger: createLogger('error'), serverVersion: 'test', onGiveUp: () => undefined,
      store: { kind: 'postgres', url, label: 'test' }, nodeId: 'node-a',
    });
    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    let locked = false;
    try {
      const lines: Message[] = [];
      const entry: RegisteredSession = await application.open({ principal: { kind: 'local' }, transport: 'stdio', send: (out) => { lines.push(JSON.parse(out.line) as Message); } });
      const send = (msg: object): void => entry.deliver({ kind: 'line', text: JSON.stringify(msg) });
      const answerTo = (id: number) => lines.find((m) => m.id === id && m.method === undefined);
      const query = async (sql: string) => Number((await locker.query<{ n: string }>(sql)).rows[0]?.n);

      // A first request, so the session's actor is up on its thread before the call.
      send({ jsonrpc: '2.0', id: 0, method: 'server/discover', params: { _meta: meta(WITH_TASKS) } });
      await until(() => answerTo(0) !== undefined, 'server/discover is answered');

      // New conversations wait for this transaction: the creation blocks inside the store, after the effect.
      // (No other write to the table waits meanwhile: this node runs no task yet.)
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE conversations IN EXCLUSIVE MODE');
      locked = true;
      assert.is(await query(WRITERS_WAITING), 0);
      send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'Say done.' }, _meta: meta(WITH_TASKS) } });
      await until(async () => (await query(WRITERS_WAITING)) === 1,
        'the server waits inside the task\'s creation').catch(async (err: unknown) => {
        console.error(JSON.stringify(lines.slice(1)), JSON.stringify((await locker.query("SELECT pid, wait_event_type, wait_event, state, query FROM pg_stat_activity")).rows));
        throw err;
      });

      await killSessionThread(application, entry.session);
      assert.is(answerTo(1), undefined, 'the call is not answered while its task is being created (before: -32010, effect unknown)');

      await locker.query('COMMIT');
      locked = false;
      await until(() => answerTo(1) !== undefined, 'the call is answered');
      const created = answerTo(1) as Message;
      assert.is(created.error, undefined, JSON.stringify(created));
      assert.is(created.result?.resultType, 'task', JSON.stringify(created));
      const taskId = String(created.result?.taskId);

      send({ jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { taskId, _meta: meta(WITH_TASKS) } });
      await until(() => answerTo(2) !== undefined, 'tasks/get is answered');
      assert.is(answerTo(2)?.result?.taskId, taskId, JSON.stringify(answerTo(2)));
      assert.ok(['working', 'completed'].includes(String(answerTo(2)?.result?.status)), JSON.stringify(answerTo(2)));
      assert.is(await query('SELECT count(*) AS n FROM conversations'), 1, 'exactly one task was created');
      assert.is(lines.filter((m) => m.id === 1).length, 1, 'the call was answered once');
      await application.close(entry.id);
    } finally {
      if (locked) await locker.query('ROLLBACK');
      await locker.end();
      await application.stop();
    }
  });

  creation.run();
} else {
  const skipped = suite('a task created across a killed connection actor');
  skipped.skip(NAME, () => undefined);
  skipped.run();
  process.stderr.write(`task creation crash test skipped: ${found.reason}\n`);
}
