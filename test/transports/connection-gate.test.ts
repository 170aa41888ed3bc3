// The connection gate's accounting and its log, without sockets: the counts never pass either limit
// whatever the order of opens and closes (a property), and a burst of refusals is one log line at once
// and one count per window after it, on a fake clock. A peer's connections (another node of the cluster,
// known by address) count against the total only: a property over generated peer sets, and real sockets
// from loopback addresses through `gateConnections`; so do a trusted proxy's (`--trusted-proxy`), from
// the moment the gate is made. The sockets of a server process:
// test/e2e/connection-limits.test.ts and test/e2e/cluster-peer-connections.test.ts.

import { createServer } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../src/time/fake-clock.ts';
import { ConnectionCounts, gateConnections, type RefusalReport, RefusalLog } from '../../src/transports/connection-gate.ts';
import { guarded, pollUntil } from '../hang-guard.ts';

const counts = suite('ConnectionCounts');

counts('admits up to the per-address limit, then refuses that address only', () => {
  const c = new ConnectionCounts({ maxConnections: 10, maxPerAddress: 2 });
  assert.is(c.admit('10.0.0.1'), null);
  assert.is(c.admit('10.0.0.1'), null);
  assert.equal(c.admit('10.0.0.1'), { limit: 'connections per address', max: 2 });
  assert.is(c.admit('10.0.0.2'), null, 'another address is still admitted');
  assert.is(c.total, 3, 'a refusal is not counted');
});

counts('refuses every address once the total is reached, and admits again after a close', () => {
  const c = new ConnectionCounts({ maxConnections: 2, maxPerAddress: 2 });
  assert.is(c.admit('a'), null);
  assert.is(c.admit('b'), null);
  assert.equal(c.admit('c'), { limit: 'connections', max: 2 });
  c.release('a');
  assert.is(c.admit('c'), null);
  assert.is(c.from('a'), 0);
});

counts('a release of an address with nothing open changes nothing', () => {
  const c = new ConnectionCounts({ maxConnections: 2, maxPerAddress: 1 });
  c.release('a');
  assert.is(c.total, 0);
  assert.is(c.admit('a'), null);
});

counts('refuses limits that are not positive whole numbers', () => {
  assert.throws(() => new ConnectionCounts({ maxConnections: 0, maxPerAddress: 1 }), /maxConnections/);
  assert.throws(() => new ConnectionCounts({ maxConnections: 1, maxPerAddress: 1.5 }), /maxPerAddress/);
});

counts('whatever the opens and closes, neither limit is passed and the counts add up (property)', () => {
  const step = fc.record({ open: fc.boolean(), address: fc.constantFrom('a', 'b', 'c', 'd') });
  fc.assert(fc.property(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 4 }), fc.array(step, { maxLength: 200 }), (max, perAddress, steps) => {
    const c = new ConnectionCounts({ maxConnections: max, maxPerAddress: perAddress });
    const open = new Map<string, number>();
    for (const s of steps) {
      if (s.open) {
        const refusal = c.admit(s.address);
        const had = open.get(s.address) ?? 0;
        const total = [...open.values()].reduce((x, y) => x + y, 0);
        // Refused exactly when a limit is reached, never otherwise.
        assert.is(refusal !== null, total >= max || had >= perAddress);
        if (refusal === null) open.set(s.address, had + 1);
      } else if ((open.get(s.address) ?? 0) > 0) {
        c.release(s.address);
        open.set(s.address, (open.get(s.address) ?? 0) - 1);
      }
      const total = [...open.values()].reduce((x, y) => x + y, 0);
      assert.is(c.total, total);
      assert.ok(c.total <= max);
      for (const [a, n] of open) assert.is(c.from(a), n);
    }
  }));
});

counts('a peer\'s connections pass the per-address limit, count in the total, and leave every other address its own limit (property)', () => {
  const addresses = ['a', 'b', 'c', 'd', 'e'];
  const step = fc.record({ open: fc.boolean(), address: fc.constantFrom(...addresses) });
  fc.assert(fc.property(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 3 }), fc.subarray(addresses), fc.array(step, { maxLength: 200 }), (max, perAddress, peerList, steps) => {
    const peers = new Set(peerList);
    const c = new ConnectionCounts({ maxConnections: max, maxPerAddress: perAddress });
    const open = new Map<string, number>();
    const sum = () => [...open.values()].reduce((x, y) => x + y, 0);
    for (const s of steps) {
      const peer = peers.has(s.address);
      const had = open.get(s.address) ?? 0;
      if (s.open) {
        const refusal = c.admit(s.address, peer);
        // A peer is refused only at the total; any other address at the total or at its own limit.
        assert.is(refusal !== null, sum() >= max || (!peer && had >= perAddress));
        if (refusal === null) open.set(s.address, had + 1);
      } else if (had > 0) {
        c.release(s.address, peer);
        open.set(s.address, had - 1);
      }
      assert.is(c.total, sum());
      assert.ok(c.total <= max);
      let fromPeers = 0;
      for (const [a, n] of open) {
        if (peers.has(a)) fromPeers += n;
        else {
          assert.is(c.from(a), n);
          assert.ok(n <= perAddress);
        }
      }
      assert.is(c.fromPeers, fromPeers);
    }
  }));
});

counts('a peer\'s release does not free another address\'s place, and more releases than admissions change nothing', () => {
  const c = new ConnectionCounts({ maxConnections: 10, maxPerAddress: 1 });
  assert.is(c.admit('peer', true), null);
  assert.is(c.admit('peer', true), null);
  assert.is(c.admit('client'), null);
  assert.ok(c.admit('client') !== null);
  c.release('peer', true);
  assert.ok(c.admit('client') !== null, 'still one open from client');
  c.release('peer', true);
  c.release('peer', true);
  assert.is(c.total, 1);
  assert.is(c.fromPeers, 0);
});

