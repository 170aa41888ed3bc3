// A grammar-aware fuzzer of whole JSON-RPC lines (fast-check, fixed seed), built as text so it can say
// what JSON.stringify never writes: duplicate keys, members in any order, `"\u005fmeta"` spellings, ids
// and numbers at the edges (0, -0, 1e400, 2^53+1, huge strings), `__proto__` and `constructor` keys in
// `_meta` and params, lone surrogates, a BOM, CR and tab whitespace, batches (2025-03-26), and legacy and
// modern (2026-07-28) messages interleaved on one connection. Whatever comes in: the core never throws;
// every line it writes is JSON-RPC 2.0 text that parses; a request with a valid id gets exactly one answer
// carrying that id (now, or when its work's effect ends); a notification gets none; a modern request is
// answered in its era and a legacy one in its own, and the legacy session's context is never changed by a
// modern message; and the `_meta` cache parses every line exactly as JSON.parse does (a differential).
// FUZZ_RUNS=20000 npm test -- line-grammar   runs it long (the CI run is small).

import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Effect, EffectResult } from '../../src/mcp/effects.ts';
import { handleEffectResult, handleMcpLine, type Outgoing, type Step } from '../../src/mcp/handle.ts';
import { idKey } from '../../src/mcp/jsonrpc.ts';
import { MetaCache, parseMessageText } from '../../src/mcp/meta-cache.ts';
import type { ConnectionState } from '../../src/mcp/state.ts';
import { MAX_BATCH_LENGTH, MAX_REQUEST_ID_LENGTH } from '../../src/limits.ts';
import { fresh, ready } from './golden.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_208);
const RUNS = Number(process.env.FUZZ_RUNS ?? 400);

const VERSION_KEY = '"io.modelcontextprotocol/protocolVersion"';
const CAPS_KEY = '"io.modelcontextprotocol/clientCapabilities"';
const INFO_KEY = '"io.modelcontextprotocol/clientInfo"';
const LEVEL_KEY = '"io.modelcontextprotocol/logLevel"';

// ---------------------------------------------------------------------------------------------
// Text generators: each yields JSON text (or, rarely, text that is not JSON at all).

type Member = readonly [string, string];
const ws = fc.constantFrom('', '', '', '', ' ', '\t', '\r', ' \r\t');
const object = (members: readonly Member[], s: string): string => `{${s}${members.map(([k, v]) => `${k}${s}:${s}${v}`).join(`,${s}`)}${s}}`;
const objectOf = (members: fc.Arbitrary<Member[]>): fc.Arbitrary<string> => fc.tuple(members, ws).map(([ms, s]) => object(ms, s));

/** Keys a caller may send that an object literal would not survive. */
const oddKey = fc.constantFrom('"__proto__"', '"constructor"', '"toString"', '"hasOwnProperty"', '"\\u005f\\u005fproto\\u005f\\u005f"', '""', '"\\ud800"', '"a"');
const edgeNumber = fc.constantFrom('0', '-0', '0.0', '-0.0', '1e400', '-1e400', '1e-400', '9007199254740993', '1E2', '123456789012345678901234567890', '0.1', '-1');
const edgeString = fc.constantFrom('""', '"\\ud800"', '"\\udfff\\ud800"', '"\\u0000"', '"\\\\u0000"', '"\uD83D\uDE00"', '"\u2028"', '"__proto__"', '"toString"', '"x"');
const scalar = fc.oneof(edgeNumber, edgeString, fc.constantFrom('null', 'true', 'false'), fc.string({ maxLength: 6 }).map((s) => JSON.stringify(s)));
const value: fc.Arbitrary<string> = fc.letrec<{ v: string }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('v'), { maxLength: 3 }).map((vs) => `[${vs.join(',')}]`),
    objectOf(fc.array(fc.tuple(oddKey, tie('v')), { maxLength: 3 })),
  ),
})).v;

