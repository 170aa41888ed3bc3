// Task status notifications in the pure core (src/mcp/methods/listen.ts, Tasks extension SEP-2663): a
// `subscriptions/listen` naming `notifications.taskIds` needs the extension declared (-32021 without), asks
// the store which tasks are the caller's, is acknowledged for those alone, then sends each one's current
// DetailedTask; later reports of a task send `notifications/tasks` only when its status changed, tagged with
// the listen's id and related to it, and only on streams that named it.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { handleEffectResult } from '../../src/mcp/handle.ts';
import type { StoredTask } from '../../src/mcp/effects.ts';
import type { ConnectionState } from '../../src/mcp/state.ts';
import { MAX_LISTEN_TASK_IDS } from '../../src/limits.ts';
import { feed, fold, fresh, req } from './golden.ts';

type Msg = { id?: unknown; method?: string; error?: { code: number; message: string; data?: unknown }; params?: Record<string, unknown> };

const TASKS = 'io.modelcontextprotocol/tasks';
const meta = (extensions: object) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { extensions },
  'io.modelcontextprotocol/clientInfo': { name: 'modern', version: '2' },
});
const SUB = 'io.modelcontextprotocol/subscriptionId';
const T = (c: string) => `superpi://conversation/${c}/transcript`;
const listenReq = (id: number | string, notifications: unknown, extensions: object = { [TASKS]: {} }) => req(id, 'subscriptions/listen', { _meta: meta(extensions), notifications });

const times = { createdAt: '2026-12-06T20:00:00.000Z', lastUpdatedAt: '2026-12-06T20:00:01.000Z' };
const working = (taskId: string): StoredTask => ({ taskId, ...times, status: 'running', outcome: null });
const completed = (taskId: string): StoredTask => ({
  taskId, ...times, status: 'completed',
  outcome: { text: 'It says aubergine.', isError: false, structured: { conversation_id: taskId, harness: 'super-pi-code', status: 'completed', turns: 2, tool_calls: 1, answer: 'It says aubergine.' } },
});
const cancelled = (taskId: string): StoredTask => ({ taskId, ...times, status: 'cancelled', outcome: { text: 'Stopped: the task was cancelled by the client (tasks/cancel).', isError: true } });

/** A listen naming `taskIds`, acknowledged by the store for `found` (as they stand now). */
function listening(state: ConnectionState, id: number | string, notifications: object, found: StoredTask[], transcripts: string[] = []) {
  const opened = feed(state, listenReq(id, notifications));
  const watch = opened.effects.find((e) => e.kind === 'watchTranscripts') as { ticket: number; conversationIds: string[]; taskIds: string[] } | undefined;
  assert.ok(watch, JSON.stringify(opened.replies));
  return { watch, ...fold(opened.state, { kind: 'transcriptsWatched', ticket: watch.ticket, found: transcripts, tasks: found }) };
}

const statuses = (replies: unknown[]) => (replies as Msg[]).filter((r) => r.method === 'notifications/tasks').map((r) => [r.params?._meta, r.params?.taskId, r.params?.status]);

test('taskIds without the extension declared: -32021 naming it, and nothing asked of the store', () => {
  const r = feed(fresh(), listenReq(1, { taskIds: ['t1'] }, {}));
  const error = (r.replies[0] as Msg).error;
  assert.is(error?.code, -32021);
  assert.equal(error?.data, { requiredCapabilities: { extensions: { [TASKS]: {} } } });
  assert.equal(r.effects, []);
  assert.is(feed(fresh(), listenReq(2, { taskIds: [] }, {})).replies.length, 1, 'an empty taskIds asks for nothing: acknowledged');
});

test('the store is asked which tasks are the caller\'s; the acknowledgment names those alone, then each one\'s current DetailedTask follows', () => {
  const r = listening(fresh(), 'L1', { taskIds: ['mine', 'theirs', 'mine'], resourceSubscriptions: [T('mine')] }, [working('mine')], ['mine']);
  assert.equal(r.watch.taskIds, ['mine', 'theirs'], 'each once');
  assert.equal(r.watch.conversationIds, ['mine']);
  assert.equal(r.replies[0], {
    jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged',
    params: { _meta: { [SUB]: 'L1' }, notifications: { resourceSubscriptions: [T('mine')], taskIds: ['mine'] } },
  }, 'another principal\'s task is left out as a missing one');
  assert.equal(r.replies[1], {
    jsonrpc: '2.0', method: 'notifications/tasks',
    params: { _meta: { [SUB]: 'L1' }, taskId: 'mine', status: 'working', ...times, ttlMs: null, pollIntervalMs: 1000 },
  });
  assert.is(r.replies.length, 2);
});

