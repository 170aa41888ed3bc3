// The OAuth flags as an operator gives them: repeatable issuers, the resource, scope names, the skew
// and refetch interval, the environment forms, refusal with --stdio, and the settings' validation
// (bad URLs, http off loopback, shared scope names) with an error naming the flag.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { OAuthConfigError, oauthConfig } from '../../src/auth/oauth-config.ts';
import { clientCredentialsFrom } from '../../src/auth/client-credentials.ts';
import { OptionsError, parseOptions, usage } from '../../src/cli/options.ts';

function serve(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const parsed = parseOptions(argv, env, '/');
  if (parsed.kind !== 'serve') throw new Error(parsed.kind);
  return parsed.options;
}

test('--oauth-issuer repeats; --resource, the scope names, the skew and the refetch interval are read', () => {
  const o = serve(['--oauth-issuer', 'https://a.example', '--oauth-issuer', 'https://b.example', '--resource', 'https://mcp.example/mcp', '--oauth-scope-write', 'files:write', '--oauth-clock-skew', '5', '--oauth-jwks-refetch', '2']);
  assert.equal(o.oauthIssuers, ['https://a.example', 'https://b.example']);
  assert.is(o.resource, 'https://mcp.example/mcp');
  assert.equal(o.oauthScopes, { write: 'files:write' });
  assert.is(o.oauthClockSkewSeconds, 5);
  assert.is(o.oauthJwksRefetchSeconds, 2);
});

test('SUPERPI_OAUTH_ISSUERS and SUPERPI_RESOURCE when the flags are absent; none means no OAuth', () => {
  const o = serve([], { SUPERPI_OAUTH_ISSUERS: 'https://a.example, https://b.example', SUPERPI_RESOURCE: 'https://mcp.example/mcp' });
  assert.equal(o.oauthIssuers, ['https://a.example', 'https://b.example']);
  assert.is(o.resource, 'https://mcp.example/mcp');
  assert.equal(serve([]).oauthIssuers, []);
});

test('--oauth-require-at-jwt, or SUPERPI_OAUTH_REQUIRE_AT_JWT=1, requires at+jwt access tokens; off by default', () => {
  assert.is(serve(['--oauth-issuer', 'https://a.example']).oauthRequireAtJwt, false);
  assert.is(serve(['--oauth-issuer', 'https://a.example', '--oauth-require-at-jwt']).oauthRequireAtJwt, true);
  assert.is(serve(['--oauth-issuer', 'https://a.example'], { SUPERPI_OAUTH_REQUIRE_AT_JWT: '1' }).oauthRequireAtJwt, true);
  assert.throws(() => serve([], { SUPERPI_OAUTH_REQUIRE_AT_JWT: 'maybe' }), /SUPERPI_OAUTH_REQUIRE_AT_JWT takes 1/);
  assert.throws(() => parseOptions(['--stdio', '--oauth-require-at-jwt'], {}, '/'), /--oauth-require-at-jwt is for the HTTP server/);
});

test('the OAuth flags are refused with --stdio, and listed in --help', () => {
  assert.throws(() => parseOptions(['--stdio', '--oauth-issuer', 'https://a.example'], {}, '/'), (e: unknown) => e instanceof OptionsError && /--oauth-issuer is for the HTTP server/.test((e as Error).message));
  for (const flag of ['--oauth-issuer', '--resource', '--oauth-scope-read', '--oauth-scope-observe', '--oauth-clock-skew', '--oauth-jwks-refetch', '--oauth-require-at-jwt']) assert.ok(usage.includes(flag), flag);
});

test('the settings refuse a bad issuer or resource URL, http off loopback, a fragment, shared scope names', () => {
  const bad = (input: Parameters<typeof oauthConfig>[0], re: RegExp) => assert.throws(() => oauthConfig(input), (e: unknown) => e instanceof OAuthConfigError && re.test((e as Error).message));
  bad({ issuers: [], resource: 'https://m.example/mcp' }, /--oauth-issuer: at least one/);
  bad({ issuers: ['not a url'], resource: 'https://m.example/mcp' }, /--oauth-issuer: "not a url" is not an absolute URL/);
  bad({ issuers: ['http://idp.example'], resource: 'https://m.example/mcp' }, /must be https/);
  bad({ issuers: ['https://idp.example'], resource: 'https://m.example/mcp#x' }, /--resource: .* fragment/);
  bad({ issuers: ['https://idp.example'], resource: 'https://m.example/mcp', scopes: { write: 'mcp:read' } }, /share a scope name/);
  bad({ issuers: ['https://idp.example'], resource: 'https://m.example/mcp', scopes: { read: 'has space' } }, /--oauth-scope-read/);
  assert.is(oauthConfig({ issuers: ['http://127.0.0.1:8080'], resource: 'http://127.0.0.1:7777/mcp' }).clockSkewSeconds, 60);
});

test('introspection credentials: the id from the flag or the environment, the secret from a file or the environment, never argv', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'superpi-introspection-'));
  const file = path.join(dir, 'secret');
  writeFileSync(file, 'file-secret-value\n');
  const issuer = ['--oauth-issuer', 'https://a.example'];
  const fromFile = serve([...issuer, '--oauth-introspection-client-id', 'rs', '--oauth-introspection-secret-file', file]).oauthIntrospection;
  assert.is(fromFile?.clientId, 'rs');
  assert.is(fromFile?.basicAuthorization(), `Basic ${Buffer.from('rs:file-secret-value').toString('base64')}`);
  const fromEnv = serve(issuer, { SUPERPI_OAUTH_INTROSPECTION_CLIENT_ID: 'rs2', SUPERPI_OAUTH_INTROSPECTION_SECRET: 'env-secret' }).oauthIntrospection;
  assert.is(fromEnv?.basicAuthorization(), `Basic ${Buffer.from('rs2:env-secret').toString('base64')}`);
  assert.is(serve(issuer).oauthIntrospection, undefined);
  const refused = (argv: string[], env: NodeJS.ProcessEnv, re: RegExp) => assert.throws(() => parseOptions(argv, env, '/'), (e: unknown) => e instanceof OptionsError && re.test((e as Error).message));
  refused([...issuer, '--oauth-introspection-client-id', 'rs'], {}, /needs its secret/);
  refused(issuer, { SUPERPI_OAUTH_INTROSPECTION_SECRET: 'x' }, /without --oauth-introspection-client-id/);
  refused(['--oauth-introspection-client-id', 'rs'], { SUPERPI_OAUTH_INTROSPECTION_SECRET: 'x' }, /needs --oauth-issuer/);
  refused([...issuer, '--oauth-introspection-client-id', 'rs', '--oauth-introspection-secret-file', path.join(dir, 'missing')], {}, /cannot read it/);
  refused(['--stdio', '--oauth-introspection-client-id', 'rs'], {}, /is for the HTTP server/);
  for (const flag of ['--oauth-introspection-client-id', '--oauth-introspection-secret-file']) assert.ok(usage.includes(flag), flag);
  assert.is(clientCredentialsFrom({}), undefined);
});

test.run();