/** An id: valid (small numbers, -0, strings at the length limit) and not (1e400, too long, objects, null). */
const idText = fc.oneof(
  fc.constantFrom('0', '-0', '1', '2', '-1', '0.5', '1e0', '1.0', '9007199254740993', '1e308'),
  fc.constantFrom('"0"', '"1"', '"a"', '"__proto__"', '"toString"', '""', '"\\ud800"', '"-0"'),
  fc.constantFrom(JSON.stringify('i'.repeat(MAX_REQUEST_ID_LENGTH)), JSON.stringify('i'.repeat(MAX_REQUEST_ID_LENGTH + 1))),
  fc.constantFrom('1e400', '-1e400', 'null', 'true', '{}', '{"__proto__":1}', '[1]'),
);

/** A modern `_meta`'s members: valid ones mostly, near misses, duplicates, and odd keys beside them. */
const versionText = fc.oneof({ weight: 6, arbitrary: fc.constant('"2026-07-28"') }, { weight: 1, arbitrary: fc.constantFrom('"2025-06-18"', '"2026-07-29"', 'null', '{}', '1', '"__proto__"') });
const capsText = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom('{}', '{"elicitation":{"form":{}},"sampling":{}}', '{"extensions":{"io.modelcontextprotocol/tasks":{}}}', '{"elicitation":{}}') },
  { weight: 1, arbitrary: fc.constantFrom('{"__proto__":{"sampling":{}}}', '{"constructor":{"prototype":{"x":1}}}', '[]', 'null', '"caps"', '{"elicitation":{"form":{}},"elicitation":null}') },
  { weight: 1, arbitrary: value },
);
const infoText = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom('{"name":"fuzz","version":"1"}', '{"name":"fuzz","version":"1","title":"F"}') },
  { weight: 1, arbitrary: fc.constantFrom('{"__proto__":{"name":"x","version":"1"}}', '{"name":"\\ud800","version":"1"}', '{"name":1}', 'null') },
  { weight: 1, arbitrary: value },
);
const levelText = fc.constantFrom('"debug"', '"error"', '"emergency"', '"loud"', 'null', '"__proto__"');
const modernMeta = fc.tuple(
  fc.shuffledSubarray<Member | null>([null], { minLength: 0 }),
  versionText, capsText, infoText, fc.option(levelText, { freq: 2 }),
  fc.array(fc.tuple(oddKey, value), { maxLength: 2 }),
  fc.option(fc.tuple(fc.constantFrom(VERSION_KEY, CAPS_KEY), value), { freq: 6 }),
  fc.nat(20), ws,
).map(([, version, caps, info, level, odd, duplicate, drop, s]) => {
  const members: Member[] = [[VERSION_KEY, version], [CAPS_KEY, caps], [INFO_KEY, info]];
  if (level !== null) members.push([LEVEL_KEY, level]);
  // Now and then one of the required members is missing.
  if (drop < 3) members.splice(drop, 1);
  members.push(...odd);
  // A duplicate key: JSON.parse keeps the last one, so it goes first or last.
  if (duplicate !== null) (drop % 2 === 0 ? members.unshift(duplicate) : members.push(duplicate));
  return object(members, s);
});
/** The same modern context, repeated byte for byte (as a client does), so the `_meta` cache keeps and hits it. */
const REPEATED_META = '{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"extensions":{"io.modelcontextprotocol/tasks":{}}},"io.modelcontextprotocol/clientInfo":{"name":"fuzz","version":"1"}}';
const legacyMeta = fc.constantFrom('{}', '{"progressToken":1}', '{"progressToken":"p"}', '{"superpi/harness":"super-pi-code"}', '{"__proto__":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}', 'null', '[]', '"2026-07-28"');
const metaText = fc.oneof({ weight: 3, arbitrary: modernMeta }, { weight: 3, arbitrary: fc.constant(REPEATED_META) }, { weight: 2, arbitrary: legacyMeta });

const methods = [
  'initialize', 'ping', 'tools/list', 'tools/call', 'prompts/list', 'prompts/get', 'resources/list', 'resources/read', 'resources/templates/list',
  'completion/complete', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe', 'server/discover', 'subscriptions/listen',
  'tasks/get', 'tasks/update', 'tasks/cancel', 'notifications/initialized', 'notifications/cancelled', 'notifications/progress',
  'toString', '__proto__', 'constructor', 'hasOwnProperty', '',
];
const methodText = fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...methods).map((m) => JSON.stringify(m)) }, { weight: 1, arbitrary: value });

