// Which WebSocket clients are alive: over a real socket on 127.0.0.1, a client that reads a large answer
// slowly keeps its connection and gets every byte, one that takes none of its output is closed after the
// send timeout (saying so in the log), and an idle one that answers no ping is still closed. Before, a
// pong that waited behind a large answer (in the server's queue, then the kernel's buffers) counted as
// missed: a live reader slower than one ping interval per message was cut with its answer half sent.
// The session host is a stub that answers `{"big": N}` with one message of N characters; the client is
// a raw socket speaking just enough WebSocket to read at a rate the test sets and to answer pings.

import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { TokenTable } from '../../src/auth/tokens.ts';
import type { Logger } from '../../src/log/logger.ts';
import type { Principal } from '../../src/mcp/state.ts';
import { DEFAULT_ALLOWED_HOSTS } from '../../src/limits.ts';
import { systemClock } from '../../src/time/clock.ts';
import type { HostedSession, OpenOptions, SessionHost } from '../../src/transports/session-host.ts';
import { WebSocketTransport } from '../../src/transports/websocket.ts';
import { guarded, pollUntil } from '../hang-guard.ts';

const PING_MS = 100;
const SEND_TIMEOUT_MS = 5000;
/** One answer of 4 MiB: past WS_OUTPUT_PAUSE_BYTES, and many ping intervals long at the slow reader's rate. */
const BIG = 4 * 1024 * 1024;
/** The slow reader takes this much every READ_EVERY_MS: some 1.6 MB/s, 2.6 s for the answer, 26 ping intervals. */
const READ_BYTES = 16 * 1024;
const READ_EVERY_MS = 10;

interface Logged { readonly message: string; readonly data: Readonly<Record<string, unknown>> }

/** Sessions that answer `{"big": N}` with one message of N characters, and record when they end. */
function stubHost(ended: string[]): SessionHost {
  const sessions = new Map<string, HostedSession>();
  let n = 0;
  return {
    clock: systemClock,
    reserve: () => ({ release: () => {} }),
    open: async (o: OpenOptions) => {
      const id = `s${++n}`;
      const session: HostedSession = {
        id, principal: o.principal, transport: o.transport, lastActivity: 0, inFlight: 0, pendingInput: 0,
        whenInputBelow: async () => {},
        deliver: (frame) => {
          if (frame.kind !== 'line') return;
          const { big } = JSON.parse(frame.text) as { big: number };
          o.send({ line: JSON.stringify({ jsonrpc: '2.0', id: 1, result: { pad: 'x'.repeat(big) } }) });
        },
        touch: () => {}, busy: () => false, watching: () => false, drain: async () => {}, answerInFlight: () => {},
      };
      sessions.set(id, session);
      return session;
    },
    find: (id: string, _p: Principal) => sessions.get(id),
    sessions: () => sessions.values(),
    close: async (id: string) => {
      if (sessions.delete(id)) ended.push(id);
    },
    drain: async () => {},
  };
}

const servers: Server[] = [];
const clients: net.Socket[] = [];

async function serve(): Promise<{ port: number; logged: Logged[]; ended: string[] }> {
  const logged: Logged[] = [];
  const ended: string[] = [];
  const logger: Logger = { level: 'debug', log: (_level, message, data = {}) => void logged.push({ message, data }) };
  const transport = new WebSocketTransport({
    sessions: stubHost(ended), tokens: new TokenTable(), requireAuth: false, origin: { allowedHosts: DEFAULT_ALLOWED_HOSTS },
    maxMessageBytes: 2 * BIG, logger, pingIntervalMs: PING_MS, sendTimeoutMs: SEND_TIMEOUT_MS,
  });
  const server = createServer((_req, res) => res.writeHead(404).end());
  server.on('upgrade', (req, socket, head: Buffer) => transport.upgrade(req, socket, head));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { port: (server.address() as AddressInfo).port, logged, ended };
}

