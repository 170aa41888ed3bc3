// The person asked from inside a 2026-07-28 harness_task, in the pure core: a remote caller whose client
// declares form elicitation gets a task run in round trips; the runtime's `toolAsk` becomes `input_required`
// with the same `elicitation/create` form a top-level confirmation uses and a sealed handle on the task's
// place; the retry carries the person's answer (read by the one rule) to that call. The local user is never
// asked from inside a task, and every state that must not open is -32602 with nothing run. Real HMAC (the
// runtime's sealer), injected time.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { requestSealer, roundTripAt } from '../../src/connection/request-sealer.ts';
import { confirmationRequest } from '../../src/mcp/confirmation.ts';
import type { Effect } from '../../src/mcp/effects.ts';
import type { RoundTrip } from '../../src/mcp/request-state.ts';
import { MAX_REQUEST_STATE_LENGTH, REQUEST_STATE_TTL_MS } from '../../src/limits.ts';
import { feedAt, foldAt, fresh, req, type Run } from './golden.ts';

type Reply = { id?: unknown; result?: Record<string, unknown> & { content?: { text: string }[]; isError?: boolean }; error?: { code: number; message: string } };
type RunTool = Extract<Effect, { kind: 'runTool' }>;

const KEY = new Uint8Array(32).fill(5);
const T0 = Date.UTC(2026, 7, 1);
const at = (now: number, key: Uint8Array = KEY): RoundTrip => roundTripAt(requestSealer(key), now);

const META = (capabilities: object = { elicitation: {} }) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': capabilities,
  'io.modelcontextprotocol/clientInfo': { name: 'modern', version: '2' },
});
const ARGS = { harness: 'super-pi-code', prompt: 'run the tests' };
const task = (id: number, extra: object = {}, args: object = ARGS, capabilities?: object) =>
  req(id, 'tools/call', { name: 'harness_task', arguments: args, ...extra, _meta: META(capabilities) });
const MESSAGE = 'A super-pi-code task wants to run the command: npm test\n(super-pi-code: bash is allowed after the person confirms)';
const ACCEPT = { action: 'accept', content: { allow: true } };

const alice = () => fresh({ principal: { kind: 'token', name: 'alice' } });
const bob = () => fresh({ principal: { kind: 'token', name: 'bob' } });

const runTools = (r: Run) => r.effects.filter((e): e is RunTool => e.kind === 'runTool');
const first = (r: Run) => r.replies[0] as Reply;

/** The first leg: alice's call, then the runtime reporting that the task waits for the person at turn `turn`. */
function asked(state = alice(), roundTrip = at(T0), turn = 2, seq = 5): { state: string; reply: Reply; after: Run } {
  const started = feedAt(roundTrip, state, task(1));
  const effect = runTools(started)[0]!;
  const after = foldAt(roundTrip, started.state, { kind: 'toolAsk', ticket: effect.ticket, conversationId: 'conv-9', turn, seq, message: MESSAGE });
  const reply = first(after);
  return { state: String(reply.result?.requestState), reply, after };
}
const answered = (state: unknown, answer: unknown = ACCEPT) => ({ requestState: state, inputResponses: { confirm: answer } });

const core = suite('2026-07-28: the person asked from inside a harness_task, pure core');

core('a remote caller whose client declares form elicitation gets a task in round trips, with asks', () => {
  const [effect] = runTools(feedAt(at(T0), alice(), task(1)));
  assert.equal(effect!.rounds, { sample: false, ask: true, resume: null });
  assert.equal(effect!.client, { sampling: false, elicitation: false }, 'no server-to-client request is ever sent to a modern client');
  const both = runTools(feedAt(at(T0), alice(), task(1, {}, ARGS, { elicitation: { form: {} }, sampling: {} })))[0]!;
  assert.equal(both.rounds, { sample: true, ask: true, resume: null });
});

core('no asks for a client that cannot be asked a form (none, URL mode only), nor without a state key', () => {
  assert.is(runTools(feedAt(at(T0), alice(), task(1, {}, ARGS, {})))[0]!.rounds, undefined);
  assert.is(runTools(feedAt(at(T0), alice(), task(1, {}, ARGS, { elicitation: { url: {} } })))[0]!.rounds, undefined);
  assert.equal(runTools(feedAt(at(T0), alice(), task(1, {}, ARGS, { elicitation: { url: {} }, sampling: {} })))[0]!.rounds, { sample: true, ask: false, resume: null });
  assert.is(runTools(feedAt(roundTripAt(null, T0), alice(), task(1)))[0]!.rounds, undefined);
});

