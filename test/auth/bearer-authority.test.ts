// The one admission rule every transport uses: static tokens beside OAuth access tokens, the challenge a
// host follows (401 naming the resource metadata, 403 insufficient_scope naming the scope), 431 for a
// huge token, 503 with Retry-After for an unreachable issuer, and refusals logged without the token.

import { test } from 'uvu';
import fc from 'fast-check';
import * as assert from 'uvu/assert';
import { AccessTokenVerifier } from '../../src/auth/access-token.ts';
import { type Admitted, type AuthRefusal, BearerAuthority, isAuthRefusal } from '../../src/auth/bearer-authority.ts';
import { oauthConfig } from '../../src/auth/oauth-config.ts';
import { capabilityFor, capabilitiesOf, DEFAULT_SCOPE_NAMES } from '../../src/auth/scopes.ts';
import { parseTokenList } from '../../src/auth/tokens.ts';
import { OAUTH_UNAVAILABLE_RETRY_AFTER_SECONDS } from '../../src/limits.ts';
import { createLogger } from '../../src/log/logger.ts';
import { ISSUER, MemoryIssuer, RESOURCE, sign, signingKey } from './issuer-fixture.ts';

const METADATA = 'https://mcp.example/.well-known/oauth-protected-resource/mcp';
const STATIC = 'static-secret-token-1';

async function setup() {
  const key = await signingKey('k1');
  const issuer = new MemoryIssuer(ISSUER, [key]);
  const config = oauthConfig({ issuers: [ISSUER], resource: RESOURCE });
  const clock = { ms: Date.now() };
  const verifier = new AccessTokenVerifier(config, { fetchJson: issuer.fetchJson, now: () => clock.ms });
  const lines: string[] = [];
  const authority = new BearerAuthority({
    tokens: parseTokenList(`${STATIC}=alice`), requireAuth: false,
    oauth: { config, verifier, metadataUrl: METADATA },
    logger: createLogger('debug', { write: (t: string) => lines.push(t) }),
  });
  const token = (claims: Record<string, unknown> = {}) => sign(key, { iss: ISSUER, aud: RESOURCE, sub: 'bob', exp: Math.floor(Date.now() / 1000) + 300, scope: 'mcp:read', ...claims });
  return { authority, issuer, token, lines, clock };
}

function refusal(x: Admitted | AuthRefusal): AuthRefusal {
  assert.ok(isAuthRefusal(x), 'expected a refusal');
  return x as AuthRefusal;
}

test('with OAuth configured, no Authorization header is a 401 naming the resource metadata (how a host discovers the issuer)', async () => {
  const { authority } = await setup();
  const r = refusal(await authority.admit(undefined));
  assert.is(r.status, 401);
  assert.is(r.headers['WWW-Authenticate'], `Bearer resource_metadata="${METADATA}"`);
});

