// The `ask` rule as a multi-round-trip over 2026-07-28: an `input_required` result with a sealed
// requestState, a retry with the person's answer, and every state that must not open; the same rule
// played as `elicitation/create` for a 2025 session. Real HMAC (the runtime's sealer), injected time.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { requestSealer, roundTripAt } from '../../src/connection/request-sealer.ts';
import type { RoundTrip } from '../../src/mcp/request-state.ts';
import { REQUEST_STATE_TTL_MS } from '../../src/limits.ts';
import { createHash } from 'node:crypto';
import { feedAt, foldAt, fresh, ready, req, type Run, spentAt } from './golden.ts';

type Reply = { id?: unknown; method?: string; result?: Record<string, unknown> & { content?: { text: string }[]; isError?: boolean }; error?: { code: number; message: string } };

const KEY = new Uint8Array(32).fill(7);
const T0 = Date.UTC(2026, 7, 1);
const at = (now: number, key: Uint8Array = KEY): RoundTrip => roundTripAt(requestSealer(key), now);

const META = (capabilities: object = { elicitation: {} }) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': capabilities,
  'io.modelcontextprotocol/clientInfo': { name: 'modern', version: '2' },
});
const call = (id: number, args: object = { command: 'ls' }, extra: object = {}, tool = 'bash') =>
  req(id, 'tools/call', { name: tool, arguments: args, ...extra, _meta: META() });

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('base64url');
const runs = (r: Run) => r.effects.filter((e) => e.kind === 'runTool').length;
const first = (r: Run) => r.replies[0] as Reply;

/** The first leg: the state a modern client gets back for `bash ls`. */
function asked(state = fresh(), roundTrip = at(T0)): string {
  return String(first(feedAt(roundTrip, state, call(1))).result?.requestState);
}

const modern = suite('2026-07-28: ask as input_required');

