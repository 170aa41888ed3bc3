// What an OAuth access token let a client read stops with the token. A WebSocket was closed (1008) when its
// token expired, but a Streamable HTTP GET stream (or a 2026-07-28 listen's) opened with the same token went on for good — its
// keep-alive comments kept it open, and every notification and server request of the session (questions
// naming tool calls and their arguments) reached a client whose token had expired or been revoked at its
// issuer long before. The stream now ends at the token's `exp` (plus the clock skew); the client opens
// another with a fresh token, and an expired one gets the 401 a host follows.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startLoopbackIssuer } from '../auth/issuer-fixture.ts';
import { guarded } from '../hang-guard.ts';
import { MODERN_VERSION, modernMeta } from './fuzz-modern.ts';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from './fixtures.ts';

const RESOURCE = 'https://mcp.expiry.example/mcp';
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
/** How long the short token lives: long enough to open a session and its stream on a loaded machine. */
const LIFETIME_SECONDS = 6;

let box: Sandbox;
let issuer: Awaited<ReturnType<typeof startLoopbackIssuer>>;
let server: RunningServer;

test.before(async () => {
  box = await makeSandbox();
  issuer = await startLoopbackIssuer(RESOURCE);
  server = await startHttpServerProcess(box.ws, ['--oauth-issuer', issuer.issuer, '--resource', RESOURCE, '--oauth-clock-skew', '0', '--sse-keepalive', '1']);
});

test.after(async () => {
  await server?.stop();
  await issuer?.close();
  await box?.cleanup();
});

async function openSession(token: string): Promise<string> {
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'expiry', version: '1' } } };
  const opened = await fetch(server.url, { method: 'POST', headers: { ...HEADERS, authorization: `Bearer ${token}` }, body: JSON.stringify(init) });
  assert.is(opened.status, 200, await opened.text());
  const session = opened.headers.get('mcp-session-id') ?? '';
  const ready = await fetch(server.url, { method: 'POST', headers: { ...HEADERS, authorization: `Bearer ${token}`, 'mcp-session-id': session }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
  assert.is(ready.status, 202);
  return session;
}

test('a GET stream opened with an OAuth token ends when the token expires; the expired token then gets a 401', async () => {
  const token = await issuer.token('expiring', 'mcp:read', {}, { exp: Math.floor(Date.now() / 1000) + LIFETIME_SECONDS });
  const session = await openSession(token);
  const stream = await fetch(server.url, { headers: { ...HEADERS, accept: 'text/event-stream', authorization: `Bearer ${token}`, 'mcp-session-id': session } });
  assert.is(stream.status, 200);
  const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
  // Keep-alive comments every second keep it open; it must end (or be cut) once the token has expired.
  const ended = (async () => {
    for (;;) {
      const chunk = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (chunk.done) return 'ended';
    }
  })();
  assert.is(await guarded(ended, 'the GET stream of an expired token never ended', (LIFETIME_SECONDS + 20) * 1000), 'ended');
  const again = await fetch(server.url, { headers: { ...HEADERS, accept: 'text/event-stream', authorization: `Bearer ${token}`, 'mcp-session-id': session } });
  assert.is(again.status, 401);
  await again.body?.cancel();
});

test('a 2026-07-28 subscriptions/listen stream opened with an OAuth token ends when the token expires', async () => {
  const token = await issuer.token('listening', 'mcp:read', {}, { exp: Math.floor(Date.now() / 1000) + LIFETIME_SECONDS });
  const listen = { jsonrpc: '2.0', id: 'listen-1', method: 'subscriptions/listen', params: { _meta: modernMeta(), notifications: {} } };
  const stream = await fetch(server.url, {
    method: 'POST', body: JSON.stringify(listen),
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}`, 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'subscriptions/listen' },
  });
  assert.is(stream.status, 200);
  const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
  let text = '';
  const ended = (async () => {
    for (;;) {
      const chunk = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (chunk.done) return 'ended';
      text += Buffer.from(chunk.value).toString();
    }
  })();
  assert.is(await guarded(ended, 'the listen stream of an expired token never ended', (LIFETIME_SECONDS + 20) * 1000), 'ended');
  assert.match(text, /listen-1/, 'the listen was acknowledged on its stream first');
});

test('a GET stream of a token that outlives the test is not ended', async () => {
  const token = await issuer.token('lasting', 'mcp:read');
  const session = await openSession(token);
  const controller = new AbortController();
  const stream = await fetch(server.url, { headers: { ...HEADERS, accept: 'text/event-stream', authorization: `Bearer ${token}`, 'mcp-session-id': session }, signal: controller.signal });
  assert.is(stream.status, 200);
  const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
  // Two keep-alive comments arrive: the stream is open and written to.
  for (let comments = 0; comments < 2;) {
    const chunk = await guarded(reader.read(), 'no keep-alive on the stream', 20_000);
    assert.not.ok(chunk.done, 'the stream ended');
    comments++;
  }
  controller.abort();
});

test.run();
