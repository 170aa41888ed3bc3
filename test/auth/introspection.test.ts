// Opaque access tokens through token introspection (RFC 7662), against a fake authorization server on
// 127.0.0.1 and the real bounded fetch: an active answer is held to the JWT rules (iss, aud, exp/nbf
// with skew, sub, scopes), remembered by digest until it expires, an issuer that cannot be asked is a
// 503 and never an acceptance, the requests in flight are bounded, and a property over the answer's claims.

import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { TokenVerdict } from '../../src/auth/access-token.ts';
import { type Admitted, type AuthRefusal, BearerAuthority, isAuthRefusal } from '../../src/auth/bearer-authority.ts';
import { ClientCredentials } from '../../src/auth/client-credentials.ts';
import { judgeIntrospection, TokenIntrospector } from '../../src/auth/introspection.ts';
import { fetchJson } from '../../src/auth/issuer-fetch.ts';
import { oauthConfig } from '../../src/auth/oauth-config.ts';
import { createOAuthResourceServer } from '../../src/auth/oauth-resource-server.ts';
import { parseTokenList } from '../../src/auth/tokens.ts';
import { OAUTH_INTROSPECTION_INACTIVE_CACHE_SECONDS } from '../../src/limits.ts';
import { createLogger } from '../../src/log/logger.ts';
import { CLIENT_ID, CLIENT_SECRET, type FakeIntrospection, startFakeIntrospection } from './introspection-fixture.ts';
import { base64url, sign, signingKey } from './issuer-fixture.ts';

const NOW = 1_800_000_000;
const SKEW = 60;
const RESOURCE = 'https://mcp.example/mcp';
const OPAQUE = 'opaque-access-token-0123456789abcdef';

const fakes: FakeIntrospection[] = [];

async function setup(options: { issuers?: number; secret?: string; offers?: boolean } = {}) {
  const issuers: FakeIntrospection[] = [];
  for (let i = 0; i < (options.issuers ?? 1); i++) issuers.push(await startFakeIntrospection());
  for (const f of issuers) f.offers = options.offers ?? true;
  fakes.push(...issuers);
  const clock = { ms: NOW * 1000 };
  const config = oauthConfig({ issuers: issuers.map((f) => f.issuer), resource: RESOURCE, clockSkewSeconds: SKEW });
  const lines: string[] = [];
  const logger = createLogger('debug', { write: (t: string) => lines.push(t) });
  const oauth = createOAuthResourceServer(config, { now: () => clock.ms, introspection: new ClientCredentials(CLIENT_ID, options.secret ?? CLIENT_SECRET) });
  const authority = new BearerAuthority({ tokens: parseTokenList(''), requireAuth: false, oauth, logger });
  const [fake] = issuers as [FakeIntrospection];
  const good = (iss = fake.issuer) => ({ active: true, iss, aud: RESOURCE, sub: 'alice', exp: NOW + 300, scope: 'mcp:read mcp:write', token_type: 'Bearer' });
  return { issuers, fake, clock, config, authority, lines, good, admit: (token: string) => authority.admit(`Bearer ${token}`) };
}

function admitted(x: Admitted | AuthRefusal): Admitted {
  assert.not.ok(isAuthRefusal(x), `refused: ${isAuthRefusal(x) ? x.message : ''}`);
  return x as Admitted;
}

function refused(x: Admitted | AuthRefusal, status: number, message: RegExp): AuthRefusal {
  assert.ok(isAuthRefusal(x), 'expected a refusal');
  const r = x as AuthRefusal;
  assert.is(r.status, status);
  assert.match(r.message, message);
  return r;
}

test.after(async () => {
  await Promise.all(fakes.map((f) => f.close()));
});

test('an opaque token the issuer calls active is admitted as issuer#sub with its scopes; the request carries the client credentials and the token', async () => {
  const { fake, good, admit } = await setup();
  fake.answers.set(OPAQUE, good());
  const a = admitted(await admit(OPAQUE));
  assert.equal(a.principal, { kind: 'token', name: `${fake.issuer}#alice` });
  assert.equal([...a.capabilities].sort(), ['read', 'write']);
  assert.is(a.expiresAt, NOW + 300);
  assert.is(fake.requests.length, 1);
  const [request] = fake.requests;
  assert.is(request?.form.get('token'), OPAQUE);
  assert.is(request?.form.get('token_type_hint'), 'access_token');
  assert.is(request?.authorization, `Basic ${Buffer.from(`${CLIENT_ID}:${encodeURIComponent(CLIENT_SECRET)}`).toString('base64')}`);
});

