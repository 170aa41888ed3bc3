// End to end with raw JSON-RPC over Streamable HTTP: multi-round-trip, then a task (SEP-2663 with
// SEP-2322, conformance `tasks-mrtr-composition`). Under `super-pi-assistant` a `harness_task` call is `ask`
// ("starting work in another harness happens only when the person agrees"): a 2026-07-28 token caller that
// declares form elicitation and the Tasks extension gets `input_required` with the confirmation and a sealed
// `requestState`; the retry carrying the person's yes answers a flat CreateTaskResult, and the task runs on
// detached (polled by `tasks/get`, here on a second node of the same store) to its result. A no stays a
// complete tool result, no task; a tampered state is -32602 and nothing runs; the same yes sent again is
// -32602 "already used" and starts no second task.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ScriptedServer, ScriptStep } from '../model/fixtures/scripted-server.ts';
import { pollUntil } from '../hang-guard.ts';
import { type RunningServer } from './fixtures.ts';
import { type TwoNodes, startTwoNodes } from './two-nodes.ts';
import { httpAsk, type Message, TASKS, type Who } from './task-listen-wire.ts';

const ASKABLE = { elicitation: { form: {} }, extensions: { [TASKS]: {} } };
const ACCEPT = { action: 'accept', content: { allow: true } };
const said = (text: string): ScriptStep => ({ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: text } }] } });

const post = (server: RunningServer, method: string, params: Record<string, unknown>, who: Who = 'alice'): Promise<Message> =>
  httpAsk(server, method, params, who, ASKABLE);

const test = suite('a confirmed harness_task becomes a task on the retry (MRTR then task, HTTP, two nodes on one store)');
const script: ScriptStep[] = [];
let nodes: TwoNodes;
let model: ScriptedServer;
let nodeA: RunningServer;
let nodeB: RunningServer;

test.before(async () => {
  nodes = await startTwoNodes(script, ['--harness', 'super-pi-assistant']);
  ({ model, nodeA, nodeB } = nodes);
});
test.after(async () => {
  await nodes?.stop();
});

const call = (prompt: string) => ({ name: 'harness_task', arguments: { harness: 'super-pi-assistant', prompt } });

/** The first round: input_required with the one confirmation, a sealed state, and no task. */
async function confirmation(prompt: string): Promise<{ requestState: string }> {
  const first = await post(nodeA, 'tools/call', call(prompt));
  const result = first.result ?? {};
  assert.is(result.resultType, 'input_required', JSON.stringify(first));
  assert.not.ok('taskId' in result, 'round 1 carries no taskId');
  const requests = result.inputRequests as Record<string, { method: string; params: { message: string } }>;
  assert.equal(Object.keys(requests), ['confirm']);
  assert.is(requests.confirm!.method, 'elicitation/create');
  assert.match(requests.confirm!.params.message, /harness_task/);
  assert.match(requests.confirm!.params.message, /starting work in another harness happens only when the person agrees/);
  assert.type(result.requestState, 'string');
  return { requestState: result.requestState as string };
}

test('accept: the retry answers a flat CreateTaskResult, and tasks/get on the other node reads it to its result', async () => {
  script.push(said('Hello from the confirmed task.'));
  const asked = model.requests.length;
  const { requestState } = await confirmation('say hello');
  assert.is(model.requests.length, asked, 'nothing runs before the answer');

  const retry = await post(nodeB, 'tools/call', { ...call('say hello'), requestState, inputResponses: { confirm: ACCEPT } });
  const created = retry.result ?? {};
  assert.is(created.resultType, 'task', JSON.stringify(retry));
  assert.is(created.status, 'working');
  assert.type(created.taskId, 'string');
  assert.match(String(created.createdAt), /^\d{4}-\d{2}-\d{2}T/);
  assert.match(String(created.lastUpdatedAt), /^\d{4}-\d{2}-\d{2}T/);
  assert.is(created.ttlMs, null);
  for (const absent of ['requestState', 'inputRequests', 'result', 'content', 'task']) assert.not.ok(absent in created, absent);
  const taskId = String(created.taskId);

  const done = await pollUntil(`task ${taskId} to complete`, async () => {
    const got = await post(nodeA, 'tasks/get', { taskId });
    return got.result?.status === 'working' ? null : got;
  }, 15_000);
  assert.is(done.result?.status, 'completed', JSON.stringify(done));
  const result = done.result?.result as { content: { text: string }[]; structuredContent?: { conversation_id?: string }; isError?: boolean };
  assert.is(result.content[0]?.text, 'Hello from the confirmed task.');
  assert.is(result.structuredContent?.conversation_id, taskId);
  assert.not.ok(result.isError);
  assert.is(model.requests.length, asked + 1, 'the model was asked once');

  const bobs = await post(nodeA, 'tasks/get', { taskId }, 'bob');
  assert.is(bobs.error?.code, -32602, 'another token does not see it');
});

