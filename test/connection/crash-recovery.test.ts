// What a session does with its requests when its connection actor dies (issue 11): the pure decision
// (`recover`), then a Session on a recording scheduler, which shows what crosses to the next incarnation
// and what the client is answered.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ActorExit } from '../../src/actors/behaviour.ts';
import type { ConnectionOutput } from '../../src/connection/connection-actor.ts';
import { type Delivery, isSafeToRetry, recover, type TrackedRequest } from '../../src/connection/crash-recovery.ts';
import { idKey } from '../../src/mcp/jsonrpc.ts';
import { answer } from '../../src/mcp/outgoing.ts';
import type { ToolExecutor } from '../../src/tools/contract.ts';
import type { ToolOutcome } from '../../src/tools/contract.ts';
import { stubSession } from './stub-session.ts';
import type { DetachedTasks } from '../../src/task/detached-tasks.ts';
import type { EffectResult } from '../../src/mcp/effects.ts';

const call = (id: number, tool: string, args: object = {}) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: args } });
const request = (id: number, method: string) => JSON.stringify({ jsonrpc: '2.0', id, method, params: {} });

// ---------------------------------------------------------------------------------------------------

const retry = suite('isSafeToRetry: idempotent tools and methods without side effects');

retry('tools whose annotations say idempotent: read, ls, grep, find, write', () => {
  for (const name of ['read', 'ls', 'grep', 'find', 'write']) assert.ok(isSafeToRetry('tools/call', { name }), name);
});
retry('bash, edit and harness_task are not retried', () => {
  for (const name of ['bash', 'edit', 'harness_task', 'no-such-tool']) assert.not.ok(isSafeToRetry('tools/call', { name }), name);
});
retry('ping, */list, prompts/get, resources/read, completion/complete and the session-state methods are retried; the rest are not', () => {
  for (const m of ['ping', 'tools/list', 'prompts/list', 'resources/list', 'resources/templates/list', 'prompts/get', 'resources/read', 'completion/complete']) assert.ok(isSafeToRetry(m, {}), m);
  // Their only effect is the session's state, which the crash rolled back to the checkpoint before them.
  for (const m of ['initialize', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe']) assert.ok(isSafeToRetry(m, {}), m);
  for (const m of ['tasks/cancel', 'sampling/createMessage', 'no/such-method']) assert.not.ok(isSafeToRetry(m, {}), m);
});

// ---------------------------------------------------------------------------------------------------

const decide = suite('recover: the fate of each request and message');

function tracked(entries: [number, string, boolean, Partial<TrackedRequest>?][]): Map<string, TrackedRequest> {
  return new Map(entries.map(([id, line, retryable, extra]) => [idKey(id), { id, line, retryable, begun: false, crashes: 0, ...extra }]));
}
const lineOf = (text: string, ids: number[]): Delivery => ({ msg: { k: 'line', line: text }, keys: ids.map(idKey), crashes: 0 });
const never = () => false;
const lines = (ds: Delivery[]) => ds.map((d) => (d.msg.k === 'line' ? d.msg.line : d.msg.k));

decide('messages never begun go to the next incarnation in order; only the one under way is decided', () => {
  const inFlight = tracked([[1, call(1, 'bash'), false], [2, call(2, 'read'), true], [3, call(3, 'bash'), false]]);
  const r = recover(inFlight, [lineOf(call(1, 'bash'), [1]), lineOf(call(2, 'read'), [2]), lineOf(call(3, 'bash'), [3])], 'crash', never);
  assert.equal(r.answers.map((a) => [a.id, a.reason]), [[1, 'effect-unknown']]);
  assert.equal(lines(r.redeliver), [call(2, 'read'), call(3, 'bash')]);
});

decide('an idempotent request under way runs once more, first; a non-idempotent one is answered "effect unknown"', () => {
  const inFlight = tracked([[1, call(1, 'grep'), true], [2, call(2, 'ls'), true]]);
  const r = recover(inFlight, [lineOf(call(1, 'grep'), [1]), lineOf(call(2, 'ls'), [2])], 'crash', never);
  assert.equal(r.answers, []);
  assert.equal(lines(r.redeliver), [call(1, 'grep'), call(2, 'ls')]);
  assert.is(inFlight.get(idKey(1))?.crashes, 1, 'the crash is charged to the request under way');
  assert.is(inFlight.get(idKey(2))?.crashes, 0);
});

decide('a request under way at two crashes in a row is poison: answered as the cause, not delivered again', () => {
  const inFlight = tracked([[1, call(1, 'read'), true, { crashes: 1 }], [2, call(2, 'read'), true]]);
  const r = recover(inFlight, [lineOf(call(1, 'read'), [1]), lineOf(call(2, 'read'), [2])], 'crash', never);
  assert.equal(r.answers.map((a) => [a.id, a.reason]), [[1, 'poison']]);
  assert.equal(lines(r.redeliver), [call(2, 'read')]);
  assert.not.ok(inFlight.has(idKey(1)));
});

decide('a killed worker charges nobody: the request under way is retried however often it was', () => {
  const inFlight = tracked([[1, call(1, 'read'), true, { crashes: 1 }]]);
  const r = recover(inFlight, [lineOf(call(1, 'read'), [1])], 'kill', never);
  assert.equal(r.answers, []);
  assert.equal(lines(r.redeliver), [call(1, 'read')]);
});

decide('begun requests waiting on the runtime: idempotent ones run again, others are answered; their results are dropped', () => {
  const inFlight = tracked([[1, call(1, 'grep'), true, { begun: true, crashes: 1 }], [2, call(2, 'bash'), false, { begun: true }]]);
  const result: Delivery = { msg: { k: 'result', result: { kind: 'toolDone', ticket: 1, outcome: { ok: true, content: [] } } as never }, keys: [idKey(1)], crashes: 0 };
  const r = recover(inFlight, [lineOf(request(3, 'ping'), [3]), result], 'crash', never);
  assert.equal(r.answers.map((a) => [a.id, a.reason]), [[2, 'effect-unknown']]);
  assert.equal(lines(r.redeliver), [call(1, 'grep'), request(3, 'ping')], 'the bystander is retried, the unbegun ping follows');
  assert.is(inFlight.get(idKey(1))?.crashes, 0, 'a bystander\'s row of crashes is broken');
});

decide('adopted work: its request is left alone and its queued result goes again — unless that result was under way', () => {
  const inFlight = tracked([[1, call(1, 'bash'), false, { begun: true }], [2, call(2, 'bash'), false, { begun: true }]]);
  const done = (ticket: number, id: number): Delivery => ({ msg: { k: 'result', result: { kind: 'toolDone', ticket, outcome: { text: 'ok' } } }, keys: [idKey(id)], crashes: 0 });
  const r = recover(inFlight, [done(7, 1), done(8, 2)], 'crash', () => true);
  assert.equal(r.answers.map((a) => [a.id, a.reason]), [[1, 'effect-unknown']], 'the call whose result was under way is the cause');
  assert.equal(r.redeliver.map((d) => d.keys), [[idKey(2)]], 'the other call\'s result goes to the adopting actor');
});

decide('harness tasks outlive the actor: their requests are left alone', () => {
  const inFlight = tracked([[1, call(1, 'harness_task'), false, { begun: true }]]);
  const r = recover(inFlight, [], 'crash', (key) => key === idKey(1));
  assert.equal(r.answers, []);
  assert.equal(r.redeliver, []);
  assert.ok(inFlight.has(idKey(1)));
});

decide('a batch under way: its requests are decided one by one, its other elements go again as lines', () => {
  const elements = [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'bash', arguments: {} } }, { jsonrpc: '2.0', method: 'notifications/progress', params: {} }, { jsonrpc: '2.0', id: 2, method: 'ping', params: {} }];
  const inFlight = tracked([[1, 'bash-line', false], [2, 'ping-line', true]]);
  // The session keeps a batch's elements as its frame was read, each with its request's key.
  const parts = elements.map((value) => ({ key: value.id === undefined ? null : idKey(value.id), value }));
  const r = recover(inFlight, [{ ...lineOf(JSON.stringify(elements), [1, 2]), batch: parts }], 'crash', never);
  assert.equal(r.answers.map((a) => a.id), [1]);
  assert.equal(lines(r.redeliver), ['ping-line', JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: {} })]);
});

