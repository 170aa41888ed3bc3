// The Tasks extension (SEP-2663) in the pure core: the -32021 gate, params checks, the effects tasks/get and
// tasks/cancel ask for, and the answers built from what the runtime brings back (CreateTaskResult, DetailedTask
// per stored status, the empty cancel ack).

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { StoredTask } from '../../src/mcp/effects.ts';
import { MAX_INPUT_RESPONSES, MAX_PARKED_QUESTIONS, MAX_TASK_ID_LENGTH, TASK_POLL_INTERVAL_MS } from '../../src/limits.ts';
import { handleMcpLine } from '../../src/mcp/handle.ts';
import { shownTtlMs } from '../../src/store/retention.ts';
import { requestSealer, roundTripAt } from '../../src/connection/request-sealer.ts';
import { feed, fold, fresh, ready, req } from './golden.ts';

type Reply = { id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };

const TASKS = 'io.modelcontextprotocol/tasks';
const META = (capabilities: object = { extensions: { [TASKS]: {} } }) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': capabilities,
  'io.modelcontextprotocol/clientInfo': { name: 'tasks', version: '1' },
});
const modern = (id: number, method: string, params: Record<string, unknown>, capabilities?: object) => req(id, method, { ...params, _meta: META(capabilities) });
const first = (r: { replies: unknown[] }) => r.replies[0] as Reply;
const TIMES = { createdAt: '2026-12-06T17:00:00.000Z', lastUpdatedAt: '2026-12-06T17:00:05.000Z' };

// ---------------------------------------------------------------------------------------------
const gate = suite('The gate: tasks/* need the extension declared in the request');

gate('tasks/get, tasks/update and tasks/cancel without it are -32021 naming the extension, and ask nothing of the runtime', () => {
  for (const [method, params] of [['tasks/get', { taskId: 't' }], ['tasks/update', { taskId: 't', inputResponses: {} }], ['tasks/cancel', { taskId: 't' }]] as const) {
    for (const capabilities of [{}, { extensions: {} }, { extensions: { [TASKS]: true } }, { extensions: [TASKS] }]) {
      const r = feed(fresh(), modern(1, method, params, capabilities));
      assert.is(first(r).error?.code, -32021, `${method} with ${JSON.stringify(capabilities)}`);
      assert.equal(first(r).error?.data, { requiredCapabilities: { extensions: { [TASKS]: {} } } });
      assert.equal(r.effects, []);
      assert.is(r.state.pending.size, 0);
    }
  }
});

gate('the gate comes before the params: an undeclared tasks/get with no taskId is still -32021', () => {
  assert.is(first(feed(fresh(), modern(1, 'tasks/get', {}, {}))).error?.code, -32021);
});

gate('a 2025 session has no tasks/* methods (-32601)', () => {
  for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
    assert.is(first(feed(ready('2025-11-25'), req(1, method, { taskId: 't' }))).error?.code, -32601, method);
  }
});

gate('server/discover lists the extension under capabilities.extensions, never a v1 capabilities.tasks', () => {
  const capabilities = first(feed(fresh(), modern(1, 'server/discover', {}))).result?.capabilities as Record<string, unknown>;
  assert.equal(capabilities.extensions, { [TASKS]: {} });
  assert.not.ok('tasks' in capabilities);
});

// ---------------------------------------------------------------------------------------------
const params = suite('Params: taskId and inputResponses');

params('a taskId that is missing, not a string, empty or too long is -32602, and nothing is read', () => {
  for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
    for (const taskId of [undefined, 7, null, '', 'x'.repeat(MAX_TASK_ID_LENGTH + 1)]) {
      const r = feed(fresh(), modern(1, method, { inputResponses: {}, ...(taskId === undefined ? {} : { taskId }) }));
      assert.is(first(r).error?.code, -32602, `${method} taskId=${JSON.stringify(taskId)?.slice(0, 20)}`);
      assert.equal(r.effects, []);
    }
  }
  assert.match(first(feed(fresh(), modern(1, 'tasks/get', { taskId: 'x'.repeat(MAX_TASK_ID_LENGTH + 1) }))).error?.message ?? '', /MAX_TASK_ID_LENGTH/);
});

