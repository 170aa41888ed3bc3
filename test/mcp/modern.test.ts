import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CATALOG_CACHE_TTL_MS, RESOURCE_CACHE_TTL_MS } from '../../src/limits.ts';
import { type ModernRequest, modernAnswer, shapeModernResult } from '../../src/mcp/era.ts';
import { answer } from '../../src/mcp/outgoing.ts';
import { readModernContext } from '../../src/mcp/modern.ts';
import { feed, fold, fresh, ready, req } from './golden.ts';

type Reply = { id?: unknown; method?: string; result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown }; params?: Record<string, unknown> };

const META = (over: Record<string, unknown> = {}) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'modern', version: '2' },
  ...over,
});
const modern = (id: number | string, method: string, params: Record<string, unknown> = {}, meta: Record<string, unknown> = META()) =>
  req(id, method, { ...params, _meta: meta });
const SERVER_INFO = { 'io.modelcontextprotocol/serverInfo': { name: 'super-pi', version: '0.1.0' } };

// ---------------------------------------------------------------------------------------------
const sorting = suite('Era sorting: which requests are modern');

sorting('serves server/discover on a fresh connection, without initialize', () => {
  const r = feed(fresh(), modern(1, 'server/discover'));
  const result = (r.replies[0] as Reply).result!;
  assert.equal(result.supportedVersions, ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']);
  assert.is(result.resultType, 'complete');
  assert.is(result.ttlMs, CATALOG_CACHE_TTL_MS);
  assert.is(result.cacheScope, 'private');
  assert.equal(result.capabilities, { tools: { listChanged: false }, prompts: { listChanged: false }, resources: { subscribe: true, listChanged: false }, completions: {}, logging: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } });
  assert.is((result.serverInfo as { name: string }).name, 'super-pi');
  assert.is((result.serverInfo as { description?: string }).description !== undefined, true);
  assert.match(String(result.instructions), /workspace \/ws/);
  assert.equal(result._meta, SERVER_INFO);
});

sorting('serves a modern tools/list before initialize and leaves the connection uninitialized', () => {
  const before = fresh();
  const r = feed(before, modern(1, 'tools/list'));
  const result = (r.replies[0] as Reply).result!;
  assert.ok(Array.isArray(result.tools) && result.tools.length > 0);
  assert.is(result.resultType, 'complete');
  assert.is(result.ttlMs, CATALOG_CACHE_TTL_MS);
  assert.is(r.state.phase, 'awaiting-initialize');
  assert.is(r.state.protocolVersion, null);
  assert.equal(r.state.clientCapabilities, {});
  assert.is(r.state.clientInfo, null);
  assert.is(r.state.modern, undefined);
});

sorting('still refuses a legacy tools/list before initialize (-32600), unchanged', () => {
  const r = feed(fresh(), req(1, 'tools/list'));
  assert.is((r.replies[0] as Reply).error!.code, -32600);
});

sorting('initialize without modern _meta is still the legacy handshake', () => {
  const r = feed(fresh(), req(0, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } }));
  assert.is(((r.replies[0] as Reply).result as { protocolVersion: string }).protocolVersion, '2025-11-25');
  assert.is(r.state.phase, 'ready');
});

sorting('legacy and modern requests interleave on one connection and stay apart', () => {
  const legacy = ready('2025-06-18', { elicitation: {} });
  const r = feed(legacy, req(1, 'logging/setLevel', { level: 'debug' }), modern(2, 'tools/list'), req(3, 'tools/list'));
  const modernReply = (r.replies[1] as Reply).result!;
  const legacyReply = (r.replies[2] as Reply).result!;
  assert.is(modernReply.resultType, 'complete');
  assert.is(legacyReply.resultType, undefined);
  assert.is(legacyReply.ttlMs, undefined);
  assert.is(r.state.protocolVersion, '2025-06-18');
  assert.equal(r.state.clientCapabilities, { elicitation: {} });
  assert.is(r.state.logLevel, 'debug');
  assert.is(r.state.clientInfo?.name, 'golden');
});

// ---------------------------------------------------------------------------------------------
const errors = suite('Modern errors');

