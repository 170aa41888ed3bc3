// A forwarded reply moves at the pace of the client in front (src/cluster/forward.ts): over real sockets on
// 127.0.0.1, a home streaming 48 MiB of SSE as fast as its connection takes it, a front node forwarding a
// GET to it, and a client that reads only while the home is held up. The front keeps no more than its
// socket's share of the reply unsent: it read the home's reply as fast as the home wrote it and queued
// all of it for a client that read nothing, so a slow reader of a forwarded stream grew the front
// without bound (neither the send timeout, which a trickle of reading defeats, nor the SSE backlog
// limit, which the home applies to its connection to the front, judged it).

import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type ForwardOutcome, forwardRequest } from '../../src/cluster/forward.ts';
import { createLogger } from '../../src/log/logger.ts';
import { guarded } from '../hang-guard.ts';

const TOTAL_BYTES = 48 * 1024 * 1024;
const EVENT = `data: ${'x'.repeat(64 * 1024 - 8)}\n\n`;
/** What the front may hold unsent: its socket's buffer and a chunk or two in flight, nowhere near the reply. */
const FRONT_BOUND_BYTES = 1024 * 1024;

test('a client that reads only when the home is held up: the front never holds more than its socket\'s share of the reply', async () => {
  /** Set while the home waits for its connection to drain: the only time the client reads. */
  let homeHeld = false;
  let onHeld = (): void => undefined;
  let homeWrote = 0;
  const home = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const more = (): void => {
      while (homeWrote < TOTAL_BYTES) {
        homeWrote += EVENT.length;
        if (!res.write(EVENT)) {
          homeHeld = true;
          onHeld();
          res.once('drain', () => {
            homeHeld = false;
            more();
          });
          return;
        }
      }
      res.end();
    };
    more();
  });
  await new Promise<void>((r) => home.listen(0, '127.0.0.1', () => r()));
  const homeUrl = `http://127.0.0.1:${(home.address() as AddressInfo).port}`;

  let frontMax = 0;
  const outcomes: ForwardOutcome[] = [];
  const front = http.createServer((req, res) => {
    // What the front holds for its client, looked at every time it writes.
    const write = res.write.bind(res) as (chunk: string) => boolean;
    res.write = ((chunk: string) => {
      const ok = write(chunk);
      frontMax = Math.max(frontMax, res.writableLength);
      return ok;
    }) as typeof res.write;
    const request = { method: req.method ?? 'GET', header: (name: string) => { const v = req.headers[name]; return Array.isArray(v) ? v[0] : v; } };
    void forwardRequest(homeUrl, request, null, res, 'front', createLogger('error')).then((o) => outcomes.push(o));
  });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', () => r()));
  const frontPort = (front.address() as AddressInfo).port;

  const client = net.connect(frontPort, '127.0.0.1');
  client.pause();
  let received = 0;
  const done = new Promise<void>((resolve) => client.once('end', () => resolve()));
  const pump = (): void => {
    while (homeHeld || homeWrote >= TOTAL_BYTES) {
      const chunk = client.read() as Buffer | null;
      if (chunk === null) return;
      received += chunk.length;
    }
  };
  client.on('readable', pump);
  onHeld = pump;
  client.write(`GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:${frontPort}\r\nAccept: text/event-stream\r\nConnection: close\r\n\r\n`);
  try {
    await guarded(done, 'the whole reply reaching the client', 60_000);
    assert.ok(received > TOTAL_BYTES, `the client got the whole reply (${received} bytes)`);
    assert.ok(frontMax <= FRONT_BOUND_BYTES, `the front held up to ${frontMax} bytes for its client (bound ${FRONT_BOUND_BYTES})`);
    assert.equal(outcomes, [{ kind: 'done' }]);
  } finally {
    client.destroy();
    front.closeAllConnections();
    home.closeAllConnections();
    await new Promise<void>((r) => front.close(() => r()));
    await new Promise<void>((r) => home.close(() => r()));
  }
});

test.run();