/** A masked client frame (RFC 6455 5.2): `opcode` 0x1 text, 0xA pong. */
function frame(opcode: number, payload: Buffer): Buffer {
  const mask = Buffer.from([1, 2, 3, 4]);
  const head = payload.length < 126 ? Buffer.from([0x80 | opcode, 0x80 | payload.length]) : Buffer.from([0x80 | opcode, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
  return Buffer.concat([head, mask, Buffer.from(payload.map((b, i) => b ^ (mask[i % 4] as number)))]);
}

/** What a raw client has read: the server's frames by opcode (payload bytes), pongs it answered. */
interface RawClient {
  readonly socket: net.Socket;
  readonly closed: Promise<void>;
  /** Payload bytes of text frames read whole, so far (the answer counts once it is complete). */
  textBytes(): number;
  /** Bytes read from the socket so far. */
  bytesRead(): number;
  isClosed(): boolean;
  /** Starts reading at the slow rate, answering pings. */
  readSlowly(): void;
}

/** Opens a WebSocket on a raw socket, sends `{"big": size}`, and reads nothing until asked. */
async function rawClient(port: number, size: number, answerPings: boolean): Promise<RawClient> {
  const socket = net.connect(port, '127.0.0.1');
  clients.push(socket);
  socket.on('error', () => {});
  let closed = false;
  const closedP = new Promise<void>((resolve) => socket.once('close', () => { closed = true; resolve(); }));
  await guarded(new Promise<void>((resolve, reject) => socket.once('connect', () => resolve()).once('error', reject)), 'connecting');
  const key = 'dGhlIHNhbXBsZSBub25jZQ==';
  socket.write(`GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: mcp\r\n\r\n`);
  let buffered = Buffer.alloc(0);
  let read = 0;
  let text = 0;
  let handshaken = false;
  const feed = (chunk: Buffer): void => {
    read += chunk.length;
    buffered = Buffer.concat([buffered, chunk]);
    if (!handshaken) {
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffered.subarray(0, end).toString();
      const accept = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
      assert.ok(head.startsWith('HTTP/1.1 101') && head.includes(accept), head);
      handshaken = true;
      buffered = buffered.subarray(end + 4);
    }
    // Whole frames only (server frames are not masked).
    for (;;) {
      if (buffered.length < 2) return;
      const opcode = (buffered[0] as number) & 0x0f;
      let len = (buffered[1] as number) & 0x7f;
      let at = 2;
      if (len === 126) { if (buffered.length < 4) return; len = buffered.readUInt16BE(2); at = 4; }
      else if (len === 127) { if (buffered.length < 10) return; len = Number(buffered.readBigUInt64BE(2)); at = 10; }
      if (buffered.length < at + len) return;
      const payload = buffered.subarray(at, at + len);
      buffered = buffered.subarray(at + len);
      if (opcode === 0x1) text += len;
      if (opcode === 0x9 && answerPings) socket.write(frame(0xA, Buffer.from(payload)));
    }
  };
  socket.pause();
  // The handshake and the request; then nothing is read until the test says.
  await pollUntil('the handshake answer', () => {
    const chunk = socket.read() as Buffer | null;
    if (chunk !== null) feed(chunk);
    return handshaken ? true : null;
  }, 10_000, 5);
  socket.write(frame(0x1, Buffer.from(JSON.stringify({ big: size }))));
  return {
    socket, closed: closedP,
    textBytes: () => text, bytesRead: () => read, isClosed: () => closed,
    readSlowly: () => {
      const timer = setInterval(() => {
        if (closed) return clearInterval(timer);
        const chunk = (socket.read(READ_BYTES) ?? (socket.readableLength > 0 ? socket.read() : null)) as Buffer | null;
        if (chunk !== null) feed(chunk);
      }, READ_EVERY_MS);
      void closedP.then(() => clearInterval(timer));
    },
  };
}

test('a slow reader of an answer far larger than one ping interval takes keeps its connection and gets all of it', async () => {
  const { port, logged, ended } = await serve();
  const client = await rawClient(port, BIG, true);
  client.readSlowly();
  await pollUntil('the whole answer read, slowly', () => (client.textBytes() > BIG ? true : client.isClosed() ? false : null), 60_000, 20)
    .then((whole) => assert.ok(whole, `the connection was closed after ${client.bytesRead()} of ${BIG}+ bytes: ${JSON.stringify(logged.filter((l) => !l.message.startsWith('WebSocket reading')))}`));
  assert.not.ok(client.isClosed(), 'still open');
  assert.equal(ended, [], 'the session goes on');
  assert.is(logged.filter((l) => l.message.includes('closed')).length, 0, 'nothing was closed');
});

test('a reader that takes none of a large answer is closed after the send timeout, saying so; its session ends with it', async () => {
  const { port, logged, ended } = await serve();
  const client = await rawClient(port, BIG, true);
  const line = await pollUntil('the send-timeout warning', () => logged.find((l) => l.message.includes('took none of its output for the send timeout')) ?? null, 30_000, 20);
  assert.is(line.data.limit, SEND_TIMEOUT_MS);
  assert.ok((line.data.bytes as number) > 0, 'bytes were left unsent');
  client.socket.resume();
  await guarded(client.closed, 'the stalled connection closing');
  assert.ok(client.textBytes() < BIG, 'the answer was not delivered whole');
  await pollUntil('its session ended', () => (ended.length === 1 ? true : null), 10_000, 10);
});

test('an idle client that answers no ping is still closed (the pong judges a socket with nothing queued)', async () => {
  const { port, ended } = await serve();
  const client = await rawClient(port, 10, false);
  client.readSlowly();
  await guarded(client.closed, 'the idle connection without pongs closing', 30_000);
  assert.ok(client.textBytes() > 10, 'its small answer was read first');
  await pollUntil('its session ended', () => (ended.length === 1 ? true : null), 10_000, 10);
});

test.after(async () => {
  for (const c of clients) c.destroy();
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

test.run();
