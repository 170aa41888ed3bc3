// Properties of the modern (2026-07-28) path over generated `_meta` (fast-check, fixed seed): whatever a
// request's `_meta` holds, it gets exactly one answer echoing its id — a modern result or a clear error —
// no exception escapes, and the legacy session on the same connection keeps its own context; and any interleaving of
// legacy and modern messages on one connection answers each in its own era.

import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { handleMcpLine, handleParsedMessage } from '../../src/mcp/handle.ts';
import { logLevels } from '../../src/mcp/logging-level.ts';
import { isKeptMeta, parseMessageText } from '../../src/mcp/meta-cache.ts';
import { readModernContext } from '../../src/mcp/modern.ts';
import { initialState } from '../../src/mcp/state.ts';
import { ready } from './golden.ts';

const SEED = 20_261_205;
const RUNS = 1500;

const methods = ['server/discover', 'tools/list', 'tools/call', 'prompts/list', 'prompts/get', 'resources/list', 'resources/read',
  'resources/templates/list', 'completion/complete', 'ping', 'initialize', 'logging/setLevel', 'resources/subscribe', 'toString', '__proto__'];

/** Values for each modern key: the valid ones, near misses, and anything at all. */
const versionValue = fc.oneof(fc.constant('2026-07-28'), fc.constant('2025-11-25'), fc.string(), fc.anything());
const capabilitiesValue = fc.oneof(fc.constant({}), fc.constant({ elicitation: { form: {} }, sampling: {} }), fc.dictionary(fc.string(), fc.anything()), fc.anything());
const infoValue = fc.oneof(fc.record({ name: fc.string({ maxLength: 300 }), version: fc.string() }), fc.anything());
const levelValue = fc.oneof(fc.constantFrom(...logLevels), fc.anything());
const meta = fc.record({
  'io.modelcontextprotocol/protocolVersion': versionValue,
  'io.modelcontextprotocol/clientCapabilities': capabilitiesValue,
  'io.modelcontextprotocol/clientInfo': infoValue,
  'io.modelcontextprotocol/logLevel': levelValue,
}, { requiredKeys: ['io.modelcontextprotocol/protocolVersion'] });
const params = fc.record({ name: fc.oneof(fc.constantFrom('read', 'ls', 'super-pi-code'), fc.string()), uri: fc.string(), arguments: fc.anything(), cursor: fc.anything() }, { requiredKeys: [] });

test('any _meta gets one answer echoing its id (a modern result or an error), and the legacy session keeps its context', () => {
  const legacy = ready('2025-06-18', { elicitation: {} });
  const before = { phase: legacy.phase, version: legacy.protocolVersion, caps: JSON.stringify(legacy.clientCapabilities), info: JSON.stringify(legacy.clientInfo), level: legacy.logLevel, harness: legacy.harness };
  fc.assert(fc.property(fc.constantFrom(...methods), params, meta, fc.oneof(fc.integer(), fc.string({ maxLength: 20 })), (method, p, m, id) => {
    const line = JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...p, _meta: m } });
    const step = handleMcpLine(line, legacy);
    const answers = step.replies.map((r) => JSON.parse(r.line) as { id?: unknown; method?: string; result?: { resultType?: unknown }; error?: { code: number; message: string } })
      .filter((r) => r.method === undefined);
    const pendingAdded = step.state.pending.size - legacy.pending.size;
    // Answered now, or registered as work in flight whose result will answer it.
    assert.is(answers.length + pendingAdded, 1, line);
    // A version that JSON drops (undefined, a function) leaves a legacy request, answered as before.
    const sent = (JSON.parse(line) as { params: { _meta: Record<string, unknown> } }).params._meta;
    const isModern = method === 'server/discover' || Object.hasOwn(sent, 'io.modelcontextprotocol/protocolVersion');
    for (const a of answers) {
      assert.equal(a.id, id);
      if (a.error) assert.ok(a.error.message.length > 0 && Number.isInteger(a.error.code), line);
      else assert.is(a.result?.resultType, isModern ? 'complete' : undefined, line);
    }
    for (const r of step.replies) assert.ok(!r.line.includes('"elicitation/create"') && !r.line.includes('"sampling/createMessage"'), line);
    const s = step.state;
    assert.equal(
      { phase: s.phase, version: s.protocolVersion, caps: JSON.stringify(s.clientCapabilities), info: JSON.stringify(s.clientInfo), level: s.logLevel, harness: s.harness },
      before, line,
    );
    assert.is(s.modern, undefined);
  }), { seed: SEED, numRuns: RUNS });
});

