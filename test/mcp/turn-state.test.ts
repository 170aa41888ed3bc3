// A 2026-07-28 harness_task sampled by its client, in the pure core: the first call asks the runtime for a
// task round, the runtime's `toolInput` becomes `input_required` with `sampling/createMessage` and a sealed
// turn handle, and a retry carrying the model's answer resumes exactly that turn. Every state that must not
// open (forged, altered, expired, another caller's, another call's, a confirmation's) is -32602 and runs
// nothing. Real HMAC (the runtime's sealer), injected time.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { requestSealer, roundTripAt } from '../../src/connection/request-sealer.ts';
import type { Effect } from '../../src/mcp/effects.ts';
import type { RoundTrip } from '../../src/mcp/request-state.ts';
import { MAX_REQUEST_STATE_LENGTH, REQUEST_STATE_TTL_MS } from '../../src/limits.ts';
import { feedAt, foldAt, fresh, req, type Run } from './golden.ts';

type Reply = { id?: unknown; result?: Record<string, unknown> & { content?: { text: string }[]; isError?: boolean }; error?: { code: number; message: string } };
type RunTool = Extract<Effect, { kind: 'runTool' }>;

const KEY = new Uint8Array(32).fill(7);
const T0 = Date.UTC(2026, 7, 1);
const at = (now: number, key: Uint8Array = KEY): RoundTrip => roundTripAt(requestSealer(key), now);

const META = (capabilities: object = { sampling: {} }) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': capabilities,
  'io.modelcontextprotocol/clientInfo': { name: 'modern', version: '2' },
});
const ARGS = { harness: 'super-pi-code', prompt: 'what is in a.txt?' };
const task = (id: number, extra: object = {}, args: object = ARGS, capabilities?: object) =>
  req(id, 'tools/call', { name: 'harness_task', arguments: args, ...extra, _meta: META(capabilities) });
const PARAMS = { messages: [{ role: 'user', content: { type: 'text', text: 'what is in a.txt?' } }], maxTokens: 8192, systemPrompt: 'You are…' };
const ANSWER = { role: 'assistant', content: { type: 'text', text: 'a.txt says hello' }, model: 'scripted', stopReason: 'endTurn' };

const runTools = (r: Run) => r.effects.filter((e): e is RunTool => e.kind === 'runTool');
const first = (r: Run) => r.replies[0] as Reply;

/** The first leg on a node: the call, then the runtime reporting that the task waits for turn `turn`. */
function askedTurn(state = fresh(), roundTrip = at(T0), turn = 1, seq = 3): { state: string; reply: Reply; after: Run } {
  const started = feedAt(roundTrip, state, task(1));
  const effect = runTools(started)[0]!;
  const after = foldAt(roundTrip, started.state, { kind: 'toolInput', ticket: effect.ticket, conversationId: 'conv-1', turn, seq, params: PARAMS });
  const reply = first(after);
  return { state: String(reply.result?.requestState), reply, after };
}

const core = suite('2026-07-28: harness_task sampled by round trip, pure core');

core('a first call from a client declaring sampling asks the runtime for a task round, and sends the client nothing', () => {
  const r = feedAt(at(T0), fresh(), task(1));
  const [effect] = runTools(r);
  assert.ok(effect);
  assert.equal(effect!.rounds, { sample: true, ask: false, resume: null });
  assert.equal(effect!.client, { sampling: false, elicitation: false }, 'no server-to-client request is ever sent to a modern client');
  assert.equal(r.replies, []);
});

core('no round trip without sampling declared, or without a state key: the task is as before', () => {
  assert.is(runTools(feedAt(at(T0), fresh(), task(1, {}, ARGS, {})))[0]!.rounds, undefined);
  assert.is(runTools(feedAt(roundTripAt(null, T0), fresh(), task(1)))[0]!.rounds, undefined);
  assert.is(runTools(feedAt(at(T0), fresh(), task(1, {}, { ...ARGS, undo: true })))[0]!.rounds, undefined, 'an undo runs no model');
});

