// Properties of the sealed requestState (fast-check, fixed seed), for a confirmation, a task's model turn
// and a question from inside a task: whatever a client does to the state it was given — flip a bit, cut it, lengthen it, forge its payload, send it for another principal, tool or
// arguments, after its expiry, or send anything else at all — the retry gets one -32602 naming
// requestState, and the tool never runs (no runTool effect leaves the core) nor is the store asked to
// spend it. A genuine accepted confirmation is spent by the digest of the state as sent: every retry of it
// asks about the same digest, different seals never share one (the same claim sealed twice at the same
// time included: each seal has its own nonce), and only the store's first use runs it.

import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { requestSealer, roundTripAt } from '../../src/connection/request-sealer.ts';
import { handleEffectResult, handleMcpLine } from '../../src/mcp/handle.ts';
import type { RoundTrip } from '../../src/mcp/request-state.ts';
import type { ConnectionState, Principal } from '../../src/mcp/state.ts';
import { MAX_REQUEST_STATE_LENGTH, REQUEST_STATE_TTL_MS } from '../../src/limits.ts';
import { fresh } from './golden.ts';

const SEED = 20_261_205;
const RUNS = 1000;
const T0 = Date.UTC(2026, 7, 1);
const sealer = requestSealer(new Uint8Array(32).fill(3));
const at = (now: number): RoundTrip => roundTripAt(sealer, now);
const ALICE: Principal = { kind: 'token', name: 'alice' };

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
  'io.modelcontextprotocol/clientInfo': { name: 'prop', version: '1' },
};
const callLine = (id: number, tool: string, args: object, extra: object = {}) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: args, ...extra, _meta: META } });
const ACCEPT = { inputResponses: { confirm: { action: 'accept', content: { allow: true } } } };

function sealedFor(state: ConnectionState, command: string): string {
  const step = handleMcpLine(callLine(1, 'bash', { command }), state, at(T0));
  const result = (JSON.parse(step.replies[0]!.line) as { result: { requestState: string } }).result;
  return result.requestState;
}

/** One retry: its only reply must be -32602 about requestState, and nothing may run. */
function assertRefused(state: ConnectionState, line: string, now: number, label: string): void {
  const step = handleMcpLine(line, state, at(now));
  assert.is(step.effects.filter((e) => e.kind === 'runTool').length, 0, `ran: ${label}`);
  assert.is(step.effects.filter((e) => e.kind === 'consumeConfirmation').length, 0, `spent: ${label}`);
  assert.is(step.replies.length, 1, label);
  const reply = JSON.parse(step.replies[0]!.line) as { id: unknown; error?: { code: number; message: string } };
  assert.is(reply.id, 2, label);
  assert.is(reply.error?.code, -32602, `${label}: ${step.replies[0]!.line.slice(0, 300)}`);
  assert.match(reply.error!.message, /requestState/, label);
}

const b64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

/** Ways to damage a genuine state; each returns something other than the state itself. */
const tamper = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 6 }) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), text: fc.string({ minLength: 1, maxLength: 8 }) }),
  fc.record({ kind: fc.constant('forge' as const), field: fc.constantFrom('t', 'a', 'p', 'h', 'e', 'r'), value: fc.oneof(fc.string(), fc.integer()) }),
  fc.record({ kind: fc.constant('swapMac' as const), mac: fc.base64String({ minLength: 4, maxLength: 60 }) }),
  fc.record({ kind: fc.constant('huge' as const), extra: fc.integer({ min: 1, max: 50_000 }) }),
);

type Tamper = typeof tamper extends fc.Arbitrary<infer T> ? T : never;

function applyTamper(state: string, t: Tamper): string {
  const i = (n: number) => n % state.length;
  switch (t.kind) {
    case 'flip': {
      const k = i(t.at);
      return state.slice(0, k) + String.fromCharCode(state.charCodeAt(k) ^ (1 << t.bit)) + state.slice(k + 1);
    }
    case 'truncate': return state.slice(0, i(t.at));
    case 'insert': { const k = i(t.at); return state.slice(0, k) + t.text + state.slice(k); }
    case 'forge': {
      // A payload rewritten by the client, keeping the server's MAC: what a forger would try first.
      const [v, payload, mac] = state.split('.') as [string, string, string];
      const json = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
      json[t.field] = t.field === 'e' ? Number(json.e) + 1 + Math.abs(Number(t.value) || 0) : `${String(json[t.field])}${String(t.value)}x`;
      return `${v}.${b64url(JSON.stringify(json))}.${mac}`;
    }
    case 'swapMac': {
      const [v, payload] = state.split('.') as [string, string];
      return `${v}.${payload}.${t.mac.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`;
    }
    case 'huge': return state + 'A'.repeat(Math.max(t.extra, MAX_REQUEST_STATE_LENGTH));
  }
}