errors('answers an unknown version with -32022 listing the modern versions, echoing the id', () => {
  const r = feed(fresh(), modern('a', 'tools/list', {}, META({ 'io.modelcontextprotocol/protocolVersion': '2099-01-01' })));
  assert.equal(r.replies, [{ jsonrpc: '2.0', id: 'a', error: { code: -32022, message: 'Unsupported protocol version', data: { supported: ['2026-07-28'], requested: '2099-01-01' } } }]);
});

errors('answers a legacy version named in _meta with -32022 (legacy versions need initialize)', () => {
  const r = feed(fresh(), modern(1, 'tools/list', {}, META({ 'io.modelcontextprotocol/protocolVersion': '2025-11-25' })));
  assert.is((r.replies[0] as Reply).error!.code, -32022);
});

errors('answers server/discover without _meta, or whose _meta names no version, with -32602 (never -32022), echoing the id', () => {
  const meta: Record<string, unknown> = META();
  delete meta['io.modelcontextprotocol/protocolVersion'];
  const r = feed(fresh(), req(101, 'server/discover', {}), req(102, 'server/discover', { _meta: meta }), req(103, 'server/discover', { _meta: 'x' }));
  assert.equal(r.replies.map((m) => [(m as Reply).id, (m as Reply).error?.code]), [[101, -32602], [102, -32602], [103, -32602]]);
  assert.match((r.replies[1] as Reply).error!.message, /protocolVersion/);
});

errors('answers missing client capabilities with -32602', () => {
  const meta: Record<string, unknown> = META();
  delete meta['io.modelcontextprotocol/clientCapabilities'];
  const r = feed(fresh(), modern(1, 'tools/list', {}, meta));
  assert.is((r.replies[0] as Reply).error!.code, -32602);
  assert.match((r.replies[0] as Reply).error!.message, /clientCapabilities/);
});

errors('answers client capabilities that are not an object with -32602', () => {
  const r = feed(fresh(), modern(1, 'tools/list', {}, META({ 'io.modelcontextprotocol/clientCapabilities': [1] })));
  assert.is((r.replies[0] as Reply).error!.code, -32602);
});

errors('answers an over-long clientInfo name with -32602, as initialize does', () => {
  const r = feed(fresh(), modern(1, 'tools/list', {}, META({ 'io.modelcontextprotocol/clientInfo': { name: 'n'.repeat(300), version: '1' } })));
  assert.is((r.replies[0] as Reply).error!.code, -32602);
});

errors('answers a log level that is no level with -32602', () => {
  const r = feed(fresh(), modern(1, 'tools/list', {}, META({ 'io.modelcontextprotocol/logLevel': 'loud' })));
  assert.is((r.replies[0] as Reply).error!.code, -32602);
});

for (const method of ['ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe', 'initialize']) {
  errors(`answers the removed method ${method} in a modern request with -32601`, () => {
    const r = feed(ready(), modern(9, method, { uri: 'superpi://workspace', level: 'info' }));
    assert.equal((r.replies[0] as Reply).id, 9);
    assert.is((r.replies[0] as Reply).error!.code, -32601);
  });
}

errors('answers an unknown resource with -32602 in a modern request, -32002 in a legacy one', () => {
  const r = feed(ready(), modern(1, 'resources/read', { uri: 'nope://x' }), req(2, 'resources/read', { uri: 'nope://x' }));
  assert.is((r.replies[0] as Reply).error!.code, -32602);
  assert.is((r.replies[1] as Reply).error!.code, -32002);
});

// ---------------------------------------------------------------------------------------------
const shapes = suite('Modern result shapes');

for (const [method, ttl] of [['prompts/list', CATALOG_CACHE_TTL_MS], ['resources/templates/list', CATALOG_CACHE_TTL_MS], ['resources/list', RESOURCE_CACHE_TTL_MS]] as const) {
  shapes(`${method} carries resultType, ttlMs ${ttl}, cacheScope private and serverInfo in _meta`, () => {
    const asked = feed(fresh(), modern(1, method));
    // resources/list lists the principal's conversations from the store: answered once the store has.
    const listing = asked.effects.find((e) => e.kind === 'listConversations');
    const answered = listing === undefined ? asked : fold(asked.state, { kind: 'conversationList', ticket: listing.ticket, page: { ids: [] } });
    assert.is(listing !== undefined, method === 'resources/list', 'only resources/list asks the store');
    const result = (answered.replies[0] as Reply).result!;
    assert.is(result.resultType, 'complete');
    assert.is(result.ttlMs, ttl);
    assert.is(result.cacheScope, 'private');
    assert.equal(result._meta, SERVER_INFO);
  });
}