params('tasks/update needs inputResponses: an object of objects, at most MAX_INPUT_RESPONSES of them; else -32602 and nothing asked', () => {
  const refused: unknown[] = [undefined, null, [], 'yes', { 'confirm-1-2': 'accept' }, { 'confirm-1-2': null }, { k: [] },
    Object.fromEntries(Array.from({ length: MAX_INPUT_RESPONSES + 1 }, (_, i) => [`k${i}`, { action: 'accept' }]))];
  for (const inputResponses of refused) {
    const r = feed(fresh(), modern(1, 'tasks/update', { taskId: 't', ...(inputResponses === undefined ? {} : { inputResponses }) }));
    assert.is(first(r).error?.code, -32602, JSON.stringify(inputResponses)?.slice(0, 40));
    assert.match(first(r).error?.message ?? '', /inputResponses/);
    assert.equal(r.effects, []);
  }
});

params('one tasks/update can answer every question a task parks with at once (MAX_PARKED_QUESTIONS ≤ MAX_INPUT_RESPONSES)', () => {
  assert.ok(MAX_PARKED_QUESTIONS <= MAX_INPUT_RESPONSES, `${MAX_PARKED_QUESTIONS} > ${MAX_INPUT_RESPONSES}`);
});

params('tasks/update reads each answer by the one rule (accept with allow not unticked is yes) and asks the runtime with them', () => {
  const inputResponses = {
    'confirm-2-7': { action: 'accept', content: { allow: true } },
    plain: { action: 'accept' },
    unticked: { action: 'accept', content: { allow: false } },
    no: { action: 'decline' },
    gone: { action: 'cancel' },
    odd: { ignored: true },
  };
  const r = feed(fresh(), modern(5, 'tasks/update', { taskId: 'conv-1', inputResponses }));
  assert.equal(r.replies, []);
  assert.equal(r.effects, [{
    kind: 'updateTask', ticket: 1, taskId: 'conv-1', answers: [
      { key: 'confirm-2-7', person: { allowed: true, refusal: '' } },
      { key: 'plain', person: { allowed: true, refusal: '' } },
      { key: 'unticked', person: { allowed: false, refusal: 'the person did not allow it' } },
      { key: 'no', person: { allowed: false, refusal: 'the person answered "decline"' } },
      { key: 'gone', person: { allowed: false, refusal: 'the person answered "cancel"' } },
      { key: 'odd', person: { allowed: false, refusal: 'the person answered "nothing"' } },
    ],
    canAsk: false,
  }]);
});

params('a sample-… key\'s answer is the client model\'s CreateMessageResult, passed on whole; anything else under such a key is -32602', () => {
  const sampled = { role: 'assistant', model: 'm', content: { type: 'text', text: 'Done.' } };
  const r = feed(fresh(), modern(5, 'tasks/update', { taskId: 'conv-1', inputResponses: { 'sample-1-2': sampled } }));
  assert.equal(r.effects, [{ kind: 'updateTask', ticket: 1, taskId: 'conv-1', answers: [{ key: 'sample-1-2', sampled }], canAsk: false }]);
  const bad = feed(fresh(), modern(5, 'tasks/update', { taskId: 'conv-1', inputResponses: { 'sample-1-2': { action: 'accept' } } }));
  assert.is(first(bad).error?.code, -32602);
  assert.match(first(bad).error?.message ?? '', /sampling\/createMessage result/);
  assert.equal(bad.effects, []);
});

params('a remote client that declares form elicitation reads and answers as one that can be asked (canAsk): a model turn offers the tools under ask', () => {
  const remote = fresh({ principal: { kind: 'token', name: 'alice' } });
  const caps = { elicitation: { form: {} }, extensions: { [TASKS]: {} } };
  assert.equal(feed(remote, modern(5, 'tasks/get', { taskId: 'conv-1' }, caps)).effects, [{ kind: 'readTask', ticket: 1, taskId: 'conv-1', canAsk: true }]);
  assert.equal((feed(remote, modern(5, 'tasks/update', { taskId: 'conv-1', inputResponses: {} }, caps)).effects[0] as { canAsk?: boolean }).canAsk, true);
  assert.equal(feed(fresh(), modern(5, 'tasks/get', { taskId: 'conv-1' }, caps)).effects, [{ kind: 'readTask', ticket: 1, taskId: 'conv-1', canAsk: false }], 'the local user is never asked inside a task');
});

