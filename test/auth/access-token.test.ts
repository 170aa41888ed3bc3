// The access-token check of the OAuth resource server against the attack list of issue 28: each refused
// token is refused for its own reason (and never let in), key rotation is followed, an unreachable issuer
// is a 503 and never an open door, and a property over claims: accepted exactly when iss, aud, exp and nbf hold.

import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { AccessTokenVerifier, type TokenVerdict } from '../../src/auth/access-token.ts';
import { oauthConfig } from '../../src/auth/oauth-config.ts';
import { OAUTH_JWKS_MAX_AGE_MS, OAUTH_UNAVAILABLE_RETRY_AFTER_SECONDS } from '../../src/limits.ts';
import { base64url, ISSUER, MemoryIssuer, RESOURCE, sign, signingKey } from './issuer-fixture.ts';

const NOW = 1_800_000_000;
const SKEW = 60;
const INTERVAL = 30_000;

async function setup(options: { issuers?: string[]; requireAtJwt?: boolean } = {}) {
  const key = await signingKey('k1');
  const issuer = new MemoryIssuer(ISSUER, [key]);
  const clock = { ms: NOW * 1000 };
  const config = oauthConfig({ issuers: options.issuers ?? [ISSUER], resource: RESOURCE, clockSkewSeconds: SKEW, jwksRefetchIntervalMs: INTERVAL, requireAtJwt: options.requireAtJwt ?? false });
  const verifier = new AccessTokenVerifier(config, { fetchJson: issuer.fetchJson, now: () => clock.ms });
  const good = { iss: ISSUER, aud: RESOURCE, sub: 'alice', exp: NOW + 300, scope: 'mcp:read mcp:write' };
  return { key, issuer, clock, verifier, good };
}

function refusedWith(v: TokenVerdict, status: number, reason: RegExp): void {
  assert.is(v.ok, false, 'the token must be refused');
  if (v.ok) return;
  assert.is(v.status, status);
  assert.match(v.reason, reason);
}

test('accepts a token of a configured issuer for this resource: principal issuer#sub, capabilities from its scopes', async () => {
  const { key, verifier, good } = await setup();
  const v = await verifier.verify(await sign(key, good));
  assert.ok(v.ok);
  if (!v.ok) return;
  assert.equal(v.principal, { kind: 'token', name: `${ISSUER}#alice` });
  assert.equal([...v.capabilities].sort(), ['read', 'write']);
  assert.is(v.expiresAt, NOW + 300);
});

test('refuses a token whose iss is another issuer (signed by that issuer\'s own key)', async () => {
  const { verifier, good } = await setup();
  const other = await signingKey('k1');
  refusedWith(await verifier.verify(await sign(other, { ...good, iss: 'https://other.example' })), 401, /issuer this server does not trust/);
});

test('refuses a token claiming the trusted issuer but signed with another key under its kid', async () => {
  const { verifier, good } = await setup();
  const forger = await signingKey('k1');
  refusedWith(await verifier.verify(await sign(forger, good)), 401, /signature does not verify/);
});

test('refuses a token for another audience', async () => {
  const { key, verifier, good } = await setup();
  refusedWith(await verifier.verify(await sign(key, { ...good, aud: 'https://other.example/mcp' })), 401, /another audience/);
});

test('refuses a token expired longer ago than the clock skew, accepts one expired within it', async () => {
  const { key, verifier, good } = await setup();
  refusedWith(await verifier.verify(await sign(key, { ...good, exp: NOW - SKEW - 1 })), 401, /expired/);
  assert.ok((await verifier.verify(await sign(key, { ...good, exp: NOW - SKEW + 5 }))).ok);
});

test('refuses a token not valid before a time further ahead than the clock skew, accepts one within it', async () => {
  const { key, verifier, good } = await setup();
  refusedWith(await verifier.verify(await sign(key, { ...good, nbf: NOW + SKEW + 5 })), 401, /not valid yet/);
  assert.ok((await verifier.verify(await sign(key, { ...good, nbf: NOW + SKEW - 5 }))).ok);
});

test('refuses a token without exp or without sub', async () => {
  const { key, verifier, good } = await setup();
  const { exp: _exp, ...noExp } = good;
  refusedWith(await verifier.verify(await sign(key, noExp)), 401, /exp/);
  const { sub: _sub, ...noSub } = good;
  refusedWith(await verifier.verify(await sign(key, noSub)), 401, /sub/);
});

