// Rule: how busy the server is, who is connected and what their tasks did are the operator's to see.
// GET /metrics and the observer's data (/observer/events, /observer/transcript) are open only on a
// loopback server with no tokens configured (and no --require-auth) — the operator's own machine —
// and otherwise only to token principals named in --observers; never to anonymous callers. Host and
// Origin are checked as for /mcp. The page shell (/observer, /observer/app.js) holds no data.
//
// Caller classes: token principals (observer or not), anonymous remote callers. The local stdio user
// has no HTTP endpoint; workspace content never reaches a label (test/observer/metrics.test.ts).

import { request } from 'node:http';
import { suite, test } from 'uvu';
import * as assert from 'uvu/assert';
import { decideObserverAccess, isLoopbackHost } from '../../src/observer/observer-access.ts';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from '../e2e/fixtures.ts';

const DATA = ['/metrics', '/observer/events', '/observer/transcript?task=task-1&after=0'];

/** The status of a GET (node:http, since fetch will not send a Host of our choosing); the body is not read. */
function status(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      resolve(res.statusCode ?? 0);
      res.destroy(); // the event stream never ends by itself
    });
    req.on('error', reject);
    req.end();
  });
}

test('the pure rule: open only on loopback without tokens or --require-auth; else named observers; never anonymous', () => {
  const observers = new Set(['alice']);
  const open = { loopback: true, tokensConfigured: false, requireAuth: false, observers };
  assert.ok(decideObserverAccess(open, { kind: 'anonymous' }).allowed);
  assert.not.ok(decideObserverAccess({ ...open, loopback: false }, { kind: 'anonymous' }).allowed, 'a public bind without tokens is closed');
  assert.not.ok(decideObserverAccess({ ...open, requireAuth: true }, { kind: 'anonymous' }).allowed);
  const tokens = { ...open, tokensConfigured: true };
  assert.equal(decideObserverAccess(tokens, { kind: 'anonymous' }), { allowed: false, status: 401, message: 'Unauthorized: the observer and /metrics need the bearer token of a principal named in --observers' });
  assert.is((decideObserverAccess(tokens, { kind: 'token', name: 'bob' }) as { status: number }).status, 403);
  assert.ok(decideObserverAccess(tokens, { kind: 'token', name: 'alice' }).allowed);
  assert.ok(decideObserverAccess({ ...tokens, loopback: false }, { kind: 'token', name: 'alice' }).allowed);
  assert.is((decideObserverAccess(open, null) as { status: number }).status, 401, 'an unknown token is refused even when open');
  assert.ok(isLoopbackHost('127.0.0.1') && isLoopbackHost('::1') && isLoopbackHost('localhost'));
  assert.not.ok(isLoopbackHost('0.0.0.0') || isLoopbackHost('192.168.1.2'));
});

const served = suite('observer access on a real server');
let box: Sandbox;
let open: RunningServer;
let guarded: RunningServer;
let authOnly: RunningServer;
const base = (s: RunningServer) => s.url.replace(/\/mcp$/, '');

served.before(async () => {
  box = await makeSandbox();
  [open, guarded, authOnly] = await Promise.all([
    startHttpServerProcess(box.ws, ['--threads', '1', '--tool-threads', '1']),
    startHttpServerProcess(box.ws, ['--threads', '1', '--tool-threads', '1', '--observers', 'alice'], { SUPERPI_TOKENS: 'alice-observer-token=alice,bob-observer-token=bob' }),
    startHttpServerProcess(box.ws, ['--threads', '1', '--tool-threads', '1', '--require-auth']),
  ]);
});
served.after(async () => {
  await Promise.all([open, guarded, authOnly].map((s) => s?.stop()));
  await box.cleanup();
});

served('a loopback server without tokens serves its data to any caller that passes the Host/Origin checks', async () => {
  assert.is(await status(`${base(open)}/metrics`), 200);
  assert.is(await status(`${base(open)}/observer/events`), 200);
  assert.is(await status(`${base(open)}/observer/transcript?task=task-1&after=0`), 404, 'no such task (but not refused)');
});

served('with tokens configured: anonymous and unknown tokens get 401, a principal not in --observers 403, an observer 200', async () => {
  for (const p of DATA) {
    assert.is(await status(`${base(guarded)}${p}`), 401, `anonymous ${p}`);
    assert.is(await status(`${base(guarded)}${p}`, { Authorization: 'Bearer not-a-token' }), 401, `unknown token ${p}`);
    assert.is(await status(`${base(guarded)}${p}`, { Authorization: 'Bearer bob-observer-token' }), 403, `bob ${p}`);
  }
  assert.is(await status(`${base(guarded)}/metrics`, { Authorization: 'Bearer alice-observer-token' }), 200);
  assert.is(await status(`${base(guarded)}/observer/events`, { Authorization: 'Bearer alice-observer-token' }), 200);
});

served('--require-auth closes a loopback server without tokens: nobody can read the data', async () => {
  for (const p of DATA) assert.is(await status(`${base(authOnly)}${p}`), 401, p);
});

served('Host and Origin are checked as for /mcp, on the data and on the page', async () => {
  for (const p of [...DATA, '/observer', '/observer/app.js']) {
    assert.is(await status(`${base(open)}${p}`, { Host: 'evil.example' }), 403, `Host ${p}`);
    assert.is(await status(`${base(open)}${p}`, { Origin: 'http://evil.example' }), 403, `Origin ${p}`);
  }
});

served('the page shell is served without a token (it holds no data) and forbids scripts from elsewhere', async () => {
  const res = await fetch(`${base(guarded)}/observer`);
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-security-policy') ?? '', /script-src 'self'/);
  const page = await res.text();
  assert.not.match(page, /https?:\/\//, 'no external URL: everything comes from super-pi');
});

test.run();
served.run();
