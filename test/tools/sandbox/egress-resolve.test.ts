// An allowed name may not lead the egress proxy to a special-purpose address (the server's own loopback,
// private networks, the cloud metadata service…): the lookup the connection is given, over answers the
// test chooses, and then the proxy over its real socket with upstream listeners on 127.0.0.1 and 127.0.0.2.

import type { LookupAddress, LookupOptions } from 'node:dns';
import { type AddressInfo, createServer, isIPv6, type LookupFunction, type Server, type Socket } from 'node:net';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Logger } from '../../../src/log/logger.ts';
import { type EgressTarget, parseEgressRule } from '../../../src/tools/sandbox/egress-allow.ts';
import { checkedLookup, SpecialAddressError } from '../../../src/tools/sandbox/egress-resolve.ts';
import { specialUse } from '../../../src/tools/sandbox/special-addresses.ts';
import { exchange, proxyFor, RawClient } from './egress-fixtures.ts';

type Answer = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
type Logged = [level: string, message: string, data: Record<string, unknown>];

const entry = (address: string): LookupAddress => ({ address, family: isIPv6(address) ? 6 : 4 });

/** A resolver that answers each call with the next of `answers` (the last one again past the end), and counts the calls. */
function scriptedResolver(...answers: string[][]) {
  const asked: { hostname: string; options: LookupOptions }[] = [];
  const lookup = ((hostname: string, options: LookupOptions, callback: Answer) => {
    const answer = answers[Math.min(asked.length, answers.length - 1)] as string[];
    asked.push({ hostname, options });
    setImmediate(() => callback(null, answer.map(entry)));
  }) as LookupFunction;
  return { lookup, asked };
}

/** Runs checkedLookup once for `target` over `answer` and `allow`, as net.connect would (`all` or not). */
function check(target: EgressTarget, allow: string[], answer: string[], all = true) {
  const dns = scriptedResolver(answer);
  const logged: Logged[] = [];
  const lookup = checkedLookup(target, allow.map(parseEgressRule), dns.lookup, (...line) => logged.push(line));
  return new Promise<{ err: NodeJS.ErrnoException | null; result: string | LookupAddress[]; family?: number; logged: Logged[]; calls: number }>((resolve) => {
    lookup(target.host, { all }, (err, result, family) => resolve({ err, result, family, logged, calls: dns.asked.length }));
  });
}

const web443: EgressTarget = { host: 'web.example', port: 443, ip: false };

test('ordinary addresses are handed on; special ones beside them are dropped (logged at debug); one resolver call, for all addresses', async () => {
  const out = await check(web443, ['web.example'], ['93.184.216.34', '127.0.0.1', '::1', '2606:4700::1111', '169.254.169.254']);
  assert.is(out.err, null);
  assert.equal(out.result, [entry('93.184.216.34'), entry('2606:4700::1111')]);
  assert.is(out.calls, 1);
  assert.equal(out.logged, [['debug', 'egress skipped special-purpose addresses', { target: 'web.example:443', addresses: ['127.0.0.1', '::1', '169.254.169.254'] }]]);
  const first = await check(web443, ['web.example'], ['10.0.0.1', '93.184.216.34'], false);
  assert.equal([first.result, first.family], ['93.184.216.34', 4], 'net.connect asking for one address gets the first that passed');
});

test('only special addresses: a SpecialAddressError (403 text naming each address, its range and the entry that opens it), logged once for the operator', async () => {
  const out = await check(web443, ['web.example'], ['127.0.0.1', '::ffff:169.254.169.254', 'fe80::1%eth0']);
  assert.instance(out.err, SpecialAddressError);
  assert.is(out.err?.code, 'ESPECIALADDRESS');
  const text = out.err?.message ?? '';
  assert.match(text, /web\.example:443 is on the allow list, but it resolves only to special-purpose addresses/);
  assert.match(text, /127\.0\.0\.1 \(loopback, 127\.0\.0\.0\/8\)/);
  assert.match(text, /::ffff:169\.254\.169\.254 \(link-local \(cloud metadata services\), 169\.254\.0\.0\/16, as IPv4-mapped ::ffff:0:0\/96\)/);
  assert.match(text, /fe80::1%eth0 \(link-local, fe80::\/10\)/);
  assert.match(text, /--bash-network allow=…,127\.0\.0\.1,\[::ffff:169\.254\.169\.254\]\n$/, 'a zoned address cannot be listed, so it is not offered');
  assert.is(out.logged.length, 1);
  assert.equal(out.logged[0]?.slice(0, 2), ['info', 'egress refused: the name resolves to special-purpose addresses only']);
  const other = await check({ host: 'db.example', port: 5432, ip: false }, ['db.example:5432'], ['10.1.2.3']);
  assert.match(other.err?.message ?? '', /allow=…,10\.1\.2\.3:5432\n$/, 'a port other than 80 and 443 goes into the entry');
});

