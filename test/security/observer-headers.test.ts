// Rule (adversarial review of the observer): the observer's answers cannot be framed, sniffed, cached,
// embedded by another origin or sent a Referer from, and a page on another site (or on another port of
// localhost) makes the server do no observer work at all: a request a browser marks as coming from
// another site (`Sec-Fetch-Site: cross-site` or `same-site`) is refused with 403 before any token check,
// store read or stream slot — on a loopback server without tokens that was a no-cors `fetch` or an
// `<img>` away from any web page the operator had open. The page shell itself still opens from a link.
//
// Caller classes: a web page open in the operator's browser (another site, another port of localhost);
// the operator (the page itself, `same-origin`; the address typed, `none`; non-browser clients, none).

import { request } from 'node:http';
import { suite, test } from 'uvu';
import * as assert from 'uvu/assert';
import { fromAnotherSite } from '../../src/observer/observer-http.ts';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from '../e2e/fixtures.ts';

const DATA = ['/metrics', '/observer/events', '/observer/transcript?task=task-1&after=0'];
const ROUTES = ['/observer', '/observer/app.js', ...DATA, '/observer/nothing-here'];

interface Answer { status: number; headers: Record<string, string | string[] | undefined> }

/** A GET's status and headers (node:http, so Sec-Fetch-* and Host are ours to set); the body is not read. */
function get(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, method }, (res) => {
      resolve({ status: res.statusCode ?? 0, headers: res.headers });
      res.destroy(); // the event stream never ends by itself
    });
    req.on('error', reject);
    req.end();
  });
}

test('fromAnotherSite: only same-origin, none and no header at all are the operator', () => {
  for (const v of [undefined, 'same-origin', 'none']) assert.is(fromAnotherSite(v), false, String(v));
  for (const v of ['cross-site', 'same-site', 'CROSS-SITE', '', 'same-origin, cross-site', ['same-origin', 'cross-site']]) assert.is(fromAnotherSite(v), true, String(v));
});

const served = suite('observer answers on a real server');
let box: Sandbox;
let open: RunningServer;
let guarded: RunningServer;
const base = (s: RunningServer) => s.url.replace(/\/mcp$/, '');

served.before(async () => {
  box = await makeSandbox();
  [open, guarded] = await Promise.all([
    startHttpServerProcess(box.ws, ['--threads', '1', '--tool-threads', '1']),
    startHttpServerProcess(box.ws, ['--threads', '1', '--tool-threads', '1', '--observers', 'alice'], { SUPERPI_TOKENS: 'alice-headers-token=alice' }),
  ]);
});
served.after(async () => {
  await Promise.all([open, guarded].map((s) => s?.stop()));
  await box?.cleanup();
});

/** The headers every observer answer carries, whatever its status. */
function assertHardened(a: Answer, what: string): void {
  assert.is(a.headers['x-content-type-options'], 'nosniff', `nosniff: ${what}`);
  assert.is(a.headers['x-frame-options'], 'DENY', `X-Frame-Options: ${what}`);
  assert.match(String(a.headers['content-security-policy']), /frame-ancestors 'none'/, `frame-ancestors: ${what}`);
  assert.match(String(a.headers['cache-control']), /no-store/, `no-store: ${what}`);
  assert.is(a.headers['referrer-policy'], 'no-referrer', `Referrer-Policy: ${what}`);
  assert.is(a.headers['cross-origin-resource-policy'], 'same-origin', `CORP: ${what}`);
  assert.is(a.headers['cross-origin-opener-policy'], 'same-origin', `COOP: ${what}`);
}

served('every answer — page, script, data, refusals — is unframeable, unsniffable, uncached and not embeddable', async () => {
  for (const p of ROUTES) assertHardened(await get(`${base(open)}${p}`), `open ${p}`);
  for (const p of DATA) {
    const a = await get(`${base(guarded)}${p}`);
    assert.is(a.status, 401, p);
    assertHardened(a, `401 ${p}`);
  }
  assertHardened(await get(`${base(open)}/observer/events`, { Host: 'evil.example' }), '403 Host');
  assertHardened(await get(`${base(open)}/observer/events`, {}, 'POST'), '405');
});

served('the page allows its own script only: no inline script, no base or form target', async () => {
  const csp = String((await get(`${base(open)}/observer`)).headers['content-security-policy']);
  const directives = new Map(csp.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name, values]));
  assert.equal(directives.get('default-src'), ["'none'"]);
  assert.equal(directives.get('script-src'), ["'self'"], 'no unsafe-inline or unsafe-eval for scripts');
  assert.equal(directives.get('base-uri'), ["'none'"]);
  assert.equal(directives.get('form-action'), ["'none'"]);
  assert.equal(directives.get('img-src'), undefined, 'no data: images (the page shows none)');
  for (const p of DATA) assert.match(String((await get(`${base(open)}${p}`)).headers['content-security-policy']), /sandbox/, `data is a sandboxed document if opened: ${p}`);
});

served('a request from another site or another port of localhost gets 403 before any work; the operator\'s own get through', async () => {
  for (const site of ['cross-site', 'same-site']) {
    for (const p of [...DATA, '/observer/app.js']) {
      const a = await get(`${base(open)}${p}`, { 'Sec-Fetch-Site': site, 'Sec-Fetch-Mode': 'no-cors' });
      assert.is(a.status, 403, `${site} ${p}`);
    }
    // Refused before the token is looked at: the guarded server says 403, not 401 or 200.
    assert.is((await get(`${base(guarded)}/observer/events`, { 'Sec-Fetch-Site': site, Authorization: 'Bearer alice-headers-token' })).status, 403, `${site} with a token`);
    assert.is((await get(`${base(open)}/observer`, { 'Sec-Fetch-Site': site, 'Sec-Fetch-Mode': 'navigate' })).status, 200, `${site}: a link to the page still opens it`);
  }
  for (const headers of [{}, { 'Sec-Fetch-Site': 'same-origin' }, { 'Sec-Fetch-Site': 'none' }] as Record<string, string>[]) {
    assert.is((await get(`${base(open)}/observer/events`, headers)).status, 200, JSON.stringify(headers));
    assert.is((await get(`${base(guarded)}/metrics`, { ...headers, Authorization: 'Bearer alice-headers-token' })).status, 200, JSON.stringify(headers));
  }
});

test.run();
served.run();