params('tasks/update is acked with the empty {resultType: "complete"} (no task fields), and a task not the caller\'s is -32602', () => {
  const r = feed(fresh(), modern(5, 'tasks/update', { taskId: 'conv-1', inputResponses: {} }));
  const ack = first(fold(r.state, { kind: 'taskUpdated', ticket: 1, found: true }));
  assert.is(ack.id, 5);
  assert.equal(ack.result, { resultType: 'complete', _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'super-pi', version: '0.1.0' } } });
  const missing = first(fold(r.state, { kind: 'taskUpdated', ticket: 1, found: false }));
  assert.is(missing.error?.code, -32602);
  assert.match(missing.error?.message ?? '', /no task conv-1/);
});

// ---------------------------------------------------------------------------------------------
const get = suite('tasks/get: a store read, then the DetailedTask by status');

const asked = (method: 'tasks/get' | 'tasks/cancel', taskId = 'conv-1') => {
  const r = feed(fresh(), modern(4, method, { taskId }));
  assert.equal(r.replies, []);
  assert.is(r.effects.length, 1);
  return r;
};
const read = (task: StoredTask | null) => {
  const r = asked('tasks/get');
  assert.equal(r.effects[0], { kind: 'readTask', ticket: 1, taskId: 'conv-1', canAsk: false });
  const answered = fold(r.state, { kind: 'taskRead', ticket: 1, task });
  assert.is(answered.state.pending.size, 0);
  return first(answered);
};
const stored = (status: StoredTask['status'], outcome: StoredTask['outcome'] = null): StoredTask => ({ taskId: 'conv-1', ...TIMES, status, outcome });
const done = { text: 'Done.', structured: { conversation_id: 'conv-1', harness: 'super-pi-code', status: 'completed', turns: 1, tool_calls: 0, answer: 'Done.' } };

get('a task the store does not give the caller (another principal\'s, or none) is -32602', () => {
  const answer = read(null);
  assert.is(answer.id, 4);
  assert.is(answer.error?.code, -32602);
  assert.match(answer.error?.message ?? '', /no task conv-1/);
});

get('running is working: times, ttlMs null, pollIntervalMs, no result, no requestState', () => {
  assert.equal(read(stored('running')).result, {
    taskId: 'conv-1', ...TIMES, ttlMs: null, pollIntervalMs: TASK_POLL_INTERVAL_MS, status: 'working',
    resultType: 'complete', _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'super-pi', version: '0.1.0' } },
  });
});

get('completed inlines the harness_task result as a tools/call would answer it', () => {
  const result = read(stored('completed', done)).result!;
  assert.is(result.status, 'completed');
  assert.equal(result.result, { content: [{ type: 'text', text: 'Done.' }], structuredContent: done.structured });
  assert.not.ok('error' in result);
});

get('failed (a tool-level end: the model\'s error, max_turns) is completed with an isError result', () => {
  const result = read(stored('failed', { text: 'the model endpoint answered 500', isError: true })).result!;
  assert.is(result.status, 'completed');
  assert.equal(result.result, { content: [{ type: 'text', text: 'the model endpoint answered 500' }], isError: true });
});

get('cancelled is cancelled, saying why, with no result', () => {
  const result = read(stored('cancelled', { text: 'Stopped: the task was cancelled by the client.', isError: true })).result!;
  assert.is(result.status, 'cancelled');
  assert.is(result.statusMessage, 'Stopped: the task was cancelled by the client.');
  assert.not.ok('result' in result);
});

get('input_required shows the parked question as one elicitation/create input request under its key, and no result', () => {
  const message = 'A super-pi-code task wants to run the command: touch x\n(bash asks)';
  const result = read({ ...stored('input_required'), question: { asks: [{ key: 'confirm-2-7', message }] } }).result!;
  assert.is(result.status, 'input_required');
  assert.is(result.statusMessage, message);
  assert.equal(result.inputRequests, {
    'confirm-2-7': {
      method: 'elicitation/create',
      params: { message, requestedSchema: { type: 'object', properties: { allow: { type: 'boolean', title: 'Allow', description: 'Allow this call', default: true } } } },
    },
  });
  for (const absent of ['result', 'error', 'requestState']) assert.not.ok(absent in result, absent);
});

