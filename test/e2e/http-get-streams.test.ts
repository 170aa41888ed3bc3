// A session holds at most MAX_GET_STREAMS_PER_SESSION standalone (GET) streams: a newer one ends the
// oldest. Only the newest open GET stream is written to, so the older ones serve nobody; but each held a
// connection for as long as its client liked, and a GET with Last-Event-ID first gets the session's whole
// replay buffer (up to SESSION_EVENTS_MAX_BYTES) written to it — one session's client could open them
// without end and make the server hold a replay's worth of bytes per stream.

import net from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_GET_STREAMS_PER_SESSION } from '../../src/limits.ts';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from './fixtures.ts';
import { pollUntil } from '../hang-guard.ts';

const VERSION = '2025-06-18';
const ACCEPT = 'application/json, text/event-stream';

const e2e = suite('GET streams per session (MAX_GET_STREAMS_PER_SESSION)');
let box: Sandbox;
let server: RunningServer;
const sockets: net.Socket[] = [];

e2e.before(async () => {
  box = await makeSandbox();
  server = await startHttpServerProcess(box.ws);
});
e2e.after(async () => {
  for (const s of sockets) s.destroy();
  await server?.stop();
  await box?.cleanup();
});

/** A GET stream on a raw socket, read as it comes: `text` is what it received, `closed` whether the server ended it. */
async function getStream(session: string): Promise<{ readonly text: () => string; readonly closed: () => boolean }> {
  const url = new URL(server.url);
  const socket = net.connect(Number(url.port), url.hostname);
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => socket.once('connect', () => resolve()).once('error', reject));
  socket.on('error', () => {});
  let text = '';
  let closed = false;
  socket.on('data', (d: Buffer) => (text += d.toString()));
  socket.once('close', () => (closed = true));
  socket.write(`GET /mcp HTTP/1.1\r\nHost: ${url.host}\r\nAccept: text/event-stream\r\nMcp-Session-Id: ${session}\r\nMCP-Protocol-Version: ${VERSION}\r\n\r\n`);
  await pollUntil('the GET stream to open', () => (text.startsWith('HTTP/1.1 200') ? true : null), 10_000, 10);
  return { text: () => text, closed: () => closed };
}

e2e('past the limit a new GET stream ends the oldest; the newest gets the session\'s messages', async () => {
  const init = await fetch(server.url, {
    method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'get-streams', version: '1' } } }),
  });
  assert.is(init.status, 200);
  await init.text();
  const session = init.headers.get('mcp-session-id') as string;
  const headers = { 'content-type': 'application/json', accept: ACCEPT, 'mcp-session-id': session, 'mcp-protocol-version': VERSION };
  assert.is((await fetch(server.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).status, 202);

  const extra = 2;
  const streams = [];
  for (let i = 0; i < MAX_GET_STREAMS_PER_SESSION + extra; i++) streams.push(await getStream(session));
  const oldest = streams.slice(0, extra);
  await pollUntil('the oldest GET streams ended by the server', () => (oldest.every((s) => s.closed()) ? true : null), 20_000, 20);
  assert.ok(streams.slice(extra).every((s) => !s.closed()), 'the newest streams stay open');

  // The session goes on: a message of no request (a log record) reaches the newest stream.
  const level = await fetch(server.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'debug' } }) });
  assert.is(level.status, 200, await level.text());
  await fetch(server.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 'stray-answer', result: {} }) });
  const newest = streams.at(-1) as { text: () => string };
  await pollUntil('a message on the newest GET stream', () => (newest.text().includes('event: message') ? true : null), 20_000, 20);
});

e2e.run();
