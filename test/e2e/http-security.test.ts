// Streamable HTTP and WebSocket security: Host/Origin (DNS rebinding), sessions, the protocol header,
// bearer tokens, the anonymous remote policy, principals — each refused the documented way.

import { request } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'ws';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from './fixtures.ts';

const ACCEPT = 'application/json, text/event-stream';
/** A page on another port the `open` server lists in SUPERPI_ALLOWED_ORIGINS. */
const ALLOWED_PAGE = 'http://localhost:5173';
const init = (id: number | string = 1) => JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'sec', version: '1' } } });

async function post(url: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers }, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text };
}

/** Reads the JSON-RPC message(s) of a reply that may be JSON or an SSE stream. */
function messagesOf(text: string): Record<string, unknown>[] {
  if (text.trimStart().startsWith('{') || text.trimStart().startsWith('[')) {
    const v = JSON.parse(text) as unknown;
    return (Array.isArray(v) ? v : [v]) as Record<string, unknown>[];
  }
  return text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);
}

async function openSession(url: string, headers: Record<string, string> = {}): Promise<string> {
  const r = await post(url, init(), headers);
  assert.is(r.status, 200, r.text);
  const id = r.headers.get('mcp-session-id');
  assert.ok(id && /^[\x21-\x7e]+$/.test(id), 'a visible-ASCII session id');
  await post(url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), { ...headers, 'mcp-session-id': id as string, 'mcp-protocol-version': '2025-06-18' });
  return id as string;
}

const sec = suite('HTTP security');
let box: Sandbox;
let open: RunningServer;
let authed: RunningServer;

sec.before(async () => {
  box = await makeSandbox();
  // A page origin the operator allows (a dev server on its own port), given through the environment.
  open = await startHttpServerProcess(box.ws, [], { SUPERPI_ALLOWED_ORIGINS: ALLOWED_PAGE });
  authed = await startHttpServerProcess(box.ws, ['--require-auth'], { SUPERPI_TOKENS: 'alice-token-123=alice,bob-token-4567=bob' });
});
sec.after(async () => {
  assert.is(await open.stop(), 0);
  assert.is(await authed.stop(), 0);
  assert.not.match(authed.stderr(), /alice-token-123|bob-token-4567/, 'tokens never appear in logs');
  await box.cleanup();
});

sec('a foreign Host is 403 (DNS rebinding), and so is a foreign Origin', async () => {
  const url = new URL(open.url);
  // fetch may not set Host; node:http can, as a rebinding attacker's browser effectively does.
  const status = await new Promise<number>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: url.port, path: '/mcp', method: 'POST', headers: { host: `evil.example:${url.port}`, 'content-type': 'application/json', accept: ACCEPT } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end(init());
  });
  assert.is(status, 403);
  const r2 = await post(open.url, init(), { origin: 'https://evil.example' });
  assert.is(r2.status, 403);
  const ok = await post(open.url, init(), { origin: `http://localhost:${url.port}` });
  assert.is(ok.status, 200);
});

sec('Origin is scheme, host and port: a page on another localhost port is 403 over POST, the server\'s own and an allow-listed origin are served', async () => {
  const port = Number(new URL(open.url).port);
  assert.is((await post(open.url, init(), { origin: `http://localhost:${port + 1}` })).status, 403);
  assert.is((await post(open.url, init(), { origin: `http://127.0.0.1:${port === 3000 ? 3001 : 3000}` })).status, 403);
  assert.is((await post(open.url, init(), { origin: `https://localhost:${port}` })).status, 403);
  assert.is((await post(open.url, init(), { origin: `http://127.0.0.1:${port}` })).status, 200);
  assert.is((await post(open.url, init(), { origin: ALLOWED_PAGE })).status, 200);
});

sec('Origin is scheme, host and port over a WebSocket upgrade too: another localhost port is 403, the server\'s own and an allow-listed origin open', async () => {
  const port = Number(new URL(open.url).port);
  assert.is(await wsOpen(open.wsUrl, ['mcp'], { origin: `http://localhost:${port + 1}` }), 403);
  assert.is(await wsOpen(open.wsUrl, ['mcp'], { origin: `http://localhost:${port}` }), 'open');
  assert.is(await wsOpen(open.wsUrl, ['mcp'], { origin: ALLOWED_PAGE }), 'open');
});

sec('a request without Mcp-Session-Id is 400, an unknown one 404; a refused request allocates no session', async () => {
  const before = await (await fetch(open.url.replace('/mcp', '/health'))).json() as { httpSessions: number };
  const ping = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' });
  assert.is((await post(open.url, ping)).status, 400);
  assert.is((await post(open.url, ping, { 'mcp-session-id': 'no-such-session' })).status, 404);
  const after = await (await fetch(open.url.replace('/mcp', '/health'))).json() as { httpSessions: number };
  assert.is(after.httpSessions, before.httpSessions);
});