test('an active token is remembered by digest until it expires: one introspection, then asked again once past exp', async () => {
  const { fake, clock, good, admit } = await setup();
  fake.answers.set(OPAQUE, { ...good(), exp: NOW + 100 });
  for (let i = 0; i < 5; i++) admitted(await admit(OPAQUE));
  assert.is(fake.requests.length, 1, 'remembered after the first');
  clock.ms += (100 + SKEW + 1) * 1000;
  refused(await admit(OPAQUE), 401, /expired/);
  assert.is(fake.requests.length, 2, 'asked again once the remembered answer expired');
});

test('a remembered token is asked about again after OAUTH_INTROSPECTION_CACHE_MAX_SECONDS, so a revocation is seen', async () => {
  const { fake, clock, good, admit } = await setup();
  fake.answers.set(OPAQUE, { ...good(), exp: NOW + 3600 });
  admitted(await admit(OPAQUE));
  fake.answers.set(OPAQUE, { active: false });
  clock.ms += 299 * 1000;
  admitted(await admit(OPAQUE));
  clock.ms += 2 * 1000;
  refused(await admit(OPAQUE), 401, /not active/);
});

test('a token the issuer does not call active is a 401 with invalid_token and resource_metadata', async () => {
  const { admit } = await setup();
  const r = refused(await admit(OPAQUE), 401, /not active/);
  assert.match(r.headers['WWW-Authenticate'] ?? '', /^Bearer resource_metadata="https:\/\/mcp\.example\/\.well-known\/oauth-protected-resource\/mcp", error="invalid_token"/);
});

test('the same bad opaque token sent again and again asks the issuer once per OAUTH_INTROSPECTION_INACTIVE_CACHE_SECONDS: inactive, or active but refused', async () => {
  const { fake, clock, good, admit } = await setup();
  fake.answers.set(`${OPAQUE}-aud`, { ...good(), aud: 'https://other.example/mcp' });
  for (const [token, reason] of [[OPAQUE, /not active/], [`${OPAQUE}-aud`, /another audience/]] as const) {
    const before = fake.requests.length;
    for (let i = 0; i < 20; i++) refused(await admit(token), 401, reason);
    assert.is(fake.requests.length - before, 1, `one request for twenty tries (${String(reason)})`);
  }
  // Past the limit the issuer is asked again: a token it came to know (issued a moment before it could be introspected) works.
  fake.answers.set(OPAQUE, good());
  clock.ms += (OAUTH_INTROSPECTION_INACTIVE_CACHE_SECONDS - 1) * 1000;
  refused(await admit(OPAQUE), 401, /not active/);
  clock.ms += 2 * 1000;
  admitted(await admit(OPAQUE));
  assert.is(fake.requests.length, 3);
});

test('an unreachable issuer\'s 503 is never remembered: the next try asks again', async () => {
  const { fake, good, admit } = await setup();
  fake.behaviour = 'http-500';
  refused(await admit(OPAQUE), 503, /cannot be reached/);
  refused(await admit(OPAQUE), 503, /cannot be reached/);
  assert.is(fake.requests.length, 2);
  fake.behaviour = 'answer';
  fake.answers.set(OPAQUE, good());
  admitted(await admit(OPAQUE));
});

test('refused tokens are remembered in a bounded table of their own: the oldest goes first, and made-up tokens never push an active one out', async () => {
  const fake = await startFakeIntrospection();
  fakes.push(fake);
  const config = oauthConfig({ issuers: [fake.issuer], resource: RESOURCE });
  const cache = createOAuthResourceServer(config).verifier.issuer(fake.issuer);
  const clock = { ms: NOW * 1000 };
  const introspector = new TokenIntrospector(config, {
    credentials: new ClientCredentials(CLIENT_ID, CLIENT_SECRET), metadata: () => (cache as NonNullable<typeof cache>).metadata(), fetchJson,
    now: () => clock.ms, cacheEntries: 1, inactiveCacheEntries: 2,
  });
  fake.answers.set(OPAQUE, { active: true, iss: fake.issuer, aud: RESOURCE, sub: 'alice', exp: NOW + 300, scope: 'mcp:read' });
  assert.ok((await introspector.introspect(OPAQUE)).ok);
  for (const t of ['bad-token-1', 'bad-token-2', 'bad-token-3']) assert.not.ok((await introspector.introspect(t)).ok);
  assert.is(introspector.requests, 4);
  assert.not.ok((await introspector.introspect('bad-token-3')).ok);
  assert.not.ok((await introspector.introspect('bad-token-2')).ok);
  assert.is(introspector.requests, 4, 'the two newest refusals are remembered');
  assert.not.ok((await introspector.introspect('bad-token-1')).ok);
  assert.is(introspector.requests, 5, 'the oldest was forgotten');
  assert.ok((await introspector.introspect(OPAQUE)).ok);
  assert.is(introspector.requests, 5, 'the active token is still remembered');
});

