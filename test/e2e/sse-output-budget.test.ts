// An HTTP connection is held to the node's budget for unread output (--max-node-output-backlog-bytes)
// as a WebSocket is: a GET stream whose client reads nothing, under a per-stream backlog far above the
// budget, is cut once the node's total passes the budget (its connection holds the most), with a warning
// naming the limit; the POSTs that drive it, whose clients read their replies, are never cut, and the
// session goes on. The
// output here is the session's own debug log (a stray response is logged at debug, sent as
// notifications/message on the GET stream), driven by batches of responses to no request (2025-03-26
// allows batches), each with a 240-character id, so every one costs the server a few hundred bytes out.

import net from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from './fixtures.ts';
import { pollUntil } from '../hang-guard.ts';

const TOKEN = 'backlog-test-token-0123456789abc';
const BUDGET = 1024 * 1024;
const VERSION = '2025-03-26';
const WARNING = 'HTTP connection closed: the node holds more unread output than its budget';
const PER_STREAM = 'SSE stream ended: its client left too much output unread';

const e2e = suite('an unread SSE stream is cut past the node output budget (--max-node-output-backlog-bytes)');
let box: Sandbox;
let server: RunningServer;

e2e.before(async () => {
  box = await makeSandbox();
  server = await startHttpServerProcess(box.ws, ['--max-node-output-backlog-bytes', String(BUDGET)], { SUPERPI_TOKENS: `${TOKEN}=alice` });
});
e2e.after(async () => {
  await server?.stop();
  await box?.cleanup();
});

const headers = (session?: string) => ({
  'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${TOKEN}`,
  ...(session === undefined ? {} : { 'mcp-session-id': session, 'mcp-protocol-version': VERSION }),
});

async function post(session: string | undefined, body: unknown): Promise<Response> {
  return fetch(server.url, { method: 'POST', headers: headers(session), body: JSON.stringify(body) });
}

/** A GET stream on a raw socket that is never read: what the server writes piles up in its buffers. */
async function unreadGetStream(session: string): Promise<{ socket: net.Socket; closed: Promise<void> }> {
  const url = new URL(server.url);
  const socket = net.connect(Number(url.port), url.hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', () => resolve()).once('error', reject));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(`GET /mcp HTTP/1.1\r\nHost: ${url.host}\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${TOKEN}\r\nMcp-Session-Id: ${session}\r\nMCP-Protocol-Version: ${VERSION}\r\n\r\n`);
  socket.pause();
  return { socket, closed };
}

e2e('a GET stream whose client reads nothing is cut once the node holds more than its budget; the POSTs and the session go on', async () => {
  const init = await post(undefined, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'budget', version: '1' } } });
  assert.is(init.status, 200);
  await init.text();
  const session = init.headers.get('mcp-session-id') as string;
  assert.ok(session);
  assert.is((await post(session, { jsonrpc: '2.0', method: 'notifications/initialized' })).status, 202);
  const level = await post(session, { jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'debug' } });
  assert.is(level.status, 200, await level.text());

  const stream = await unreadGetStream(session);
  try {
    await new Promise((r) => setTimeout(r, 300));
    let batches = 0;
    for (; batches < 400 && !server.stderr().includes(WARNING); batches++) {
      const batch = Array.from({ length: 1000 }, (_, i) => ({ jsonrpc: '2.0', id: `${batches}-${i}-`.padEnd(240, 'x'), result: {} }));
      const r = await post(session, batch);
      assert.is(r.status, 202, await r.text());
    }
    await pollUntil('the budget warning in the log', () => (server.stderr().includes(WARNING) ? true : null), 30_000, 50);
    const lines = server.stderr().split('\n').filter((l) => l.includes(WARNING));
    assert.is(lines.length, 1, 'one connection cut, once');
    const line = lines[0] as string;
    assert.match(line, new RegExp(`"limit":${BUDGET}`), line);
    assert.ok(Number(/"bytes":(\d+)/.exec(line)?.[1]) > 0, line);
    assert.not.ok(server.stderr().includes(PER_STREAM), 'the node budget, not the per-stream backlog, cut it');
    stream.socket.resume();
    await stream.closed;
    const ping = await post(session, { jsonrpc: '2.0', id: 3, method: 'ping' });
    assert.is(ping.status, 200);
    assert.match(await ping.text(), /"id":3/);
    assert.ok(server.child.exitCode === null, 'the server is alive');
  } finally {
    stream.socket.destroy();
  }
});

e2e.run();