get('input_required at several questions of one turn shows one elicitation/create per question not answered yet, each under its key, the statusMessage listing them', () => {
  const one = 'A super-pi-code task wants to run the command: echo one\n(bash asks)';
  const two = 'A super-pi-code task wants to run the command: echo two\n(bash asks)';
  const result = read({ ...stored('input_required'), question: { asks: [{ key: 'confirm-2-7-1', message: one }, { key: 'confirm-2-7-2', message: two }] } }).result!;
  assert.is(result.status, 'input_required');
  const requests = result.inputRequests as Record<string, { method: string; params: { message: string } }>;
  assert.equal(Object.keys(requests), ['confirm-2-7-1', 'confirm-2-7-2']);
  assert.equal(Object.values(requests).map((r) => [r.method, r.params.message]), [['elicitation/create', one], ['elicitation/create', two]]);
  assert.match(String(result.statusMessage), /^2 calls wait for the person's confirmation:[\s\S]*echo one[\s\S]*echo two/);
  const rest = read({ ...stored('input_required'), question: { asks: [{ key: 'confirm-2-7-2', message: two }] } }).result!;
  assert.equal(Object.keys(rest.inputRequests as object), ['confirm-2-7-2'], 'an answered question is gone');
  assert.is(rest.statusMessage, two);
});

get('input_required at a model turn of the client shows one sampling/createMessage input request with the turn\'s params', () => {
  const params = { messages: [{ role: 'user', content: { type: 'text', text: 'go' } }], systemPrompt: 'sys', maxTokens: 4096 };
  const result = read({ ...stored('input_required'), question: { key: 'sample-1-1', params } }).result!;
  assert.is(result.status, 'input_required');
  assert.equal(result.inputRequests, { 'sample-1-1': { method: 'sampling/createMessage', params } });
});

get('input_required at a model turn too long to show says why in its status message, with no input requests', () => {
  const unshown = 'the task waits for a model turn of its client, but its conversation is longer than one tasks/get reads';
  const result = read({ ...stored('input_required'), question: { key: 'sample-4-9004', unshown } }).result!;
  assert.is(result.status, 'input_required');
  assert.is(result.statusMessage, unshown);
  assert.equal(result.inputRequests, {});
});

get('input_required whose transcript shows no question still says input_required, with no input requests', () => {
  const result = read({ ...stored('input_required'), question: null }).result!;
  assert.is(result.status, 'input_required');
  assert.equal(result.inputRequests, {});
});

get('interrupted (its process died) is failed with an inlined error {code, message} and no result', () => {
  const result = read(stored('interrupted', { text: 'The task was interrupted: the server stopped.', isError: true })).result!;
  assert.is(result.status, 'failed');
  const error = result.error as { code: unknown; message: unknown; data: unknown };
  assert.is(error.code, -32603);
  assert.is(error.message, 'The task was interrupted: the server stopped.');
  assert.equal(error.data, { conversation_id: 'conv-1' });
  assert.not.ok('result' in result);
});

// ---------------------------------------------------------------------------------------------
const cancel = suite('tasks/cancel: the empty ack');

cancel('asks the runtime to cancel, and answers found with {resultType: "complete"} and nothing of the task', () => {
  const r = asked('tasks/cancel');
  assert.equal(r.effects[0], { kind: 'cancelTask', ticket: 1, taskId: 'conv-1' });
  const ack = first(fold(r.state, { kind: 'taskCancelled', ticket: 1, found: true }));
  assert.equal(ack.result, { resultType: 'complete', _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'super-pi', version: '0.1.0' } } });
});

cancel('a task not found is -32602', () => {
  const r = asked('tasks/cancel');
  assert.is(first(fold(r.state, { kind: 'taskCancelled', ticket: 1, found: false })).error?.code, -32602);
});

// ---------------------------------------------------------------------------------------------
const create = suite('tools/call harness_task: the runtime may create a task');

const call = (capabilities: object | undefined, args: Record<string, unknown> = { harness: 'super-pi-code', prompt: 'go' }) =>
  feed(fresh(), modern(9, 'tools/call', { name: 'harness_task', arguments: args }, capabilities));

create('the runTool effect is marked task only for a harness_task whose request declared the extension (not an undo, not another tool)', () => {
  const marked = (r: ReturnType<typeof call>) => (r.effects[0] as { task?: boolean }).task === true;
  assert.ok(marked(call(undefined)));
  assert.not.ok(marked(call({})));
  assert.not.ok(marked(call(undefined, { harness: 'super-pi-code', prompt: 'undo it', conversation_id: 'c', undo: true })));
  const read = feed(fresh(), modern(9, 'tools/call', { name: 'read', arguments: { path: 'a' } }));
  assert.not.ok(marked(read));
});