test('a status change goes out once, as tasks/get would answer it (the result inlined); a report with the same status sends nothing', () => {
  const r = listening(fresh(), 7, { taskIds: ['a'] }, [working('a')]);
  const again = handleEffectResult({ kind: 'taskStatus', task: working('a') }, r.state);
  assert.equal(again.replies, [], 'still working: nothing');
  const done = handleEffectResult({ kind: 'taskStatus', task: completed('a') }, again.state);
  assert.equal(done.replies.map((o) => [JSON.parse(o.line), o.relatedTo]), [[{
    jsonrpc: '2.0', method: 'notifications/tasks',
    params: {
      _meta: { [SUB]: 7 }, taskId: 'a', status: 'completed', ...times, ttlMs: null, pollIntervalMs: 1000,
      result: { content: [{ type: 'text', text: 'It says aubergine.' }], structuredContent: completed('a').outcome?.structured },
    },
  }, 7]]);
  assert.equal(handleEffectResult({ kind: 'taskStatus', task: completed('a') }, done.state).replies, [], 'heard once');
});

test('a parked task answered in part is heard again (its input requests changed, not its status); the same questions again send nothing', () => {
  const parked = (keys: string[], lastUpdatedAt: string): StoredTask => ({
    taskId: 'p', createdAt: times.createdAt, lastUpdatedAt, status: 'input_required', outcome: null,
    question: { asks: keys.map((key) => ({ key, message: `Run ${key}?` })) },
  });
  const r = listening(fresh(), 'L', { taskIds: ['p'] }, [parked(['q-1', 'q-2'], times.lastUpdatedAt)]);
  assert.equal(Object.keys((r.replies[1] as Msg).params?.inputRequests as object), ['q-1', 'q-2']);
  assert.equal(handleEffectResult({ kind: 'taskStatus', task: parked(['q-1', 'q-2'], times.lastUpdatedAt) }, r.state).replies, [], 'the same questions: nothing');
  const partial = handleEffectResult({ kind: 'taskStatus', task: parked(['q-2'], '2026-12-06T20:00:05.000Z') }, r.state);
  const heard = (partial.replies as unknown[] as { line: string }[]).map((o) => (JSON.parse(o.line) as Msg).params);
  assert.equal(heard.map((p) => [p?.status, Object.keys(p?.inputRequests as object), p?.lastUpdatedAt]), [['input_required', ['q-2'], '2026-12-06T20:00:05.000Z']]);
  assert.equal(handleEffectResult({ kind: 'taskStatus', task: parked(['q-2'], '2026-12-06T20:00:05.000Z') }, partial.state).replies, [], 'heard once');
});

test('a cancel is heard with its statusMessage; streams that did not name the task, and streams not yet acknowledged, hear nothing', () => {
  const a = listening(fresh(), 'A', { taskIds: ['t'] }, [working('t')]);
  const b = listening(a.state, 'B', { taskIds: ['other'] }, [working('other')]);
  const unacked = feed(b.state, listenReq('C', { taskIds: ['t'] }));
  const step = fold(unacked.state, { kind: 'taskStatus', task: cancelled('t') });
  assert.equal(statuses(step.replies), [[{ [SUB]: 'A' }, 't', 'cancelled']]);
  assert.is((step.replies[0] as Msg | undefined)?.params?.statusMessage, 'Stopped: the task was cancelled by the client (tasks/cancel).');
});

test('a stream acknowledged after the task changed hears its state then; a later stream of the same task starts from its own acknowledgment', () => {
  const a = listening(fresh(), 1, { taskIds: ['t'] }, [completed('t')]);
  assert.equal(statuses(a.replies), [[{ [SUB]: 1 }, 't', 'completed']]);
  const b = listening(a.state, 2, { taskIds: ['t'] }, [completed('t')]);
  assert.equal(statuses(b.replies), [[{ [SUB]: 2 }, 't', 'completed']], 'the first stream, already told, hears nothing again');
});

test('notifications/cancelled ends the stream: a later change is not sent', () => {
  const r = listening(fresh(), 'L', { taskIds: ['t'] }, [working('t')]);
  const cancelledListen = feed(r.state, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'L' } });
  assert.is(cancelledListen.state.pending.size, 0);
  assert.equal(handleEffectResult({ kind: 'taskStatus', task: completed('t') }, cancelledListen.state).replies, []);
});

test('bad taskIds get -32602 naming what is wrong; more than MAX_LISTEN_TASK_IDS is refused naming the limit', () => {
  const error = (notifications: unknown) => (feed(fresh(), listenReq(5, notifications)).replies[0] as Msg).error;
  for (const bad of ['t', [7], [''], ['x'.repeat(129)]]) {
    assert.is(error({ taskIds: bad })?.code, -32602, JSON.stringify(bad));
    assert.match(error({ taskIds: bad })?.message ?? '', /notifications\.taskIds must be an array of task ids/);
  }
  const many = Array.from({ length: MAX_LISTEN_TASK_IDS + 1 }, (_, i) => `t${i}`);
  assert.match(error({ taskIds: many })?.message ?? '', /MAX_LISTEN_TASK_IDS \(64\)/);
  assert.is(feed(fresh(), listenReq(6, { taskIds: many.slice(1) })).effects.length, 1, 'exactly the limit is accepted');
});

test.run();
