// The allow list of `--bash-network allow=…`: what an entry may be, its canonical form, and which
// request targets it lets through (examples, then properties over generated hosts).

import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  egressAllowed, EgressSyntaxError, type EgressTarget, parseEgressAllowList, parseEgressRule, parseEgressTarget,
} from '../../../src/tools/sandbox/egress-allow.ts';

function target(authority: string, defaultPort: number | null = null): EgressTarget {
  const parsed = parseEgressTarget(authority, defaultPort);
  if (typeof parsed === 'string') throw new Error(`${authority}: ${parsed}`);
  return parsed;
}

function allows(list: string, authority: string): boolean {
  return egressAllowed(parseEgressAllowList(list).map(parseEgressRule), target(authority));
}

function syntaxError(text: string): string {
  try {
    parseEgressAllowList(text);
  } catch (err) {
    assert.instance(err, EgressSyntaxError);
    return (err as Error).message;
  }
  throw new Error(`expected "${text}" to be refused`);
}

test('entries come back canonical: lower case, punycode, no trailing dot, IPv6 compressed, duplicates dropped', () => {
  assert.equal(
    parseEgressAllowList(' GitHub.com , registry.npmjs.org:443,*.Example.ORG, bücher.de., [0:0:0:0:0:0:0:1]:8080, 10.0.0.1, github.com'),
    ['github.com', 'registry.npmjs.org:443', '*.example.org', 'xn--bcher-kva.de', '[::1]:8080', '10.0.0.1'],
  );
});

test('a bad entry is refused with a message naming it and saying how to write it', () => {
  assert.match(syntaxError(''), /at least one host/);
  assert.match(syntaxError('a.com,,b.com'), /empty entry/);
  assert.match(syntaxError('https://github.com'), /"https:\/\/github.com".*without a scheme/);
  assert.match(syntaxError('github.com/path'), /no path/);
  assert.match(syntaxError('user@github.com'), /no path, user/);
  assert.match(syntaxError('github.com:0'), /"0" is not a port/);
  assert.match(syntaxError('github.com:65536'), /not a port/);
  assert.match(syntaxError('github.com:http'), /not a port/);
  assert.match(syntaxError('github.com:'), /not a port/);
  assert.match(syntaxError('*'), /"\*"/);
  assert.match(syntaxError('a.*.com'), /wildcard is allowed only as the whole first label/);
  assert.match(syntaxError('*github.com'), /wildcard/);
  assert.match(syntaxError('*.com'), /whole top-level domain/);
  assert.match(syntaxError('*.10.0.0.1'), /not an address/);
  assert.match(syntaxError('::1'), /more than one colon/);
  assert.match(syntaxError('[::1'), /never closes/);
  assert.match(syntaxError('[nothex]'), /not an IPv6 address/);
  assert.match(syntaxError('[::1]x'), /not :port/);
  assert.match(syntaxError('[fe80::1%eth0]'), /has a zone/);
  assert.match(syntaxError('127.1'), /four decimal parts/);
  assert.match(syntaxError('0x7f.0.0.1'), /four decimal parts/);
  assert.match(syntaxError('2130706433'), /four decimal parts/);
  assert.match(syntaxError('a..b'), /not a host name/);
  assert.match(syntaxError('xn--.a'), /"xn--.a" is not a host name/);
  assert.match(syntaxError('xn--abc.com'), /not a host name/);
  // Not punycode of any name, on every Node (Node 20 read the first as `zz`, Node 24 passed both through).
  assert.match(syntaxError('xn--zz-.com'), /not valid punycode/);
  assert.match(syntaxError('a.xn--a.com'), /not a host name/);
  assert.match(syntaxError('ex ample.com'), /no path, user or spaces/);
  assert.match(syntaxError(`${'a'.repeat(64)}.com`), /1 to 63 long/);
  assert.match(syntaxError(`${'a.'.repeat(127)}com`), /longer than a host name/);
});

test('a host alone allows ports 80 and 443; host:port that port only', () => {
  assert.ok(allows('example.com', 'example.com:443'));
  assert.ok(allows('example.com', 'example.com:80'));
  assert.not.ok(allows('example.com', 'example.com:8080'));
  assert.ok(allows('example.com:8080', 'example.com:8080'));
  assert.not.ok(allows('example.com:8080', 'example.com:443'));
});

