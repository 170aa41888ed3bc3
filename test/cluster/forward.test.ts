// Forwarding to a session's home (src/cluster/forward.ts) when the home speaks garbage: a fake peer (a raw
// `net` server on 127.0.0.1) answers with a generated status line (`HTTP/1.1 099`, `HTTP/1.1 1000`, ...),
// headers and a body it may cut short. The client in front always gets an answer or a closed reply, the
// forward always settles, nothing escapes as an uncaught exception, and the front still serves afterwards.

import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type ForwardOutcome, forwardRequest } from '../../src/cluster/forward.ts';
import { createLogger } from '../../src/log/logger.ts';

const SEED = 9901;
const RUNS = 200;
/** The client in front gives up reading after this long (nothing here should take it). */
const CLIENT_MS = 5000;

interface PeerReply {
  readonly statusLine: string;
  readonly headers: readonly string[];
  readonly body: string;
  /** `end`: the socket is ended after the reply; `destroy`: cut off right after writing it. */
  readonly finish: 'end' | 'destroy';
}

const statusLines = fc.oneof(
  fc.constantFrom('HTTP/1.1 099', 'HTTP/1.1 099 Odd', 'HTTP/1.1 1000', 'HTTP/1.1 000', 'HTTP/1.1 600 X', 'HTTP/1.1 999 Odd', 'HTTP/1.1 200 OK', 'HTTP/1.1 101 Switching Protocols',
    'HTTP/1.1 100 Continue', 'HTTP/1.1 103 Early Hints', 'HTTP/1.1 204', 'HTTP/1.0 200', 'HTTP/1.1 2OO OK', 'garbage', '', 'HTTP/1.1 -1', 'HTTP/2 200'),
  fc.integer({ min: 0, max: 1200 }).map((n) => `HTTP/1.1 ${String(n).padStart(3, '0')} S`),
);
const headerLines = fc.array(fc.oneof(
  fc.constantFrom('Content-Type: application/json', 'Content-Length: 10', 'Content-Length: 3', 'Content-Length: -1', 'Content-Length: 3, 4', 'Transfer-Encoding: chunked', 'X-Bad: a\u0001b',
    'Set-Cookie: a=b', 'Mcp-Session-Id: s', 'Bad Header', ': empty', 'Connection: close', `X-Long: ${'v'.repeat(20_000)}`, 'X-Latin: caf\u00e9'),
  fc.string({ maxLength: 20 }),
), { maxLength: 4 });
const replies: fc.Arbitrary<PeerReply> = fc.record({
  statusLine: statusLines,
  headers: headerLines,
  body: fc.oneof(fc.constantFrom('', '{"jsonrpc":"2.0","id":1,"result":{}}', 'data: x\n\n', '5\r\nhel', '0\r\n\r\n'), fc.string({ maxLength: 30 })),
  finish: fc.constantFrom('end' as const, 'destroy' as const),
});

/** A peer that answers the next request with `reply`, whatever the request. */
async function startPeer(): Promise<{ url: string; next(reply: PeerReply): void; close(): Promise<void> }> {
  let reply: PeerReply | null = null;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.once('data', () => {
      const r = reply;
      if (r === null) return void socket.destroy();
      socket.write(`${r.statusLine}\r\n${r.headers.map((h) => `${h}\r\n`).join('')}\r\n${r.body}`, 'latin1');
      if (r.finish === 'end') socket.end();
      else socket.destroy();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    next: (r) => (reply = r),
    close: () => new Promise<void>((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    }),
  };
}

/** The node in front: `/forward` is forwarded to the peer, anything else answered 200 here. */
async function startFront(peerUrl: string, outcomes: ForwardOutcome[], logLines: string[]) {
  const logger = createLogger('debug', { write: (line: string) => logLines.push(line) });
  const server = http.createServer((req, res) => {
    if (req.url !== '/forward') return void res.end('front');
    const request = { method: req.method ?? 'POST', header: (name: string) => { const v = req.headers[name]; return Array.isArray(v) ? v[0] : v; } };
    void forwardRequest(peerUrl, request, '{"jsonrpc":"2.0","id":1,"method":"ping"}', res, 'front', logger).then((o) => {
      outcomes.push(o);
      // As the session locator does once it gives up on a home it cannot reach.
      if (o.kind === 'unreachable') res.writeHead(503).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return { port, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

/** One request to the front: its status (0: the reply was cut before a status came). */
function ask(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    let status = 0;
    let body = '';
    const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', agent: false, timeout: CLIENT_MS }, (res) => {
      status = res.statusCode ?? 0;
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status, body }));
      res.on('error', () => resolve({ status, body }));
      res.on('aborted', () => resolve({ status, body }));
    });
    req.on('timeout', () => req.destroy(new Error('client timeout')));
    req.on('error', () => resolve({ status, body }));
    req.end('{}');
  });
}