const command = fc.string({ minLength: 1, maxLength: 80 });

test('any tampering of a genuine state is -32602 naming requestState, and the tool never runs', () => {
  const state = fresh({ principal: ALICE });
  fc.assert(fc.property(command, tamper, (cmd, t) => {
    const genuine = sealedFor(state, cmd);
    const damaged = applyTamper(genuine, t);
    fc.pre(damaged !== genuine);
    assertRefused(state, callLine(2, 'bash', { command: cmd }, { requestState: damaged, ...ACCEPT }), T0 + 1, `${t.kind} ${JSON.stringify(t).slice(0, 120)}`);
  }), { seed: SEED, numRuns: RUNS });
});

/** base64url spellings of `part`'s bytes other than its own: its last character with other unused low bits. */
function otherSpellings(part: string): string[] {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const bytes = Buffer.from(part, 'base64url');
  return [...alphabet].map((c) => part.slice(0, -1) + c).filter((s) => s !== part && Buffer.from(s, 'base64url').equals(bytes));
}

test('a state re-encoded (the same bytes spelled otherwise in base64url, or its payload\'s JSON rewritten to the same value) is refused: one spelling opens, so a use is spent once', () => {
  const state = fresh({ principal: ALICE });
  fc.assert(fc.property(command, fc.nat(), (cmd, pick) => {
    const genuine = sealedFor(state, cmd);
    const [v, payload, mac] = genuine.split('.') as [string, string, string];
    const respelled = [
      ...otherSpellings(payload).map((p) => `${v}.${p}.${mac}`),
      ...otherSpellings(mac).map((m) => `${v}.${payload}.${m}`),
      // The same payload value, its JSON spaced: the same claim, another text under the server's MAC.
      `${v}.${b64url(JSON.stringify(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')), null, 1))}.${mac}`,
    ];
    assert.ok(respelled.length > 1, 'the MAC has unused bits to respell');
    const other = respelled[pick % respelled.length] as string;
    assertRefused(state, callLine(2, 'bash', { command: cmd }, { requestState: other, ...ACCEPT }), T0 + 1, `respelled ${other}`);
  }), { seed: SEED, numRuns: 300 });
});

test('a genuine state used by another principal, for another tool or other arguments, or at or after expiry is refused', () => {
  const principals: Principal[] = [{ kind: 'token', name: 'bob' }, { kind: 'anonymous' }, { kind: 'local' }, { kind: 'token', name: 'alice ' }];
  fc.assert(fc.property(command, command, fc.constantFrom(...principals), fc.integer({ min: 0, max: 10 * REQUEST_STATE_TTL_MS }), (cmd, other, who, late) => {
    const mine = fresh({ principal: ALICE });
    const genuine = sealedFor(mine, cmd);
    assertRefused(fresh({ principal: who }), callLine(2, 'bash', { command: cmd }, { requestState: genuine, ...ACCEPT }), T0 + 1, `principal ${JSON.stringify(who)}`);
    assertRefused(mine, callLine(2, 'write', { path: cmd, content: 'x' }, { requestState: genuine, ...ACCEPT }), T0 + 1, 'tool');
    if (other !== cmd) assertRefused(mine, callLine(2, 'bash', { command: other }, { requestState: genuine, ...ACCEPT }), T0 + 1, 'arguments');
    assertRefused(mine, callLine(2, 'bash', { command: cmd }, { requestState: genuine, ...ACCEPT }), T0 + REQUEST_STATE_TTL_MS + late, 'expired');
  }), { seed: SEED, numRuns: 300 });
});

test('anything that is not a state at all (any JSON value, wrong base64) is refused the same way', () => {
  const state = fresh({ principal: ALICE });
  const junk = fc.oneof(fc.anything(), fc.string(), fc.constant('v1..'), fc.constant('v1.!!!!.????'), fc.constant('v1.YQ.YQ'), fc.constant(''));
  fc.assert(fc.property(junk, (value) => {
    fc.pre(value !== undefined);
    assertRefused(state, callLine(2, 'bash', { command: 'ls' }, { requestState: value, ...ACCEPT }), T0 + 1, JSON.stringify(value)?.slice(0, 80) ?? 'value');
  }), { seed: SEED, numRuns: RUNS });
});

