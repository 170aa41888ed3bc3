// The Host and Origin check (src/transports/origin.ts): an Origin is this server's own only as scheme,
// host and port together — an allowed name at the bound port — or one the operator listed.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkHostAndOrigin, type OriginPolicy, parseOrigin } from '../../src/transports/origin.ts';
import { DEFAULT_ALLOWED_HOSTS } from '../../src/limits.ts';

const PORT = 7777;
const policy: OriginPolicy = { allowedHosts: DEFAULT_ALLOWED_HOSTS, port: () => PORT };
const host = `127.0.0.1:${PORT}`;

test('the server\'s own origin, by every allowed name at its port, is accepted', () => {
  for (const origin of [`http://127.0.0.1:${PORT}`, `http://localhost:${PORT}`, `http://[::1]:${PORT}`, `http://LOCALHOST:${PORT}`]) assert.is(checkHostAndOrigin(policy, host, origin), null, origin);
});

test('a page on another port of the same machine is refused (a dev server, a notebook)', () => {
  for (const origin of [`http://localhost:${PORT + 1}`, 'http://127.0.0.1:3000', 'http://localhost', 'http://[::1]:8888']) assert.match(checkHostAndOrigin(policy, host, origin) ?? '', 'is not allowed', origin);
});

test('another scheme, a foreign name, "null" and garbage are refused', () => {
  for (const origin of [`https://localhost:${PORT}`, `http://evil.example:${PORT}`, 'null', 'http://[', 'garbage', `ws://localhost:${PORT}`]) assert.match(checkHostAndOrigin(policy, host, origin) ?? '', 'is not allowed', origin);
});

test('an allow-listed origin is accepted as scheme, host and port, and only that one', () => {
  const listed: OriginPolicy = { ...policy, allowedOrigins: [parseOrigin('http://localhost:3000/') as string, parseOrigin('https://app.example.com:443') as string] };
  assert.is(checkHostAndOrigin(listed, host, 'http://localhost:3000'), null);
  assert.is(checkHostAndOrigin(listed, host, 'https://app.example.com'), null);
  assert.match(checkHostAndOrigin(listed, host, 'http://localhost:3001') ?? '', 'is not allowed');
  assert.match(checkHostAndOrigin(listed, host, 'http://app.example.com') ?? '', 'is not allowed');
});

test('before the port is known only allow-listed origins pass; no Origin (not a browser) always passes the Origin check', () => {
  const unbound: OriginPolicy = { allowedHosts: DEFAULT_ALLOWED_HOSTS };
  assert.match(checkHostAndOrigin(unbound, host, `http://localhost:${PORT}`) ?? '', 'is not allowed');
  assert.is(checkHostAndOrigin(unbound, host, undefined), null);
  assert.is(checkHostAndOrigin(unbound, host, ''), null);
});

test('the Host is still checked by name, any port', () => {
  assert.is(checkHostAndOrigin(policy, 'localhost:1', undefined), null);
  assert.match(checkHostAndOrigin(policy, `evil.example:${PORT}`, undefined) ?? '', 'Host');
  assert.is(checkHostAndOrigin(policy, undefined, undefined), 'missing Host header');
});

test('parseOrigin keeps scheme, host and port, drops a default port and a path, and refuses non-http(s)', () => {
  assert.is(parseOrigin('http://LocalHost:80/x'), 'http://localhost');
  assert.is(parseOrigin('https://a.example:8443'), 'https://a.example:8443');
  assert.is(parseOrigin('null'), null);
  assert.is(parseOrigin('file:///etc'), null);
});

test.run();
