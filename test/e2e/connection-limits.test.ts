// Open TCP connections are capped, in all (--max-connections) and per client address
// (--max-connections-per-address): a client could otherwise hold any number of idle sockets, each a
// descriptor and buffers, since no session quota counts a connection that opens no session. Real
// sockets on 127.0.0.1 and its loopback neighbours (127.0.0.2..., all of 127/8 is local on Linux) against
// a real server process: a connection past a cap gets a 503 with Retry-After and is closed, the
// connections and the session already open go on, the refusals are one log line, and a closed
// connection's place is free again. A trusted proxy's address (--trusted-proxy) is held to the total only.

import http from 'node:http';
import net from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from './fixtures.ts';
import { guarded, pollUntil } from '../hang-guard.ts';

const VERSION = '2025-06-18';
const PER_ADDRESS = 4;
const TOTAL = 10;
const REFUSED_LINE = 'connection refused: too many';

const e2e = suite('open connections are capped in all and per client address');
let box: Sandbox;
let server: RunningServer;
let port = 0;
const sockets: net.Socket[] = [];

e2e.before(async () => {
  box = await makeSandbox();
  server = await startHttpServerProcess(box.ws, ['--max-connections', String(TOTAL), '--max-connections-per-address', String(PER_ADDRESS)]);
  port = Number(new URL(server.url).port);
});
e2e.after(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await server?.stop();
});

/** A raw connection from `from`, everything it receives gathered, and whether it has closed. */
async function connect(from: string): Promise<{ socket: net.Socket; received: () => string; ended: Promise<void> }> {
  const socket = net.connect({ port, host: '127.0.0.1', localAddress: from });
  sockets.push(socket);
  let text = '';
  socket.on('data', (d: Buffer) => (text += d.toString()));
  socket.on('error', () => {});
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await guarded(new Promise<void>((resolve, reject) => socket.once('connect', () => resolve()).once('error', reject)), `connecting from ${from}`);
  return { socket, received: () => text, ended };
}

/** A connection from `from` that the server admitted: it answers a /health on it (and keeps it open). */
async function admitted(from: string): Promise<net.Socket> {
  const c = await connect(from);
  c.socket.write(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
  const head = await pollUntil(`the /health answer on a connection from ${from}`, () => (c.received().includes('\r\n\r\n') ? c.received() : null), 10_000, 5);
  assert.match(head, /^HTTP\/1\.1 200 /, head);
  return c.socket;
}

/** A connection from `from` that the server refused: a 503 with Retry-After, written before any request, then the close. */
async function refused(from: string): Promise<void> {
  const c = await connect(from);
  await guarded(c.ended, `the refused connection from ${from} closing`);
  assert.match(c.received(), /^HTTP\/1\.1 503 Service Unavailable\r\n/, c.received() || '(nothing received: the connection was not refused)');
  assert.match(c.received(), /\r\nRetry-After: 1\r\n/);
}

/** An MCP request on a keep-alive agent bound to one address and one socket. */
function post(agent: http.Agent, from: string, body: unknown, session?: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string; reused: boolean }> {
  const text = JSON.stringify(body);
  return guarded(new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1', port, path: '/mcp', method: 'POST', agent, localAddress: from,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': Buffer.byteLength(text), ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': VERSION } : {}) },
    }, (res) => {
      let out = '';
      res.on('data', (d: Buffer) => (out += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: out, reused: req.reusedSocket }));
    });
    req.on('error', reject);
    req.end(text);
  }), `POST ${text.slice(0, 60)}`);
}

e2e('a connection past either cap is refused with 503 and closed; open connections and sessions go on; refusals are logged once', async () => {
  // A session on a keep-alive connection from 127.0.0.2 (one socket, reused).
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const init = await post(agent, '127.0.0.2', { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'conncap', version: '1' } } });
    assert.is(init.status, 200, init.text);
    const session = init.headers['mcp-session-id'] as string;
    assert.ok(session);
    assert.is((await post(agent, '127.0.0.2', { jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status, 202);

    // 127.0.0.2 fills its share: the session's connection and three idle ones.
    for (let i = 1; i < PER_ADDRESS; i++) await admitted('127.0.0.2');
    await refused('127.0.0.2');
    // Another address is not affected by 127.0.0.2's share.
    const third = [];
    for (let i = 0; i < PER_ADDRESS; i++) third.push(await admitted('127.0.0.3'));
    // 4 + 4 open; two more from 127.0.0.4 fill the total, and then every address is refused.
    await admitted('127.0.0.4');
    await admitted('127.0.0.4');
    await refused('127.0.0.4');
    await refused('127.0.0.5');
    for (let i = 0; i < 10; i++) await refused('127.0.0.6');

    // The session's own connection still serves it.
    const ping = await post(agent, '127.0.0.2', { jsonrpc: '2.0', id: 2, method: 'ping' }, session);
    assert.is(ping.status, 200, ping.text);
    assert.ok(ping.reused, 'answered on the connection opened before the caps were reached');
    assert.match(ping.text, /"id":2,"result":\{\}/);

    // Thirteen refusals, one log line.
    const lines = server.stderr().split('\n').filter((l) => l.includes(REFUSED_LINE));
    assert.is(lines.length, 1, lines.join('\n'));
    assert.match(lines[0] as string, /connections per address/);
    assert.match(lines[0] as string, new RegExp(`"limit":${PER_ADDRESS}`));

    // Closed connections free their places: 127.0.0.3's four go, and 127.0.0.5 is admitted again.
    for (const s of third) s.destroy();
    await pollUntil('a place free again after closes', async () => {
      const c = await connect('127.0.0.5');
      c.socket.write(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
      await guarded(c.ended, 'the /health connection closing');
      return c.received().startsWith('HTTP/1.1 200 ') ? true : null;
    }, 10_000, 20);
  } finally {
    agent.destroy();
  }
});

e2e.run();

const proxied = suite('a trusted proxy (--trusted-proxy) is held to the total cap only');
let proxiedServer: RunningServer;

proxied.before(async () => {
  proxiedServer = await startHttpServerProcess(box.ws, ['--max-connections', String(TOTAL), '--max-connections-per-address', String(PER_ADDRESS), '--trusted-proxy', '127.0.0.7']);
  port = Number(new URL(proxiedServer.url).port);
});
proxied.after(async () => {
  for (const s of sockets) s.destroy();
  await proxiedServer?.stop();
  await box?.cleanup();
});

proxied('the proxy\'s address opens past --max-connections-per-address, up to --max-connections; then it is refused as every address is', async () => {
  for (let i = 0; i < PER_ADDRESS + 2; i++) await admitted('127.0.0.7');
  for (let i = 0; i < PER_ADDRESS; i++) await admitted('127.0.0.8');
  await refused('127.0.0.7');
  await refused('127.0.0.9');
  const lines = proxiedServer.stderr().split('\n').filter((l) => l.includes(REFUSED_LINE));
  assert.is(lines.length, 1, lines.join('\n'));
  assert.match(lines[0] as string, /too many connections \(503\)/, 'the total, not the per-address cap, refused the proxy');
  assert.match(lines[0] as string, new RegExp(`"address":"127\\.0\\.0\\.7","limit":${TOTAL}\\b`));
});

proxied.run();