/** Params members for the methods above: names, arguments, uris, task ids, listen filters, states, levels. */
const paramMember = fc.oneof(
  fc.constantFrom<Member>(
    ['"name"', '"ls"'], ['"name"', '"read"'], ['"name"', '"bash"'], ['"name"', '"harness_task"'], ['"name"', '"super-pi-code"'], ['"name"', '"__proto__"'],
    ['"arguments"', '{}'], ['"arguments"', '{"path":"a.txt"}'], ['"arguments"', '{"command":"true"}'], ['"arguments"', '{"harness":"super-pi-planner","prompt":"p"}'],
    ['"arguments"', '{"__proto__":{"command":"rm"},"command":"true"}'],
    ['"uri"', '"superpi://workspace"'], ['"uri"', '"superpi://conversation/c1/transcript"'], ['"uri"', '"superpi://loadout"'],
    ['"taskId"', '"c1"'], ['"taskId"', '""'], ['"inputResponses"', '{"confirm":{"action":"accept","content":{"allow":true}}}'],
    ['"inputResponses"', '{"__proto__":{"action":"accept"}}'], ['"requestState"', '"v1.e30.AAAA"'], ['"requestState"', '1'],
    ['"filter"', '{"resources":["superpi://conversation/c1/transcript"]}'], ['"filter"', '{"tasks":["c1"]}'], ['"filter"', '{"__proto__":[]}'],
    ['"level"', '"debug"'], ['"level"', '"toString"'], ['"protocolVersion"', '"2025-03-26"'], ['"protocolVersion"', '"2025-06-18"'],
    ['"capabilities"', '{}'], ['"clientInfo"', '{"name":"c","version":"1"}'], ['"requestId"', '1'], ['"requestId"', '"a"'], ['"requestId"', '-0'],
    ['"ref"', '{"type":"ref/prompt","name":"super-pi-code"}'], ['"argument"', '{"name":"path","value":"s"}'], ['"cursor"', '"x"'],
  ),
  fc.tuple(oddKey, value),
);
const paramsText = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(fc.array(paramMember, { maxLength: 4 }), fc.option(metaText, { freq: 4 }), fc.boolean(), fc.boolean(), ws).map(([ms, meta, last, escaped, s]) => {
    const members: Member[] = [...ms];
    if (meta !== null) {
      const key = escaped ? '"\\u005fmeta"' : '"_meta"';
      if (last) members.push([key, meta]);
      else members.unshift([key, meta]);
    }
    return object(members, s);
  }) },
  { weight: 1, arbitrary: fc.constantFrom('[]', 'null', '"p"', '1') },
);