test('an active answer for another audience, another issuer, expired, not yet valid, without sub, a refresh or DPoP token is refused for its reason', async () => {
  const { fake, good, admit } = await setup();
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ ...good(), aud: 'https://other.example/mcp' }, /another audience/],
    [{ ...good(), aud: undefined }, /another audience/],
    [{ ...good(), aud: ['https://other.example/mcp'] }, /another audience/],
    [{ ...good(), iss: 'https://elsewhere.example' }, /another issuer/],
    [{ ...good(), exp: NOW - SKEW - 1 }, /expired/],
    [{ ...good(), exp: undefined }, /exp/],
    [{ ...good(), nbf: NOW + SKEW + 5 }, /not valid yet/],
    [{ ...good(), sub: undefined }, /sub/],
    [{ ...good(), sub: '' }, /sub/],
    [{ ...good(), token_type: 'refresh_token' }, /not a bearer access token/],
    [{ ...good(), token_type: 'DPoP', cnf: { jkt: 'x' } }, /not a bearer access token/],
    [{ ...good(), cnf: { jkt: 'x' } }, /bound to a key/],
  ];
  for (const [i, [answer, reason]] of cases.entries()) {
    fake.answers.set(`${OPAQUE}-${i}`, answer);
    refused(await admit(`${OPAQUE}-${i}`), 401, reason);
  }
  fake.answers.set(`${OPAQUE}-array`, { ...good(), aud: ['https://other.example/mcp', RESOURCE] });
  admitted(await admit(`${OPAQUE}-array`));
  fake.answers.set(`${OPAQUE}-noiss`, { ...good(), iss: undefined });
  assert.equal(admitted(await admit(`${OPAQUE}-noiss`)).principal, { kind: 'token', name: `${fake.issuer}#alice` });
});

test('an issuer that cannot be asked is a 503 with Retry-After, never an acceptance: down, HTTP 500, not JSON, no active, too big, credentials refused', async () => {
  for (const behaviour of ['http-500', 'not-json', 'no-active', 'huge'] as const) {
    const { fake, good, admit } = await setup();
    fake.answers.set(OPAQUE, good());
    fake.behaviour = behaviour;
    const r = refused(await admit(OPAQUE), 503, /cannot be reached/);
    assert.ok(Number(r.headers['Retry-After']) > 0, behaviour);
    fake.behaviour = 'answer';
    admitted(await admit(OPAQUE));
  }
  const wrong = await setup({ secret: 'not the secret' });
  wrong.fake.answers.set(OPAQUE, wrong.good());
  refused(await wrong.admit(OPAQUE), 503, /cannot be reached/);
  const down = await setup();
  down.fake.answers.set(OPAQUE, down.good());
  await down.fake.close();
  refused(await down.admit(OPAQUE), 503, /cannot be reached/);
});

test('several issuers: the one that calls the token active names the principal; an unreachable one makes it 503 rather than a guess', async () => {
  const { issuers, admit, good } = await setup({ issuers: 2 });
  const [first, second] = issuers as [FakeIntrospection, FakeIntrospection];
  second.answers.set(OPAQUE, good(second.issuer));
  assert.equal(admitted(await admit(OPAQUE)).principal, { kind: 'token', name: `${second.issuer}#alice` });
  assert.is(first.requests.length, 1, 'the first issuer was asked and said inactive');
  first.behaviour = 'http-500';
  refused(await admit(`${OPAQUE}-unknown`), 503, /cannot be reached/);
  // An answer naming the other configured issuer is refused: each issuer speaks for its own tokens.
  first.behaviour = 'answer';
  first.answers.set(`${OPAQUE}-mixup`, good(second.issuer));
  refused(await admit(`${OPAQUE}-mixup`), 401, /another issuer/);
});

test('no configured issuer offers introspection: an opaque token is a 401 saying so', async () => {
  const { fake, admit } = await setup({ offers: false });
  refused(await admit(OPAQUE), 401, /no configured issuer offers token introspection/);
  assert.is(fake.requests.length, 0);
});

test('a JWT naming its issuer is verified with keys, never introspected; a JWT naming no issuer is introspected', async () => {
  const { fake, good, admit } = await setup();
  const key = await signingKey('k1');
  const jwt = await sign(key, { iss: fake.issuer, aud: RESOURCE, sub: 'bob', exp: NOW + 300 });
  // The fake publishes no JWKS: the JWT path says the keys cannot be read, and nothing is introspected.
  refused(await admit(jwt), 503, /cannot be reached/);
  assert.is(fake.requests.length, 0);
  const noIss = `${base64url({ alg: 'ES256' })}.${base64url({ sub: 'x' })}.AAAA`;
  fake.answers.set(noIss, good());
  admitted(await admit(noIss));
  assert.is(fake.requests.length, 1);
});

