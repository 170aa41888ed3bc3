// The 2026-07-28 HTTP routing headers: required, trimmed, base64-decoded, compared with the body; and the
// HTTP status a modern answer takes from its JSON-RPC error code.

import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { refusal, answer } from '../../src/mcp/outgoing.ts';
import { classify } from '../../src/mcp/jsonrpc.ts';
import { decodeHeaderValue, headerMismatch, modernHttpStatus, refuseModernMessages, refuseModernPost } from '../../src/transports/modern-headers.ts';

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const from = (headers: Record<string, string>) => (name: string) => headers[name];
const all = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'read' };
const call = { name: 'read', arguments: {}, _meta: META };

test('headers that repeat the body exactly (or with surrounding whitespace) pass', () => {
  assert.is(headerMismatch(from(all), 'tools/call', call), null);
  assert.is(headerMismatch(from({ ...all, 'mcp-name': '  read\t' }), 'tools/call', call), null);
  assert.is(headerMismatch(from({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' }), 'tools/list', { _meta: META }), null);
});

test('each missing header is a mismatch naming it; Mcp-Name only where the body has the field', () => {
  for (const missing of ['mcp-protocol-version', 'mcp-method', 'mcp-name'] as const) {
    const headers: Record<string, string> = { ...all };
    delete headers[missing];
    assert.match(String(headerMismatch(from(headers), 'tools/call', call)), new RegExp(missing, 'i'));
  }
  assert.is(headerMismatch(from({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' }), 'tools/call', { _meta: META }), null);
});

test('tasks/get, tasks/update and tasks/cancel carry Mcp-Name: the taskId (Tasks extension, SEP-2663)', () => {
  for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
    const params = { taskId: 'conv-1', _meta: META };
    const headers = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method };
    assert.is(headerMismatch(from({ ...headers, 'mcp-name': 'conv-1' }), method, params), null, method);
    assert.match(String(headerMismatch(from({ ...headers, 'mcp-name': 'conv-2' }), method, params)), /params\.taskId/);
    assert.match(String(headerMismatch(from(headers), method, params)), /Mcp-Name/);
  }
});

test('a base64-wrapped Mcp-Name is decoded before the comparison; a wrapped other name or bad base64 is refused', () => {
  const wrap = (s: string) => `=?base64?${Buffer.from(s).toString('base64')}?=`;
  assert.is(decodeHeaderValue(wrap('résumé.md')), 'résumé.md');
  assert.is(headerMismatch(from({ ...all, 'mcp-name': wrap('read') }), 'tools/call', call), null);
  assert.match(String(headerMismatch(from({ ...all, 'mcp-name': wrap('bash') }), 'tools/call', call)), /"bash"/);
  assert.is(decodeHeaderValue('=?base64?a?='), null);
  assert.is(decodeHeaderValue(`=?base64?${Buffer.from([0xff, 0xfe]).toString('base64')}?=`), null);
  assert.is(decodeHeaderValue('plain'), 'plain');
});

test('refuseModernPost: header mismatch first (-32020), then the envelope (-32602 / -32022), each 400 with the id', () => {
  const v = from({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' });
  const bare = refuseModernPost(v, 5, 'server/discover', {});
  assert.equal([bare?.status, JSON.parse(bare?.body ?? '{}').error.code, JSON.parse(bare?.body ?? '{}').id], [400, -32602, 5]);
  const future = refuseModernPost(from({ 'mcp-protocol-version': 'v9', 'mcp-method': 'server/discover' }), 6, 'server/discover', { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': 'v9' } });
  assert.equal(JSON.parse(future?.body ?? '{}').error.code, -32022);
  const mismatch = refuseModernPost(from({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' }), 7, 'server/discover', { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': 'v9' } });
  assert.equal(JSON.parse(mismatch?.body ?? '{}').error.code, -32020);
  assert.is(refuseModernPost(v, 8, 'server/discover', { _meta: META }), null);
});

test('refuseModernMessages: every modern request of a POST is checked, a modern one in a batch refuses the batch, legacy ones pass', () => {
  const modern = classify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: call });
  const legacy = classify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
  assert.is(refuseModernMessages(from({}), [legacy], false), null);
  assert.is(refuseModernMessages(from({}), [legacy, legacy], true), null);
  assert.is(refuseModernMessages(from(all), [modern], false), null);
  const lying = refuseModernMessages(from({ ...all, 'mcp-method': 'tools/list' }), [modern], false);
  assert.equal([lying?.status, JSON.parse(lying?.body ?? '{}').error.code, JSON.parse(lying?.body ?? '{}').id], [400, -32020, 1]);
  const batch = refuseModernMessages(from(all), [legacy, modern], true);
  assert.equal([batch?.status, JSON.parse(batch?.body ?? '{}').error.code, JSON.parse(batch?.body ?? '{}').id], [400, -32600, null]);
});

test('refuseModernPost: params nesting past MAX_JSON_DEPTH are -32602 with the id before the envelope is read (no stack overflow)', () => {
  let deep: unknown = {};
  for (let i = 0; i < 20_000; i++) deep = { a: deep };
  const v = from({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' });
  const capabilities = refuseModernPost(v, 'd', 'tools/list', { _meta: { ...META, 'io.modelcontextprotocol/clientCapabilities': deep } });
  assert.equal([capabilities?.status, JSON.parse(capabilities?.body ?? '{}').error.code, JSON.parse(capabilities?.body ?? '{}').id], [400, -32602, 'd']);
  // A deep value the headers contradict is named by its type in the mismatch, never serialised.
  const version = refuseModernPost(v, 'd', 'tools/list', { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': deep } });
  assert.equal([version?.status, JSON.parse(version?.body ?? '{}').error.code], [400, -32020]);
  assert.match(JSON.parse(version?.body ?? '{}').error.message, /names an object/);
  const named = refuseModernPost(from(all), 'd', 'tools/call', { name: deep, arguments: {}, _meta: META });
  assert.equal([named?.status, JSON.parse(named?.body ?? '{}').error.code], [400, -32020]);
});

test('a modern answer is 404 for -32601, 400 for -32021, and 200 for results and handler errors', () => {
  assert.is(modernHttpStatus([refusal(1, -32601, 'Method not found')]), 404);
  assert.is(modernHttpStatus([refusal(1, -32021, 'Missing capability')]), 400);
  assert.is(modernHttpStatus([refusal(1, -32602, 'Unknown tool')]), 200);
  assert.is(modernHttpStatus([answer(1, {})]), 200);
  assert.is(modernHttpStatus([]), 200);
});

test('any header combination: accepted exactly when every header is present and repeats the body; a refusal is always -32020 / 400 with the id', () => {
  // Each header is absent, the body's value (bare, padded, or base64-wrapped), or another value.
  const shape = fc.constantFrom('absent', 'same', 'padded', 'wrapped', 'other');
  const methods = [['tools/call', 'name', 'read'], ['prompts/get', 'name', 'plan_architecture'], ['resources/read', 'uri', 'superpi://workspace'], ['tools/list', null, null], ['server/discover', null, null]] as const;
  const render = (kind: string, value: string): string | undefined => {
    if (kind === 'absent') return undefined;
    if (kind === 'padded') return ` ${value}\t`;
    if (kind === 'wrapped') return `=?base64?${Buffer.from(value).toString('base64')}?=`;
    if (kind === 'other') return `${value}x`;
    return value;
  };
  fc.assert(fc.property(fc.constantFrom(...methods), shape, shape, shape, fc.boolean(), fc.oneof(fc.integer(), fc.string({ maxLength: 8 })), ([method, field, value], v, m, n, bodyHasName, id) => {
    const params: Record<string, unknown> = { _meta: META, ...(field !== null && bodyHasName ? { [field]: value } : {}) };
    // A wrapped version or method is not decoded (only Mcp-Name may be wrapped): it names another value.
    const headers: Record<string, string | undefined> = {
      'mcp-protocol-version': render(v, '2026-07-28'),
      'mcp-method': render(m, method),
      'mcp-name': render(n, value ?? 'anything'),
    };
    const header = (name: string) => headers[name];
    const versionOk = v === 'same' || v === 'padded';
    const methodOk = m === 'same' || m === 'padded';
    const bodyName = field !== null && bodyHasName;
    const nameOk = field === null ? true : n === 'absent' ? !bodyName : bodyName && n !== 'other';
    const expected = versionOk && methodOk && nameOk;
    const mismatch = headerMismatch(header, method, params);
    assert.is(mismatch === null, expected, `${method} v=${v} m=${m} n=${n} body name=${bodyName}: ${mismatch}`);
    if (mismatch !== null) assert.match(mismatch, /^Header mismatch: /);
    const refused = refuseModernPost(header, id, method, params);
    if (expected) assert.is(refused, null);
    else {
      assert.is(refused?.status, 400);
      const error = JSON.parse(refused?.body ?? '{}') as { id: unknown; error: { code: number; message: string } };
      assert.equal([error.id, error.error.code, error.error.message], [id, -32020, mismatch]);
    }
  }), { numRuns: 2000 });
});

test.run();