/** One message as text: jsonrpc, id, method, params, result, error in any order, any of them missing or twice. */
const messageText = fc.tuple(
  fc.constantFrom('"2.0"', '"2.0"', '"2.0"', '"2.0"', '"1.0"', '2'), fc.option(idText, { freq: 5 }), fc.option(methodText, { freq: 12 }), fc.option(paramsText, { freq: 8 }),
  fc.option(fc.constantFrom<Member>(['"result"', '{}'], ['"error"', '{"code":-1,"message":"no"}'], ['"error"', '"bad"']), { freq: 8 }),
  fc.option(fc.tuple(fc.constantFrom('"id"', '"method"', '"jsonrpc"', '"params"'), value), { freq: 10 }),
  fc.nat(), ws,
).map(([version, id, method, params, response, duplicate, order, s]) => {
  const members: Member[] = [['"jsonrpc"', version]];
  if (id !== null) members.push(['"id"', id]);
  if (method !== null) members.push(['"method"', method]);
  if (params !== null) members.push(['"params"', params]);
  if (response !== null) members.push(response);
  // Rotated: members in any order.
  const k = order % members.length;
  const rotated = [...members.slice(k), ...members.slice(0, k)];
  if (duplicate !== null) ((order >> 4) % 2 === 0 ? rotated.unshift(duplicate) : rotated.push(duplicate));
  return object(rotated, s);
});
/** Requests that get as far as work (a tool run, a read), in either era: their answers come when the work ends. */
const workText = fc.tuple(
  idText, fc.constantFrom(
    '"method":"tools/call","params":{"name":"ls","arguments":{}', '"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt"}',
    '"method":"resources/read","params":{"uri":"superpi://workspace"', '"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"super-pi-code"},"argument":{"name":"path","value":"s"}',
  ), fc.option(fc.oneof(fc.constant(REPEATED_META), modernMeta), { freq: 2 }),
).map(([id, body, meta]) => `{"jsonrpc":"2.0","id":${id},${body}${meta === null ? '' : `,"_meta":${meta}`}}}`);
const lineText = fc.oneof(
  { weight: 12, arbitrary: messageText },
  { weight: 4, arbitrary: workText },
  { weight: 2, arbitrary: fc.array(messageText, { maxLength: 5 }).map((ms) => `[${ms.join(',')}]`) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('\uFEFF', ' ', '\r', '\t', '\u00a0'), messageText).map(([p, m]) => `${p}${m}`) },
  { weight: 1, arbitrary: messageText.map((m) => m.slice(0, Math.max(1, m.length >> 1))) },
  { weight: 1, arbitrary: value },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
);
const start = fc.constantFrom('fresh', '2025-06-18', '2025-03-26', '2025-11-25', '2024-11-05');

// ---------------------------------------------------------------------------------------------
// The oracle: what JSON-RPC says a parsed message is, independent of the core's classification.

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isValidId = (v: unknown): v is string | number =>
  (typeof v === 'string' && v.length <= MAX_REQUEST_ID_LENGTH) || (typeof v === 'number' && Number.isFinite(v));

function kindOf(m: unknown): 'request' | 'notification' | 'other' {
  if (!isObject(m) || m.jsonrpc !== '2.0' || !Object.hasOwn(m, 'method') || typeof m.method !== 'string' || m.method === '') return 'other';
  if (m.method.length > 256) return 'other';
  if (m.params !== undefined && !isObject(m.params)) return 'other';
  if (!Object.hasOwn(m, 'id')) return 'notification';
  return isValidId(m.id) ? 'request' : 'other';
}

/** Whether a parsed request is modern: its `params._meta` names a protocol version, or it is server/discover. */
function isModern(m: Record<string, unknown>): boolean {
  if (m.method === 'server/discover') return true;
  const params = m.params;
  if (!isObject(params) || !isObject(params._meta)) return false;
  return Object.hasOwn(params._meta, 'io.modelcontextprotocol/protocolVersion') && params._meta['io.modelcontextprotocol/protocolVersion'] !== undefined;
}

/** Structural equality that keeps key order, own `__proto__` keys, prototypes and -0 apart. */
function same(a: unknown, b: unknown, where = '$'): void {
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) {
    assert.ok(Object.is(a, b), `${where}: ${String(a)} vs ${String(b)}`);
    return;
  }
  assert.is(Array.isArray(a), Array.isArray(b), where);
  assert.is(Object.getPrototypeOf(a), Object.getPrototypeOf(b), `${where}: prototype`);
  const ka = Reflect.ownKeys(a);
  const kb = Reflect.ownKeys(b);
  assert.equal(ka, kb, `${where}: keys`);
  for (const k of ka) same((a as Record<PropertyKey, unknown>)[k], (b as Record<PropertyKey, unknown>)[k], `${where}.${String(k)}`);
}

/** Results of work (answered when its effect ended) whose era was checked, per era: the run reached them. */
const checkedFromWork = { modern: 0, legacy: 0 };

interface Expectation { key: string; modern: boolean; line: number }

/** Drives the core as the runtime does: every line, then every effect it asks for is ended (failed, most simply). */
class Driver {
  state: ConnectionState;
  /** Answers owed per id key (requests not yet answered), and answers a malformed message with an id may get. */
  readonly owed = new Map<string, Expectation[]>();
  readonly allowed = new Map<string, number>();
  /** Requests the client cancelled, per id key: each may still be answered once. */
  readonly cancelled = new Map<string, number>();
  readonly effects: Effect[] = [];
  /** Requests of the server's own, by id, not answered yet. */
  readonly questions: (string | number)[] = [];
  /** Lines handled so far: an error answered at once answers a request of the line being handled. */
  lines = 0;
  readonly legacy: { version: string | null; caps: string; info: string; level: string | null };