test('a bad token is a 401 with error="invalid_token" and resource_metadata', async () => {
  const { authority, token } = await setup();
  const r = refusal(await authority.admit(`Bearer ${await token({ aud: 'https://elsewhere.example' })}`));
  assert.is(r.status, 401);
  assert.match(r.headers['WWW-Authenticate'] ?? '', /^Bearer resource_metadata="https:\/\/mcp\.example\/\.well-known\/oauth-protected-resource\/mcp", error="invalid_token", error_description="the token is for another audience/);
});

test('static tokens keep working beside OAuth, with every capability', async () => {
  const { authority } = await setup();
  const a = await authority.admit(`Bearer ${STATIC}`);
  assert.not.ok(isAuthRefusal(a));
  assert.equal((a as Admitted).principal, { kind: 'token', name: 'alice' });
  assert.equal([...(a as Admitted).capabilities].sort(), ['exec', 'observe', 'read', 'write']);
});

test('an OAuth token is admitted as issuer#sub with its scopes\' capabilities only', async () => {
  const { authority, token } = await setup();
  const a = await authority.admit(`Bearer ${await token()}`) as Admitted;
  assert.equal(a.principal, { kind: 'token', name: `${ISSUER}#bob` });
  assert.equal([...a.capabilities], ['read']);
});

test('a huge token is a 431 before any parsing; a malformed header a 401', async () => {
  const { authority } = await setup();
  assert.is(refusal(await authority.admit(`Bearer ${'a'.repeat(9000)}`)).status, 431);
  assert.is(refusal(await authority.admit('Basic dXNlcjpwYXNz')).status, 401);
  assert.is(refusal(await authority.admit('Bearer not.a token')).status, 401);
  assert.is(refusal(await authority.admit('Bearer ####')).status, 401);
});

test('an unreachable issuer is a 503 with Retry-After, never admitted', async () => {
  const { authority, issuer, token } = await setup();
  issuer.reachable = false;
  const r = refusal(await authority.admit(`Bearer ${await token()}`));
  assert.is(r.status, 503);
  assert.ok(Number(r.headers['Retry-After']) > 0);
});

test('every refusal is logged with its reason and never with the token', async () => {
  const { authority, issuer, token, lines, clock } = await setup();
  issuer.reachable = false;
  const unreachable = await token({ sub: 'carol' });
  await authority.admit(`Bearer ${unreachable}`);
  issuer.reachable = true;
  clock.ms += OAUTH_UNAVAILABLE_RETRY_AFTER_SECONDS * 1000;
  const tokens = [await token({ aud: 'https://elsewhere.example' }), await token({ exp: 1 }), `${await token()}x`, 'garbage-token-value', 'b'.repeat(9000)];
  for (const t of tokens) await authority.admit(`Bearer ${t}`);
  assert.ok(lines.length >= tokens.length + 1, `${lines.length} log lines`);
  assert.ok(lines.some((l) => l.includes('another audience')) && lines.some((l) => l.includes('expired')) && lines.some((l) => l.includes('cannot be read')));
  for (const t of [...tokens, unreachable]) for (const l of lines) assert.not.ok(l.includes(t.slice(0, 40)), 'a log line holds a token');
});

test('a call needing a scope the token lacks gets 403 insufficient_scope naming that scope', async () => {
  const { authority } = await setup();
  const r = authority.insufficientScope('write');
  assert.is(r.status, 403);
  assert.match(r.headers['WWW-Authenticate'] ?? '', /^Bearer error="insufficient_scope", scope="mcp:write", resource_metadata="/);
});

test('scopes map to capabilities; each tool call needs the capability of its tool', () => {
  assert.equal([...capabilitiesOf('mcp:exec other mcp:observe', DEFAULT_SCOPE_NAMES)].sort(), ['exec', 'observe']);
  assert.equal([...capabilitiesOf(undefined, DEFAULT_SCOPE_NAMES)], []);
  assert.equal([...capabilitiesOf('read', { ...DEFAULT_SCOPE_NAMES, read: 'read' })], ['read']);
  assert.is(capabilityFor('tools/call', { name: 'read' }), 'read');
  assert.is(capabilityFor('tools/call', { name: 'edit' }), 'write');
  assert.is(capabilityFor('tools/call', { name: 'write' }), 'write');
  assert.is(capabilityFor('tools/call', { name: 'bash' }), 'exec');
  assert.is(capabilityFor('tools/call', { name: 'harness_task' }), 'exec');
  assert.is(capabilityFor('tools/list', {}), 'read');
  assert.is(capabilityFor('initialize', {}), 'read');
});

test('tasks/update needs what the tool that makes tasks needs (exec: its answers let the task act); tasks/get and tasks/cancel read', () => {
  assert.is(capabilityFor('tasks/update', { taskId: 't', inputResponses: {} }), 'exec');
  assert.is(capabilityFor('tasks/update', undefined), 'exec');
  assert.is(capabilityFor('tasks/get', { taskId: 't' }), 'read');
  assert.is(capabilityFor('tasks/cancel', { taskId: 't' }), 'read');
});

test('every MCP path\'s door (admitMcp): a token without mcp:read is the 403 insufficient_scope naming mcp:read; with it, admitted', async () => {
  const { authority, token } = await setup();
  const r = refusal(await authority.admitMcp(`Bearer ${await token({ scope: 'mcp:write mcp:exec mcp:observe' })}`));
  assert.is(r.status, 403);
  assert.is(r.headers['WWW-Authenticate'], `Bearer error="insufficient_scope", scope="mcp:read", resource_metadata="${METADATA}", error_description="this call needs mcp:read"`);
  assert.is(refusal(await authority.admitMcp(`Bearer ${await token({ scope: '' })}`)).status, 403, 'no scope at all');
  const a = await authority.admitMcp(`Bearer ${await token({ scope: 'mcp:read' })}`);
  assert.not.ok(isAuthRefusal(a));
  // The door adds nothing to the rest of admission: static tokens, no header (401) and bad tokens as admit says.
  assert.not.ok(isAuthRefusal(await authority.admitMcp(`Bearer ${STATIC}`)));
  assert.is(refusal(await authority.admitMcp(undefined)).status, 401);
  assert.is(refusal(await authority.admitMcp(`Bearer ${await token({ aud: 'https://elsewhere.example' })}`)).status, 401);
});


test('a refusal\'s WWW-Authenticate is a valid header value whatever the token\'s header says (RFC 6750 error_description characters only)', async () => {
  const { authority } = await setup();
  const { validateHeaderValue } = await import('node:http');
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const claims = part({ iss: ISSUER, aud: RESOURCE, sub: 'bob', exp: Math.floor(Date.now() / 1000) + 300 });
  // alg and typ come back in the refusal's reason; anything past Latin-1 made node:http throw on writeHead (a 500 and an error logged).
  await fc.assert(fc.asyncProperty(fc.string({ unit: 'binary' }), fc.oneof(fc.constant(undefined), fc.string({ unit: 'binary' })), async (alg, typ) => {
    const r = refusal(await authority.admit(`Bearer ${part({ alg, ...(typ === undefined ? {} : { typ }) })}.${claims}.AAAA`));
    const challenge = r.headers['WWW-Authenticate'] ?? '';
    validateHeaderValue('WWW-Authenticate', challenge);
    const description = /error_description="([^"]*)"$/.exec(challenge)?.[1];
    assert.ok(description !== undefined, `${challenge} / ${r.message}`);
    assert.ok(/^[\x20\x21\x23-\x5b\x5d-\x7e]*$/.test(description), description);
  }), { numRuns: 200 });
});

test('a token whose alg is past Latin-1 is a 401, not a header node:http refuses to write', async () => {
  const { authority } = await setup();
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const r = refusal(await authority.admit(`Bearer ${part({ alg: 'Ā' })}.${part({ iss: ISSUER, sub: 'bob' })}.AAAA`));
  assert.is(r.status, 401);
  const { validateHeaderValue } = await import('node:http');
  validateHeaderValue('WWW-Authenticate', r.headers['WWW-Authenticate'] ?? '');
});

test.run();