test('introspections in flight are bounded: the same token waits on one request, another token past the bound is a 503', async () => {
  const fake = await startFakeIntrospection();
  fakes.push(fake);
  fake.behaviour = 'hang';
  const config = oauthConfig({ issuers: [fake.issuer], resource: RESOURCE });
  const cache = createOAuthResourceServer(config).verifier.issuer(fake.issuer);
  const introspector = new TokenIntrospector(config, { credentials: new ClientCredentials(CLIENT_ID, CLIENT_SECRET), metadata: () => (cache as NonNullable<typeof cache>).metadata(), fetchJson, maxInFlight: 1 });
  const a = introspector.introspect('token-a-0123456789');
  const again = introspector.introspect('token-a-0123456789');
  const b = await introspector.introspect('token-b-0123456789');
  assert.is(b.ok, false);
  assert.is(!b.ok && b.status, 503);
  assert.match(!b.ok ? b.reason : '', /OAUTH_INTROSPECTION_MAX_IN_FLIGHT/);
  while (fake.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
  fake.release();
  const [first, second] = await Promise.all([a, again]);
  assert.is(first, second, 'one answer for both');
  assert.is(introspector.requests, 1);
  fake.behaviour = 'answer';
  assert.is((await introspector.introspect('token-b-0123456789') as TokenVerdict & { ok: false }).status, 401, 'room again once the first ended');
});

test('refusals and the unavailable issuer are logged without the token or the client secret', async () => {
  const { fake, good, admit, lines } = await setup();
  fake.answers.set(OPAQUE, { ...good(), aud: 'https://other.example' });
  await admit(OPAQUE);
  fake.behaviour = 'http-500';
  await admit(`${OPAQUE}-2`);
  assert.ok(lines.length >= 2);
  for (const l of lines) {
    assert.not.ok(l.includes(OPAQUE), 'a log line holds the token');
    assert.not.ok(l.includes(CLIENT_SECRET) || l.includes(encodeURIComponent(CLIENT_SECRET)), 'a log line holds the secret');
  }
});

test('property: an active answer is accepted exactly when iss (if given) is the issuer, aud names the resource, exp and nbf hold within the skew, and sub is given', async () => {
  const issuer = 'https://issuer.example';
  const config = oauthConfig({ issuers: [issuer], resource: RESOURCE, clockSkewSeconds: SKEW });
  fc.assert(fc.property(
    fc.constantFrom<string | undefined>(issuer, 'https://other.example', `${issuer}/`, undefined),
    fc.constantFrom<unknown>(RESOURCE, 'https://mcp.example/other', [RESOURCE, 'https://x.example'], ['https://x.example'], `${RESOURCE}/`, undefined, [], 7),
    fc.option(fc.integer({ min: -3 * SKEW, max: 3 * SKEW }), { nil: undefined }),
    fc.option(fc.integer({ min: -3 * SKEW, max: 3 * SKEW }), { nil: undefined }),
    fc.option(fc.string({ maxLength: 8 }), { nil: undefined }),
    (iss, aud, expOffset, nbfOffset, sub) => {
      const answer = { active: true, iss, aud, sub, exp: expOffset === undefined ? undefined : NOW + expOffset, nbf: nbfOffset === undefined ? undefined : NOW + nbfOffset };
      const v = judgeIntrospection(answer, issuer, config, NOW);
      const audOk = Array.isArray(aud) ? aud.includes(RESOURCE) : aud === RESOURCE;
      const expected = (iss === undefined || iss === issuer) && audOk && expOffset !== undefined && expOffset > -SKEW && (nbfOffset === undefined || nbfOffset <= SKEW) && sub !== undefined && sub !== '';
      assert.is(v.ok, expected, JSON.stringify(answer));
      if (v.ok) assert.is(v.principal.name, `${issuer}#${sub}`);
    },
  ), { seed: 7662, numRuns: 500 });
});

test('the client credentials never show their secret when printed or serialized', () => {
  const c = new ClientCredentials(CLIENT_ID, CLIENT_SECRET);
  assert.not.ok(JSON.stringify({ c }).includes('secret'));
  assert.not.ok(String(c).includes(CLIENT_SECRET));
  assert.is(JSON.stringify(c), `{"clientId":"${CLIENT_ID}"}`);
});

test.run();