  constructor(state: ConnectionState) {
    this.state = state;
    this.legacy = this.legacyContext();
  }

  legacyContext(): Driver['legacy'] {
    const s = this.state;
    return { version: s.protocolVersion, caps: JSON.stringify(s.clientCapabilities), info: JSON.stringify(s.clientInfo), level: s.logLevel };
  }

  line(text: string): void {
    let parsed: unknown;
    let parses = true;
    try {
      parsed = JSON.parse(text);
    } catch {
      parses = false;
    }
    // The differential: the cache (a fresh one, and the thread's, which the core uses) means what JSON.parse means.
    for (const parse of [(t: string) => new MetaCache().parse(t), parseMessageText]) {
      let got: unknown;
      let ok = true;
      try {
        got = parse(text);
      } catch {
        ok = false;
      }
      assert.is(ok, parses, `parses alike: ${text}`);
      if (ok) same(got, parsed);
    }
    const before = this.state;
    this.lines++;
    const step = handleMcpLine(text, before);
    const batch = Array.isArray(parsed) ? parsed : null;
    const batchesAllowed = before.protocolVersion === '2025-03-26' || before.protocolVersion === '2024-11-05';
    const refusedWhole = batch !== null && (!batchesAllowed || batch.length === 0 || batch.length > MAX_BATCH_LENGTH);
    const items: unknown[] = !parses || refusedWhole ? [] : (batch ?? [parsed]);
    for (const m of items) this.expect(m);
    const responses = this.apply(step, text);
    if (!parses || refusedWhole) {
      assert.equal(responses.map((r) => r.id), [null], `one reply with id null: ${text}`);
      return;
    }
    if (batch === null && kindOf(parsed) === 'notification') assert.equal(responses, [], `a notification is never answered: ${text}`);
    // A message refused whole for its id (too long, not a number or string) is answered with id null.
    assert.ok(responses.length <= items.length, `at most one answer per message: ${text}`);
  }

  expect(m: unknown): void {
    const kind = kindOf(m);
    if (kind === 'request') {
      const r = m as Record<string, unknown>;
      const key = idKey(r.id as string | number);
      const list = this.owed.get(key) ?? [];
      list.push({ key, modern: isModern(r), line: this.lines });
      this.owed.set(key, list);
    } else if (kind === 'notification' && (m as Record<string, unknown>).method === 'notifications/cancelled') {
      // A cancelled request may go unanswered (or be answered, if its answer was on its way).
      const target = (m as { params?: { requestId?: unknown } }).params?.requestId;
      if (typeof target !== 'string' && typeof target !== 'number') return;
      const key = idKey(target);
      const n = this.owed.get(key)?.length ?? 0;
      this.owed.delete(key);
      this.cancelled.set(key, (this.cancelled.get(key) ?? 0) + n);
    } else if (isObject(m) && isValidId(m.id) && !(m.jsonrpc === '2.0' && !Object.hasOwn(m, 'method') && (Object.hasOwn(m, 'result') || Object.hasOwn(m, 'error')))) {
      // A malformed message with an id may be refused under that id; a response (result or error, no method) is never answered.
      const key = idKey(m.id);
      this.allowed.set(key, (this.allowed.get(key) ?? 0) + 1);
    }
  }

  apply(step: Step, cause: string): { id: string | number | null; error: boolean }[] {
    this.state = step.state;
    const out: { id: string | number | null; error: boolean }[] = [];
    for (const o of step.replies) {
      const r = this.checkLine(o, cause);
      if (r !== null) out.push(r);
    }
    this.effects.push(...step.effects);
    // The legacy session's own context moves only by its own messages (initialize, logging/setLevel).
    assert.is(this.state.modern, undefined, `no modern view leaks into the connection: ${cause}`);
    return out;
  }

