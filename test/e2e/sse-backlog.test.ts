// A GET stream whose client reads nothing is ended past --max-output-backlog-bytes: the server logs the
// warning, cuts the connection, and keeps serving the session (a new GET stream opens, a request is
// answered). Without the bound node:http queues every event written to that stream for as long as the
// client keeps it open: a client could make the server hold any amount of memory by not reading. The
// output here is the session's own debug log (a stray response is logged at debug, sent as
// notifications/message on the GET stream), driven by batches of responses to no request (2025-03-26
// allows batches), each with a 240-character id, so every one costs the server a few hundred bytes out.

import net from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from './fixtures.ts';
import { pollUntil } from '../hang-guard.ts';

const TOKEN = 'backlog-test-token-0123456789abc';
const BACKLOG = 256 * 1024;
const VERSION = '2025-03-26';
const WARNING = 'SSE stream ended: its client left too much output unread';

const e2e = suite('an SSE stream left unread is ended past the output backlog (--max-output-backlog-bytes)');
let box: Sandbox;
let server: RunningServer;

e2e.before(async () => {
  box = await makeSandbox();
  server = await startHttpServerProcess(box.ws, ['--max-output-backlog-bytes', String(BACKLOG)], { SUPERPI_TOKENS: `${TOKEN}=alice` });
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

e2e('a GET stream whose client reads nothing is ended once it holds more than the backlog; the session goes on', async () => {
  const init = await post(undefined, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'backlog', version: '1' } } });
  assert.is(init.status, 200);
  await init.text();
  const session = init.headers.get('mcp-session-id') as string;
  assert.ok(session);
  assert.is((await post(session, { jsonrpc: '2.0', method: 'notifications/initialized' })).status, 202);
  const level = await post(session, { jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'debug' } });
  assert.is(level.status, 200, await level.text());

  const stream = await unreadGetStream(session);
  try {
    // Let the GET stream open before the output starts.
    await new Promise((r) => setTimeout(r, 300));
    let batches = 0;
    for (; batches < 400 && !server.stderr().includes(WARNING); batches++) {
      const batch = Array.from({ length: 1000 }, (_, i) => ({ jsonrpc: '2.0', id: `${batches}-${i}-`.padEnd(240, 'x'), result: {} }));
      const r = await post(session, batch);
      assert.is(r.status, 202, await r.text());
    }
    await pollUntil('the backlog warning in the log', () => (server.stderr().includes(WARNING) ? true : null), 30_000, 50);
    const line = server.stderr().split('\n').find((l) => l.includes(WARNING)) as string;
    assert.match(line, new RegExp(`"limit":${BACKLOG}`), line);
    const bytes = Number(/"bytes":(\d+)/.exec(line)?.[1]);
    assert.ok(bytes > BACKLOG, line);
    // The client hears its connection end once it reads again.
    stream.socket.resume();
    await stream.closed;
    // The session still serves: a request is answered, and a new GET stream opens.
    const ping = await post(session, { jsonrpc: '2.0', id: 3, method: 'ping' });
    assert.is(ping.status, 200);
    assert.match(await ping.text(), /"id":3/);
    const again = new AbortController();
    const get = await fetch(server.url, { method: 'GET', headers: { accept: 'text/event-stream', authorization: `Bearer ${TOKEN}`, 'mcp-session-id': session, 'mcp-protocol-version': VERSION }, signal: again.signal });
    assert.is(get.status, 200);
    again.abort();
    assert.ok(server.child.exitCode === null, 'the server is alive');
  } finally {
    stream.socket.destroy();
  }
});

e2e.run();