decide('a notification under way goes again once; under way at the next crash too, it is dropped as poison', () => {
  const note = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const first = recover(new Map(), [lineOf(note, [])], 'crash', never);
  assert.equal(lines(first.redeliver), [note]);
  const second = recover(new Map(), first.redeliver, 'crash', never);
  assert.equal(second.redeliver, []);
  assert.is(second.droppedPoison, 1);
});

// ---------------------------------------------------------------------------------------------------

const session = suite('Session: a crash costs one request, not a mailbox');
const init = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });

function harness(detached?: DetachedTasks) {
  /** Tool bodies run by the session's effect runner: each waits until the test finishes it. */
  const running = new Map<string, (outcome: ToolOutcome) => void>();
  const executeTool: ToolExecutor = (tool) => new Promise((resolve) => running.set(tool, resolve));
  const { session: s, sent, actors, actor } = stubSession({ effects: { toolTimeoutMs: 60_000, executeTool, ...(detached === undefined ? {} : { detached }) } });
  const out = (i: number, o: Partial<ConnectionOutput> & { handled: number }) => actor(i).deliver({ replies: [], effects: [], ...o } satisfies ConnectionOutput);
  const die = async (i: number, reason: ActorExit) => {
    actor(i).settle(reason);
    await Promise.resolve();
    await s.start();
  };
  const linesTo = (i: number) => (actors[i]?.casts ?? []).map((m) => (m.k === 'line' ? (JSON.parse(m.line) as { id?: number }).id ?? 'note' : m.k));
  const answers = () => sent.map((l) => JSON.parse(l) as { id: number; error?: { code: number; message: string; data?: { reason: string } } });
  return { s, sent, out, die, linesTo, answers, actor, actors, running };
}
const crash: ActorExit = { kind: 'crash', cause: { name: 'ChaosCrash', message: 'chaos' } };
const ok = (id: number) => answer(id, {});