test('the same accepted retry again, on either node, is -32602 "already used" and starts no second task', async () => {
  script.push(said('Only once.'));
  const asked = model.requests.length;
  const { requestState } = await confirmation('only once');
  const retry = { ...call('only once'), requestState, inputResponses: { confirm: ACCEPT } };
  const created = await post(nodeA, 'tools/call', retry);
  assert.is(created.result?.resultType, 'task', JSON.stringify(created));
  const taskId = String(created.result?.taskId);
  for (const node of [nodeB, nodeA]) {
    const replayed = await post(node, 'tools/call', retry);
    assert.is(replayed.error?.code, -32602, JSON.stringify(replayed));
    assert.match(replayed.error!.message, /requestState was already used/);
  }
  const done = await pollUntil(`task ${taskId} to complete`, async () => {
    const got = await post(nodeB, 'tasks/get', { taskId });
    return got.result?.status === 'working' ? null : got;
  }, 15_000);
  assert.is(done.result?.status, 'completed', JSON.stringify(done));
  assert.is(model.requests.length, asked + 1, 'one task, one model turn');
});

test('accept, then cancel: the task created by the retry is cancellable like any detached task', async () => {
  let release!: () => void;
  script.push({ ...said('Too late.'), release: new Promise<void>((r) => (release = r)) });
  const asked = model.requests.length;
  const { requestState } = await confirmation('wait for it');
  const retry = await post(nodeA, 'tools/call', { ...call('wait for it'), requestState, inputResponses: { confirm: ACCEPT } });
  assert.is(retry.result?.resultType, 'task', JSON.stringify(retry));
  const taskId = String(retry.result?.taskId);
  // Cancelled in its model turn: a cancel sent to node B reaches node A's run through the store (on one
  // SQLite file, within a change-feed poll), so a task cancelled before it asked could still ask once, and
  // a later test counting the model's requests would count it.
  await pollUntil('the task to ask the model', async () => (model.requests.length > asked ? true : null), 15_000);
  const ack = await post(nodeB, 'tasks/cancel', { taskId });
  assert.is(ack.result?.resultType, 'complete', JSON.stringify(ack));
  release();
  const over = await pollUntil(`task ${taskId} to end`, async () => {
    const got = await post(nodeA, 'tasks/get', { taskId });
    return got.result?.status === 'working' ? null : got;
  }, 15_000);
  assert.is(over.result?.status, 'cancelled', JSON.stringify(over));
});

test('decline: the retry is a complete tool result saying why, no task, and the model is never asked', async () => {
  const asked = model.requests.length;
  const { requestState } = await confirmation('say no');
  for (const answer of [{ action: 'decline' }, { action: 'accept', content: { allow: false } }]) {
    const retry = await post(nodeB, 'tools/call', { ...call('say no'), requestState, inputResponses: { confirm: answer } });
    const result = retry.result ?? {};
    assert.is(result.resultType, 'complete', JSON.stringify(retry));
    assert.is(result.isError, true);
    assert.not.ok('taskId' in result);
    assert.match((result.content as { text: string }[])[0]!.text, /^Not run: harness_task needs the person's confirmation/);
  }
  assert.is(model.requests.length, asked);
});

test('a tampered, another caller\'s or another call\'s state is -32602 and starts nothing', async () => {
  const asked = model.requests.length;
  const { requestState } = await confirmation('tamper');
  const flipped = `${requestState.slice(0, -2)}${requestState.endsWith('AA') ? 'BB' : 'AA'}`;
  const refusals: Message[] = [
    await post(nodeA, 'tools/call', { ...call('tamper'), requestState: flipped, inputResponses: { confirm: ACCEPT } }),
    await post(nodeA, 'tools/call', { ...call('tamper'), requestState, inputResponses: { confirm: ACCEPT } }, 'bob'),
    await post(nodeA, 'tools/call', { ...call('something else'), requestState, inputResponses: { confirm: ACCEPT } }),
  ];
  for (const refused of refusals) {
    assert.is(refused.error?.code, -32602, JSON.stringify(refused));
    assert.not.ok(refused.result);
  }
  assert.is(model.requests.length, asked);
});

test.run();