test('property: a signed token whose sub is not a string is refused, so sub 42 and sub "42" are never one principal', async () => {
  const { key, verifier, good } = await setup();
  // jose checks that sub is present, not that it is a string: "issuer#42" came of sub 42 and of sub "42",
  // and every object sub was the one principal "issuer#[object Object]".
  await fc.assert(fc.asyncProperty(fc.oneof(fc.integer(), fc.boolean(), fc.array(fc.string(), { maxLength: 2 }), fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 })), async (sub) => {
    refusedWith(await verifier.verify(await sign(key, { ...good, sub: sub as unknown as string })), 401, /sub/);
  }), { numRuns: 40 });
});

test('refuses alg none, with an empty or a made-up signature', async () => {
  const { verifier, good } = await setup();
  const unsigned = `${base64url({ alg: 'none', kid: 'k1' })}.${base64url(good)}`;
  refusedWith(await verifier.verify(`${unsigned}.`), 401, /not a JWT/);
  refusedWith(await verifier.verify(`${unsigned}.AAAA`), 401, /algorithm "none" is not allowed/);
});

test('refuses HS256 signed with the issuer\'s public key as the HMAC secret', async () => {
  const { key, verifier, good } = await setup();
  const head = `${base64url({ alg: 'HS256', kid: 'k1' })}.${base64url(good)}`;
  for (const secret of [JSON.stringify(key.publicJwk), String(key.publicJwk.x)]) {
    const mac = createHmac('sha256', secret).update(head).digest('base64url');
    refusedWith(await verifier.verify(`${head}.${mac}`), 401, /algorithm "HS256" is not allowed/);
  }
});

test('refuses a forged kid, reading the JWKS again at most once per refetch interval', async () => {
  const { key, issuer, clock, verifier, good } = await setup();
  assert.ok((await verifier.verify(await sign(key, good))).ok);
  assert.is(issuer.jwksReads, 1);
  const forged = { ...key, kid: 'forged' };
  for (let i = 0; i < 5; i++) refusedWith(await verifier.verify(await sign(forged, { ...good, sub: `s${i}` })), 401, /kid/);
  assert.is(issuer.jwksReads, 1, 'the first read was less than an interval ago: no refetch');
  clock.ms += INTERVAL;
  for (let i = 0; i < 5; i++) refusedWith(await verifier.verify(await sign(forged, { ...good, sub: `t${i}` })), 401, /kid/);
  assert.is(issuer.jwksReads, 2, 'one refetch for the whole interval');
});

test('follows key rotation: a token under a new kid is accepted after one refetch, without a restart', async () => {
  const { key, issuer, clock, verifier, good } = await setup();
  assert.ok((await verifier.verify(await sign(key, good))).ok);
  const next = await signingKey('k2');
  issuer.keys = [next];
  clock.ms += INTERVAL;
  const v = await verifier.verify(await sign(next, good));
  assert.ok(v.ok);
  assert.is(issuer.jwksReads, 2);
});

test('an unreachable issuer is a 503 with a retry time, never an acceptance', async () => {
  const { key, issuer, clock, verifier, good } = await setup();
  issuer.reachable = false;
  const v = await verifier.verify(await sign(key, good));
  refusedWith(v, 503, /cannot be read/);
  assert.ok(!v.ok && (v.retryAfterSeconds ?? 0) > 0);
  issuer.reachable = true;
  refusedWith(await verifier.verify(await sign(key, good)), 503, /cannot be read/);
  clock.ms += RETRY_MS;
  assert.ok((await verifier.verify(await sign(key, good))).ok, 'served again once the issuer is back and the retry time passed');
});

const RETRY_MS = OAUTH_UNAVAILABLE_RETRY_AFTER_SECONDS * 1000;

test('an issuer that cannot be read is asked again at most once per retry time, however many tokens name it', async () => {
  const { key, issuer, clock, verifier, good } = await setup();
  issuer.reachable = false;
  for (let i = 0; i < 20; i++) refusedWith(await verifier.verify(await sign({ ...key, kid: `forged-${i}` }, { ...good, sub: `s${i}` })), 503, /cannot be read/);
  assert.ok(issuer.requests <= 2, `one discovery (two metadata URLs) for 20 tokens, not ${issuer.requests} requests`);
  const before = issuer.requests;
  clock.ms += RETRY_MS;
  refusedWith(await verifier.verify(await sign(key, { ...good, sub: 'later' })), 503, /cannot be read/);
  assert.ok(issuer.requests > before, 'asked again once the retry time passed');
});

