// Rule: a 2026-07-28 request over Streamable HTTP is served only when its MCP-Protocol-Version, Mcp-Method
// and Mcp-Name headers repeat its body, whatever else the POST carries (SEP-2243: a router or gateway that
// decides by the headers must never see another request than the server runs), and its envelope is read
// on the main thread only once it is known to be shallow (one bad request is a 400, never a 500).
// Caller classes: token principals and anonymous remote callers.
//
// Found by the handle review (wt/advhandles): a modern request POSTed with a 2025 session's Mcp-Session-Id,
// or inside a 2025-03-26 batch, skipped the header check and ran (`Mcp-Method: tools/list` with a
// `tools/call` body was answered with the call's result); a stateless POST whose `_meta` nested 5,000
// levels overflowed the envelope's JSON.stringify on the main thread and was answered 500, logged as a failure.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from '../e2e/fixtures.ts';
import { MAX_JSON_DEPTH } from '../../src/limits.ts';

const TOKEN = 'modern-envelope-token-alice';
const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const BASE = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${TOKEN}` };

const rule = suite('2026-07-28 headers and envelope over HTTP');
let box: Sandbox;
let server: RunningServer;
let session: string;

async function post(body: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  const res = await fetch(server.url, { method: 'POST', headers: { ...BASE, ...headers }, body });
  return { status: res.status, text: await res.text() };
}

rule.before(async () => {
  box = await makeSandbox();
  server = await startHttpServerProcess(box.ws, [], { SUPERPI_TOKENS: `${TOKEN}=alice` });
  const init = await fetch(server.url, {
    method: 'POST', headers: BASE,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'legacy', version: '1' } } }),
  });
  session = init.headers.get('mcp-session-id') as string;
  await init.text();
  assert.ok(session);
  await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-03-26' });
});

rule.after(async () => {
  await server.stop();
  await box.cleanup();
});

const call = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'ls', arguments: {}, _meta: META } });

rule('a modern request on a 2025 session whose Mcp-Method names another method is 400 -32020, and nothing runs', async () => {
  const r = await post(call(2), { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-03-26', 'Mcp-Method': 'tools/list', 'Mcp-Name': 'read' });
  assert.is(r.status, 400, r.text);
  const m = JSON.parse(r.text) as { id: unknown; error?: { code: number }; result?: unknown };
  assert.is(m.error?.code, -32020);
  assert.is(m.id, 2);
  assert.is(m.result, undefined);
});

rule('a modern request on a 2025 session with no MCP headers at all is 400 -32020', async () => {
  const r = await post(call(3), { 'Mcp-Session-Id': session });
  assert.is(r.status, 400, r.text);
  assert.is((JSON.parse(r.text) as { error?: { code: number } }).error?.code, -32020);
});

rule('a 2025-03-26 batch carrying a modern request is refused whole (400 -32600), its legacy element not run either', async () => {
  const batch = `[${JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/list' })},${call(5)}]`;
  const r = await post(batch, { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-03-26' });
  assert.is(r.status, 400, r.text);
  const m = JSON.parse(r.text) as { id: unknown; error?: { code: number; message: string } };
  assert.is(m.error?.code, -32600);
  assert.match(m.error?.message ?? '', /batch/);
  // The session still works: the refusal took nothing of it.
  const list = await post(JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'tools/list' }), { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-03-26' });
  assert.is(list.status, 200);
});

rule('whatever headers a modern tools/call on a session carries, it never runs unless they repeat its body (property)', async () => {
  const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
  await fc.assert(fc.asyncProperty(
    maybe(fc.constantFrom('2025-03-26', '2026-07-28', '2025-06-18', 'x')),
    maybe(fc.constantFrom('tools/call', 'tools/list', 'resources/read', 'ping')),
    maybe(fc.constantFrom('ls', 'read', 'bash', '=?base64?bHM=?=')),
    async (version, method, name) => {
      const headers: Record<string, string> = { 'Mcp-Session-Id': session };
      if (version !== undefined) headers['MCP-Protocol-Version'] = version;
      if (method !== undefined) headers['Mcp-Method'] = method;
      if (name !== undefined) headers['Mcp-Name'] = name;
      const r = await post(call(7), headers);
      const agree = version === '2026-07-28' && method === 'tools/call' && (name === 'ls' || name === '=?base64?bHM=?=');
      // Headers that agree reach the session lookup, which serves 2025 versions only (400 there too).
      assert.is(r.status, 400, `${JSON.stringify(headers)} → ${r.status} ${r.text}`);
      if (!agree) assert.is((JSON.parse(r.text) as { error?: { code: number } }).error?.code, -32020, r.text);
      assert.not.match(r.text, /"result"/);
    },
  ), { numRuns: 40 });
});

const modernHeaders = { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/list' };
const nest = (depth: number, leaf: string) => '{"a":'.repeat(depth) + leaf + '}'.repeat(depth);

rule('a stateless POST whose _meta nests thousands of levels is 400 (-32020 for a version the header contradicts, else -32602 naming MAX_JSON_DEPTH), with its id, and is not logged as a failure', async () => {
  const places = [
    (deep: string) => `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"x":${deep}}}`,
    (deep: string) => `{"io.modelcontextprotocol/protocolVersion":${deep},"io.modelcontextprotocol/clientCapabilities":{}}`,
    (deep: string) => `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":${deep}}`,
  ];
  for (const [i, place] of places.entries()) {
    const body = `{"jsonrpc":"2.0","id":"deep-${i}","method":"tools/list","params":{"_meta":${place(nest(5000, '1'))}}}`;
    const r = await post(body, modernHeaders);
    assert.is(r.status, 400, `place ${i}: ${r.status} ${r.text}`);
    const m = JSON.parse(r.text) as { id: unknown; error?: { code: number; message: string } };
    assert.is(m.id, `deep-${i}`, r.text);
    // Headers first (a version that is an object disagrees with the header's), then the depth.
    if (i === 1) assert.is(m.error?.code, -32020);
    else {
      assert.is(m.error?.code, -32602);
      assert.match(m.error?.message ?? '', /MAX_JSON_DEPTH/);
    }
  }
  assert.not.match(server.stderr(), /HTTP request failed/);
});

rule('any nesting depth of a stateless request\'s _meta is answered 200 or 400, never 500 (property)', async () => {
  await fc.assert(fc.asyncProperty(fc.integer({ min: MAX_JSON_DEPTH - 8, max: 6000 }), async (depth) => {
    const body = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":${nest(depth, '{}')}}}}`;
    const r = await post(body, modernHeaders);
    // The message nests depth + 3 levels (message, params, _meta) above the innermost object.
    const tooDeep = depth + 4 > MAX_JSON_DEPTH;
    assert.is(r.status, tooDeep ? 400 : 200, `depth ${depth}: ${r.status} ${r.text.slice(0, 200)}`);
  }), { numRuns: 30 });
  assert.not.match(server.stderr(), /HTTP request failed/);
});

rule.run();
