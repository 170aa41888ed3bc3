// OAuth end to end: a real authorization server (oidc-provider on loopback), the server started with
// --oauth-issuer, and the SDK client's own OAuth support (an OAuthClientProvider) which discovers the
// metadata from a 401, registers, authorizes with PKCE, gets a token and calls tools over Streamable
// HTTP. The token's scopes decide what works (403 insufficient_scope, then step-up), a second issuer's
// token is refused, key rotation is followed without a restart, an expired token is refreshed.

import { discoverAuthorizationServerMetadata, exchangeAuthorization, registerClient, startAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import { test } from 'uvu';
import { WebSocket } from 'ws';
import * as assert from 'uvu/assert';
import { makeSandbox, type RunningServer, startHttpServerProcess, textOf } from './fixtures.ts';
import { authorize, connect, HostOAuth, REDIRECT, tokensWithScope } from './oauth-host.ts';
import { ALL_SCOPES, startTestIssuer, type TestIssuer } from './oidc-issuer.ts';

let issuer: TestIssuer;
let server: RunningServer;
let ws: string;

test.before(async () => {
  issuer = await startTestIssuer();
  ws = (await makeSandbox()).ws;
  server = await startHttpServerProcess(ws, ['--oauth-issuer', issuer.issuer, '--oauth-clock-skew', '0', '--oauth-jwks-refetch', '1']);
  issuer.resource = server.url;
});

test.after(async () => {
  await server?.stop();
  await issuer?.close();
});

test('the 401 names the metadata, which names the issuer, the resource and the scopes', async () => {
  const r = await fetch(server.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
  assert.is(r.status, 401);
  const prmUrl = /resource_metadata="([^"]+)"/.exec(r.headers.get('www-authenticate') ?? '')?.[1];
  assert.is(prmUrl, server.url.replace('/mcp', '/.well-known/oauth-protected-resource/mcp'));
  const prm = await (await fetch(prmUrl as string)).json() as Record<string, unknown>;
  // mcp:observe is not offered: a host asks for every scope offered, and observing is the operator's.
  assert.equal(prm, { resource: server.url, authorization_servers: [issuer.issuer], scopes_supported: ['mcp:read', 'mcp:write', 'mcp:exec'], bearer_methods_supported: ['header'], resource_name: 'super-pi' });
  assert.equal(await (await fetch(server.url.replace('/mcp', '/.well-known/oauth-protected-resource'))).json(), prm);
});

test('the SDK client discovers, registers, authorizes with PKCE and calls tools; /health names both kinds of auth', async () => {
  const host = new HostOAuth();
  const client = await connect(server, host);
  assert.ok(host.info?.client_id, 'registered dynamically');
  const result = await client.callTool({ name: 'read', arguments: { path: 'src/greet.ts' } });
  assert.match(textOf(result), /hello/);
  // /health names the kinds of auth to callers with a valid token only (an unknown caller gets its status alone).
  assert.equal(await (await fetch(server.url.replace('/mcp', '/health'))).json(), { status: 'ok' });
  const health = await (await fetch(server.url.replace('/mcp', '/health'), { headers: { authorization: `Bearer ${host.saved?.access_token ?? ''}` } })).json() as { auth: unknown };
  assert.equal(health.auth, { staticTokens: false, oauth: { issuers: [issuer.issuer], resource: server.url } });
  await client.close();
});

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };

/** The status of GET `path` with `token` (an observer stream is not read: only its status matters). */
async function statusOf(path: string, token: string): Promise<number> {
  const r = await fetch(server.url.replace('/mcp', path), { headers: { authorization: `Bearer ${token}` } });
  await r.body?.cancel();
  return r.status;
}

test('a host\'s standard authorization does not make its user an observer of every principal; a token asked for mcp:observe is one', async () => {
  // The issuer grants whatever is asked among the resource's scopes (as consent-based providers do):
  // what a user may observe then rests on what the host asks for, which is what the metadata offers.
  issuer.grantedScopes = ALL_SCOPES;
  const alice = new HostOAuth();
  const client = await connect(server, alice);
  const token = alice.saved?.access_token ?? '';
  assert.not.match(alice.saved?.scope ?? '', /mcp:observe/, 'the host did not ask for the operator\'s scope');
  assert.is(await statusOf('/observer/events', token), 403, 'an ordinary user\'s token does not read every session and task');
  assert.is(await statusOf('/observer/transcript?task=task-1&after=0', token), 403);
  assert.is(await statusOf('/metrics', token), 403);
  await client.close();
  // The operator asks for the scope by name.
  const tokens = await tokensWithScope(issuer.issuer, server.url, 'mcp:read mcp:observe');
  assert.is(await statusOf('/observer/events', tokens.access_token), 200, 'a token granted mcp:observe reads the observer');
});