session('a crash with 100 queued reads: the one under way runs again, the 99 behind it are redelivered in order, nothing is answered with an error', async () => {
  const h = harness();
  await h.s.start();
  h.actor(0).started();
  h.s.receiveFrame({ kind: 'line', text: init });
  h.out(0, { replies: [ok(0)], handled: 1 });
  for (let i = 1; i <= 100; i++) h.s.receiveFrame({ kind: 'line', text: call(i, 'read', { path: 'a' }) });
  h.out(0, { replies: [ok(1)], handled: 2 });
  await h.die(0, crash);
  assert.equal(h.linesTo(1), Array.from({ length: 99 }, (_, i) => i + 2));
  assert.equal(h.answers().map((a) => a.id), [0, 1], 'no request was answered with an error');
  assert.is(h.s.inFlight, 99);
});

session('a request reusing an id in flight is refused by the session and never reaches the actor; the first keeps its entry, so a crash still answers it', async () => {
  const h = harness();
  await h.s.start();
  h.actor(0).started();
  h.s.receiveFrame({ kind: 'line', text: call(1, 'bash', { command: 'sleep 9' }) });
  h.out(0, { replies: [], handled: 1 });
  h.s.receiveFrame({ kind: 'line', text: request(1, 'ping') });
  h.s.receiveFrame({ kind: 'line', text: request(1, 'tools/list') });
  assert.equal(h.linesTo(0), [1], 'only the first request with id 1 reached the actor');
  assert.equal(h.answers().map((a) => [a.id, a.error?.code]), [[1, -32600], [1, -32600]]);
  assert.match(h.answers()[0]?.error?.message ?? '', /id 1 is already used by a request in flight/);
  assert.is(h.s.inFlight, 1, 'the bash call is still in flight');
  await h.die(0, crash);
  assert.equal(h.answers().map((a) => a.error?.data?.reason ?? a.error?.code), [-32600, -32600, 'crashed'], 'the bash call is answered "effect unknown" after the crash');
});