test('stale keys whose refresh fails serve the known keys without asking the issuer again for every token', async () => {
  const { key, issuer, clock, verifier, good } = await setup();
  assert.ok((await verifier.verify(await sign(key, good))).ok);
  clock.ms += OAUTH_JWKS_MAX_AGE_MS;
  issuer.reachable = false;
  const before = issuer.requests;
  for (let i = 0; i < 20; i++) assert.ok((await verifier.verify(await sign(key, { ...good, sub: `s${i}`, exp: NOW + 3600 }))).ok, 'the stale keys still verify');
  assert.is(issuer.requests - before, 1, 'one failed refresh for 20 tokens');
});

test('property: after a failed read, an issuer gets no request before the retry time has passed', async () => {
  const key = await signingKey('k1');
  await fc.assert(fc.asyncProperty(
    fc.array(fc.record({ stepMs: fc.integer({ min: 0, max: 2 * RETRY_MS }), reachable: fc.boolean(), forged: fc.boolean() }), { minLength: 1, maxLength: 30 }),
    async (steps) => {
      const issuer = new MemoryIssuer(ISSUER, [key]);
      const clock = { ms: NOW * 1000 };
      const config = oauthConfig({ issuers: [ISSUER], resource: RESOURCE, clockSkewSeconds: SKEW, jwksRefetchIntervalMs: INTERVAL });
      const verifier = new AccessTokenVerifier(config, { fetchJson: issuer.fetchJson, now: () => clock.ms });
      /** When the last request that failed was made (null: none yet, or one succeeded since). */
      let failedAt: number | null = null;
      for (const [i, step] of steps.entries()) {
        clock.ms += step.stepMs;
        issuer.reachable = step.reachable;
        const before = issuer.requests;
        const token = await sign(step.forged ? { ...key, kid: `forged-${i}` } : key, { iss: ISSUER, aud: RESOURCE, sub: `s${i}`, exp: Math.floor(clock.ms / 1000) + 300 });
        const verdict = await verifier.verify(token);
        const asked = issuer.requests > before;
        if (failedAt !== null && clock.ms - failedAt < RETRY_MS) assert.not.ok(asked, `asked ${clock.ms - failedAt} ms after a failed read`);
        if (asked && !step.reachable) failedAt = clock.ms;
        if (asked && step.reachable) failedAt = null;
        if (!step.reachable && verdict.ok) assert.ok(!step.forged, 'a forged kid is never accepted');
      }
    },
  ), { numRuns: 60 });
});

test('refuses malformed tokens: not three parts, bad base64, a header that is not JSON', async () => {
  const { verifier } = await setup();
  for (const t of ['abc', 'a.b', 'a.b.c.d', '!!.??.**', `${base64url('not json')}.${base64url({})}.AAAA`]) refusedWith(await verifier.verify(t), 401, /JWT/);
});

test('refuses a sender-constrained token (cnf): without the proof of its key it is not a bearer token', async () => {
  const { key, verifier, good } = await setup();
  refusedWith(await verifier.verify(await sign(key, { ...good, cnf: { jkt: 'thumbprint' } })), 401, /bound to a key/);
});

// RFC 9068 §4: a resource server must not take an ID token (or another JWT its issuer signed) for an access token.
/** typ values an access token may carry by default: RFC 9068's, the generic JWT one, or none. */
const ACCESS_TYPS = ['at+jwt', 'application/at+jwt', 'AT+JWT', 'Application/AT+JWT', 'JWT', 'jwt', 'application/jwt', undefined];
/** typ values of other JWTs an issuer signs: logout tokens, security events, DPoP proofs, JWT-secured requests... */
const OTHER_TYPS = ['logout+jwt', 'secevent+jwt', 'dpop+jwt', 'oauth-authz-req+jwt', 'token-introspection+jwt', 'JOSE', 'id_token', ''];

test('refuses a JWT whose typ says it is something else; accepts at+jwt, JWT and no typ by default', async () => {
  const { key, verifier, good } = await setup();
  for (const typ of ACCESS_TYPS) {
    const v = await verifier.verify(await sign(key, good, { typ }));
    assert.ok(v.ok, `typ ${String(typ)} is accepted${v.ok ? '' : `: ${v.reason}`}`);
  }
  for (const typ of OTHER_TYPS) refusedWith(await verifier.verify(await sign(key, good, { typ })), 401, /typ .* says it is not an access token/);
  refusedWith(await verifier.verify(await sign(key, good, { typ: 7 })), 401, /typ header is not a string/);
});