test('a token without mcp:write gets 403 insufficient_scope for write; the host steps up and the call works', async () => {
  issuer.grantedScopes = ['mcp:read'];
  const host = new HostOAuth();
  const client = await connect(server, host);
  const auth = { ...HEADERS, authorization: `Bearer ${host.saved?.access_token ?? ''}` };
  const init = await fetch(server.url, { method: 'POST', headers: auth, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) });
  assert.is(init.status, 200);
  const session = init.headers.get('mcp-session-id') as string;
  await init.body?.cancel();
  const write = await fetch(server.url, { method: 'POST', headers: { ...auth, 'mcp-session-id': session }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'write', arguments: { path: 'scoped.txt', content: 'x' } } }) });
  assert.is(write.status, 403);
  assert.match(write.headers.get('www-authenticate') ?? '', /^Bearer error="insufficient_scope", scope="mcp:write"/);
  assert.match(textOf(await client.callTool({ name: 'read', arguments: { path: 'src/greet.ts' } })), /hello/);
  // The SDK client meets the same 403 and starts a step-up authorization for the scope it names.
  issuer.grantedScopes = ALL_SCOPES;
  let refused = false;
  try {
    await client.callTool({ name: 'write', arguments: { path: 'scoped.txt', content: 'x' } });
  } catch {
    refused = true;
  }
  assert.ok(refused, 'write without mcp:write must fail');
  // The host steps up: a new authorization, now that the issuer grants mcp:write.
  host.saved = undefined;
  host.authorizationUrl = null;
  const stepped = await connect(server, host);
  const result = await stepped.callTool({ name: 'write', arguments: { path: 'scoped.txt', content: 'stepped up' } });
  assert.not.ok(result.isError, textOf(result));
  await client.close();
  await stepped.close();
});

/** Opens a WebSocket to /mcp: the status of a refused upgrade, or the socket and a reader of its replies by id. */
function openSocket(url: string, headers: Record<string, string>): Promise<{ status: number; challenge: string } | { ws: WebSocket; reply: (id: number) => Promise<Record<string, unknown>> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, 'mcp', { headers });
    const replies = new Map<number, (m: Record<string, unknown>) => void>();
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as Record<string, unknown>;
      replies.get(m.id as number)?.(m);
    });
    ws.once('unexpected-response', (_req, res) => {
      resolve({ status: res.statusCode ?? 0, challenge: String(res.headers['www-authenticate'] ?? '') });
      ws.terminate();
    });
    ws.once('open', () => resolve({ ws, reply: (id) => new Promise((r) => replies.set(id, r)) }));
    ws.once('error', (err) => reject(err));
  });
}

test('over WebSocket: no token is a 401 naming the metadata; a read-only token reads but its write is refused naming mcp:write', async () => {
  const refused = await openSocket(server.wsUrl, {});
  assert.ok('status' in refused);
  if (!('status' in refused)) return;
  assert.is(refused.status, 401);
  assert.match(refused.challenge, /^Bearer resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"$/);
  issuer.grantedScopes = ['mcp:read'];
  const host = new HostOAuth();
  const client = await connect(server, host);
  await client.close();
  issuer.grantedScopes = ALL_SCOPES;
  const open = await openSocket(server.wsUrl, { authorization: `Bearer ${host.saved?.access_token ?? ''}` });
  assert.ok('ws' in open);
  if (!('ws' in open)) return;
  const send = (m: unknown) => open.ws.send(JSON.stringify(m));
  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'ws', version: '1' } } });
  await open.reply(1);
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const writing = open.reply(2);
  send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'write', arguments: { path: 'ws.txt', content: 'x' } } });
  assert.match(String((await writing).error && ((await writing).error as { message: string }).message), /needs the scope "mcp:write"/);
  const reading = open.reply(3);
  send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'read', arguments: { path: 'src/greet.ts' } } });
  assert.match(textOf((await reading).result), /hello/);
  open.ws.close();
});

test('key rotation at the provider is followed without a restart, and an expired token is refreshed', async () => {
  await issuer.rotate(false);
  issuer.accessTokenTtlSeconds = 2;
  await new Promise((r) => setTimeout(r, 1100)); // past --oauth-jwks-refetch 1
  const host = new HostOAuth();
  const client = await connect(server, host);
  assert.match(textOf(await client.callTool({ name: 'read', arguments: { path: 'src/greet.ts' } })), /hello/);
  const first = host.saved?.access_token;
  assert.ok(host.saved?.refresh_token, 'a refresh token was issued');
  await new Promise((r) => setTimeout(r, 2500));
  const stale = await fetch(server.url, { method: 'POST', headers: { ...HEADERS, authorization: `Bearer ${first ?? ''}` }, body: '{}' });
  assert.is(stale.status, 401, 'the expired token is refused');
  assert.match(stale.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
  assert.match(textOf(await client.callTool({ name: 'read', arguments: { path: 'src/greet.ts' } })), /hello/);
  assert.is.not(host.saved?.access_token, first, 'the client refreshed its token');
  issuer.accessTokenTtlSeconds = 300;
  await client.close();
});

test('a second issuer\'s token, minted for this very resource, is refused', async () => {
  const other = await startTestIssuer('mallory');
  try {
    other.resource = server.url;
    // The SDK's own steps against the other issuer, asking for a token for this server.
    const metadata = await discoverAuthorizationServerMetadata(other.issuer);
    const host = new HostOAuth();
    const clientInformation = await registerClient(other.issuer, { ...(metadata ? { metadata } : {}), clientMetadata: host.clientMetadata });
    const started = await startAuthorization(other.issuer, { ...(metadata ? { metadata } : {}), clientInformation, redirectUrl: REDIRECT, scope: ALL_SCOPES.join(' '), resource: new URL(server.url) });
    const code = await authorize(started.authorizationUrl);
    const tokens = await exchangeAuthorization(other.issuer, { ...(metadata ? { metadata } : {}), clientInformation, authorizationCode: code, codeVerifier: started.codeVerifier, redirectUri: REDIRECT, resource: new URL(server.url) });
    const r = await fetch(server.url, { method: 'POST', headers: { ...HEADERS, authorization: `Bearer ${tokens.access_token}` }, body: '{}' });
    assert.is(r.status, 401);
    assert.match(r.headers.get('www-authenticate') ?? '', /error="invalid_token", error_description="the token was issued by an issuer this server does not trust"/);
  } finally {
    await other.close();
  }
});

test.run();