test('legacy and modern messages interleaved on one connection stay apart: each answered in its own era, the session\'s level only from its own setLevel', () => {
  const level = fc.constantFrom(...logLevels);
  const legacyMessage = fc.oneof(
    fc.record({ kind: fc.constant('legacy' as const), method: fc.constant('logging/setLevel'), level }),
    fc.record({ kind: fc.constant('legacy' as const), method: fc.constantFrom('tools/list', 'ping', 'prompts/list'), level: fc.constant(undefined) }),
  );
  const modernMessage = fc.record({
    kind: fc.constant('modern' as const),
    method: fc.constantFrom('tools/list', 'server/discover', 'prompts/list', 'logging/setLevel'),
    level,
    caps: capabilitiesValue.filter((c) => c !== null && typeof c === 'object' && !Array.isArray(c)),
  });
  fc.assert(fc.property(fc.array(fc.oneof(legacyMessage, modernMessage), { minLength: 1, maxLength: 30 }), (messages) => {
    let state = ready('2025-06-18', { elicitation: {} });
    let expectedLevel = state.logLevel;
    messages.forEach((m, i) => {
      const params = m.kind === 'legacy'
        ? (m.level === undefined ? {} : { level: m.level })
        : { ...(m.method === 'logging/setLevel' ? { level: m.level } : {}), _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': m.caps, 'io.modelcontextprotocol/clientInfo': { name: 'modern', version: '1' }, 'io.modelcontextprotocol/logLevel': m.level } };
      const line = JSON.stringify({ jsonrpc: '2.0', id: i, method: m.method, params });
      const step = handleMcpLine(line, state);
      const answers = step.replies.map((r) => JSON.parse(r.line) as { id?: unknown; method?: string; result?: { resultType?: unknown }; error?: { code: number } })
        .filter((r) => r.method === undefined);
      assert.is(answers.length, 1, line);
      const a = answers[0] as { id?: unknown; result?: { resultType?: unknown }; error?: { code: number } };
      assert.is(a.id, i);
      if (m.kind === 'legacy') {
        assert.is(a.error, undefined, line);
        assert.is(a.result?.resultType, undefined, `a legacy answer has no resultType: ${line}`);
        if (m.method === 'logging/setLevel') expectedLevel = m.level;
      } else if (m.method === 'logging/setLevel') {
        assert.is(a.error?.code, -32601, `removed in 2026-07-28: ${line}`);
      } else {
        assert.is(a.result?.resultType, 'complete', line);
      }
      state = step.state;
      assert.is(state.logLevel, expectedLevel, `the session's level after ${line}`);
      assert.is(state.protocolVersion, '2025-06-18');
      assert.is(state.modern, undefined);
    });
  }), { seed: SEED, numRuns: 300 });
});

test('a _meta the cache keeps, read again, answers as a fresh parse of the same line answers (any _meta, any order of repeats)', () => {
  const fresh = initialState({ workspace: '/ws' });
  let kept = 0;
  fc.assert(fc.property(fc.array(meta, { minLength: 1, maxLength: 4 }), fc.array(fc.tuple(fc.nat(), fc.constantFrom(...methods)), { minLength: 2, maxLength: 12 }), (metas, order) => {
    const lines = order.map(([at, method], i) => JSON.stringify({ jsonrpc: '2.0', id: i, method, params: { name: 'read', arguments: { path: 'a.txt' }, _meta: metas[at % metas.length] } }));
    // Through the cache (a repeated text is the same frozen object, read last time or not), then whole.
    const cached = lines.map((line) => {
      if (isKeptMeta((parseMessageText(line) as { params: { _meta: unknown } }).params._meta)) kept++;
      return handleMcpLine(line, fresh).replies.map((r) => r.line);
    });
    const whole = lines.map((line) => handleParsedMessage(JSON.parse(line), fresh).replies.map((r) => r.line));
    assert.equal(cached, whole);
  }), { seed: SEED, numRuns: 500 });
  assert.ok(kept > 100, `the cache kept the repeated _meta of ${kept} lines`);
});

test('a kept _meta read again is not checked and serialised again: it reads as it read last time', () => {
  const text = JSON.stringify({ 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { sampling: {} }, 'io.modelcontextprotocol/clientInfo': { name: 'kept', version: '1' } });
  const line = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":${text}}}`;
  parseMessageText(line);
  const params = (parseMessageText(line) as { params: Record<string, unknown> }).params;
  assert.ok(isKeptMeta(params._meta));
  const first = readModernContext('tools/list', params);
  const original = JSON.stringify;
  let serialised = 0;
  JSON.stringify = ((...args: Parameters<typeof JSON.stringify>) => {
    serialised++;
    return original(...args);
  }) as typeof JSON.stringify;
  let again: ReturnType<typeof readModernContext>;
  try {
    again = readModernContext('tools/call', params);
  } finally {
    JSON.stringify = original;
  }
  assert.is(serialised, 0);
  assert.equal(again, { ...(first as object), method: 'tools/call' });
  // A copy that is not kept is read in full, and reads the same.
  assert.equal(readModernContext('tools/call', JSON.parse(original({ _meta: params._meta })) as Record<string, unknown>), again);
});

test('a kept _meta read again for the same method answers with the same record; another method, another record', () => {
  const text = JSON.stringify({ 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 'same', version: '2' } });
  const line = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","_meta":${text}}}`;
  parseMessageText(line);
  const params = (parseMessageText(line) as { params: Record<string, unknown> }).params;
  assert.ok(isKeptMeta(params._meta));
  const first = readModernContext('tools/call', params);
  assert.is(readModernContext('tools/call', params), first);
  const other = readModernContext('tools/list', params);
  assert.is.not(other, first);
  assert.equal(other, { ...(first as object), method: 'tools/list' });
  assert.is(readModernContext('tools/list', params), other);
});

test.run();
