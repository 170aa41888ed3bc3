// A reply whose client takes none of it is not held without end (--send-timeout). node:http keeps the
// unsent bytes of a reply in the process for as long as its connection stays open, even once the server
// has finished it: a POST stream whose last answer was written is no longer in flight in any session, so
// no session limit counts it, and its bytes stayed until the client closed — one client could hold any
// amount of the server's memory by sending such POSTs on connection after connection and never reading.
// Here one POST (a 2025-03-26 batch of `read` calls, some 20 MB of answers, past what the kernel's socket
// buffers take) is sent on a raw socket that is never read; the server must close it and say so, and the
// session goes on serving.

import { writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from './fixtures.ts';
import { pollUntil } from '../hang-guard.ts';

const TOKEN = 'send-timeout-test-token-0123456789';
const VERSION = '2025-03-26';
const WARNING = 'HTTP connection closed: its client took none of its reply';
const CALLS = 400;

const e2e = suite('a reply its client never reads is dropped after the send timeout (--send-timeout)');
let box: Sandbox;
let server: RunningServer;

e2e.before(async () => {
  box = await makeSandbox();
  server = await startHttpServerProcess(box.ws, ['--send-timeout', '2'], { SUPERPI_TOKENS: `${TOKEN}=alice` });
});
e2e.after(async () => {
  await server?.stop();
  await box?.cleanup();
});

const headers = (session?: string): Record<string, string> => ({
  'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${TOKEN}`,
  ...(session === undefined ? {} : { 'mcp-session-id': session, 'mcp-protocol-version': VERSION }),
});

async function post(session: string | undefined, body: unknown): Promise<Response> {
  return fetch(server.url, { method: 'POST', headers: headers(session), body: JSON.stringify(body) });
}

/** A POST on a raw socket that is never read: what the server writes back waits in its buffers. */
async function unreadPost(session: string, body: unknown): Promise<{ socket: net.Socket; closed: Promise<void> }> {
  const url = new URL(server.url);
  const socket = net.connect(Number(url.port), url.hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', () => resolve()).once('error', reject));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const text = JSON.stringify(body);
  const lines = Object.entries(headers(session)).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  socket.write(`POST /mcp HTTP/1.1\r\nHost: ${url.host}\r\n${lines}Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
  socket.pause();
  return { socket, closed };
}

e2e('a finished reply left unread is dropped with a warning once the client took none of it for the timeout; the session goes on', async () => {
  // 50 KB of text: each `read` answer is about that, so the batch's answers are some 20 MB.
  await writeFile(path.join(box.ws, 'big.txt'), `${'x'.repeat(49)}\n`.repeat(1000));
  const init = await post(undefined, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'send-timeout', version: '1' } } });
  assert.is(init.status, 200);
  await init.text();
  const session = init.headers.get('mcp-session-id') as string;
  assert.ok(session);
  assert.is((await post(session, { jsonrpc: '2.0', method: 'notifications/initialized' })).status, 202);

  const batch = Array.from({ length: CALLS }, (_, i) => ({ jsonrpc: '2.0', id: i + 10, method: 'tools/call', params: { name: 'read', arguments: { path: 'big.txt' } } }));
  const unread = await unreadPost(session, batch);
  try {
    await pollUntil('the send-timeout warning in the log', () => (server.stderr().includes(WARNING) ? true : null), 30_000, 50);
    const line = server.stderr().split('\n').find((l) => l.includes(WARNING)) as string;
    assert.match(line, /"limit":2000/, line);
    assert.ok(Number(/"bytes":(\d+)/.exec(line)?.[1]) > 0, line);
    // The client hears its connection end once it reads again.
    unread.socket.resume();
    await pollUntil('the unread connection closed', async () => ((await Promise.race([unread.closed.then(() => true), new Promise((r) => setTimeout(() => r(null), 50))])) as true | null), 30_000, 10);
  } finally {
    unread.socket.destroy();
  }
  // The session was not ended with the connection: it answers the next request.
  const ping = await post(session, { jsonrpc: '2.0', id: 'after', method: 'ping' });
  assert.is(ping.status, 200);
  assert.match(await ping.text(), /"id":"after"/);
});

e2e('a client that reads its reply slowly, a little at a time, is never cut and gets all of it', async () => {
  const init = await post(undefined, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'slow-reader', version: '1' } } });
  assert.is(init.status, 200);
  await init.text();
  const session = init.headers.get('mcp-session-id') as string;
  assert.is((await post(session, { jsonrpc: '2.0', method: 'notifications/initialized' })).status, 202);
  const warnings = () => server.stderr().split(WARNING).length - 1;
  const before = warnings();

  const batch = Array.from({ length: CALLS }, (_, i) => ({ jsonrpc: '2.0', id: i + 10, method: 'tools/call', params: { name: 'read', arguments: { path: 'big.txt' } } }));
  const slow = await unreadPost(session, batch);
  let tail = '';
  let received = 0;
  slow.socket.on('data', (d: Buffer) => {
    received += d.length;
    tail = (tail + d.toString('latin1')).slice(-64);
  });
  // A few milliseconds of reading, then a pause well under the timeout, until the stream's last chunk.
  const reader = setInterval(() => {
    slow.socket.resume();
    setTimeout(() => slow.socket.pause(), 5);
  }, 400);
  try {
    await pollUntil('the whole slowly read reply', () => (tail.endsWith('0\r\n\r\n') ? true : null), 60_000, 50).catch((e: unknown) => { throw new Error(`${String(e)} received=${received} warnings=${warnings() - before} tail=${JSON.stringify(tail)}`); });
  } finally {
    clearInterval(reader);
    slow.socket.destroy();
  }
  assert.ok(received > CALLS * 40_000, `received ${received} bytes`);
  assert.is(warnings(), before, 'no connection was cut');
});

e2e.run();