  /** One output: JSON-RPC 2.0 text that parses, routed by what it says; an answer is counted against what is owed. */
  checkLine(o: Outgoing, cause: string): { id: string | number | null; error: boolean } | null {
    let m: Record<string, unknown>;
    try {
      m = JSON.parse(o.line) as Record<string, unknown>;
    } catch (err) {
      assert.unreachable(`not JSON (${(err as Error).message}): ${o.line}`);
      throw err;
    }
    assert.ok(isObject(m) && m.jsonrpc === '2.0', o.line);
    assert.not.ok(o.line.includes('\n'), `a line holds no newline: ${o.line}`);
    if (typeof m.method === 'string') {
      assert.is(o.inReplyTo, undefined, o.line);
      // A question of the server's own (a confirmation, a model turn): the client answers it, here by declining.
      if (m.id !== undefined) this.questions.push(m.id as string | number);
      return null;
    }
    assert.ok(('result' in m) !== ('error' in m), `result xor error: ${o.line}`);
    if (m.id === null) {
      assert.is(o.inReplyTo, undefined, o.line);
      return { id: null, error: 'error' in m };
    }
    assert.ok(isValidId(m.id), o.line);
    assert.ok(o.inReplyTo !== undefined && idKey(o.inReplyTo) === idKey(m.id as string | number), `inReplyTo agrees with the line: ${o.line}`);
    const key = idKey(m.id as string | number);
    const owed = this.owed.get(key);
    const allowed = this.allowed.get(key) ?? 0;
    // A malformed message with an id is refused under it (JSON-RPC), even while a request with that id is in flight.
    if ('error' in m && allowed > 0 && !cause.startsWith('effect ')) {
      this.allowed.set(key, allowed - 1);
    } else if (owed !== undefined && owed.length > 0) {
      // A result says its era, and answers a request of that era. An error answers the request the line just
      // sent (a reused id in flight is refused at once), or, from an effect, the oldest one.
      // A request reusing an id in flight is refused: the refusal answers the newest request with that id.
      const reused = 'error' in m && /already used/.test(JSON.stringify(m.error));
      const fromLine = owed.findIndex((e) => e.line === this.lines);
      let at = reused ? owed.length - 1 : cause.startsWith('effect ') || fromLine === -1 ? 0 : fromLine;
      if ('result' in m) {
        const result = m.result as Record<string, unknown>;
        const modern = isObject(result) && Object.hasOwn(result, 'resultType');
        at = owed.findIndex((e) => e.modern === modern);
        if (cause.startsWith('effect ')) checkedFromWork[modern ? 'modern' : 'legacy']++;
        assert.ok(at !== -1, `answered in its own era (${modern ? 'modern' : 'legacy'}): ${o.line}\nafter: ${cause}\nowed: ${JSON.stringify(owed)}`);
      }
      owed.splice(at, 1);
      if (owed.length === 0) this.owed.delete(key);
    } else if ((this.cancelled.get(key) ?? 0) > 0) {
      this.cancelled.set(key, (this.cancelled.get(key) ?? 0) - 1);
    } else {
      assert.ok(allowed > 0, `an answer to ${key}, which nothing owed: ${o.line}\nafter: ${cause}`);
      this.allowed.set(key, allowed - 1);
    }
    return { id: m.id as string | number, error: 'error' in m };
  }

