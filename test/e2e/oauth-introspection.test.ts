// Opaque access tokens end to end: oidc-provider on loopback issuing opaque (non-JWT) access tokens and
// offering token introspection (RFC 7662), the server started with --oauth-issuer and its own client's
// credentials (the secret in a file), and the SDK client's OAuth support connecting and calling tools
// with an opaque token. The introspected scopes decide what works; the observer needs mcp:observe; a
// refresh token presented as an access token is refused.

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess, textOf } from './fixtures.ts';
import { connect, HostOAuth, tokensWithScope } from './oauth-host.ts';
import { ALL_SCOPES, INTROSPECTION_CLIENT, startTestIssuer, type TestIssuer } from './oidc-issuer.ts';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };

let issuer: TestIssuer;
let server: RunningServer;
let box: Sandbox;

test.before(async () => {
  issuer = await startTestIssuer('alice', { opaque: true });
  box = await makeSandbox();
  const dir = await mkdtemp(path.join(tmpdir(), 'superpi-introspection-'));
  const secretFile = path.join(dir, 'client-secret');
  await writeFile(secretFile, `${INTROSPECTION_CLIENT.secret}\n`, { mode: 0o600 });
  server = await startHttpServerProcess(box.ws, [
    '--oauth-issuer', issuer.issuer, '--oauth-clock-skew', '0',
    '--oauth-introspection-client-id', INTROSPECTION_CLIENT.id, '--oauth-introspection-secret-file', secretFile,
  ]);
  issuer.resource = server.url;
});

test.after(async () => {
  await server?.stop();
  await issuer?.close();
  await box?.cleanup();
});

test('the SDK client gets an opaque token from oidc-provider and calls tools with it; the secret is neither on the command line nor in the log', async () => {
  issuer.grantedScopes = ALL_SCOPES;
  const host = new HostOAuth();
  const client = await connect(server, host);
  const token = host.saved?.access_token ?? '';
  assert.not.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/, 'the access token is opaque, not a JWT');
  assert.ok(token.length > 20);
  assert.match(textOf(await client.callTool({ name: 'read', arguments: { path: 'src/greet.ts' } })), /hello/);
  const written = await client.callTool({ name: 'write', arguments: { path: 'opaque.txt', content: 'via introspection' } });
  assert.not.ok(written.isError, textOf(written));
  await client.close();
  assert.not.ok(server.stderr().includes(INTROSPECTION_CLIENT.secret), 'the client secret is in the log');
  assert.not.ok(server.stderr().includes(token), 'the token is in the log');
  assert.not.ok((server.child.spawnargs ?? []).join(' ').includes(INTROSPECTION_CLIENT.secret));
});

test('the introspected scopes decide: a read-only opaque token reads, its write is a 403 insufficient_scope naming mcp:write', async () => {
  issuer.grantedScopes = ['mcp:read'];
  const host = new HostOAuth();
  const client = await connect(server, host);
  assert.match(textOf(await client.callTool({ name: 'read', arguments: { path: 'src/greet.ts' } })), /hello/);
  const auth = { ...HEADERS, authorization: `Bearer ${host.saved?.access_token ?? ''}` };
  const write = await fetch(server.url, { method: 'POST', headers: auth, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'write', arguments: { path: 'no.txt', content: 'x' } } }) });
  assert.is(write.status, 403);
  assert.match(write.headers.get('www-authenticate') ?? '', /^Bearer error="insufficient_scope", scope="mcp:write"/);
  const metrics = await fetch(server.url.replace('/mcp', '/metrics'), { headers: { authorization: auth.authorization } });
  assert.is(metrics.status, 403, '/metrics needs mcp:observe');
  await metrics.body?.cancel();
  await client.close();
  issuer.grantedScopes = ALL_SCOPES;
});

test('an opaque token with mcp:observe reads /metrics', async () => {
  issuer.grantedScopes = ALL_SCOPES;
  // The observe scope is not offered to hosts: the operator asks for it by name.
  const tokens = await tokensWithScope(issuer.issuer, server.url, 'mcp:read mcp:observe');
  const metrics = await fetch(server.url.replace('/mcp', '/metrics'), { headers: { authorization: `Bearer ${tokens.access_token}` } });
  assert.is(metrics.status, 200);
  assert.match(await metrics.text(), /# (HELP|TYPE) /);
});

test('a refresh token or a made-up opaque token presented as an access token is a 401 invalid_token', async () => {
  const host = new HostOAuth();
  const client = await connect(server, host);
  await client.close();
  assert.ok(host.saved?.refresh_token, 'a refresh token was issued');
  // The provider calls its refresh token active, but it names no audience: not an access token for this server.
  const cases: [string, RegExp][] = [[host.saved?.refresh_token ?? '', /another audience/], ['made-up-opaque-token-0123456789', /not active/]];
  for (const [token, reason] of cases) {
    const r = await fetch(server.url, { method: 'POST', headers: { ...HEADERS, authorization: `Bearer ${token}` }, body: '{}' });
    assert.is(r.status, 401);
    assert.match(r.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    assert.match(r.headers.get('www-authenticate') ?? '', reason);
  }
});

test.run();