create('a call whose person may be asked from inside the task (a remote caller declaring form elicitation, a harness that asks) is marked task and keeps its rounds (the runtime parks it input_required)', () => {
  const roundTrip = roundTripAt(requestSealer(new Uint8Array(32).fill(7)), 1_000);
  const remote = fresh({ principal: { kind: 'token', name: 'alice' } });
  const effectOf = (capabilities: object, harness: string) => {
    const step = handleMcpLine(JSON.stringify(modern(9, 'tools/call', { name: 'harness_task', arguments: { harness, prompt: 'go' } }, capabilities)), remote, roundTrip);
    return step.effects[0] as { kind: string; task?: boolean; rounds?: { ask: boolean } };
  };
  const asking = effectOf({ elicitation: { form: {} }, extensions: { [TASKS]: {} } }, 'super-pi-code');
  assert.is(asking.kind, 'runTool');
  assert.is(asking.rounds?.ask, true);
  assert.is(asking.task, true);
  assert.is(effectOf({ elicitation: { form: {} } }, 'super-pi-code').task, undefined, 'without the extension: round trips only');
  assert.is(effectOf({ extensions: { [TASKS]: {} } }, 'super-pi-code').task, true, 'a client that cannot be asked: a task');
  assert.is(effectOf({ elicitation: { form: {} }, extensions: { [TASKS]: {} } }, 'super-pi-assistant').task, true, 'a harness that does not ask inside tasks: a task');
});

create('a modern tools/list says harness_task may run as a task (taskSupport optional); a 2025 session is not told', () => {
  type Listed = { name: string; execution?: unknown }[];
  const modernList = first(feed(fresh(), modern(1, 'tools/list', {}))).result?.tools as Listed;
  assert.equal(modernList.find((t) => t.name === 'harness_task')?.execution, { taskSupport: 'optional' });
  assert.ok(modernList.filter((t) => t.name !== 'harness_task').every((t) => t.execution === undefined));
  const legacyList = first(feed(ready('2025-11-25'), req(1, 'tools/list'))).result?.tools as Listed;
  assert.ok(legacyList.some((t) => t.name === 'harness_task'));
  assert.ok(legacyList.every((t) => t.execution === undefined));
});

create('taskCreated answers the flat CreateTaskResult: resultType task, working, ISO times, ttlMs null, pollIntervalMs', () => {
  const r = call(undefined);
  const answer = first(fold(r.state, { kind: 'taskCreated', ticket: 1, task: { taskId: 'conv-9', ...TIMES } }));
  assert.is(answer.id, 9);
  assert.equal(answer.result, {
    resultType: 'task', taskId: 'conv-9', status: 'working', ...TIMES, ttlMs: null, pollIntervalMs: TASK_POLL_INTERVAL_MS,
    _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'super-pi', version: '0.1.0' } },
  });
});

create('with a retention (--task-ttl) the CreateTaskResult and every DetailedTask carry the ttlMs the runtime read, not null', () => {
  const r = call(undefined);
  const answer = first(fold(r.state, { kind: 'taskCreated', ticket: 1, task: { taskId: 'conv-9', ...TIMES, ttlMs: 3_600_000 } }));
  assert.is(answer.result?.ttlMs, 3_600_000);
  for (const status of ['running', 'completed', 'failed', 'cancelled', 'interrupted', 'input_required'] as const) {
    assert.is(read({ ...stored(status, status === 'running' || status === 'input_required' ? null : { ...done, isError: false }), ttlMs: 3_605_000 }).result?.ttlMs, 3_605_000, status);
  }
  // Absent and null are the default: no retention.
  assert.is(read({ ...stored('running'), ttlMs: null }).result?.ttlMs, null);
});

create('shownTtlMs: the retention itself at creation, counted from the last update once the task moved on; null without one', () => {
  assert.is(shownTtlMs({ createdAt: 1000, updatedAt: 1000, ttlMs: 60_000 }), 60_000);
  assert.is(shownTtlMs({ createdAt: 1000, updatedAt: 6000, ttlMs: 60_000 }), 65_000, 'createdAt + ttlMs = last update + retention');
  assert.is(shownTtlMs({ createdAt: 1000, updatedAt: 6000 }), null);
});

create('a task not created (the runtime ran it on the request) answers the tool result as before', () => {
  const r = call(undefined);
  const answer = first(fold(r.state, { kind: 'toolDone', ticket: 1, outcome: { text: 'no model', isError: true } }));
  assert.is(answer.result?.resultType, 'complete');
  assert.is(answer.result?.isError, true);
});

gate.run();
params.run();
get.run();
cancel.run();
create.run();