test('refuses an ID token of the same issuer whose aud is this resource (its at_hash or c_hash gives it away); a nonce alone does not', async () => {
  const { key, verifier, good } = await setup();
  for (const mark of ['at_hash', 'c_hash']) {
    refusedWith(await verifier.verify(await sign(key, { ...good, [mark]: 'x4W1bIM6WcNVS0YKN5F_Fg', nonce: 'n-0S6_WzA2Mj' }, { typ: 'JWT' })), 401, new RegExp(`ID token \\(it carries ${mark}\\)`));
  }
  assert.ok((await verifier.verify(await sign(key, { ...good, nonce: 'n-0S6_WzA2Mj' }, { typ: 'JWT' }))).ok, 'some providers copy the nonce into access tokens');
});

test('--oauth-require-at-jwt: only at+jwt (either spelling, any case) is an access token; JWT and no typ are refused naming the flag', async () => {
  const { key, verifier, good } = await setup({ requireAtJwt: true });
  for (const typ of ['at+jwt', 'application/at+jwt', 'AT+JWT']) assert.ok((await verifier.verify(await sign(key, good, { typ }))).ok, typ);
  for (const typ of ['JWT', 'application/jwt', undefined, ...OTHER_TYPS]) {
    refusedWith(await verifier.verify(await sign(key, good, { typ })), 401, /requires at\+jwt access tokens \(RFC 9068, --oauth-require-at-jwt\)/);
  }
});

test('property: a token is accepted exactly when its typ is an access token\'s (by default: at+jwt, JWT or none; strictly: at+jwt)', async () => {
  const lenient = await setup();
  const strict = await setup({ requireAtJwt: true });
  const typs = fc.oneof(fc.constantFrom(...ACCESS_TYPS, ...OTHER_TYPS), fc.string({ maxLength: 12 }), fc.mixedCase(fc.constantFrom('at+jwt', 'jwt', 'application/at+jwt', 'application/jwt')));
  await fc.assert(fc.asyncProperty(typs, fc.boolean(), async (typ, isStrict) => {
    const { key, verifier, good } = isStrict ? strict : lenient;
    const kind = typ?.toLowerCase();
    const expected = isStrict ? kind === 'at+jwt' || kind === 'application/at+jwt' : kind === undefined || ['at+jwt', 'application/at+jwt', 'jwt', 'application/jwt'].includes(kind);
    const v = await verifier.verify(await sign(key, good, typ === undefined ? { typ: undefined } : { typ }));
    assert.is(v.ok, expected, `typ ${JSON.stringify(typ)} strict=${isStrict}`);
  }), { numRuns: 150 });
});

test('a remembered token is refused once it expires', async () => {
  const { key, clock, verifier, good } = await setup();
  const token = await sign(key, { ...good, exp: NOW + 10 });
  assert.ok((await verifier.verify(token)).ok);
  clock.ms += (10 + SKEW + 1) * 1000;
  refusedWith(await verifier.verify(token), 401, /expired/);
});

test('property: a token is accepted exactly when iss is configured, aud names the resource, exp and nbf hold within the skew', async () => {
  const { key, verifier } = await setup();
  await fc.assert(fc.asyncProperty(
    fc.constantFrom(ISSUER, 'https://other.example', `${ISSUER}/`),
    fc.constantFrom<string | string[]>(RESOURCE, 'https://mcp.example/other', [RESOURCE, 'https://x.example'], ['https://x.example'], `${RESOURCE}/`),
    fc.integer({ min: -3 * SKEW, max: 3 * SKEW }),
    fc.option(fc.integer({ min: -3 * SKEW, max: 3 * SKEW }), { nil: undefined }),
    fc.string({ minLength: 1, maxLength: 8 }),
    async (iss, aud, expOffset, nbfOffset, sub) => {
      const claims = { iss, aud, sub, exp: NOW + expOffset, ...(nbfOffset === undefined ? {} : { nbf: NOW + nbfOffset }) };
      // Signed with the trusted key whatever iss says: the iss check alone must refuse another issuer.
      const v = await verifier.verify(await sign(key, claims));
      const audOk = Array.isArray(aud) ? aud.includes(RESOURCE) : aud === RESOURCE;
      const expected = iss === ISSUER && audOk && NOW + expOffset > NOW - SKEW && (nbfOffset === undefined || nbfOffset <= SKEW);
      assert.is(v.ok, expected, JSON.stringify(claims));
    },
  ), { seed: 2828, numRuns: 300 });
});

test.run();
