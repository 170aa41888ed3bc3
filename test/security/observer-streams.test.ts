// Rule (security review of the observer): the live event streams are a shared pool (MAX_OBSERVER_STREAMS)
// no one viewer can take whole. A viewer — a token principal, or a client address where the observer
// needs no token — holds at most MAX_OBSERVER_STREAMS_PER_VIEWER at once (429 with Retry-After past
// it, others unaffected), and a client that reads only a trickle, so the send timeout never ends its
// connection, loses its stream once it has not caught up for OBSERVER_STREAM_LAG_MS.
//
// Caller classes: observer token principals; anonymous local processes (loopback without tokens), told
// apart by address. Real sockets on 127.0.0.1 against ObserverRoutes on a node:http server.

import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BearerAuthority } from '../../src/auth/bearer-authority.ts';
import { parseTokenList, TokenTable } from '../../src/auth/tokens.ts';
import { MAX_OBSERVER_STREAMS_PER_VIEWER, OBSERVER_STREAM_RETRY_AFTER_SECONDS } from '../../src/limits.ts';
import { ObserverRoutes, type ObserverRoutesOptions } from '../../src/observer/observer-http.ts';
import type { ObserverStreamLimits } from '../../src/observer/observer-streams.ts';
import { ServerObserver } from '../../src/observer/server-observer.ts';

interface Served {
  readonly port: number;
  /** Every server-side socket, in the order accepted. */
  readonly sockets: net.Socket[];
  stop(): Promise<void>;
}