session('a batch element reusing an id (in flight, or earlier in the batch) is refused; the rest of the batch goes on, and a crash splits what is left of it', async () => {
  const h = harness();
  await h.s.start();
  h.actor(0).started();
  h.s.receiveFrame({ kind: 'line', text: call(1, 'bash') });
  h.out(0, { replies: [], handled: 1 });
  const batch = `[${request(1, 'ping')},${request(2, 'ping')},${request(2, 'tools/list')},${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: {} })}]`;
  h.s.receiveFrame({ kind: 'line', text: batch });
  assert.equal(h.answers().map((a) => [a.id, a.error?.code]), [[1, -32600], [2, -32600]]);
  const sent = h.actors[0]?.casts[1];
  assert.ok(sent?.k === 'line');
  assert.equal((JSON.parse(sent.line) as { id?: number; method: string }[]).map((m) => m.id ?? m.method), [2, 'notifications/progress']);
  await h.die(0, crash);
  // The bash call (begun) is answered; the batch under way goes again as its parts: the ping (retried), the notification.
  assert.equal(h.linesTo(1), [2, 'note']);
});

session('a bash call under way at a crash is answered "effect unknown" and is not sent again; the calls behind it are', async () => {
  const h = harness();
  await h.s.start();
  h.s.receiveFrame({ kind: 'line', text: call(1, 'bash', { command: 'date >> log' }) });
  h.s.receiveFrame({ kind: 'line', text: call(2, 'read') });
  await h.die(0, crash);
  const [answer] = h.answers();
  assert.is(answer?.id, 1);
  assert.is(answer?.error?.code, -32010);
  assert.is(answer?.error?.data?.reason, 'crashed');
  assert.match(answer?.error?.message ?? '', /crashed while running this request.*effect is unknown/);
  assert.equal(h.linesTo(1), [2]);
});

session('an initialize under way at a crash runs again on the next incarnation (it only sets state the crash rolled back), and is answered once with no error', async () => {
  const h = harness();
  await h.s.start();
  h.actor(0).started();
  // Past the cold start: the session no longer answers an initialize itself (README, "Crash semantics").
  await new Promise((r) => setTimeout(r, 0));
  h.s.receiveFrame({ kind: 'line', text: init });
  h.s.receiveFrame({ kind: 'line', text: request(1, 'ping') });
  await h.die(0, crash);
  assert.equal(h.answers(), [], 'nothing is answered, with an error or otherwise');
  assert.equal(h.linesTo(1), [0, 1], 'the initialize goes again, before the ping behind it');
  h.actor(1).started();
  h.out(1, { replies: [ok(0), ok(1)], handled: 2 });
  assert.equal(h.answers().map((a) => [a.id, a.error?.code]), [[0, undefined], [1, undefined]]);
  assert.is(h.s.inFlight, 0);
});

session('a read that crashes two incarnations in a row is answered as the cause and never delivered a third time', async () => {
  const h = harness();
  await h.s.start();
  h.s.receiveFrame({ kind: 'line', text: call(1, 'read') });
  h.s.receiveFrame({ kind: 'line', text: call(2, 'read') });
  await h.die(0, crash);
  assert.equal(h.linesTo(1), [1, 2]);
  await h.die(1, crash);
  const [answer] = h.answers();
  assert.is(answer?.id, 1);
  assert.is(answer?.error?.data?.reason, 'poison');
  assert.match(answer?.error?.message ?? '', /crashed twice in a row while running this request/);
  assert.equal(h.linesTo(2), [2]);
});