shapes('prompts/get is complete but carries no cache hints', () => {
  const list = (feed(fresh(), modern(1, 'prompts/list')).replies[0] as Reply).result!.prompts as { name: string }[];
  const result = (feed(fresh(), modern(2, 'prompts/get', { name: list[0]!.name, arguments: { task: 'fix it' } })).replies[0] as Reply).result;
  assert.ok(result, 'prompts/get answered');
  assert.is(result!.resultType, 'complete');
  assert.is(result!.ttlMs, undefined);
});

shapes('a tools/call started by a modern request is answered in modern shape when its effect finishes', () => {
  const started = feed(ready(), modern(5, 'tools/call', { name: 'read', arguments: { path: 'README.md' } }));
  const run = started.effects.find((e) => e.kind === 'runTool');
  assert.ok(run && run.kind === 'runTool', 'runTool effect');
  assert.equal(run.client, { sampling: false, elicitation: false });
  const done = fold(started.state, { kind: 'toolDone', ticket: run.ticket, outcome: { text: 'hello' } });
  assert.equal(done.replies, [{ jsonrpc: '2.0', id: 5, result: { content: [{ type: 'text', text: 'hello' }], resultType: 'complete', _meta: SERVER_INFO } }]);
  assert.is(done.state.pending.size, 0);
});

shapes('a modern answer is the line of its shaped result, whether or not the shared members are appended to its JSON', () => {
  const server = { name: 'super-pi', version: '0.1.0' };
  const results: unknown[] = [
    {}, { content: [{ type: 'text', text: 'a "quoted" }} text' }] }, { a: undefined }, { a: 1, b: undefined }, { x: {} }, { list: [] },
    { content: [], _meta: { 'x/y': 1 } }, { resultType: 'input_required', a: 1 }, { ttlMs: 5, cacheScope: 'public' }, null, 'text', [1, 2],
  ];
  for (const method of ['tools/call', 'tools/list', 'prompts/get', 'resources/read']) {
    const request: ModernRequest = { method, protocolVersion: '2026-07-28', clientCapabilities: {}, clientInfo: null, logLevel: null };
    for (const id of [1, 0, 'a"b', '']) {
      for (const result of results) {
        const shaped = answer(id, shapeModernResult(request, server, result));
        assert.equal(modernAnswer(request, server, id, result), shaped, `${method} ${JSON.stringify(id)} ${JSON.stringify(result)}`);
        assert.is((JSON.parse(shaped.line) as { result: { resultType: string } }).result.resultType, 'complete');
      }
    }
  }
});

shapes('a legacy tools/call on the same connection is answered in legacy shape', () => {
  const started = feed(ready(), req(6, 'tools/call', { name: 'read', arguments: { path: 'README.md' } }));
  const run = started.effects.find((e) => e.kind === 'runTool');
  assert.ok(run && run.kind === 'runTool');
  const done = fold(started.state, { kind: 'toolDone', ticket: run.ticket, outcome: { text: 'hello' } });
  assert.equal(done.replies, [{ jsonrpc: '2.0', id: 6, result: { content: [{ type: 'text', text: 'hello' }] } }]);
});

shapes('a modern resources/read of a missing transcript answers -32602 when the store says not found', () => {
  const started = feed(ready(), modern(7, 'resources/read', { uri: 'superpi://conversation/abc/transcript' }));
  const eff = started.effects.find((e) => e.kind === 'readTranscript');
  assert.ok(eff && eff.kind === 'readTranscript', 'readTranscript effect');
  const done = fold(started.state, { kind: 'transcript', ticket: eff.ticket, jsonl: null });
  assert.is((done.replies[0] as Reply).error!.code, -32602);
});

// ---------------------------------------------------------------------------------------------
const context = suite('Modern context comes from the request');

