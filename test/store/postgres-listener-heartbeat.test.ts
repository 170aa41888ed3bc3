// A node's LISTEN connection that the network drops without a reset (a NAT or firewall forgetting an idle
// connection, a cut) is noticed and opened again: a real PostgreSQL behind a TCP relay on 127.0.0.1 that,
// on the test's word, stops passing bytes on the connections it holds without closing them (new ones
// still pass). The listener's heartbeat gets no answer, it connects again, says so (`onConnected`, so
// waiters re-read the store) and hears the notifications sent after. It stayed "listening" on the
// silent connection for good: the node heard no other node again, and nothing was logged.
// Skipped, with the reason, without PostgreSQL binaries.

import net, { type AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PostgresListener } from '../../src/store/postgres-listener.ts';
import { guarded } from '../hang-guard.ts';
import { findPostgres, postgresForSuite } from './postgres-server.ts';

const NAME = 'a LISTEN connection the network stops answering is noticed by its heartbeat and opened again; notifications after it are heard';
const HEARTBEAT_MS = 300;
const found = findPostgres();

/** A TCP relay to `port`; `silence()` stops every connection it holds passing bytes, leaving them open. */
async function startRelay(port: number) {
  const pairs = new Set<[net.Socket, net.Socket]>();
  const silent = new Set<[net.Socket, net.Socket]>();
  const server = net.createServer((inbound) => {
    const outbound = net.connect(port, '127.0.0.1');
    const pair: [net.Socket, net.Socket] = [inbound, outbound];
    pairs.add(pair);
    for (const s of pair) s.on('error', () => { inbound.destroy(); outbound.destroy(); });
    inbound.on('close', () => { outbound.destroy(); pairs.delete(pair); });
    outbound.on('close', () => inbound.destroy());
    inbound.pipe(outbound);
    outbound.pipe(inbound);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as AddressInfo).port,
    silence() {
      for (const [inbound, outbound] of pairs) {
        inbound.unpipe(outbound);
        outbound.unpipe(inbound);
        inbound.pause();
        outbound.pause();
        silent.add([inbound, outbound]);
      }
      pairs.clear();
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
    destroyAll() {
      for (const [a, b] of [...pairs, ...silent]) { a.destroy(); b.destroy(); }
    },
  };
}

if (found.ok) {
  const postgres = postgresForSuite(test, found);

  test(NAME, async () => {
    const pg = postgres();
    const url = new URL(await pg.createDatabase());
    const database = url.pathname.slice(1);
    const relay = await startRelay(pg.port);
    url.host = `127.0.0.1:${relay.port}`;
    const heard: string[] = [];
    let connected = 0;
    let onConnected = (): void => undefined;
    const errors: string[] = [];
    const listener = new PostgresListener({
      connection: url.toString(),
      channels: new Map([['advwire_test', (payload: string) => heard.push(payload)]]),
      onConnected: () => {
        connected++;
        onConnected();
      },
      onError: (err) => errors.push(err.message),
      heartbeatMs: HEARTBEAT_MS,
    });
    try {
      await guarded(listener.ready, 'the first LISTEN');
      assert.is(connected, 1);
      const again = new Promise<void>((resolve) => (onConnected = resolve));
      relay.silence();
      await guarded(again, 'the LISTEN connection opened again after its heartbeat went unanswered');
      assert.ok(errors.some((e) => /heartbeat/.test(e)), `the loss is reported: ${JSON.stringify(errors)}`);
      const notified = new Promise<void>((resolve) => {
        const poll = () => (heard.includes('after') ? resolve() : setImmediate(poll));
        poll();
      });
      await pg.query(database, "SELECT pg_notify('advwire_test', 'after')");
      await guarded(notified, 'the notification sent after the reconnection');
    } finally {
      // The relay's connections first: ending a connection that gets no answer waits for its close.
      relay.destroyAll();
      await listener.close();
      await relay.close();
    }
  });

  test('a LISTEN connection the network stops answering does not hold the listener\'s close (a node\'s stop)', async () => {
    const pg = postgres();
    const url = new URL(await pg.createDatabase());
    const relay = await startRelay(pg.port);
    url.host = `127.0.0.1:${relay.port}`;
    const listener = new PostgresListener({
      connection: url.toString(), channels: new Map([['advwire_test', () => undefined]]),
      onConnected: () => undefined, onError: () => undefined, heartbeatMs: 2000,
    });
    try {
      await guarded(listener.ready, 'the first LISTEN');
      relay.silence();
      await guarded(listener.close(), 'the close of a listener whose database went silent');
    } finally {
      relay.destroyAll();
      await relay.close();
    }
  });
} else {
  console.log(`  (skipped: the LISTEN heartbeat test needs a PostgreSQL server: ${found.reason})`);
  test.skip(NAME, () => undefined);
  test.skip('a LISTEN connection the network stops answering does not hold the listener\'s close (a node\'s stop)', () => undefined);
}

test.run();