test('control: the genuine state with an accept does run the call (the refusals above are not the rule refusing everything)', () => {
  const state = fresh({ principal: ALICE });
  const genuine = sealedFor(state, 'ls');
  const step = handleMcpLine(callLine(2, 'bash', { command: 'ls' }, { requestState: genuine, ...ACCEPT }), state, at(T0 + REQUEST_STATE_TTL_MS - 1));
  const spend = step.effects.find((e) => e.kind === 'consumeConfirmation');
  assert.ok(spend !== undefined && spend.kind === 'consumeConfirmation');
  const ran = handleEffectResult({ kind: 'confirmationConsumed', ticket: spend.ticket, firstUse: true }, step.state, at(T0 + REQUEST_STATE_TTL_MS - 1));
  assert.is(ran.effects.filter((e) => e.kind === 'runTool').length, 1);
});

/** The store's question for an accepted retry of `requestState` at `now` (every retry of a genuine state asks one). */
function spendOf(state: ConnectionState, command: string, requestState: string, now: number): { ticket: number; digest: string; expiresAt: number; after: ConnectionState } {
  const step = handleMcpLine(callLine(2, 'bash', { command }, { requestState, ...ACCEPT }), state, at(now));
  assert.is(step.replies.length, 0, 'no answer before the store\'s');
  assert.is(step.effects.filter((e) => e.kind === 'runTool').length, 0, 'nothing runs before the store\'s answer');
  const spend = step.effects.find((e) => e.kind === 'consumeConfirmation');
  assert.ok(spend !== undefined && spend.kind === 'consumeConfirmation', JSON.stringify(step.effects));
  return { ticket: spend.ticket, digest: spend.digest, expiresAt: spend.expiresAt, after: step.state };
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('base64url');

test('every retry of a genuine accepted state asks to spend the same digest (the state\'s as sent) until its expiry; only a first use runs, a used one is -32602', () => {
  const principals: Principal[] = [ALICE, { kind: 'token', name: 'bob' }, { kind: 'local' }];
  fc.assert(fc.property(command, fc.constantFrom(...principals), fc.integer({ min: 1, max: REQUEST_STATE_TTL_MS - 1 }), fc.integer({ min: 1, max: REQUEST_STATE_TTL_MS - 1 }), (cmd, who, t1, t2) => {
    const state = fresh({ principal: who });
    const genuine = sealedFor(state, cmd);
    const one = spendOf(state, cmd, genuine, T0 + t1);
    const two = spendOf(state, cmd, genuine, T0 + t2);
    assert.equal([one.digest, one.expiresAt], [sha256(genuine), T0 + REQUEST_STATE_TTL_MS]);
    assert.equal([two.digest, two.expiresAt], [one.digest, one.expiresAt]);
    const ran = handleEffectResult({ kind: 'confirmationConsumed', ticket: one.ticket, firstUse: true }, one.after, at(T0 + t1));
    assert.is(ran.effects.filter((e) => e.kind === 'runTool').length, 1);
    const used = handleEffectResult({ kind: 'confirmationConsumed', ticket: two.ticket, firstUse: false }, two.after, at(T0 + t2));
    assert.equal(used.effects, []);
    assert.is(used.replies.length, 1);
    const reply = JSON.parse(used.replies[0]!.line) as { id: unknown; error?: { code: number; message: string } };
    assert.is(reply.error?.code, -32602);
    assert.match(reply.error!.message, /requestState was already used/);
  }), { seed: SEED, numRuns: 300 });
});

test('different states never share a digest: other arguments, the same call asked at another time, or the same call asked again in the same millisecond', () => {
  const state = fresh({ principal: ALICE });
  fc.assert(fc.property(command, command, fc.integer({ min: 1, max: 1000 }), (a, b, later) => {
    const sa = sealedFor(state, a);
    const laterStep = handleMcpLine(callLine(1, 'bash', { command: a }), state, at(T0 + later));
    const sa2 = (JSON.parse(laterStep.replies[0]!.line) as { result: { requestState: string } }).result.requestState;
    const digest = (cmd: string, s: string) => spendOf(state, cmd, s, T0 + later + 1).digest;
    assert.is.not(digest(a, sa), digest(a, sa2), 'asked again later');
    if (a !== b) assert.is.not(digest(a, sa), digest(b, sealedFor(state, b)), 'other arguments');
    // The same claim (tool, arguments, principal, harness) sealed at the same now: a second call, not a
    // replay of the first, so its own digest, and the store's first use of each runs its call.
    const again = sealedFor(state, a);
    const [one, two] = [sa, again].map((s) => spendOf(state, a, s, T0 + later + 1));
    assert.is.not(one!.digest, two!.digest, 'the same call asked again in the same millisecond');
    for (const spent of [one!, two!]) {
      const ran = handleEffectResult({ kind: 'confirmationConsumed', ticket: spent.ticket, firstUse: true }, spent.after, at(T0 + later + 1));
      assert.is(ran.effects.filter((e) => e.kind === 'runTool').length, 1, 'each is a first use');
    }
  }), { seed: SEED, numRuns: 300 });
});

// The same for a model turn's state (a harness_task sampled by its client): sealed by the core at the turn
// the runtime reports, it opens only as it was sent, for its caller and its call, before its expiry.
const SAMPLING_META = { ...META, 'io.modelcontextprotocol/clientCapabilities': { sampling: {} } };
const taskLine = (id: number, prompt: string, extra: object = {}) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'harness_task', arguments: { harness: 'super-pi-code', prompt }, ...extra, _meta: SAMPLING_META } });
const SAMPLED = { inputResponses: { sample: { role: 'assistant', model: 'm', content: { type: 'text', text: 'done' } } } };

