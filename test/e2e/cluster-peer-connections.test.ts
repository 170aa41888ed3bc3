// The per-address connection cap (--max-connections-per-address) must not cut a cluster off from itself:
// every connection node A opens to node B comes from A's one address, so forwarded GET streams past the
// cap were refused by B with 503. Two real nodes on a real PostgreSQL, each bound to its own loopback
// address (127.0.0.2 and 127.0.0.3; all of 127/8 is local on Linux), with a cap of 4: more forwarded
// streams than that from A to B are all served, a request still passes while they are open, and an
// ordinary client (from its own loopback address) is still capped at B. Without PostgreSQL binaries the
// test is reported skipped, with the reason.

import http from 'node:http';
import net from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { guarded, pollUntil } from '../hang-guard.ts';
import { findPostgres, postgresBinDirs } from '../store/postgres-server.ts';
import { clusterGround, type RunningServer, startHttpServerProcess } from './fixtures.ts';

const VERSION = '2025-06-18';
const PER_ADDRESS = 4;
/** Forwarded streams from A to B: more than B admits from one ordinary address. */
const STREAMS = PER_ADDRESS + 3;
const TOKEN = 'peer-token-123';
const NODE_A = '127.0.0.2';
const NODE_B = '127.0.0.3';
/** Where the test's clients connect from: none of them a node's address. */
const client = (i: number) => `127.0.0.${10 + i}`;
const OUTSIDER = '127.0.0.40';

interface Reply { status: number; headers: http.IncomingHttpHeaders; text: string }

/** A whole request on a fresh connection from `from`. */
function request(url: string, from: string, method: string, headers: Record<string, string>, body?: unknown): Promise<Reply> {
  const text = body === undefined ? undefined : JSON.stringify(body);
  return guarded(new Promise<Reply>((resolve, reject) => {
    const req = http.request(url, {
      method, localAddress: from, agent: false,
      headers: { authorization: `Bearer ${TOKEN}`, accept: 'application/json, text/event-stream', ...(text === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) }), ...headers },
    }, (res) => {
      let out = '';
      res.on('data', (d: Buffer) => (out += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: out }));
    });
    req.on('error', reject);
    req.end(text);
  }), `${method} ${url} from ${from}`);
}

/** A GET stream opened from `from`: its status once its head came, and the request to end it. */
function openStream(url: string, from: string, session: string): Promise<{ status: number; text: () => string; req: http.ClientRequest }> {
  return guarded(new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'GET', localAddress: from, agent: false,
      headers: { authorization: `Bearer ${TOKEN}`, accept: 'text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': VERSION },
    }, (res) => {
      let out = '';
      res.on('data', (d: Buffer) => (out += d.toString()));
      res.on('error', () => {});
      resolve({ status: res.statusCode ?? 0, text: () => out, req });
    });
    req.on('error', reject);
    req.end();
  }), `GET stream from ${from}`, 30_000);
}

/** A raw connection from `from` to `port` on `host`, answered /health (admitted) or 503 before any request (refused). */
async function probe(host: string, port: number, from: string, sockets: net.Socket[]): Promise<'admitted' | 'refused'> {
  const socket = net.connect({ port, host, localAddress: from });
  sockets.push(socket);
  let text = '';
  socket.on('data', (d: Buffer) => (text += d.toString()));
  socket.on('error', () => {});
  await guarded(new Promise<void>((resolve, reject) => socket.once('connect', () => resolve()).once('error', reject)), `connecting from ${from}`);
  socket.write(`GET /health HTTP/1.1\r\nHost: ${host}:${port}\r\n\r\n`);
  const head = await pollUntil(`an answer on a connection from ${from}`, () => (text.includes('\r\n\r\n') ? text : null), 10_000, 5);
  if (head.startsWith('HTTP/1.1 200 ')) return 'admitted';
  assert.match(head, /^HTTP\/1\.1 503 Service Unavailable\r\n/, head);
  return 'refused';
}

const found = findPostgres();
if (found.ok) {
  const ground = clusterGround(test, found);

  test(`forwarded GET streams from one node to another are not capped per address (${STREAMS} past a cap of ${PER_ADDRESS}); a request passes beside them; an ordinary client is still capped`, async () => {
    const { pg, box } = ground();
    const store = await pg.createDatabase();
    const env = { SUPERPI_TOKENS: `${TOKEN}=alice` };
    const nodes: RunningServer[] = [];
    const streams: http.ClientRequest[] = [];
    const sockets: net.Socket[] = [];
    let failed = true;
    try {
      for (const [id, host] of [['node-a', NODE_A], ['node-b', NODE_B]] as const) {
        nodes.push(await startHttpServerProcess(box.ws, ['--store', store, '--node-id', id, '--host', host, '--allowed-hosts', `${NODE_A},${NODE_B}`, '--max-connections-per-address', String(PER_ADDRESS), '--threads', '1', '--tool-threads', '1'], env));
      }
      const [a, b] = nodes as [RunningServer, RunningServer];
      // Sessions whose home is B, each opened on its own short connection.
      const sessions: string[] = [];
      for (let i = 0; i < STREAMS; i++) {
        const init = await request(b.url, client(i), 'POST', {}, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'peercap', version: '1' } } });
        assert.is(init.status, 200, init.text);
        const session = init.headers['mcp-session-id'] as string;
        assert.ok(session);
        const ready = await request(b.url, client(i), 'POST', { 'mcp-session-id': session, 'mcp-protocol-version': VERSION }, { jsonrpc: '2.0', method: 'notifications/initialized' });
        assert.is(ready.status, 202, ready.text);
        sessions.push(session);
      }
      // Their GET streams through A: each one a connection A holds open to B, all from A's address.
      for (let i = 0; i < STREAMS; i++) {
        const stream = await openStream(a.url, client(i), sessions[i] as string);
        streams.push(stream.req);
        assert.is(stream.status, 200, `stream ${i + 1} of ${STREAMS} through node A: ${stream.text()}`);
      }
      // A request of one of those sessions still passes through A while every stream is open.
      const ping = await request(a.url, client(0), 'POST', { 'mcp-session-id': sessions[0] as string, 'mcp-protocol-version': VERSION }, { jsonrpc: '2.0', id: 2, method: 'ping' });
      assert.is(ping.status, 200, ping.text);
      assert.match(ping.text, /"id":2,"result":\{\}/);
      // An ordinary client at B is still capped: its own four connections, then a 503.
      const port = Number(new URL(b.url).port);
      for (let i = 0; i < PER_ADDRESS; i++) assert.is(await probe(NODE_B, port, OUTSIDER, sockets), 'admitted', `connection ${i + 1} from ${OUTSIDER}`);
      assert.is(await probe(NODE_B, port, OUTSIDER, sockets), 'refused', `connection ${PER_ADDRESS + 1} from ${OUTSIDER}`);
      failed = false;
    } finally {
      for (const s of streams) s.destroy();
      for (const s of sockets) s.destroy();
      if (failed) for (const n of nodes) console.error(n.stderr());
      for (const n of nodes) await n.stop();
    }
  });
} else {
  console.log(`  (skipped: the cluster peer connection test needs a PostgreSQL server: ${found.reason})`);
  test.skip('forwarded GET streams from one node to another are not capped per address; a request passes beside them; an ordinary client is still capped', () => undefined);
  // The runner counts a file that ran no test as failed; this one checks that the reason names where it looked.
  test('without PostgreSQL binaries the reason names every directory searched', () => {
    for (const dir of postgresBinDirs()) assert.ok(found.reason.includes(dir), dir);
    assert.ok(postgresBinDirs().length > 0);
  });
}

test.run();