test('names compare without case and trailing dot; other names, and names that only end alike, are refused', () => {
  assert.ok(allows('example.com', 'EXAMPLE.com.:443'));
  assert.not.ok(allows('example.com', 'www.example.com:443'));
  assert.not.ok(allows('example.com', 'badexample.com:443'));
  assert.not.ok(allows('example.com', 'example.com.evil.net:443'));
});

test('*.domain allows every name below the domain, not the domain itself nor a name that merely ends in it', () => {
  assert.ok(allows('*.example.com', 'a.example.com:443'));
  assert.ok(allows('*.example.com', 'a.b.example.com:80'));
  assert.not.ok(allows('*.example.com', 'example.com:443'));
  assert.not.ok(allows('*.example.com', 'badexample.com:443'));
  assert.not.ok(allows('*.example.com:8443', 'a.example.com:443'));
  assert.ok(allows('*.example.com:8443', 'a.example.com:8443'));
});

test('an address is allowed only when the list names that address: never through a name, never by another spelling', () => {
  assert.not.ok(allows('localhost:8080', '127.0.0.1:8080'));
  assert.ok(allows('127.0.0.1:8080', '127.0.0.1:8080'));
  assert.not.ok(allows('127.0.0.1:8080', 'localhost:8080'));
  assert.ok(allows('[::1]:8080', '[0::1]:8080'));
  assert.is(parseEgressTarget('127.1:8080', null), '"127.1" looks like an address but is not four decimal parts (write IPv4 as 127.0.0.1)');
  assert.type(parseEgressTarget('2130706433:80', null), 'string');
  assert.match(String(parseEgressTarget('[fe80::1%eth0]:80', null)), /has a zone/);
});

test('a request target needs a port unless a default is given, and never carries user information', () => {
  assert.equal(target('example.com', 80), { host: 'example.com', port: 80, ip: false });
  assert.match(String(parseEgressTarget('example.com', null)), /needs a port/);
  assert.match(String(parseEgressTarget('user:pw@example.com:443', null)), /user information/);
  assert.match(String(parseEgressTarget('example.com:443:1', null)), /more than one colon/);
});

// An `xn--` label is an A-label: punycode that must decode, so most random ones are not host names (the
// example above shows they are refused); the properties draw plain LDH labels.
const label = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/).filter((l) => !l.startsWith('xn--'));
const hostName = fc.array(label, { minLength: 2, maxLength: 4 }).map((labels) => labels.join('.'));
const port = fc.integer({ min: 1, max: 65535 });

test('property: every parsed list parses again to itself (canonical form is a fixed point)', () => {
  const entry = fc.tuple(fc.boolean(), hostName, fc.option(port)).map(([wild, host, p]) => `${wild ? '*.' : ''}${host}${p === null ? '' : `:${p}`}`);
  fc.assert(fc.property(fc.array(entry, { minLength: 1, maxLength: 6 }), (entries) => {
    const once = parseEgressAllowList(entries.map((e) => e.toUpperCase()).join(','));
    assert.equal(parseEgressAllowList(once.join(',')), once);
  }));
});

test('property: any text either parses or throws EgressSyntaxError, never anything else', () => {
  fc.assert(fc.property(fc.string({ maxLength: 60 }), (text) => {
    try {
      parseEgressAllowList(text);
    } catch (err) {
      assert.instance(err, EgressSyntaxError);
    }
  }));
});

test('property: a host is allowed by its own entry, and not by an entry for any other host', () => {
  fc.assert(fc.property(hostName, hostName, port, (allowed, other, p) => {
    fc.pre(allowed !== other);
    assert.ok(allows(`${allowed}:${p}`, `${allowed}:${p}`));
    assert.not.ok(allows(`${allowed}:${p}`, `${other}:${p}`));
    assert.not.ok(allows(`${allowed}:${p}`, `${other}.${allowed}:${p}`), 'a subdomain needs *.');
    assert.ok(allows(`*.${allowed}:${p}`, `${other}.${allowed}:${p}`));
    assert.not.ok(allows(`*.${allowed}:${p}`, `${other}${allowed}:${p}`), 'no dot, no subdomain');
  }));
});

test.run();