function turnSealedFor(state: ConnectionState, prompt: string, turn: number, seq: number): string {
  const started = handleMcpLine(taskLine(1, prompt), state, at(T0));
  const effect = started.effects.find((e) => e.kind === 'runTool');
  assert.ok(effect && effect.kind === 'runTool' && effect.rounds !== undefined, 'the call asks for a task round');
  const step = handleEffectResult({ kind: 'toolInput', ticket: effect.ticket, conversationId: 'c-1', turn, seq, params: { messages: [], maxTokens: 1 } }, started.state, at(T0));
  return (JSON.parse(step.replies[0]!.line) as { result: { requestState: string } }).result.requestState;
}

const turnTamper = fc.oneof(
  tamper.filter((t) => t.kind !== 'forge'),
  fc.record({ kind: fc.constant('forge' as const), field: fc.constantFrom('c', 'n', 's', 't', 'a', 'p', 'h', 'e', 'k', 'r'), value: fc.oneof(fc.string(), fc.integer()) }),
);

test('any tampering of a model turn\'s state is -32602 naming requestState, and no round runs', () => {
  const state = fresh({ principal: ALICE });
  fc.assert(fc.property(command, fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 10_000 }), turnTamper, (prompt, turn, seq, t) => {
    const genuine = turnSealedFor(state, prompt, turn, seq);
    const damaged = applyTamper(genuine, t as Tamper);
    fc.pre(damaged !== genuine);
    assertRefused(state, taskLine(2, prompt, { requestState: damaged, ...SAMPLED }), T0 + 1, `${t.kind} ${JSON.stringify(t).slice(0, 120)}`);
  }), { seed: SEED, numRuns: RUNS });
});

test('a genuine turn state used by another principal, for another prompt, or at or after expiry is refused; as sent, it resumes its turn', () => {
  const principals: Principal[] = [{ kind: 'token', name: 'bob' }, { kind: 'anonymous' }, { kind: 'local' }];
  fc.assert(fc.property(command, command, fc.constantFrom(...principals), fc.integer({ min: 0, max: 10 * REQUEST_STATE_TTL_MS }), (prompt, other, who, late) => {
    const mine = fresh({ principal: ALICE, allowAnonymousTasks: true });
    const genuine = turnSealedFor(mine, prompt, 3, 42);
    assertRefused(fresh({ principal: who, allowAnonymousTasks: true }), taskLine(2, prompt, { requestState: genuine, ...SAMPLED }), T0 + 1, `principal ${JSON.stringify(who)}`);
    if (other !== prompt) assertRefused(mine, taskLine(2, other, { requestState: genuine, ...SAMPLED }), T0 + 1, 'arguments');
    assertRefused(mine, taskLine(2, prompt, { requestState: genuine, ...SAMPLED }), T0 + REQUEST_STATE_TTL_MS + late, 'expired');
    const resumed = handleMcpLine(taskLine(2, prompt, { requestState: genuine, ...SAMPLED }), mine, at(T0 + REQUEST_STATE_TTL_MS - 1));
    const effect = resumed.effects.find((e) => e.kind === 'runTool');
    assert.equal(effect?.kind === 'runTool' ? effect.rounds?.resume : null, { conversationId: 'c-1', turn: 3, seq: 42, answer: SAMPLED.inputResponses.sample });
  }), { seed: SEED, numRuns: 300 });
});

