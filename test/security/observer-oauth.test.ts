// Rule (issue 28): with OAuth configured, /metrics and the observer's data need an access token carrying
// the observe scope (mcp:observe), or the static token of a principal named in --observers. No token is a
// 401 naming the resource metadata (a host can discover the issuer); a token without the scope is a 403
// insufficient_scope naming it (a host can step up). A loopback server with OAuth and no static tokens is
// not "the operator's own open machine": its data is closed too.

import { request } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from '../e2e/fixtures.ts';
import { startLoopbackIssuer } from '../auth/issuer-fixture.ts';

const RESOURCE = 'https://mcp.observe.example/mcp';
const METADATA = 'https://mcp.observe.example/.well-known/oauth-protected-resource/mcp';
const DATA = ['/metrics', '/observer/events', '/observer/transcript?task=task-1&after=0'];

/** A GET's status and WWW-Authenticate; the body is not read (the event stream never ends by itself). */
function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; challenge: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      resolve({ status: res.statusCode ?? 0, challenge: String(res.headers['www-authenticate'] ?? '') });
      res.destroy();
    });
    req.on('error', reject);
    req.end();
  });
}

let box: Sandbox;
let issuer: Awaited<ReturnType<typeof startLoopbackIssuer>>;
let mixed: RunningServer;
let oauthOnly: RunningServer;
const base = (s: RunningServer) => s.url.replace(/\/mcp$/, '');

test.before(async () => {
  box = await makeSandbox();
  issuer = await startLoopbackIssuer(RESOURCE);
  const oauth = ['--threads', '1', '--tool-threads', '1', '--oauth-issuer', issuer.issuer, '--resource', RESOURCE];
  [mixed, oauthOnly] = await Promise.all([
    startHttpServerProcess(box.ws, [...oauth, '--observers', 'alice'], { SUPERPI_TOKENS: 'alice-observer-token=alice,bob-plain-token=bob' }),
    startHttpServerProcess(box.ws, oauth),
  ]);
});

test.after(async () => {
  await Promise.all([mixed, oauthOnly].map((s) => s?.stop()));
  await issuer?.close();
  await box?.cleanup();
});

test('no token is a 401 naming the resource metadata, on every data route of both servers', async () => {
  for (const server of [mixed, oauthOnly]) {
    for (const p of DATA) {
      const r = await get(`${base(server)}${p}`);
      assert.is(r.status, 401, p);
      assert.is(r.challenge, `Bearer resource_metadata="${METADATA}"`, p);
    }
  }
});

test('an access token without mcp:observe is a 403 insufficient_scope naming mcp:observe', async () => {
  const token = await issuer.token('carol', 'mcp:read mcp:write mcp:exec');
  for (const p of DATA) {
    const r = await get(`${base(oauthOnly)}${p}`, { Authorization: `Bearer ${token}` });
    assert.is(r.status, 403, p);
    assert.match(r.challenge, /^Bearer error="insufficient_scope", scope="mcp:observe", resource_metadata="https:\/\/mcp\.observe\.example\//, p);
  }
});

test('an access token with mcp:observe reads /metrics and the event stream on both servers', async () => {
  const token = await issuer.token('carol', 'mcp:observe');
  for (const server of [mixed, oauthOnly]) {
    assert.is((await get(`${base(server)}/metrics`, { Authorization: `Bearer ${token}` })).status, 200);
    assert.is((await get(`${base(server)}/observer/events`, { Authorization: `Bearer ${token}` })).status, 200);
    assert.is((await get(`${base(server)}/observer/transcript?task=task-1&after=0`, { Authorization: `Bearer ${token}` })).status, 404, 'no such task (but not refused)');
  }
});

test('static tokens beside OAuth: an --observers principal keeps reading, another static principal is 403, a bad token 401', async () => {
  assert.is((await get(`${base(mixed)}/metrics`, { Authorization: 'Bearer alice-observer-token' })).status, 200);
  assert.is((await get(`${base(mixed)}/metrics`, { Authorization: 'Bearer bob-plain-token' })).status, 403);
  const bad = await get(`${base(mixed)}/metrics`, { Authorization: 'Bearer not-a-known-token' });
  assert.is(bad.status, 401);
  assert.match(bad.challenge, /error="invalid_token"/);
});

test('the page shell stays public and holds no data', async () => {
  assert.is((await get(`${base(oauthOnly)}/observer`)).status, 200);
});

test.run();