  /**
   * A `subscriptions/listen` stream stays in flight until the client cancels it (its acknowledgement is a
   * notification, not an answer): each is cancelled, and owes no answer then.
   */
  endListens(): void {
    for (const p of [...this.state.pending.values()]) {
      if (p.kind !== 'listen') continue;
      const key = idKey(p.requestId);
      const owed = this.owed.get(key);
      const at = owed?.findIndex((e) => e.modern) ?? -1;
      assert.ok(owed !== undefined && at !== -1, `a listen stream ${key} no request owed`);
      owed.splice(at, 1);
      if (owed.length === 0) this.owed.delete(key);
      this.line(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: p.requestId } }));
    }
  }

  /** Ends every effect that carries a ticket with a failure (every kind of work answers one), and declines every question, until none is left. */
  settle(): void {
    for (let rounds = 0; rounds < 10_000 && (this.effects.length > 0 || this.questions.length > 0); rounds++) {
      const question = this.questions.shift();
      if (question !== undefined) {
        this.line(JSON.stringify({ jsonrpc: '2.0', id: question, result: { action: 'decline' } }));
        continue;
      }
      const effect = this.effects.shift() as Effect;
      if (!('ticket' in effect) || effect.kind === 'clientResponse' || effect.kind === 'cancel') continue;
      // Work that succeeds is answered with a result, whose era is checked; the rest fails.
      const ticket = effect.ticket;
      const done: EffectResult = effect.kind === 'runTool' ? { kind: 'toolDone', ticket, outcome: { text: 'done' } }
        : effect.kind === 'readWorkspace' ? { kind: 'workspaceContext', ticket, context: { root: '/ws', git: null, layout: ['a'], readme: null } }
        : effect.kind === 'completePath' ? { kind: 'pathCompletions', ticket, values: ['a'], hasMore: false }
        : effect.kind === 'readTranscript' ? { kind: 'transcript', ticket, jsonl: '{}' }
        : effect.kind === 'listConversations' ? { kind: 'conversationList', ticket, page: { ids: ['c1'] } }
        : effect.kind === 'readTask' ? { kind: 'taskRead', ticket, task: null }
        : { kind: 'effectFailed', ticket, code: -32603, message: 'failed' };
      this.apply(handleEffectResult(ticket % 3 === 0 ? { kind: 'effectFailed', ticket, code: -32603, message: 'failed' } : done, this.state), `effect ${effect.kind}`);
    }
  }
}

function startState(phase: string): ConnectionState {
  return phase === 'fresh' ? fresh() : ready(phase, { elicitation: {}, sampling: {} });
}

test('whatever lines come in (legacy, modern, batches, odd ids, keys and spellings), each request is answered once in its era, no notification is, and all output is JSON', () => {
  fc.assert(fc.property(start, fc.array(lineText, { minLength: 1, maxLength: 14 }), (phase, lines) => {
    const d = new Driver(startState(phase));
    for (const line of lines) {
      const protocolBefore = d.state.protocolVersion;
      d.line(line);
      // A modern message never moves the legacy session's context; only initialize and setLevel do.
      if (protocolBefore !== null) assert.is(d.state.protocolVersion, protocolBefore, line);
    }
    d.settle();
    d.endListens();
    assert.is(d.state.pending.size, 0, `nothing pending: ${JSON.stringify([...d.state.pending.values()])}`);
    const unanswered = [...d.owed.entries()].filter(([, v]) => v.length > 0);
    assert.equal(unanswered, [], 'every request answered');
  }), { seed: SEED, numRuns: RUNS });
  assert.ok(checkedFromWork.modern > RUNS / 20 && checkedFromWork.legacy > RUNS / 20, `results of work checked for their era: ${JSON.stringify(checkedFromWork)}`);
});

test('a modern message never changes the legacy session\'s context, whatever its _meta holds', () => {
  const modernLine = fc.tuple(idText, fc.constantFrom(...methods).map((m) => JSON.stringify(m)), fc.array(paramMember, { maxLength: 3 }), modernMeta)
    .map(([id, method, ms, meta]) => `{"jsonrpc":"2.0","id":${id},"method":${method},"params":${object([...ms, ['"_meta"', meta]], '')}}`)
    // Only messages that are modern: a `_meta` without a version leaves a legacy request (initialize may move the session).
    .filter((line) => isObject(JSON.parse(line)) && isModern(JSON.parse(line) as Record<string, unknown>));
  fc.assert(fc.property(fc.constantFrom('2025-06-18', '2025-03-26', '2025-11-25'), fc.array(modernLine, { minLength: 1, maxLength: 8 }), (version, lines) => {
    const d = new Driver(ready(version, { elicitation: {} }));
    for (const line of lines) d.line(line);
    d.settle();
    assert.equal(d.legacyContext(), d.legacy);
  }), { seed: SEED, numRuns: RUNS });
});

test.run();