sec('an unsupported MCP-Protocol-Version is 400; a missing one is accepted (2025-03-26 assumed)', async () => {
  const id = await openSession(open.url);
  const ping = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' });
  assert.is((await post(open.url, ping, { 'mcp-session-id': id, 'mcp-protocol-version': '1999-01-01' })).status, 400);
  const r = await post(open.url, ping, { 'mcp-session-id': id });
  assert.is(r.status, 200);
  assert.equal(messagesOf(r.text)[0]?.result, {});
});

sec('DELETE ends the session; it is 404 afterwards', async () => {
  const id = await openSession(open.url);
  const del = await fetch(open.url, { method: 'DELETE', headers: { 'mcp-session-id': id } });
  assert.is(del.status, 200);
  assert.is((await post(open.url, JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'ping' }), { 'mcp-session-id': id })).status, 404);
});

sec('broken JSON is 400 with a -32700 body; a wrong Accept is 406', async () => {
  const r = await post(open.url, '{"jsonrpc":');
  assert.is(r.status, 400);
  assert.is((JSON.parse(r.text) as { error: { code: number } }).error.code, -32700);
  const bad = await fetch(open.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/html' }, body: init() });
  assert.is(bad.status, 406);
});

sec('an anonymous remote caller cannot write, edit or run commands; the denial names the rule', async () => {
  const id = await openSession(open.url);
  for (const [i, call] of [{ name: 'write', arguments: { path: 'x.txt', content: 'x' } }, { name: 'bash', arguments: { command: 'touch pwned' } }, { name: 'edit', arguments: { path: 'README.md', oldText: 'Demo', newText: 'Pwned' } }].entries()) {
    const r = await post(open.url, JSON.stringify({ jsonrpc: '2.0', id: 10 + i, method: 'tools/call', params: call }), { 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' });
    const result = messagesOf(r.text)[0]?.result as { isError: boolean; content: { text: string }[] };
    assert.is(result.isError, true);
    assert.match(result.content[0]!.text, /anonymous remote callers cannot use|cannot be asked/);
  }
  const read = await post(open.url, JSON.stringify({ jsonrpc: '2.0', id: 20, method: 'tools/call', params: { name: 'read', arguments: { path: 'README.md' } } }), { 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' });
  assert.not.ok((messagesOf(read.text)[0]?.result as { isError?: boolean }).isError, 'reading is allowed');
});

sec('with --require-auth: no token or a wrong token is 401 with WWW-Authenticate', async () => {
  const none = await post(authed.url, init());
  assert.is(none.status, 401);
  assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer/);
  const wrong = await post(authed.url, init(), { authorization: 'Bearer not-a-token' });
  assert.is(wrong.status, 401);
  assert.is((await post(authed.url, init(), { authorization: 'Bearer alice-token-123' })).status, 200);
});

sec("another principal's session is 404, exactly like an unknown one", async () => {
  const alice = await openSession(authed.url, { authorization: 'Bearer alice-token-123' });
  const r = await post(authed.url, JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'ping' }), { authorization: 'Bearer bob-token-4567', 'mcp-session-id': alice });
  assert.is(r.status, 404);
  const mine = await post(authed.url, JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'ping' }), { authorization: 'Bearer alice-token-123', 'mcp-session-id': alice, 'mcp-protocol-version': '2025-06-18' });
  assert.is(mine.status, 200);
});

sec('GET opens the standalone SSE stream; without a session it is 400', async () => {
  const id = await openSession(open.url);
  const controller = new AbortController();
  const res = await fetch(open.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': id }, signal: controller.signal });
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
  controller.abort();
  assert.is((await fetch(open.url, { headers: { accept: 'text/event-stream' } })).status, 400);
});

const wsOpen = (url: string, protocols: string[], headers: Record<string, string> = {}) => new Promise<number | 'open'>((resolve) => {
  const ws = new WebSocket(url, protocols, { headers });
  ws.once('open', () => { ws.close(); resolve('open'); });
  ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
  ws.once('error', () => resolve(0));
});

sec('WebSocket: subprotocol "mcp" is required; a foreign Origin is refused; auth is enforced', async () => {
  assert.is(await wsOpen(open.wsUrl, ['mcp']), 'open');
  assert.is(await wsOpen(open.wsUrl, ['chat']), 400);
  assert.is(await wsOpen(open.wsUrl, ['mcp'], { origin: 'https://evil.example' }), 403);
  assert.is(await wsOpen(authed.wsUrl, ['mcp']), 401);
  assert.is(await wsOpen(authed.wsUrl, ['mcp'], { authorization: 'Bearer bob-token-4567' }), 'open');
});

sec.run();