test(`${RUNS} generated peer replies (status 099, 1000, bad headers, cut bodies): each forward settles, the client gets a status the peer may send, a 502 or the front's 503, nothing is uncaught, and the front still serves (seed ${SEED})`, async () => {
  const uncaught: unknown[] = [];
  const record = (err: unknown) => uncaught.push(err);
  process.on('uncaughtException', record);
  const peer = await startPeer();
  const outcomes: ForwardOutcome[] = [];
  const logLines: string[] = [];
  const front = await startFront(peer.url, outcomes, logLines);
  try {
    await fc.assert(fc.asyncProperty(replies, async (reply) => {
      peer.next(reply);
      const before = outcomes.length;
      const got = await ask(front.port, '/forward');
      for (let i = 0; i < 50 && outcomes.length === before; i++) await new Promise((r) => setTimeout(r, 10));
      const seen = `for ${JSON.stringify(reply).slice(0, 300)}`;
      assert.equal(uncaught.map(String), [], `uncaught ${seen}`);
      assert.is(outcomes.length, before + 1, `the forward did not settle ${seen}`);
      assert.ok(got.status === 0 || got.status === 502 || got.status === 503 || (got.status >= 200 && got.status <= 599), `status ${got.status} ${seen}`);
      const declared = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(reply.statusLine)?.[1];
      if (declared !== undefined && (Number(declared) < 100 || Number(declared) > 599) && got.status !== 0) assert.ok(got.status === 502 || got.status === 503, `status ${got.status} ${seen}`);
      assert.equal(await ask(front.port, '/plain'), { status: 200, body: 'front' }, `the front stopped serving ${seen}`);
    }), { seed: SEED, numRuns: RUNS, endOnFailure: true, examples: [
      [{ statusLine: 'HTTP/1.1 099', headers: [], body: '', finish: 'end' }],
      [{ statusLine: 'HTTP/1.1 1000', headers: [], body: '', finish: 'end' }],
      // Found under seed 424242: bytes past the declared body were a write after end, uncaught.
      [{ statusLine: 'HTTP/1.0 200', headers: ['Content-Length: 3', 'Mcp-Session-Id: s', 'Content-Type: application/json'], body: 'IwOUr``mM', finish: 'end' }],
    ] });
    assert.ok(logLines.every((l) => l.endsWith('\n') && l.indexOf('\n') === l.length - 1), 'every log line is one line');
  } finally {
    process.off('uncaughtException', record);
    await front.close();
    await peer.close();
  }
});

test('a peer answering HTTP/1.1 099 gets the client a 502 that says why', async () => {
  const peer = await startPeer();
  const outcomes: ForwardOutcome[] = [];
  const front = await startFront(peer.url, outcomes, []);
  try {
    peer.next({ statusLine: 'HTTP/1.1 099', headers: ['Content-Length: 0'], body: '', finish: 'end' });
    const got = await ask(front.port, '/forward');
    assert.is(got.status, 502);
    assert.match(got.body, 'status 99');
  } finally {
    await front.close();
    await peer.close();
  }
});

test('a peer that sends more body than its Content-Length: the client\'s reply ends, nothing is written after its end (no uncaught write-after-end), the front still serves', async () => {
  const uncaught: unknown[] = [];
  const record = (err: unknown) => uncaught.push(err);
  process.on('uncaughtException', record);
  const peer = await startPeer();
  const outcomes: ForwardOutcome[] = [];
  const front = await startFront(peer.url, outcomes, []);
  try {
    for (const statusLine of ['HTTP/1.0 200', 'HTTP/1.1 200 OK']) {
      peer.next({ statusLine, headers: ['Content-Length: 3', 'Content-Type: application/json'], body: 'abcdefghi', finish: 'end' });
      const got = await ask(front.port, '/forward');
      for (let i = 0; i < 100 && outcomes.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      // Give a write after end (an 'error' event on the next tick) its chance to surface.
      await new Promise((r) => setImmediate(r));
      assert.equal(uncaught.map(String), [], statusLine);
      assert.is(got.status, 200, statusLine);
      assert.ok('abc'.startsWith(got.body), `at most the declared body: ${JSON.stringify(got.body)}`);
      assert.equal(outcomes.splice(0), [{ kind: 'done' }], statusLine);
      assert.equal(await ask(front.port, '/plain'), { status: 200, body: 'front' });
    }
  } finally {
    process.off('uncaughtException', record);
    await front.close();
    await peer.close();
  }
});

test.run();