test('a special address the list names itself, on the request\'s port, is the operator\'s opt-in; on another port it is not', async () => {
  assert.equal((await check(web443, ['web.example', '10.1.2.3'], ['10.1.2.3'])).result, [entry('10.1.2.3')]);
  assert.equal((await check(web443, ['web.example', '[fd00::1]:443'], ['fd00::1', '127.0.0.1'])).result, [entry('fd00::1')]);
  assert.instance((await check(web443, ['web.example', '10.1.2.3:22'], ['10.1.2.3'])).err, SpecialAddressError);
  assert.instance((await check(web443, ['web.example', '127.0.0.1'], ['::ffff:127.0.0.1'])).err, SpecialAddressError, 'another spelling is another entry');
  assert.instance((await check(web443, ['web.example', '127.0.0.1'], ['127.0.0.2'])).err, SpecialAddressError, 'an address opens itself, not its range');
});

test('an empty answer is a name that does not resolve (ENOTFOUND), not a refusal', async () => {
  const out = await check(web443, ['web.example'], []);
  assert.is(out.err?.code, 'ENOTFOUND');
  assert.equal(out.logged, []);
});

test('a resolver error passes through as it is', async () => {
  const failing = ((_h: string, _o: LookupOptions, callback: Answer) => {
    const err: NodeJS.ErrnoException = new Error('getaddrinfo ENOTFOUND');
    err.code = 'ENOTFOUND';
    callback(err, []);
  }) as LookupFunction;
  const lookup = checkedLookup(web443, [parseEgressRule('web.example')], failing, () => undefined);
  const code = await new Promise((resolve) => lookup('web.example', { all: true }, (err) => resolve(err?.code)));
  assert.is(code, 'ENOTFOUND');
});

const special = fc.constantFrom('127.0.0.1', '127.8.9.10', '0.0.0.0', '10.0.0.1', '172.16.5.4', '192.168.0.1', '100.64.1.1', '169.254.169.254',
  '224.0.0.1', '255.255.255.255', '::1', '::', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '64:ff9b::7f00:1', 'fd12::1', 'fe80::1', 'ff02::1');
const ordinary = fc.constantFrom('93.184.216.34', '8.8.8.8', '1.1.1.1', '140.82.112.3', '2606:4700::1111', '2a00:1450:4001::200e', '::ffff:8.8.8.8', '64:ff9b::808:808');

test('property: whatever mix a name resolves to, the connection gets exactly its ordinary and listed addresses, in order, or a 403 when none is left', async () => {
  await fc.assert(fc.asyncProperty(fc.array(fc.oneof(special, ordinary), { minLength: 1, maxLength: 6 }), fc.subarray(['10.0.0.1', '[::1]', '127.0.0.1:443']), async (answer, listed) => {
    const out = await check(web443, ['web.example', ...listed], answer);
    const expected = answer.filter((a) => specialUse(a) === null || listed.includes(a) || listed.includes(`[${a}]`) || listed.includes(`${a}:443`));
    if (expected.length === 0) assert.instance(out.err, SpecialAddressError);
    else assert.equal(out.result, expected.map(entry));
    assert.is(out.calls, 1);
  }), { numRuns: 300 });
});

// ---- the proxy itself, over its socket ----

interface Listener {
  readonly port: number;
  readonly connections: () => number;
  close(): Promise<void>;
}