core('a model turn becomes input_required: sampling/createMessage with the runtime\'s params and a sealed handle, nothing kept', () => {
  const { reply, state, after } = askedTurn();
  assert.is(reply.id, 1);
  assert.is(reply.result?.resultType, 'input_required');
  const sample = (reply.result?.inputRequests as Record<string, { method: string; params: unknown }>).sample!;
  assert.is(sample.method, 'sampling/createMessage');
  assert.equal(sample.params, PARAMS);
  assert.match(state, /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  assert.ok(state.length < MAX_REQUEST_STATE_LENGTH);
  assert.not.match(state, /a\.txt|hello/, 'the state is a handle: neither the prompt nor the history is in it');
  assert.is(after.state.pending.size, 0);
});

core('a retry with the state and the model\'s answer resumes exactly that turn, on another node holding the key', () => {
  const { state } = askedTurn(fresh(), at(T0), 4, 17);
  const r = feedAt(at(T0 + 1000, new Uint8Array(32).fill(7)), fresh(), task(2, { requestState: state, inputResponses: { sample: ANSWER } }));
  const [effect] = runTools(r);
  assert.ok(effect);
  assert.equal(effect!.rounds, { sample: true, ask: false, resume: { conversationId: 'conv-1', turn: 4, seq: 17, answer: ANSWER } });
  assert.equal(effect!.args, ARGS);
  assert.equal(r.replies, []);
});

core('argument key order does not matter for a turn either', () => {
  const { state } = askedTurn();
  const r = feedAt(at(T0 + 1), fresh(), task(2, { requestState: state, inputResponses: { sample: ANSWER } }, { prompt: ARGS.prompt, harness: ARGS.harness }));
  assert.is(runTools(r).length, 1);
});

const answered = (state: unknown) => ({ requestState: state, inputResponses: { sample: ANSWER } });
const alter = (state: string): string => {
  const [v, payload, mac] = state.split('.') as [string, string, string];
  const json = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
  return `${v}.${Buffer.from(JSON.stringify({ ...json, n: 1, s: 1 })).toString('base64url')}.${mac}`;
};
const confirmState = (): string => {
  const r = feedAt(at(T0), fresh(), req(1, 'tools/call', { name: 'bash', arguments: { command: 'ls' }, _meta: META({ elicitation: {} }) }));
  return String(first(r).result?.requestState);
};
const alice = () => fresh({ principal: { kind: 'token', name: 'alice' } });
const bob = () => fresh({ principal: { kind: 'token', name: 'bob' } });

const refusals: [string, () => Run, RegExp][] = [
  ['forged', () => feedAt(at(T0 + 1), fresh(), task(2, answered(`v1.${Buffer.from(JSON.stringify({ k: 'turn', c: 'conv-1', n: 1, s: 3, t: 'harness_task', a: 'x', p: 'local', h: 'super-pi-code', e: T0 * 2 })).toString('base64url')}.AAAA`))), /failed verification/],
  ['altered (an earlier turn put in)', () => feedAt(at(T0 + 1), fresh(), task(2, answered(alter(askedTurn().state)))), /failed verification/],
  ['expired, by the injected clock', () => feedAt(at(T0 + REQUEST_STATE_TTL_MS), fresh(), task(2, answered(askedTurn().state))), /expired/],
  ['another principal', () => feedAt(at(T0 + 1), bob(), task(2, answered(askedTurn(alice()).state))), /another caller/],
  ['for other arguments', () => feedAt(at(T0 + 1), fresh(), task(2, answered(askedTurn().state), { ...ARGS, prompt: 'delete everything' })), /other arguments/],
  ['sealed with another key', () => feedAt(at(T0 + 1, new Uint8Array(32).fill(9)), fresh(), task(2, answered(askedTurn().state))), /failed verification/],
  ['a confirmation\'s, not a turn\'s', () => feedAt(at(T0 + 1), fresh(), task(2, answered(confirmState()))), /another tool/],
  ['a turn\'s, given to a confirmation', () => feedAt(at(T0 + 1), fresh(), req(2, 'tools/call', { name: 'harness_task', arguments: ARGS, requestState: askedTurn().state, inputResponses: { confirm: { action: 'accept' } }, _meta: META() })), /sampling\/createMessage result/],
  ['without the model\'s answer', () => feedAt(at(T0 + 1), fresh(), task(2, { requestState: askedTurn().state })), /inputResponses\.sample/],
  ['with an answer that is no CreateMessageResult', () => feedAt(at(T0 + 1), fresh(), task(2, { requestState: askedTurn().state, inputResponses: { sample: 'yes' } })), /inputResponses\.sample/],
  ['retried by a request that no longer declares sampling', () => feedAt(at(T0 + 1), fresh(), task(2, answered(askedTurn().state), ARGS, {})), /does not declare "sampling"/],
  ['too long', () => feedAt(at(T0 + 1), fresh(), task(2, answered(`v1.${'A'.repeat(MAX_REQUEST_STATE_LENGTH)}.AAAA`))), /MAX_REQUEST_STATE_LENGTH/],
];
for (const [what, run, message] of refusals) {
  core(`a retry whose turn state is ${what} is -32602 with a clear message, and nothing runs`, () => {
    const r = run();
    assert.is(runTools(r).length, 0);
    assert.is(first(r).error?.code, -32602);
    assert.match(first(r).error!.message, message);
  });
}

core('a stale or replayed turn, refused by the runtime from the store, is a -32602 error of the call', () => {
  const started = feedAt(at(T0), fresh(), task(2, answered(askedTurn().state)));
  const effect = runTools(started)[0]!;
  const r = foldAt(at(T0 + 2), started.state, { kind: 'effectFailed', ticket: effect.ticket, code: -32602, message: 'Invalid params: turn 1 of conversation conv-1 was already answered' });
  assert.is(first(r).id, 2);
  assert.is(first(r).error?.code, -32602);
  assert.is(r.state.pending.size, 0);
});

core('a toolInput for a call that takes no round trip is answered with a tool error, never an unsealed state', () => {
  const started = feedAt(at(T0), fresh(), task(1, {}, ARGS, {}));
  const effect = runTools(started)[0]!;
  const r = foldAt(at(T0), started.state, { kind: 'toolInput', ticket: effect.ticket, conversationId: 'conv-1', turn: 1, seq: 3, params: PARAMS });
  assert.is(first(r).result?.isError, true);
  assert.is(first(r).result?.requestState, undefined);
});

core.run();