session('tool calls running on the main thread outlive the actor: the next one adopts them, nothing runs twice, their results answer them there', async () => {
  const h = harness();
  await h.s.start();
  h.s.receiveFrame({ kind: 'line', text: call(1, 'bash', { command: 'date >> log' }) });
  h.s.receiveFrame({ kind: 'line', text: call(2, 'grep', { pattern: 'x' }) });
  h.s.receiveFrame({ kind: 'line', text: request(3, 'ping') });
  const runTool = (ticket: number, requestId: number, tool: 'bash' | 'grep') => ({ kind: 'runTool' as const, ticket, requestId, tool, args: {}, harness: 'super-pi-code' as const, client: { sampling: false, elicitation: false } });
  h.out(0, { effects: [runTool(7, 1, 'bash'), runTool(8, 2, 'grep')], handled: 2 });
  await Promise.resolve();
  assert.equal([...h.running.keys()], ['bash', 'grep']);
  await h.die(0, crash);
  assert.equal(h.answers(), [], 'no request was answered with an error');
  assert.equal(h.linesTo(1), [3], 'only the ping under way goes again: the two calls are adopted, not re-sent');
  assert.equal(h.actors[1]?.spawnArgs.adopted?.map(([ticket, p]) => [ticket, p.kind === 'tool' ? p.tool : p.kind]), [[7, 'bash'], [8, 'grep']]);
  assert.ok((h.actors[1]?.spawnArgs.ticketFloor ?? 0) > 8, 'the next actor never reuses a ticket of the dead one');
  h.running.get('bash')?.({ text: 'ran' } satisfies ToolOutcome);
  await new Promise((r) => setTimeout(r, 10));
  const toSecond = (h.actors[1]?.casts ?? []).filter((m) => m.k === 'result').map((m) => (m.k === 'result' && 'ticket' in m.result ? m.result.ticket : null));
  assert.equal(toSecond, [7], 'the bash result goes to the adopting actor');
});

session('a request begun and waiting on an effect: a crash elsewhere retries it if idempotent, answers it if not', async () => {
  const h = harness();
  await h.s.start();
  h.s.receiveFrame({ kind: 'line', text: call(1, 'grep') });
  h.s.receiveFrame({ kind: 'line', text: call(2, 'bash') });
  h.s.receiveFrame({ kind: 'line', text: request(3, 'ping') });
  h.out(0, { handled: 2 });
  await h.die(0, crash);
  assert.equal(h.answers().map((a) => [a.id, a.error?.data?.reason]), [[2, 'crashed']]);
  assert.equal(h.linesTo(1), [1, 3]);
});

session('given up: every request in flight and every later one is answered at once with why', async () => {
  const h = harness();
  await h.s.start();
  h.s.receiveFrame({ kind: 'line', text: call(1, 'read') });
  h.s.receiveFrame({ kind: 'line', text: call(2, 'bash') });
  h.s.giveUp('restart intensity exceeded');
  h.s.receiveFrame({ kind: 'line', text: request(3, 'ping') });
  const answers = h.answers();
  assert.equal(answers.map((a) => a.id), [1, 2, 3]);
  for (const a of answers) assert.match(a.error?.message ?? '', /session was given up \(restart intensity exceeded\)/);
  assert.is(h.s.inFlight, 0);
});

// ---------------------------------------------------------------------------------------------------

const creation = suite('Session: a harness_task call whose task is being created detached (Tasks extension) outlives its actor');

/** A node's detached tasks that take every task-marked call and answer when the test says. */
function detachedStarts() {
  const answers = new Map<number, (result: EffectResult) => void>();
  const detached = { take: (effect: { ticket: number }, _deps: unknown, _scheduler: unknown, deliver: (result: EffectResult) => void) => { answers.set(effect.ticket, deliver); return true; } } as unknown as DetachedTasks;
  const created = (ticket: number): EffectResult => ({ kind: 'taskCreated', ticket, task: { taskId: `task-${ticket}`, createdAt: '2026-07-28T00:00:00.000Z', lastUpdatedAt: '2026-07-28T00:00:00.000Z' } });
  return { detached, answer: (ticket: number) => answers.get(ticket)?.(created(ticket)), taken: () => [...answers.keys()] };
}
const taskCall = (ticket: number, requestId: number) => ({
  kind: 'runTool' as const, ticket, requestId, tool: 'harness_task' as const, args: { harness: 'super-pi-code', prompt: 'p' }, harness: 'super-pi-code' as const,
  client: { sampling: false, elicitation: false }, task: true as const,
});
const createdTo = (h: ReturnType<typeof harness>, i: number) => (h.actors[i]?.casts ?? []).flatMap((m) => (m.k === 'result' && m.result.kind === 'taskCreated' ? [m.result.ticket] : []));