/** A TCP listener on `host` (on `port`, or a free one) that answers `name` and counts who came. */
async function listener(host: string, name: string, port = 0): Promise<Listener> {
  let count = 0;
  const open = new Set<Socket>();
  const server: Server = createServer((socket) => {
    count += 1;
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.end(`hello from ${name}\n`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => count,
    close: () => new Promise<void>((resolve) => {
      for (const socket of open) socket.destroy();
      server.close(() => resolve());
    }),
  };
}

function recordingLogger(): Logger & { lines: Logged[] } {
  const lines: Logged[] = [];
  return { level: 'debug', lines, log: (level, message, data = {}) => lines.push([level, message, data]) };
}

test('an allowed name that resolves to the loopback listener (or any special form of it) gets 403 by CONNECT and by plain HTTP; the listener sees nobody', async () => {
  const loop = await listener('127.0.0.1', 'loopback');
  try {
    for (const address of ['127.0.0.1', '0.0.0.0', '::ffff:127.0.0.1', '::1', '169.254.169.254', '10.0.0.1']) {
      const dns = scriptedResolver([address]);
      const logger = recordingLogger();
      const home = await proxyFor([`evil.example:${loop.port}`], { lookup: () => dns.lookup, logger });
      try {
        const tunnel = await exchange(home.proxy.socketPath, `CONNECT evil.example:${loop.port} HTTP/1.1\r\n\r\n`);
        assert.match(tunnel, /^HTTP\/1\.1 403 Forbidden\r\n[^]*resolves only to special-purpose addresses/, address);
        assert.ok(tunnel.includes(`  ${address} (`), tunnel);
        const plain = await exchange(home.proxy.socketPath, `GET http://evil.example:${loop.port}/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
        assert.match(plain, /^HTTP\/1\.1 403 Forbidden\r\n[^]*resolves only to special-purpose addresses/, address);
        const refusals = logger.lines.filter(([level, message]) => level === 'info' && message.startsWith('egress refused'));
        assert.is(refusals.length, 2, 'one line per refused request');
        assert.equal(refusals[0]?.[2].target, `evil.example:${loop.port}`);
      } finally {
        await home.close();
      }
    }
    assert.is(loop.connections(), 0);
  } finally {
    await loop.close();
  }
});

test('the same listener is reached when the operator names its address too', async () => {
  const loop = await listener('127.0.0.1', 'loopback');
  const home = await proxyFor([`evil.example:${loop.port}`, `127.0.0.1:${loop.port}`], { lookup: () => scriptedResolver(['127.0.0.1']).lookup });
  try {
    assert.match(await exchange(home.proxy.socketPath, `CONNECT evil.example:${loop.port} HTTP/1.1\r\n\r\n`), /^HTTP\/1\.1 200 [^]*hello from loopback\n$/);
    assert.is(loop.connections(), 1);
  } finally {
    await home.close();
    await loop.close();
  }
});

test('a name answering several addresses is connected to one that passed, never to a dropped one', async () => {
  const dropped = await listener('127.0.0.1', 'dropped');
  const kept = await listener('127.0.0.2', 'kept', dropped.port);
  const home = await proxyFor([`multi.example:${kept.port}`, `127.0.0.2:${kept.port}`], { lookup: () => scriptedResolver(['127.0.0.1', '127.0.0.2', '::1']).lookup });
  try {
    for (let i = 0; i < 3; i++) {
      assert.match(await exchange(home.proxy.socketPath, `CONNECT multi.example:${kept.port} HTTP/1.1\r\n\r\n`), /^HTTP\/1\.1 200 [^]*hello from kept\n$/);
    }
    assert.is(dropped.connections(), 0);
  } finally {
    await home.close();
    await kept.close();
    await dropped.close();
  }
});

test('DNS rebinding: a resolver that changes its answer after the first one cannot move the connection; each request resolves once', async () => {
  const target = await listener('127.0.0.1', 'rebound');
  const checked = await listener('127.0.0.2', 'checked', target.port);
  // First answer: the opted-in 127.0.0.2; every later one: 127.0.0.1, which is not opted in.
  const dns = scriptedResolver(['127.0.0.2'], ['127.0.0.1']);
  const home = await proxyFor([`rebind.example:${target.port}`, `127.0.0.2:${target.port}`], { lookup: () => dns.lookup });
  try {
    const client = await RawClient.open(home.proxy.socketPath);
    try {
      client.socket.write(`CONNECT rebind.example:${target.port} HTTP/1.1\r\n\r\n`);
      assert.match(await client.until('hello from checked\n'), /^HTTP\/1\.1 200 [^]*hello from checked\n$/);
    } finally {
      client.destroy();
    }
    assert.is(dns.asked.length, 1, 'one lookup for the request: the address checked is the address connected');
    assert.equal(dns.asked[0]?.hostname, 'rebind.example');
    assert.match(await exchange(home.proxy.socketPath, `CONNECT rebind.example:${target.port} HTTP/1.1\r\n\r\n`), /^HTTP\/1\.1 403 [^]*127\.0\.0\.1 \(loopback/);
    assert.is(dns.asked.length, 2);
    assert.is(target.connections(), 0);
  } finally {
    await home.close();
    await checked.close();
    await target.close();
  }
});

test.run();