core('a task whose harness has no ask rule for the calls a task makes keeps its supervised task actor', () => {
  assert.is(runTools(feedAt(at(T0), alice(), task(1, {}, { harness: 'super-pi-assistant', prompt: 'hello' })))[0]!.rounds, undefined);
  assert.is(runTools(feedAt(at(T0), alice(), task(1, {}, { harness: 'super-pi-librarian', prompt: 'hello' })))[0]!.rounds, undefined);
});

core('the local (stdio) user is never asked from inside a task: their host confirmed the task itself', () => {
  assert.is(runTools(feedAt(at(T0), fresh(), task(1)))[0]!.rounds, undefined, 'a server model runs the task in its actor, as before');
  assert.equal(runTools(feedAt(at(T0), fresh(), task(1, {}, ARGS, { elicitation: {}, sampling: {} })))[0]!.rounds, { sample: true, ask: false, resume: null });
});

core('a question becomes input_required: the confirmation form under "confirm", a sealed handle, nothing kept', () => {
  const { reply, state, after } = asked();
  assert.is(reply.id, 1);
  assert.is(reply.result?.resultType, 'input_required');
  const confirm = (reply.result?.inputRequests as Record<string, { method: string; params: unknown }>).confirm!;
  assert.is(confirm.method, 'elicitation/create');
  assert.equal(confirm.params, confirmationRequest(MESSAGE), 'the same form a top-level confirmation uses');
  assert.match(state, /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  assert.ok(state.length < MAX_REQUEST_STATE_LENGTH);
  assert.not.match(Buffer.from(state.split('.')[1]!, 'base64url').toString('utf8'), /npm test|run the tests/, 'a handle: neither the call nor the prompt is in it');
  assert.is(after.state.pending.size, 0);
});

core('an accepting retry resumes exactly that call, on another node holding the key', () => {
  const { state } = asked(alice(), at(T0), 3, 11);
  const r = feedAt(at(T0 + 1000, new Uint8Array(32).fill(5)), alice(), task(2, answered(state)));
  const [effect] = runTools(r);
  assert.equal(effect!.rounds, { sample: false, ask: true, resume: { conversationId: 'conv-9', turn: 3, seq: 11, person: { allowed: true, refusal: '' } } });
  assert.equal(r.replies, []);
});

const noes: [string, unknown, RegExp][] = [
  ['decline', { action: 'decline' }, /answered "decline"/],
  ['cancel', { action: 'cancel' }, /answered "cancel"/],
  ['accept with the box unticked', { action: 'accept', content: { allow: false } }, /did not allow/],
  ['no answer at all', undefined, /answered "nothing"/],
];
for (const [what, answer, refusal] of noes) {
  core(`a retry answering ${what} resumes the task with a refusal for the model, never a run of the call`, () => {
    const extra = answer === undefined ? { requestState: asked().state } : answered(asked().state, answer);
    const [effect] = runTools(feedAt(at(T0 + 1), alice(), task(2, extra)));
    const resume = effect!.rounds?.resume;
    assert.ok(resume && 'person' in resume);
    if (!resume || !('person' in resume)) return;
    assert.is(resume.person.allowed, false);
    assert.match(resume.person.refusal, refusal);
  });
}

const alter = (state: string, change: Record<string, unknown>): string => {
  const [v, payload, mac] = state.split('.') as [string, string, string];
  const json = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
  return `${v}.${Buffer.from(JSON.stringify({ ...json, ...change })).toString('base64url')}.${mac}`;
};
const turnState = (): string => {
  const started = feedAt(at(T0), alice(), task(1, {}, ARGS, { sampling: {}, elicitation: {} }));
  const effect = runTools(started)[0]!;
  const after = foldAt(at(T0), started.state, { kind: 'toolInput', ticket: effect.ticket, conversationId: 'conv-9', turn: 2, seq: 5, params: { messages: [], maxTokens: 1 } });
  return String(first(after).result?.requestState);
};
const confirmState = (): string => String(first(feedAt(at(T0), alice(), req(1, 'tools/call', { name: 'bash', arguments: { command: 'ls' }, _meta: META() }))).result?.requestState);

const refusals: [string, () => Run, RegExp][] = [
  ['forged', () => feedAt(at(T0 + 1), alice(), task(2, answered(`v1.${Buffer.from(JSON.stringify({ k: 'ask', c: 'conv-9', n: 2, s: 5, t: 'harness_task', a: 'x', p: 'token:alice', h: 'super-pi-code', e: T0 * 2 })).toString('base64url')}.AAAA`))), /failed verification/],
  ['altered (another place in the task put in)', () => feedAt(at(T0 + 1), alice(), task(2, answered(alter(asked().state, { s: 4 })))), /failed verification/],
  ['altered (a turn made into a question)', () => feedAt(at(T0 + 1), alice(), task(2, answered(alter(turnState(), { k: 'ask' })), ARGS, { sampling: {}, elicitation: {} })), /failed verification/],
  ['expired, by the injected clock', () => feedAt(at(T0 + REQUEST_STATE_TTL_MS), alice(), task(2, answered(asked().state))), /expired/],
  ['another principal', () => feedAt(at(T0 + 1), bob(), task(2, answered(asked().state))), /another caller/],
  ['for other arguments', () => feedAt(at(T0 + 1), alice(), task(2, answered(asked().state), { ...ARGS, prompt: 'delete everything' })), /other arguments: retry the same call the question/],
  ['sealed with another key', () => feedAt(at(T0 + 1, new Uint8Array(32).fill(6)), alice(), task(2, answered(asked().state))), /failed verification/],
  ['given to a top-level confirmation', () => feedAt(at(T0 + 1), alice(), req(2, 'tools/call', { name: 'bash', arguments: { command: 'ls' }, ...answered(asked().state), _meta: META() })), /another tool/],
  ['a confirmation\'s, given to the task', () => feedAt(at(T0 + 1), alice(), task(2, answered(confirmState()))), /another tool/],
  ['a model turn\'s, answered with the person\'s form', () => feedAt(at(T0 + 1), alice(), task(2, answered(turnState()), ARGS, { sampling: {}, elicitation: {} })), /inputResponses\.sample/],
  ['retried by a request that no longer declares elicitation', () => feedAt(at(T0 + 1), alice(), task(2, answered(asked().state), ARGS, { sampling: {} })), /does not declare form "elicitation"/],
  ['too long', () => feedAt(at(T0 + 1), alice(), task(2, answered(`v1.${'A'.repeat(MAX_REQUEST_STATE_LENGTH)}.AAAA`))), /MAX_REQUEST_STATE_LENGTH/],
];
for (const [what, run, message] of refusals) {
  core(`a retry whose state is ${what} is -32602 with a clear message, and nothing runs`, () => {
    const r = run();
    assert.is(runTools(r).length, 0);
    assert.is(first(r).error?.code, -32602);
    assert.match(first(r).error!.message, message);
  });
}

core('a replayed question, refused by the runtime from the store, is a -32602 error of the call', () => {
  const started = feedAt(at(T0), alice(), task(2, answered(asked().state)));
  const effect = runTools(started)[0]!;
  const r = foldAt(at(T0 + 2), started.state, { kind: 'effectFailed', ticket: effect.ticket, code: -32602, message: 'Invalid params: conversation conv-9 does not wait for the person\'s answer at turn 2' });
  assert.is(first(r).id, 2);
  assert.is(first(r).error?.code, -32602);
  assert.is(r.state.pending.size, 0);
});

core('a toolAsk for a call that takes no round trip is answered with a tool error, never an unsealed state', () => {
  const started = feedAt(at(T0), alice(), task(1, {}, ARGS, {}));
  const effect = runTools(started)[0]!;
  const r = foldAt(at(T0), started.state, { kind: 'toolAsk', ticket: effect.ticket, conversationId: 'conv-9', turn: 1, seq: 3, message: MESSAGE });
  assert.is(first(r).result?.isError, true);
  assert.match(first(r).result!.content![0]!.text, /continue it with conversation_id conv-9/);
  assert.is(first(r).result?.requestState, undefined);
});

core.run();
