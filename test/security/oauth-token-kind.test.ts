// Rule (security review, JWT typ): a resource server must not take an ID token, or another JWT its issuer
// signed, for an access token (RFC 9068 §4). A server started with `--oauth-require-at-jwt` admits only
// `typ: at+jwt`; without it, `JWT` and untyped tokens still work (many providers issue them) but a token
// typed as something else, or carrying an ID token's at_hash, is refused. Checked through the command
// line and the HTTP door: 401 invalid_token saying why. Caller class: token principals (OAuth).

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startLoopbackIssuer } from '../auth/issuer-fixture.ts';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from '../e2e/fixtures.ts';

const RESOURCE = 'https://mcp.kind.example/mcp';
const INITIALIZE = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'kind', version: '1' } } });

let box: Sandbox;
let issuer: Awaited<ReturnType<typeof startLoopbackIssuer>>;
let strict: RunningServer;
let lenient: RunningServer;

test.before(async () => {
  box = await makeSandbox();
  issuer = await startLoopbackIssuer(RESOURCE);
  const args = ['--threads', '1', '--tool-threads', '1', '--oauth-issuer', issuer.issuer, '--resource', RESOURCE];
  [strict, lenient] = await Promise.all([startHttpServerProcess(box.ws, [...args, '--oauth-require-at-jwt']), startHttpServerProcess(box.ws, args)]);
});

test.after(async () => {
  await Promise.all([strict?.stop(), lenient?.stop()]);
  await issuer?.close();
  await box?.cleanup();
});

async function initialize(server: RunningServer, token: string): Promise<{ status: number; challenge: string }> {
  const res = await fetch(server.url, {
    method: 'POST', body: INITIALIZE, signal: AbortSignal.timeout(10_000),
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
  });
  await res.text();
  return { status: res.status, challenge: res.headers.get('www-authenticate') ?? '' };
}

test('--oauth-require-at-jwt: an at+jwt token opens a session; the same token typed JWT, or untyped, is 401 naming the flag', async () => {
  assert.is((await initialize(strict, await issuer.token('gina', 'mcp:read', { typ: 'at+jwt' }))).status, 200);
  for (const typ of ['JWT', undefined]) {
    const r = await initialize(strict, await issuer.token('gina', 'mcp:read', { typ }));
    assert.is(r.status, 401, String(typ));
    assert.match(r.challenge, /error="invalid_token"/);
    assert.match(r.challenge, /--oauth-require-at-jwt/);
  }
});

test('by default: JWT and untyped tokens open sessions; an ID token of the same issuer for this audience, or a logout token, is 401', async () => {
  for (const typ of ['JWT', undefined, 'at+jwt']) assert.is((await initialize(lenient, await issuer.token('hana', 'mcp:read', { typ }))).status, 200, String(typ));
  const idToken = await issuer.token('hana', 'mcp:read', { typ: 'JWT' }, { at_hash: 'x4W1bIM6WcNVS0YKN5F_Fg', nonce: 'n-0S6_WzA2Mj' });
  const asId = await initialize(lenient, idToken);
  assert.is(asId.status, 401);
  assert.match(asId.challenge, /ID token/);
  const logout = await initialize(lenient, await issuer.token('hana', 'mcp:read', { typ: 'logout+jwt' }));
  assert.is(logout.status, 401);
  assert.match(logout.challenge, /not an access token/);
});

test.run();