// And for a question from inside a task (a remote caller, a client that can be asked a form): the state the
// core seals at the runtime's `toolAsk` opens only as it was sent, for its caller and its call, before expiry.
const ASKING_META = { ...META, 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };
const askLine = (id: number, prompt: string, extra: object = {}) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'harness_task', arguments: { harness: 'super-pi-code', prompt }, ...extra, _meta: ASKING_META } });

function askSealedFor(state: ConnectionState, prompt: string, turn: number, seq: number): string {
  const started = handleMcpLine(askLine(1, prompt), state, at(T0));
  const effect = started.effects.find((e) => e.kind === 'runTool');
  assert.ok(effect && effect.kind === 'runTool' && effect.rounds?.ask === true, 'the call asks for a task round that may ask');
  const step = handleEffectResult({ kind: 'toolAsk', ticket: effect.ticket, conversationId: 'c-1', turn, seq, message: 'may it run?' }, started.state, at(T0));
  return (JSON.parse(step.replies[0]!.line) as { result: { requestState: string } }).result.requestState;
}

test('any tampering of a question\'s state is -32602 naming requestState, and no round runs', () => {
  const state = fresh({ principal: ALICE });
  fc.assert(fc.property(command, fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 10_000 }), turnTamper, (prompt, turn, seq, t) => {
    const genuine = askSealedFor(state, prompt, turn, seq);
    const damaged = applyTamper(genuine, t as Tamper);
    fc.pre(damaged !== genuine);
    assertRefused(state, askLine(2, prompt, { requestState: damaged, ...ACCEPT }), T0 + 1, `${t.kind} ${JSON.stringify(t).slice(0, 120)}`);
  }), { seed: SEED, numRuns: RUNS });
});

test('a genuine question state used by another principal, for another prompt, or at or after expiry is refused; as sent, it resumes its call', () => {
  const principals: Principal[] = [{ kind: 'token', name: 'bob' }, { kind: 'anonymous' }, { kind: 'local' }];
  fc.assert(fc.property(command, command, fc.constantFrom(...principals), fc.integer({ min: 0, max: 10 * REQUEST_STATE_TTL_MS }), (prompt, other, who, late) => {
    const mine = fresh({ principal: ALICE, allowAnonymousTasks: true });
    const genuine = askSealedFor(mine, prompt, 3, 42);
    assertRefused(fresh({ principal: who, allowAnonymousTasks: true }), askLine(2, prompt, { requestState: genuine, ...ACCEPT }), T0 + 1, `principal ${JSON.stringify(who)}`);
    if (other !== prompt) assertRefused(mine, askLine(2, other, { requestState: genuine, ...ACCEPT }), T0 + 1, 'arguments');
    assertRefused(mine, askLine(2, prompt, { requestState: genuine, ...ACCEPT }), T0 + REQUEST_STATE_TTL_MS + late, 'expired');
    const resumed = handleMcpLine(askLine(2, prompt, { requestState: genuine, ...ACCEPT }), mine, at(T0 + REQUEST_STATE_TTL_MS - 1));
    const effect = resumed.effects.find((e) => e.kind === 'runTool');
    assert.equal(effect?.kind === 'runTool' ? effect.rounds?.resume : null, { conversationId: 'c-1', turn: 3, seq: 42, person: { allowed: true, refusal: '' } });
  }), { seed: SEED, numRuns: 300 });
});

// Every kind of state is sealed with a nonce of its own: sealed again with the same claim, at the same
// place of a task and the same now, it is another state.
test('no two seals share a digest: confirmations, model turns and questions each sealed again with the same claim at the same now', () => {
  fc.assert(fc.property(command, fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 2, max: 5 }), (text, turn, seq, times) => {
    const state = fresh({ principal: ALICE });
    const states = [
      ...Array.from({ length: times }, () => sealedFor(state, text)),
      ...Array.from({ length: times }, () => turnSealedFor(state, text, turn, seq)),
      ...Array.from({ length: times }, () => askSealedFor(state, text, turn, seq)),
    ];
    assert.is(new Set(states.map(sha256)).size, states.length, 'every seal its own digest');
  }), { seed: SEED, numRuns: 300 });
});

test.run();
