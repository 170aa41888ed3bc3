// A 2026-07-28 listen stream naming a task, on a session whose connection actor is killed for real (its
// scheduler thread terminated): the stream goes on (the listen is run again by the next incarnation, which
// acknowledges it again and sends the task's state), and once the client ends it the node watches nothing
// for the session — the dead incarnation's watch went with it (effect-runner.ts, `incarnationEnded`).

import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Application } from '../../src/server/application.ts';
import { createLogger } from '../../src/log/logger.ts';
import { HOME_ENV, openStore } from '../../src/store/location.ts';
import type { RegisteredSession } from '../../src/server/session-registry.ts';
import { killSessionThread, until } from './actor-crash.ts';
import { meta, SUB, WITH_TASKS } from '../e2e/task-listen-wire.ts';

type Message = { id?: unknown; method?: string; params?: Record<string, unknown>; error?: { code: number } };

const listenCrash = suite('a listen stream across a killed connection actor');
let home: string;
let ws: string;
let application: Application;
let taskId: string;
let gaveUp: string | null = null;
const homeBefore = process.env[HOME_ENV];

listenCrash.before(async () => {
  home = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-listen-crash-home-')));
  ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-listen-crash-ws-')));
  process.env[HOME_ENV] = home;
  const store = openStore({ home });
  taskId = store.createConversation({ principal: 'local', sessionId: 'elsewhere', harness: 'super-pi-assistant' }).id;
  store.close();
  application = await Application.start({
    workspace: ws, harness: 'super-pi-code', pageSize: 50, toolTimeoutMs: 30_000, threads: 1, toolThreads: 1,
    chaos: {}, logger: createLogger('error'), serverVersion: 'test', onGiveUp: (m) => { gaveUp = m; },
  });
});

listenCrash.after(async () => {
  await application?.stop();
  if (homeBefore === undefined) delete process.env[HOME_ENV];
  else process.env[HOME_ENV] = homeBefore;
  await rm(home, { recursive: true, force: true });
  await rm(ws, { recursive: true, force: true });
});

listenCrash('the stream is acknowledged again after the kill, and once cancelled the node watches no task for the session', async () => {
  const lines: Message[] = [];
  const entry: RegisteredSession = await application.open({ principal: { kind: 'local' }, transport: 'stdio', send: (out) => { lines.push(JSON.parse(out.line) as Message); } });
  const send = (msg: object): void => entry.deliver({ kind: 'line', text: JSON.stringify(msg) });
  const onStream = (method: string): Message[] => lines.filter((m) => m.method === method && (m.params?._meta as Record<string, unknown> | undefined)?.[SUB] === 'listen-1');

  send({ jsonrpc: '2.0', id: 'listen-1', method: 'subscriptions/listen', params: { notifications: { taskIds: [taskId] }, _meta: meta(WITH_TASKS) } });
  await until(() => onStream('notifications/tasks').length === 1, 'the task\'s state follows the acknowledgment');
  assert.equal((onStream('notifications/subscriptions/acknowledged')[0]?.params?.notifications as { taskIds?: string[] }).taskIds, [taskId]);
  assert.equal(application.watching.tasks, 1);

  await killSessionThread(application, entry.session);

  // The listen was in flight and is safe to run again: the new incarnation acknowledges it on the same
  // request and sends the task's state again; the stream was not answered with an error.
  await until(() => onStream('notifications/subscriptions/acknowledged').length === 2, 'the stream is acknowledged again');
  await until(() => onStream('notifications/tasks').length === 2, 'the task\'s state is sent again');
  assert.not.ok(lines.some((m) => m.id === 'listen-1' && m.method === undefined), 'the listen request was not answered: its stream goes on');
  assert.equal(application.watching, { tasks: 1, taskSessions: 1, transcripts: 0 });

  send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'listen-1' } });
  // Before the fix, the dead incarnation's watch stayed (one stream's worth) until the session closed.
  await until(() => application.watching.tasks === 0, 'no task is watched once the stream ended');
  assert.equal(application.watching, { tasks: 0, taskSessions: 0, transcripts: 0 });

  send({ jsonrpc: '2.0', id: 2, method: 'ping', params: { _meta: meta({}) } });
  await until(() => lines.some((m) => m.id === 2), 'the ping is answered');
  assert.is(gaveUp, null);
  await application.close(entry.id);
});

listenCrash.run();