modern('a call under an ask rule answers input_required with an elicitation and a sealed state, and runs nothing', () => {
  const r = feedAt(at(T0), fresh(), call(1));
  const result = first(r).result!;
  assert.is(result.resultType, 'input_required');
  const confirm = (result.inputRequests as Record<string, { method: string; params: { message: string } }>).confirm!;
  assert.is(confirm.method, 'elicitation/create');
  assert.match(confirm.params.message, /run the command: ls/);
  assert.match(String(result.requestState), /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  assert.is(runs(r), 0);
  assert.is(r.state.pending.size, 0, 'nothing is kept on the connection');
});

modern('a retry with the state and an accept runs the call once the store records its use, on another node holding the same key', () => {
  const state = asked();
  const retry = call(2, { command: 'ls' }, { requestState: state, inputResponses: { confirm: { action: 'accept', content: { allow: true } } } });
  const other = at(T0 + 1000, new Uint8Array(32).fill(7));
  const r = feedAt(other, fresh(), retry);
  assert.is(runs(r), 0, 'nothing runs before the store answers');
  assert.equal(r.replies, []);
  assert.equal(r.effects, [{ kind: 'consumeConfirmation', ticket: 1, digest: sha256(state), expiresAt: T0 + REQUEST_STATE_TTL_MS }], 'the digest of the state as sent, and its sealed expiry');
  assert.equal([...r.state.pending.values()].map((p) => p.kind), ['consume'], 'the request is in flight meanwhile');
  const ran = spentAt(other, r);
  assert.is(runs(ran), 1);
  assert.equal(ran.replies, []);
});

const single = suite('2026-07-28: a confirmation runs its call once');

single('the same accepted retry again asks about the same digest; the store\'s "used" is -32602 saying how to ask afresh, and nothing runs', () => {
  const state = asked();
  const retry = call(2, { command: 'ls' }, { requestState: state, ...accept });
  const firstTry = feedAt(at(T0 + 1000), fresh(), retry);
  assert.is(runs(spentAt(at(T0 + 1000), firstTry)), 1);
  const replay = feedAt(at(T0 + 2000), fresh(), retry);
  assert.equal(replay.effects, [{ kind: 'consumeConfirmation', ticket: 1, digest: sha256(state), expiresAt: T0 + REQUEST_STATE_TTL_MS }]);
  const refused = spentAt(at(T0 + 2000), replay, false);
  assert.is(runs(refused), 0);
  assert.equal(refused.effects, []);
  assert.is(first(refused).error?.code, -32602);
  assert.match(first(refused).error!.message, /^Invalid params: requestState was already used/);
  assert.match(first(refused).error!.message, /call the tool again without requestState/);
  assert.is(refused.state.pending.size, 0, 'nothing left in flight');
});

single('a new question for the same call is another state: its yes is a first use of its own', () => {
  const one = asked(fresh(), at(T0));
  const two = asked(fresh(), at(T0 + 1));
  assert.is.not(one, two);
  const digests = [one, two].map((s) => feedAt(at(T0 + 2), fresh(), call(2, { command: 'ls' }, { requestState: s, ...accept })).effects[0]);
  assert.is.not((digests[0] as { digest: string }).digest, (digests[1] as { digest: string }).digest);
});

single('two calls with the same claim sealed at the same now are two states: both open, with two digests, and each yes is a first use', () => {
  // A counting nonce (the runtime's is random): the seal is reproducible, and only the nonce tells the two apart.
  let n = 0;
  const counting = (now: number): RoundTrip => roundTripAt(requestSealer(KEY, () => `n${++n}`), now);
  const one = asked(fresh(), counting(T0));
  const two = asked(fresh(), counting(T0));
  assert.is.not(one, two, 'same tool, arguments, principal, harness and millisecond: still two states');
  const spends = [one, two].map((s) => feedAt(counting(T0 + 1), fresh(), call(2, { command: 'ls' }, { requestState: s, ...accept })));
  assert.equal(spends.map((r) => r.effects.map((e) => e.kind)), [['consumeConfirmation'], ['consumeConfirmation']], 'both open');
  const digests = spends.map((r) => (r.effects[0] as { digest: string }).digest);
  assert.equal(digests, [sha256(one), sha256(two)]);
  assert.is.not(digests[0], digests[1]);
  // The store answers each digest's first use: both calls run.
  assert.equal(spends.map((r) => runs(spentAt(counting(T0 + 1), r))), [1, 1]);
});

single('the runtime\'s sealer gives each seal a nonce of its own: two identical calls in the same millisecond are two states', () => {
  const one = asked(fresh(), at(T0));
  const two = asked(fresh(), at(T0));
  assert.is.not(one, two);
  const nonces = [one, two].map((s) => (JSON.parse(Buffer.from(s.split('.')[1]!, 'base64url').toString('utf8')) as { r?: unknown }).r);
  for (const r of nonces) assert.match(String(r), /^[A-Za-z0-9_-]{22}$/, 'STATE_NONCE_BYTES (16) random bytes, base64url');
});

single('a state sealed before nonces (no `r` in its payload) still opens and is spent by its digest', () => {
  const genuine = asked();
  const payload = JSON.parse(Buffer.from(genuine.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
  delete payload.r;
  const body = `v1.${Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url')}`;
  const old = `${body}.${requestSealer(KEY).mac(body)}`;
  const r = feedAt(at(T0 + 1), fresh(), call(2, { command: 'ls' }, { requestState: old, ...accept }));
  assert.equal(r.effects, [{ kind: 'consumeConfirmation', ticket: 1, digest: sha256(old), expiresAt: T0 + REQUEST_STATE_TTL_MS }]);
  assert.is(runs(spentAt(at(T0 + 1), r)), 1);
  // A sealed nonce that is not a string is no state this server made (only a shared key could seal one).
  const odd = `v1.${Buffer.from(JSON.stringify({ ...payload, r: 7 }), 'utf8').toString('base64url')}`;
  const refused = feedAt(at(T0 + 1), fresh(), call(2, { command: 'ls' }, { requestState: `${odd}.${requestSealer(KEY).mac(odd)}`, ...accept }));
  assert.is(first(refused).error?.code, -32602);
  assert.match(first(refused).error!.message, /requestState is malformed/);
});

single('a cancel while the store is asked: the call never runs and gets no answer, even when the use is recorded after', () => {
  const r = feedAt(at(T0 + 1), fresh(), call(2, { command: 'ls' }, { requestState: asked(), ...accept }), { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } });
  assert.equal(r.effects.map((e) => e.kind), ['consumeConfirmation', 'cancel']);
  const late = foldAt(at(T0 + 2), r.state, { kind: 'confirmationConsumed', ticket: 1, firstUse: true });
  assert.equal([late.replies, late.effects], [[], []]);
});

single('a store failure is the request\'s error: nothing runs', () => {
  const r = feedAt(at(T0 + 1), fresh(), call(2, { command: 'ls' }, { requestState: asked(), ...accept }));
  const failed = foldAt(at(T0 + 2), r.state, { kind: 'effectFailed', ticket: 1, code: -32603, message: 'Internal error: disk gone' });
  assert.is(first(failed).error?.code, -32603);
  assert.equal(failed.effects, []);
});

single('a no is not recorded: decline asks nothing of the store, and the same state may still carry a yes', () => {
  const state = asked();
  const no = feedAt(at(T0 + 1), fresh(), call(2, { command: 'ls' }, { requestState: state, inputResponses: { confirm: { action: 'decline' } } }));
  assert.equal(no.effects, []);
  assert.is(first(no).result?.isError, true);
  assert.is(runs(spentAt(at(T0 + 2), feedAt(at(T0 + 2), fresh(), call(3, { command: 'ls' }, { requestState: state, ...accept })))), 1);
});

single('a local retry that no longer declares elicitation is still answered by its state: a no runs nothing, a yes is spent once, a replay is -32602', () => {
  // Without elicitation a local caller's bash is allowed outright (its host confirms each call); a retry
  // carrying a confirmation's state is the person's answer all the same, never a way round it.
  const state = asked();
  const retry = (id: number, responses: object) => req(id, 'tools/call', { name: 'bash', arguments: { command: 'ls' }, requestState: state, ...responses, _meta: META({}) });
  const no = feedAt(at(T0 + 1), fresh(), retry(2, { inputResponses: { confirm: { action: 'decline' } } }));
  assert.is(runs(no), 0, 'the person said no');
  assert.equal(no.effects, []);
  assert.match(first(no).result!.content![0]!.text, /^Not run: bash/);
  const yes = feedAt(at(T0 + 2), fresh(), retry(3, accept));
  assert.equal(yes.effects.map((e) => e.kind), ['consumeConfirmation'], 'a yes is recorded before it runs');
  assert.is(runs(spentAt(at(T0 + 2), yes)), 1);
  const replay = spentAt(at(T0 + 3), feedAt(at(T0 + 3), fresh(), retry(4, accept)), false);
  assert.is(runs(replay), 0, 'a spent state never runs again');
  assert.is(first(replay).error?.code, -32602);
  assert.match(first(replay).error!.message, /requestState was already used/);
  // The same call without a state is still the local host's to confirm: it runs.
  assert.is(runs(feedAt(at(T0 + 4), fresh(), req(5, 'tools/call', { name: 'bash', arguments: { command: 'ls' }, _meta: META({}) }))), 1);
});

single('a 2025 session\'s yes (elicitation/create) runs the call with no store record: it has no state to replay', () => {
  const asking = feedAt(at(T0), ready('2025-11-25', { elicitation: {} }), req(1, 'tools/call', { name: 'bash', arguments: { command: 'ls' } }));
  const ask = asking.replies[0] as { id: string };
  const answered = feedAt(at(T0), asking.state, { jsonrpc: '2.0', id: ask.id, result: { action: 'accept', content: { allow: true } } });
  assert.equal(answered.effects.map((e) => e.kind), ['runTool']);
});

modern('decline, cancel, an unticked box or no answer refuse the call with a tool error, and never run it', () => {
  const state = asked();
  for (const answer of [{ action: 'decline' }, { action: 'cancel' }, { action: 'accept', content: { allow: false } }, undefined]) {
    const responses = answer === undefined ? {} : { inputResponses: { confirm: answer } };
    const r = feedAt(at(T0 + 1000), fresh(), call(2, { command: 'ls' }, { requestState: state, ...responses }));
    assert.is(runs(r), 0, JSON.stringify(answer));
    assert.equal(r.effects, [], JSON.stringify(answer));
    assert.is(first(r).result?.isError, true);
    assert.match(first(r).result!.content![0]!.text, /^Not run: bash/);
  }
});

const accept = { inputResponses: { confirm: { action: 'accept' } } };
const refusals: [string, () => Run, RegExp][] = [
  ['expired, by the injected clock', () => feedAt(at(T0 + REQUEST_STATE_TTL_MS), fresh(), call(2, { command: 'ls' }, { requestState: asked(), ...accept })), /expired/],
  ['another principal', () => feedAt(at(T0 + 1), fresh({ principal: { kind: 'token', name: 'bob' } }), call(2, { command: 'ls' }, { requestState: asked(fresh({ principal: { kind: 'token', name: 'alice' } })), ...accept })), /another caller/],
  ['other arguments', () => feedAt(at(T0 + 1), fresh(), call(2, { command: 'rm -rf /' }, { requestState: asked(), ...accept })), /other arguments/],
  ['another tool', () => feedAt(at(T0 + 1), fresh(), call(2, { path: 'x', content: 'y' }, { requestState: asked(), ...accept }, 'write')), /another tool/],
  ['another key (another server)', () => feedAt(at(T0 + 1, new Uint8Array(32).fill(8)), fresh(), call(2, { command: 'ls' }, { requestState: asked(), ...accept })), /failed verification/],
  ['not a string', () => feedAt(at(T0 + 1), fresh(), call(2, { command: 'ls' }, { requestState: 42, ...accept })), /must be the string/],
  ['no key on this server', () => feedAt(roundTripAt(null, T0), fresh(), call(2, { command: 'ls' }, { requestState: asked(), ...accept })), /no state key/],
];
for (const [what, run, message] of refusals) {
  modern(`a retry whose state is ${what} is -32602 with a clear message, and never runs`, () => {
    const r = run();
    assert.is(runs(r), 0);
    assert.equal(r.effects, [], 'the store is never asked: a state that does not open spends nothing');
    assert.is(first(r).error?.code, -32602);
    assert.match(first(r).error!.message, message);
  });
}

modern('argument key order does not matter: the digest binds meaning, not spelling', () => {
  const s = String(first(feedAt(at(T0), fresh(), call(1, { command: 'ls', timeout: 5 }))).result?.requestState);
  const r = spentAt(at(T0 + 1), feedAt(at(T0 + 1), fresh(), call(2, { timeout: 5, command: 'ls' }, { requestState: s, ...accept })));
  assert.is(runs(r), 1);
});

modern('without a state key the call is refused with a tool error, never asked with an unsealed state', () => {
  const r = feedAt(roundTripAt(null, T0), fresh(), call(1));
  assert.is(first(r).result?.isError, true);
  assert.is(first(r).result?.requestState, undefined);
  assert.match(first(r).result!.content![0]!.text, /no state key/);
  assert.is(runs(r), 0);
});

modern('a remote modern client that did not declare elicitation is refused, as a legacy one is', () => {
  const r = feedAt(at(T0), fresh({ principal: { kind: 'token', name: 'alice' } }), req(1, 'tools/call', { name: 'bash', arguments: { command: 'ls' }, _meta: META({}) }));
  assert.is(first(r).result?.isError, true);
  assert.match(first(r).result!.content![0]!.text, /cannot be asked/);
});

modern('a 2025 session is still asked with elicitation/create: the same decision played as a server request', () => {
  const r = feedAt(at(T0), ready('2025-11-25', { elicitation: {} }), req(1, 'tools/call', { name: 'bash', arguments: { command: 'ls' } }));
  const ask = r.replies[0] as { method: string; params: { message: string } };
  assert.is(ask.method, 'elicitation/create');
  assert.match(ask.params.message, /run the command: ls/);
  assert.is(runs(r), 0);
});

modern.run();
single.run();
