// Multi-round-trip, then a task (SEP-2322 then SEP-2663, `tasks-mrtr-composition`) in the pure core: under
// `super-pi-assistant` a harness_task is `ask`; the retry carrying the person's yes is the call's first start,
// so when its request declares the Tasks extension its `runTool` is marked `task` (the runtime may answer
// `taskCreated`, a flat CreateTaskResult) exactly as a first-round call's is. A no is a complete tool result;
// a state that does not open is -32602; a retry of a task's own model turn continues that call and is never
// made a task. Real HMAC (the runtime's sealer), injected time.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { requestSealer, roundTripAt } from '../../src/connection/request-sealer.ts';
import type { Effect } from '../../src/mcp/effects.ts';
import { handleEffectResult } from '../../src/mcp/handle.ts';
import type { RoundTrip } from '../../src/mcp/request-state.ts';
import type { ConnectionState } from '../../src/mcp/state.ts';
import { REQUEST_STATE_TTL_MS, TASK_POLL_INTERVAL_MS } from '../../src/limits.ts';
import { feedAt, fresh, req, type Run, spentAt } from './golden.ts';

type Reply = { id?: unknown; result?: Record<string, unknown> & { content?: { text: string }[]; isError?: boolean }; error?: { code: number; message: string } };
type RunTool = Extract<Effect, { kind: 'runTool' }>;

const TASKS = 'io.modelcontextprotocol/tasks';
const KEY = new Uint8Array(32).fill(7);
const T0 = Date.UTC(2026, 7, 1);
const at = (now: number, key: Uint8Array = KEY): RoundTrip => roundTripAt(requestSealer(key), now);
const ASKABLE = { elicitation: { form: {} }, extensions: { [TASKS]: {} } };
const ACCEPT = { action: 'accept', content: { allow: true } };
const ARGS = { harness: 'super-pi-assistant', prompt: 'draft the reply' };

const META = (capabilities: object) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': capabilities,
  'io.modelcontextprotocol/clientInfo': { name: 'modern', version: '2' },
});
const call = (id: number, extra: object = {}, args: object = ARGS, capabilities: object = ASKABLE) =>
  req(id, 'tools/call', { name: 'harness_task', arguments: args, ...extra, _meta: META(capabilities) });

/** A node of a token caller's requests under a harness whose rule asks before a harness_task. */
const assistant = (name = 'alice'): ConnectionState => fresh({ principal: { kind: 'token', name }, harness: 'super-pi-assistant' });

const runTools = (r: Run) => r.effects.filter((e): e is RunTool => e.kind === 'runTool');
const first = (r: Run) => r.replies[0] as Reply;

/** The first round: the confirmation's sealed state. */
function asked(roundTrip = at(T0), args: object = ARGS): string {
  const r = feedAt(roundTrip, assistant(), call(1, {}, args));
  assert.is(first(r).result?.resultType, 'input_required');
  assert.equal(r.effects, []);
  return String(first(r).result?.requestState);
}
/** The retry with the person's answer (`null`: the retry carries no answer at all). */
const retry = (requestState: string, answer: unknown = ACCEPT, args: object = ARGS, capabilities: object = ASKABLE) =>
  call(2, { requestState, inputResponses: answer === null ? {} : { confirm: answer } }, args, capabilities);

const accepted = suite('an accepted confirmation of a harness_task whose request declares the extension becomes a task');

accepted('round 1 is input_required with the confirmation, no taskId, and asks the runtime for nothing', () => {
  const r = feedAt(at(T0), assistant(), call(1));
  const result = first(r).result!;
  assert.is(result.resultType, 'input_required');
  assert.not.ok('taskId' in result);
  assert.equal(Object.keys(result.inputRequests as object), ['confirm']);
  assert.equal(r.effects, []);
});

accepted('the retry with a yes emits runTool marked task, on a node that never saw round 1', () => {
  const r = spentAt(at(T0 + 1_000), feedAt(at(T0 + 1_000), assistant(), retry(asked())));
  const [effect] = runTools(r);
  assert.ok(effect, JSON.stringify(r.replies));
  assert.is(effect!.task, true);
  assert.equal(effect!.args, ARGS);
  assert.is(effect!.harness, 'super-pi-assistant');
  assert.equal(r.replies, [], 'the runtime answers: taskCreated, or the tool result when it runs the call on its request');
});

accepted('taskCreated answers the retry with the flat CreateTaskResult: no requestState, no inputRequests', () => {
  const r = spentAt(at(T0), feedAt(at(T0), assistant(), retry(asked())));
  const step = handleEffectResult({ kind: 'taskCreated', ticket: runTools(r)[0]!.ticket, task: { taskId: 'conv-7', createdAt: '2026-08-01T00:00:00.000Z', lastUpdatedAt: '2026-08-01T00:00:00.000Z' } }, r.state);
  const answer = JSON.parse(step.replies[0]!.line) as Reply;
  assert.is(answer.id, 2);
  assert.equal(answer.result, {
    resultType: 'task', taskId: 'conv-7', status: 'working', createdAt: '2026-08-01T00:00:00.000Z', lastUpdatedAt: '2026-08-01T00:00:00.000Z',
    ttlMs: null, pollIntervalMs: TASK_POLL_INTERVAL_MS, _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'super-pi', version: '0.1.0' } },
  });
});