counts.run();

const log = suite('RefusalLog');

log('a burst is one line at once, then one count per window, then nothing once quiet', () => {
  const clock = new FakeClock();
  const reports: RefusalReport[] = [];
  const l = new RefusalLog(clock, (r) => reports.push(r), 1000);
  for (let i = 0; i < 50; i++) l.refused('10.0.0.1', { limit: 'connections', max: 5 });
  assert.equal(reports, [{ kind: 'refused', address: '10.0.0.1', refusal: { limit: 'connections', max: 5 } }], 'the first refusal at once, alone');
  clock.advance(1000);
  assert.equal(reports.slice(1), [{ kind: 'more refused', count: 49, windowMs: 1000 }]);
  l.refused('10.0.0.2', { limit: 'connections per address', max: 2 });
  clock.advance(1000);
  assert.equal(reports.slice(2), [{ kind: 'more refused', count: 1, windowMs: 1000 }]);
  clock.advance(1000);
  assert.is(reports.length, 3, 'a quiet window logs nothing and ends the burst');
  l.refused('10.0.0.3', { limit: 'connections', max: 5 });
  assert.equal(reports[3], { kind: 'refused', address: '10.0.0.3', refusal: { limit: 'connections', max: 5 } }, 'the next burst starts with a line at once');
  l.stop();
  clock.advance(5000);
  assert.is(reports.length, 4, 'stopped: no timer left');
});

log.run();

const sockets = suite('gateConnections on real sockets');

/** A connection from `from`: 'admitted' when the server answers a request on it, 'refused' on the gate's 503. */
async function attempt(port: number, from: string, opened: net.Socket[]): Promise<'admitted' | 'refused'> {
  const socket = net.connect({ port, host: '127.0.0.1', localAddress: from });
  opened.push(socket);
  let text = '';
  socket.on('data', (d: Buffer) => (text += d.toString()));
  socket.on('error', () => {});
  await guarded(new Promise<void>((resolve, reject) => socket.once('connect', () => resolve()).once('error', reject)), `connecting from ${from}`);
  socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  const head = await pollUntil(`an answer to ${from}`, () => (text.includes('\r\n\r\n') ? text : null), 10_000, 5);
  if (head.startsWith('HTTP/1.1 200 ')) return 'admitted';
  assert.match(head, /^HTTP\/1\.1 503 /, head);
  return 'refused';
}

sockets('connections from a trusted peer address pass the per-address cap (not the total); other addresses are capped; peers set later apply to new connections only', async () => {
  const server = createServer((_req, res) => res.end('ok'));
  const gate = gateConnections(server, { maxConnections: 8, maxPerAddress: 2 }, new FakeClock(), () => {});
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  const opened: net.Socket[] = [];
  try {
    // Before any peer is known, 127.0.0.2 is an address like any other.
    assert.is(await attempt(port, '127.0.0.2', opened), 'admitted');
    assert.is(await attempt(port, '127.0.0.2', opened), 'admitted');
    assert.is(await attempt(port, '127.0.0.2', opened), 'refused');
    gate.trustPeers(new Set(['127.0.0.2']));
    for (let i = 0; i < 3; i++) assert.is(await attempt(port, '127.0.0.2', opened), 'admitted', `peer connection ${i + 3}`);
    // An ordinary client keeps its own cap beside the peer.
    assert.is(await attempt(port, '127.0.0.3', opened), 'admitted');
    assert.is(await attempt(port, '127.0.0.3', opened), 'admitted');
    assert.is(await attempt(port, '127.0.0.3', opened), 'refused');
    // 2 + 3 + 2 open: one more place in the total, which binds the peer too.
    assert.is(await attempt(port, '127.0.0.2', opened), 'admitted');
    assert.is(await attempt(port, '127.0.0.2', opened), 'refused');
    assert.is(gate.counts.total, 8);
  } finally {
    for (const s of opened) s.destroy();
    gate.stop();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

sockets('a trusted proxy\'s connections pass the per-address cap (every client behind it shares its address) and are bound by the total; other addresses, loopback ones included, keep their cap', async () => {
  const server = createServer((_req, res) => res.end('ok'));
  const gate = gateConnections(server, { maxConnections: 8, maxPerAddress: 2, trustedProxies: new Set(['127.0.0.2']) }, new FakeClock(), () => {});
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  const opened: net.Socket[] = [];
  try {
    // The proxy: past the per-address cap of 2 from its first connections on.
    for (let i = 0; i < 5; i++) assert.is(await attempt(port, '127.0.0.2', opened), 'admitted', `proxy connection ${i + 1}`);
    assert.is(gate.counts.from('127.0.0.2'), 0, 'not counted under its address');
    assert.is(gate.counts.fromPeers, 5);
    // A local client beside the proxy is capped as before.
    assert.is(await attempt(port, '127.0.0.1', opened), 'admitted');
    assert.is(await attempt(port, '127.0.0.1', opened), 'admitted');
    assert.is(await attempt(port, '127.0.0.1', opened), 'refused');
    // 5 + 2 open: one more place in the total, which binds the proxy too.
    assert.is(await attempt(port, '127.0.0.2', opened), 'admitted');
    assert.is(await attempt(port, '127.0.0.2', opened), 'refused');
    assert.is(gate.counts.total, 8);
    // A closed proxy connection frees its place in the total.
    const first = opened[0] as net.Socket;
    first.destroy();
    await pollUntil('the closed proxy connection released', () => (gate.counts.total === 7 ? true : null), 10_000, 5);
    assert.is(await attempt(port, '127.0.0.2', opened), 'admitted');
  } finally {
    for (const s of opened) s.destroy();
    gate.stop();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

sockets.run();