creation('the actor dies while the task is being created: the call is not answered "effect unknown", and the next actor gets the start\'s answer', async () => {
  const starts = detachedStarts();
  const h = harness(starts.detached);
  await h.s.start();
  h.s.receiveFrame({ kind: 'line', text: call(1, 'harness_task', { harness: 'super-pi-code', prompt: 'p' }) });
  h.s.receiveFrame({ kind: 'line', text: request(2, 'ping') });
  h.out(0, { effects: [taskCall(5, 1)], handled: 1 });
  assert.equal(starts.taken(), [5], 'the node took the start');
  await h.die(0, crash);
  assert.equal(h.answers(), [], 'nothing was answered with an error: the task is being created');
  assert.equal(h.linesTo(1), [2], 'the ping under way goes again; the call is not re-sent (it is not run twice)');
  starts.answer(5);
  assert.equal(createdTo(h, 1), [5], 'the start\'s answer goes to the next actor, which answers the call with its task');
  h.out(1, { replies: [answer(1, { resultType: 'task', taskId: 'task-5' })], handled: 2 });
  assert.equal(h.answers().map((a) => a.id), [1]);
  assert.is(h.s.inFlight, 1, 'only the ping is left');
  await h.die(1, crash);
  assert.equal(createdTo(h, 2), [], 'once answered, a later crash redelivers nothing');
});

/** A session whose first actor took call 1, a task-marked harness_task, and asked the node to start it (ticket 5). */
async function creatingTask() {
  const starts = detachedStarts();
  const h = harness(starts.detached);
  await h.s.start();
  h.s.receiveFrame({ kind: 'line', text: call(1, 'harness_task', { harness: 'super-pi-code', prompt: 'p' }) });
  h.out(0, { effects: [taskCall(5, 1)], handled: 1 });
  return { starts, h };
}

creation('the answer reached an actor that died before replying: the next one gets it again, once', async () => {
  const { starts, h } = await creatingTask();
  starts.answer(5);
  assert.equal(createdTo(h, 0), [5]);
  await h.die(0, { kind: 'crash', cause: { name: 'WorkerKilled', message: 'the scheduler worker was terminated' } });
  assert.equal(h.answers(), []);
  assert.equal(createdTo(h, 1), [5], 'the answer the dead actor had is delivered again');
});

creation('the answer arrives while no actor is up: it waits in the buffer and is delivered once', async () => {
  const { starts, h } = await creatingTask();
  h.actor(0).settle(crash);
  await Promise.resolve();
  starts.answer(5);
  await h.s.start();
  assert.equal(createdTo(h, 1), [5]);
  assert.equal(h.answers(), []);
});

creation('an answer that crashes two actors in a row is poison: the call is answered so (naming its task), and not delivered again', async () => {
  const { starts, h } = await creatingTask();
  starts.answer(5);
  await h.die(0, crash);
  assert.equal(createdTo(h, 1), [5], 'a first crash on it: delivered again');
  assert.equal(h.answers(), []);
  await h.die(1, crash);
  assert.equal(h.answers().map((a) => [a.id, a.error?.code, a.error?.data]), [[1, -32010, { reason: 'poison', taskId: 'task-5' }]]);
  assert.match(h.answers()[0]?.error?.message ?? '', /Its task task-5 was created/);
  assert.equal(createdTo(h, 2), [], 'not delivered a third time');
  assert.is(h.s.inFlight, 0);
});

creation('a call cancelled while its task is created: its answer goes nowhere, and nothing of it is kept', async () => {
  const { starts, h } = await creatingTask();
  h.s.receiveFrame({ kind: 'line', text: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }) });
  h.out(0, { handled: 2 });
  starts.answer(5);
  await h.die(0, crash);
  assert.equal(createdTo(h, 1), [], 'a cancelled call\'s answer is not delivered again');
  assert.equal(h.answers(), []);
});

retry.run();
decide.run();
session.run();
creation.run();
