// When a request may be forwarded to another node with the caller's bearer token (src/cluster/forward-policy.ts):
// never over plain http:// off this machine unless the operator allowed it; https:// and loopback always.
// Pure decisions: no request is sent anywhere.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { forwardingRefusal, forwardSource, isLoopbackHost } from '../../src/cluster/forward-policy.ts';
import { forwardSourceAddress } from '../../src/cluster/advertise-url.ts';

test('a bearer token is not forwarded over plain http:// to a home off this machine (the README\'s own cluster addresses)', () => {
  for (const url of ['http://10.0.0.12:7777', 'http://node-b.internal:7777', 'http://[fd00::5]:9000', 'http://192.168.1.20', 'http://[::ffff:10.0.0.1]:1']) {
    assert.match(forwardingRefusal(url, true, false) ?? '', /does not forward a bearer token over plain http:\/\/ to .*--cluster-insecure-forwarding/, url);
  }
});

test('it is forwarded over https://, to a loopback home, without a token, or when the operator allowed plain http', () => {
  assert.is(forwardingRefusal('https://10.0.0.12:7443', true, false), null, 'https');
  for (const url of ['http://127.0.0.1:7777', 'http://127.8.9.10:1', 'http://localhost:7777', 'http://[::1]:7777', 'http://[::ffff:127.0.0.1]:7777']) {
    assert.is(forwardingRefusal(url, true, false), null, url);
  }
  assert.is(forwardingRefusal('http://10.0.0.12:7777', false, false), null, 'no token to leak');
  assert.is(forwardingRefusal('http://10.0.0.12:7777', true, true), null, '--cluster-insecure-forwarding');
});

test('loopback is 127.0.0.0/8, ::1 (also IPv4-mapped) and localhost; nothing else', () => {
  for (const host of ['127.0.0.1', '127.255.0.1', '[::1]', '[::ffff:7f00:1]', 'localhost', 'LOCALHOST', 'a.localhost']) assert.ok(isLoopbackHost(host), host);
  for (const host of ['10.0.0.1', '128.0.0.1', '[::2]', '[::ffff:a00:1]', '[fd00::1]', 'localhost.example.com', '127.0.0.1.nip.io', 'example.com']) assert.not.ok(isLoopbackHost(host), host);
});

test('a node bound to one IP address forwards from it; bound to a name or a wildcard, the system chooses', () => {
  assert.is(forwardSourceAddress('127.0.0.2'), '127.0.0.2');
  assert.is(forwardSourceAddress('10.0.0.11'), '10.0.0.11');
  assert.is(forwardSourceAddress('[fd00::5]'), 'fd00::5');
  for (const host of ['0.0.0.0', '::', '[::]', 'localhost', 'node-a.internal']) assert.is(forwardSourceAddress(host), undefined, host);
});

test('a forward leaves from the bound address, with its family, except from loopback to a host off this machine (it could not connect)', () => {
  assert.equal(forwardSource('127.0.0.2', '127.0.0.3'), { localAddress: '127.0.0.2', family: 4 });
  assert.equal(forwardSource('127.0.0.2', 'localhost'), { localAddress: '127.0.0.2', family: 4 });
  assert.equal(forwardSource('10.0.0.11', 'node-b.internal'), { localAddress: '10.0.0.11', family: 4 });
  assert.equal(forwardSource('fd00::5', '[fd00::6]'), { localAddress: 'fd00::5', family: 6 });
  // The cluster page's own topology: nodes on 127.0.0.1 behind local TLS terminators, advertising other machines.
  assert.is(forwardSource('127.0.0.1', 'node-b.internal'), null);
  assert.is(forwardSource('127.0.0.1', '10.0.0.12'), null);
  assert.is(forwardSource(undefined, '127.0.0.3'), null);
});

test.run();
