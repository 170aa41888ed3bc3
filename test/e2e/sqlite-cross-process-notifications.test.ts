// Status notifications across processes on one SQLite file (the SQLite change feed,
// src/store/sqlite-change-feed.ts), end to end: two stdio servers as two hosts launch them (say Claude
// Desktop and Cursor), on the same SUPERPI_HOME, with raw 2026-07-28 JSON-RPC. Process B runs a task on a
// scripted model; a `subscriptions/listen` in process A naming it (and its transcript) hears
// `notifications/tasks` completed — the DetailedTask A's own `tasks/get` reads — and the transcript's
// `notifications/resources/updated`; a cancel in B is heard in A as cancelled; and a cancel sent to A
// (the task runs in B) is heard by a listen in B. The task lease is long (SUPERPI_TASK_LEASE), so B's run
// does not meet the cancel's fence at a lease renewal within the test's wait: only the feed can tell B.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ScriptStep } from '../model/fixtures/scripted-server.ts';
import { type Message, type StdioTaskServer, stdioListen, type Stream } from './task-listen-wire.ts';
import { startTwoStdioProcesses, type TwoStdioProcesses } from './two-nodes.ts';

const answer = (text: string): ScriptStep => ({ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: text } }] } });
const transcript = (id: string) => `superpi://conversation/${id}/transcript`;

const t = suite('notifications across two stdio processes on one SQLite file');
const script: ScriptStep[] = [];
let procs: TwoStdioProcesses | undefined;
let a: StdioTaskServer;
let b: StdioTaskServer;

/** The stream's messages until what arrived satisfies `done` (each taken by a guarded wait). */
async function until(stream: Stream, what: string, done: (seen: readonly Message[]) => boolean): Promise<Message[]> {
  const seen: Message[] = [];
  while (!done(seen)) seen.push(await stream.next(what));
  return seen;
}
const status = (seen: readonly Message[], taskId: string, wanted: string) => seen.find((m) => m.method === 'notifications/tasks' && m.params?.taskId === taskId && m.params?.status === wanted);

const submit = async (server: StdioTaskServer, prompt: string): Promise<string> => {
  const created = await server.ask('tools/call', { name: 'harness_task', arguments: { harness: 'super-pi-assistant', prompt } });
  assert.is(created.result?.resultType, 'task', JSON.stringify(created));
  return String(created.result?.taskId);
};

/** A listen naming the task (and, with `withTranscript`, its transcript), past its acknowledgment and the task's state then. */
async function listen(server: StdioTaskServer, taskId: string, id: string, withTranscript = false): Promise<Stream> {
  const stream = stdioListen(server.child, { taskIds: [taskId], ...(withTranscript ? { resourceSubscriptions: [transcript(taskId)] } : {}) }, id);
  const ack = await stream.next('the acknowledgment');
  assert.is(ack.method, 'notifications/subscriptions/acknowledged', JSON.stringify(ack));
  assert.equal(ack.params?.notifications, { ...(withTranscript ? { resourceSubscriptions: [transcript(taskId)] } : {}), taskIds: [taskId] }, 'the task of the other process is found in the shared file');
  const first = await stream.next('the task\'s state at the acknowledgment');
  assert.equal([first.method, first.params?.taskId, first.params?.status], ['notifications/tasks', taskId, 'working'], JSON.stringify(first));
  return stream;
}

t.before(async () => {
  procs = await startTwoStdioProcesses(script, { SUPERPI_TASK_LEASE: '120' });
  ({ a, b } = procs);
});

t.after(async () => {
  await procs?.stop();
});

t('a listen in A hears the task B runs complete, with the DetailedTask A\'s tasks/get reads, and its transcript updated', async () => {
  let release!: () => void;
  script.push({ ...answer('Done in B.'), release: new Promise<void>((r) => (release = r)) });
  const taskId = await submit(b, 'Finish when told.');
  const stream = await listen(a, taskId, 'listen-a1', true);
  release();
  const updated = (seen: readonly Message[]) => seen.some((m) => m.method === 'notifications/resources/updated' && m.params?.uri === transcript(taskId));
  const seen = await until(stream, 'the completion and the transcript\'s update, heard in A', (seen) => status(seen, taskId, 'completed') !== undefined && updated(seen));
  const done = status(seen, taskId, 'completed') as Message;
  assert.equal(seen.filter((m) => m.method === 'notifications/tasks').map((m) => m.params?.status), ['completed'], 'each status once');
  const polled = await a.ask('tasks/get', { taskId });
  const { resultType: _r, _meta: _m, ...detailed } = polled.result ?? {};
  const { _meta: _s, ...notified } = done.params ?? {};
  assert.equal(notified, detailed, 'the notification carries the DetailedTask tasks/get answers');
  assert.is((done.params?.result as { content?: { text?: string }[] }).content?.[0]?.text, 'Done in B.');
  await stream.close();
});

t('a cancel in B is heard by a listen in A', async () => {
  script.push({ hang: true });
  const taskId = await submit(b, 'Think slowly.');
  const stream = await listen(a, taskId, 'listen-a2');
  const ack = await b.ask('tasks/cancel', { taskId });
  assert.is(ack.result?.resultType, 'complete', JSON.stringify(ack));
  const seen = await until(stream, 'the cancel, heard in A', (seen) => seen.some((m) => m.method === 'notifications/tasks'));
  const cancelled = seen.at(-1) as Message;
  assert.equal([cancelled.params?.taskId, cancelled.params?.status], [taskId, 'cancelled'], JSON.stringify(cancelled));
  assert.match(String(cancelled.params?.statusMessage), 'cancelled by the client (tasks/cancel)');
  await stream.close();
});

t('a cancel sent to A, of the task B runs, is heard by a listen in B', async () => {
  script.push({ hang: true });
  const taskId = await submit(b, 'Think slowly again.');
  const stream = await listen(b, taskId, 'listen-b1');
  const ack = await a.ask('tasks/cancel', { taskId });
  assert.is(ack.result?.resultType, 'complete', JSON.stringify(ack));
  const seen = await until(stream, 'the cancel made in A, heard in B', (seen) => seen.some((m) => m.method === 'notifications/tasks'));
  assert.equal([seen.at(-1)?.params?.taskId, seen.at(-1)?.params?.status], [taskId, 'cancelled'], JSON.stringify(seen));
  await stream.close();
});

t.run();