/** ObserverRoutes on 127.0.0.1, with `tokens` (none: the loopback server without tokens) and a snapshot of `snapshotBytes`. */
async function serve(tokens: string, streams: Partial<ObserverStreamLimits> = {}, snapshotBytes = 16): Promise<Served> {
  const table = tokens === '' ? new TokenTable() : parseTokenList(tokens);
  let port = 0;
  const pad = 'x'.repeat(snapshotBytes);
  const real = new ServerObserver({ metrics: null, threads: () => [], flushInlineCalls: async () => undefined, started: Date.now() });
  // The real snapshot, padded: a large one fills a slow client's socket in a few ticks.
  const observer: ObserverRoutesOptions['observer'] = { metrics: null, snapshot: () => Object.assign(real.snapshot(), { pad }), transcript: async () => null };
  const routes = new ObserverRoutes({
    observer, tokens: table, auth: new BearerAuthority({ tokens: table, requireAuth: false }), streams,
    origin: { allowedHosts: ['127.0.0.1'], port: () => port },
    access: { loopback: true, tokensConfigured: table.size > 0, requireAuth: false, observers: new Set(['alice', 'bob']) },
  });
  const sockets: net.Socket[] = [];
  const server: Server = createServer((req, res) => {
    if (!routes.handle(req, res, new URL(req.url ?? '/', 'http://x').pathname)) res.writeHead(404).end();
  });
  server.on('connection', (s) => sockets.push(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  return {
    port, sockets,
    async stop() {
      routes.close();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Opens an event stream; resolves with its answer, the stream still open (200) for the caller to destroy. */
function open(port: number, token: string | null, localAddress = '127.0.0.1'): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = token === null ? {} : { Authorization: `Bearer ${token}` };
    const req = request({ host: '127.0.0.1', port, path: '/observer/events', headers, localAddress, agent: false }, resolve);
    req.on('error', reject);
    req.end();
  });
}

async function openMany(port: number, token: string | null, n: number, localAddress?: string): Promise<IncomingMessage[]> {
  const answers: IncomingMessage[] = [];
  for (let i = 0; i < n; i++) answers.push(await open(port, token, localAddress));
  return answers;
}

/** Retries `probe` until it is true (the server learns of a close asynchronously). */
async function eventually(probe: () => Promise<boolean>, what: string, ms = 3000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > until) throw new Error(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test(`one token principal holds at most ${MAX_OBSERVER_STREAMS_PER_VIEWER} streams: the next is 429 with Retry-After; another principal still gets one`, async () => {
  const served = await serve('alice-token=alice,bob-token=bob');
  const held: IncomingMessage[] = [];
  try {
    held.push(...await openMany(served.port, 'alice-token', MAX_OBSERVER_STREAMS_PER_VIEWER));
    assert.equal(held.map((r) => r.statusCode), Array(MAX_OBSERVER_STREAMS_PER_VIEWER).fill(200));
    const refused = await open(served.port, 'alice-token');
    assert.is(refused.statusCode, 429);
    assert.is(refused.headers['retry-after'], String(OBSERVER_STREAM_RETRY_AFTER_SECONDS));
    refused.destroy();
    const bob = await open(served.port, 'bob-token');
    held.push(bob);
    assert.is(bob.statusCode, 200, 'another viewer is not refused for alice');
    held.shift()?.destroy();
    await eventually(async () => {
      const again = await open(served.port, 'alice-token');
      held.push(again);
      return again.statusCode === 200;
    }, 'alice got a stream again after closing one');
  } finally {
    for (const r of held) r.destroy();
    await served.stop();
  }
});

test('without tokens every caller is anonymous, and each client address is a viewer of its own', async () => {
  const served = await serve('');
  const held: IncomingMessage[] = [];
  try {
    held.push(...await openMany(served.port, null, MAX_OBSERVER_STREAMS_PER_VIEWER));
    const refused = await open(served.port, null);
    assert.is(refused.statusCode, 429);
    assert.is(refused.headers['retry-after'], String(OBSERVER_STREAM_RETRY_AFTER_SECONDS));
    refused.destroy();
    const other = await open(served.port, null, '127.0.0.2');
    held.push(other);
    assert.is(other.statusCode, 200, 'another local address is another viewer');
  } finally {
    for (const r of held) r.destroy();
    await served.stop();
  }
});

/** A raw client that asks for the stream and then takes `bytes` every `everyMs`: never idle, never keeping up. */
function trickleReader(port: number, bytes: number, everyMs: number): { socket: net.Socket; first: Promise<string>; stop(): void } {
  const socket = net.connect({ host: '127.0.0.1', port });
  socket.on('error', () => undefined);
  socket.write(`GET /observer/events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer alice-token\r\n\r\n`);
  socket.pause();
  let resolveFirst: (line: string) => void = () => undefined;
  const first = new Promise<string>((resolve) => { resolveFirst = resolve; });
  const timer = setInterval(() => {
    const chunk = socket.read(bytes) as Buffer | null;
    if (chunk !== null) resolveFirst(chunk.toString('latin1').split('\r\n')[0] ?? '');
  }, everyMs);
  return { socket, first, stop: () => { clearInterval(timer); socket.destroy(); } };
}

test('a client that reads only a trickle loses its stream (and its slot) once it has lagged past the bound for the lag time; a reader that keeps up does not', async () => {
  // 256 KiB snapshots every 50 ms (5 MiB/s); the trickle takes 4 KiB every 20 ms (200 KiB/s).
  const limits = { backlogBytes: 64 * 1024, lagMs: 400, updateMs: 50, maxStreamsPerViewer: 1 };
  const served = await serve('alice-token=alice,bob-token=bob', limits, 256 * 1024);
  const trickle = trickleReader(served.port, 4096, 20);
  let reader: IncomingMessage | null = null;
  try {
    assert.is(await trickle.first, 'HTTP/1.1 200 OK');
    const serverSide = served.sockets[0];
    assert.ok(serverSide);
    reader = await open(served.port, 'bob-token');
    assert.is(reader.statusCode, 200);
    let read = 0;
    reader.on('data', (chunk: Buffer) => { read += chunk.length; });
    const closed = new Promise<boolean>((resolve) => {
      serverSide.once('close', () => resolve(true));
      setTimeout(() => resolve(false), 5000).unref();
    });
    assert.ok(await closed, 'the trickle reader\'s stream was ended by the server');
    assert.not.ok(trickle.socket.destroyed, 'the client itself never gave up: the server ended it');
    assert.not.ok(reader.destroyed, 'the reader that keeps up still has its stream');
    assert.ok(read > 1024 * 1024, `the reader that keeps up was sent snapshots all along (${read} bytes)`);
    const again = await open(served.port, 'alice-token');
    assert.is(again.statusCode, 200, 'the slot the trickle held is free again');
    again.destroy();
  } finally {
    trickle.stop();
    reader?.destroy();
    await served.stop();
  }
});

test.run();