accepted('the retry\'s own request decides: without the extension declared there, the confirmed call runs on its request', () => {
  const r = spentAt(at(T0), feedAt(at(T0), assistant(), retry(asked(), ACCEPT, ARGS, { elicitation: { form: {} } })));
  const [effect] = runTools(r);
  assert.ok(effect);
  assert.is(effect!.task, undefined);
});

accepted('a confirmed undo is not a task', () => {
  const undo = { ...ARGS, conversation_id: 'c-1', undo: true };
  const [effect] = runTools(spentAt(at(T0), feedAt(at(T0), assistant(), retry(asked(at(T0), undo), ACCEPT, undo))));
  assert.ok(effect);
  assert.is(effect!.task, undefined);
});

accepted('the same yes sent again asks the store about the same state; "already used" is -32602 and starts no second task', () => {
  const state = asked();
  const once = feedAt(at(T0 + 1_000), assistant(), retry(state));
  const again = feedAt(at(T0 + 2_000), assistant(), retry(state));
  const spends = [once, again].map((r) => r.effects.find((e) => e.kind === 'consumeConfirmation'));
  assert.ok(spends[0] && spends[0].kind === 'consumeConfirmation', JSON.stringify(once.effects));
  assert.equal(spends[1], spends[0], 'the same digest and expiry, whichever node and time');
  assert.equal(runTools(once), [], 'nothing starts before the store answers');
  assert.equal(runTools(spentAt(at(T0 + 1_000), once)).map((e) => e.task), [true], 'the first use becomes the task');
  const refused = spentAt(at(T0 + 2_000), again, false);
  assert.equal(runTools(refused), []);
  assert.is(first(refused).error?.code, -32602);
  assert.match(first(refused).error!.message, /already used.*call the tool again without requestState/);
});

const declined = suite('a no stays a complete tool result, never a task');

declined('decline, cancel, an unticked box or no answer: isError "Not run", nothing asked of the runtime', () => {
  for (const answer of [{ action: 'decline' }, { action: 'cancel' }, { action: 'accept', content: { allow: false } }, null]) {
    const r = feedAt(at(T0), assistant(), retry(asked(), answer));
    const result = first(r).result!;
    assert.is(result.resultType, 'complete', JSON.stringify(answer));
    assert.is(result.isError, true);
    assert.not.ok('taskId' in result);
    assert.match(result.content![0]!.text, /^Not run: harness_task needs the person's confirmation and /);
    assert.equal(r.effects, [], JSON.stringify(answer));
  }
});

const refused = suite('the seal is checked first: a state that does not open is -32602 and nothing starts');

refused('forged, altered, expired, another principal\'s, another call\'s: -32602, no runTool', () => {
  const state = asked();
  const [head, payload, mac] = state.split('.');
  const flippedMac = `${head}.${payload}.${mac!.slice(0, -1)}${mac!.endsWith('A') ? 'B' : 'A'}`;
  const cases: [string, Run][] = [
    ['forged (another key)', feedAt(at(T0), assistant(), retry(asked(at(T0, new Uint8Array(32).fill(9)))))],
    ['altered', feedAt(at(T0), assistant(), retry(flippedMac))],
    ['expired', feedAt(at(T0 + REQUEST_STATE_TTL_MS + 1), assistant(), retry(state))],
    ['another principal', feedAt(at(T0), assistant('bob'), retry(state))],
    ['other arguments', feedAt(at(T0), assistant(), retry(state, ACCEPT, { ...ARGS, prompt: 'something else' }))],
    ['another harness', feedAt(at(T0), fresh({ principal: { kind: 'token', name: 'alice' }, harness: 'super-pi-code' }), retry(state))],
  ];
  for (const [why, r] of cases) {
    assert.is(first(r).error?.code, -32602, why);
    assert.equal(r.effects, [], why);
  }
});

const turns = suite('a retry that continues a round-trip call is never made a task');

turns('the client model\'s answer to a task\'s turn resumes that call in rounds, not as a new task, even with the extension declared', () => {
  const code = fresh({ principal: { kind: 'token', name: 'alice' } });
  const args = { harness: 'super-pi-code', prompt: 'look' };
  const started = feedAt(at(T0), code, call(1, {}, args, { sampling: {} }));
  const effect = runTools(started)[0]!;
  assert.is(effect.task, undefined);
  const step = handleEffectResult({ kind: 'toolInput', ticket: effect.ticket, conversationId: 'conv-1', turn: 1, seq: 3, params: { messages: [], maxTokens: 1 } }, started.state, at(T0));
  const requestState = String((JSON.parse(step.replies[0]!.line) as Reply).result?.requestState);
  const answer = { role: 'assistant', content: { type: 'text', text: 'done' }, model: 'm' };
  const r = feedAt(at(T0), code, call(2, { requestState, inputResponses: { sample: answer } }, args, { sampling: {}, extensions: { [TASKS]: {} } }));
  const [resumed] = runTools(r);
  assert.ok(resumed, JSON.stringify(r.replies));
  assert.is(resumed!.task, undefined);
  assert.equal(resumed!.rounds?.resume, { conversationId: 'conv-1', turn: 1, seq: 3, answer });
});

accepted.run();
declined.run();
refused.run();
turns.run();