context('no notifications/message for a modern request without a log level, even if the connection set one', () => {
  const legacy = feed(ready(), req(1, 'logging/setLevel', { level: 'debug' })).state;
  const r = feed(legacy, modern(2, 'server/discover'));
  assert.is((r.replies[0] as Reply).result!.resultType, 'complete');
  assert.is((r.replies as Reply[]).filter((m) => m.method === 'notifications/message').length, 0);
  assert.ok(r.effects.some((e) => e.kind === 'log' && e.message === 'server/discover'), 'the operator log record is kept');
});

context('a modern request with a log level gets its own log records, on a connection that set none', () => {
  const r = feed(fresh(), modern(3, 'server/discover', {}, META({ 'io.modelcontextprotocol/logLevel': 'debug' })));
  const logs = (r.replies as Reply[]).filter((m) => m.method === 'notifications/message');
  assert.equal(logs.map((m) => m.params), [{ level: 'debug', logger: 'super-pi', data: { message: 'server/discover', client: 'modern' } }]);
  const quiet = feed(fresh(), modern(4, 'server/discover', {}, META({ 'io.modelcontextprotocol/logLevel': 'info' })));
  assert.is((quiet.replies as Reply[]).filter((m) => m.method === 'notifications/message').length, 0);
});

context('requests in a row each get their own context: a reused earlier context never answers for another client info or capabilities', () => {
  const a = readModernContext('tools/list', { _meta: META() });
  const b = readModernContext('tools/list', { _meta: META() });
  assert.ok(!Array.isArray(a) && !Array.isArray(b));
  assert.equal(b, a);
  const titled = readModernContext('tools/list', { _meta: META({ 'io.modelcontextprotocol/clientInfo': { name: 'modern', version: '2', title: 'T' } }) });
  assert.equal(!Array.isArray(titled) && titled.clientInfo, { name: 'modern', version: '2', title: 'T' });
  const other = readModernContext('tools/call', { _meta: META({ 'io.modelcontextprotocol/clientCapabilities': { sampling: {} }, 'io.modelcontextprotocol/logLevel': 'info' }) });
  assert.equal(!Array.isArray(other) && [other.method, other.clientCapabilities, other.clientInfo, other.logLevel], ['tools/call', { sampling: {} }, { name: 'modern', version: '2' }, 'info']);
  const none = readModernContext('tools/list', { _meta: META({ 'io.modelcontextprotocol/clientCapabilities': { sampling: {} }, 'io.modelcontextprotocol/clientInfo': 'not an object' }) });
  assert.is(!Array.isArray(none) && none.clientInfo, null);
  const long = readModernContext('tools/list', { _meta: META({ 'io.modelcontextprotocol/clientCapabilities': { sampling: {} }, 'io.modelcontextprotocol/clientInfo': { name: 'x'.repeat(100_000), version: '2' } }) });
  assert.ok(Array.isArray(long) && long[0] === -32602, 'a client info past its limit is refused even after a valid one with the same capabilities');
});

// With a state key, the same call answers input_required (test/mcp/round-trip.test.ts); `feed` passes none.
context('an ask-rule tool for a remote modern client that declared elicitation is never sent elicitation/create; with no state key it is refused', () => {
  const state = ready('2025-11-25', {}, { principal: { kind: 'token', name: 'p' } });
  const meta = META({ 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } });
  const r = feed(state, modern(8, 'tools/call', { name: 'bash', arguments: { command: 'true' } }, meta));
  const messages = r.replies as Reply[];
  assert.is(messages.filter((m) => m.method === 'elicitation/create').length, 0);
  assert.is(r.effects.filter((e) => e.kind === 'runTool').length, 0);
  assert.is(messages[0]!.result!.isError, true);
  assert.match(JSON.stringify(messages[0]!.result!.content), /no state key/);
});

context('a legacy client that declared elicitation is still asked for the same call', () => {
  const state = ready('2025-11-25', { elicitation: { form: {} } }, { principal: { kind: 'token', name: 'p' } });
  const r = feed(state, req(8, 'tools/call', { name: 'bash', arguments: { command: 'true' } }));
  assert.is((r.replies as Reply[]).filter((m) => m.method === 'elicitation/create').length, 1);
});

sorting.run();
errors.run();
shapes.run();
context.run();
