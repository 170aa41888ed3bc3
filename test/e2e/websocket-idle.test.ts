// Idle WebSocket sessions are reaped, end to end: a real server process with `--session-idle 1` and a
// per-principal quota of 3, clients on the `ws` library over 127.0.0.1 (which answers pings by itself,
// so each socket is alive). Before, a WebSocket session ended only with its socket: a client that opened
// sockets up to its quota and then said nothing held its slots for good, and its next session was 429
// for ever. Now a silent session is closed 1001 naming `--session-idle` and its slot is given back at
// once; one waiting on a call in flight, or subscribed to a transcript, is never reaped.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'ws';
import { openStore } from '../../src/store/location.ts';
import { guarded } from '../hang-guard.ts';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from './fixtures.ts';

let box: Sandbox;
let home: string;
let server: RunningServer;
let conversation: string;
const sockets: WebSocket[] = [];

test.before(async () => {
  box = await makeSandbox();
  home = await mkdtemp(path.join(os.tmpdir(), 'superpi-ws-idle-home-'));
  const tokens = path.join(home, 'tokens');
  await writeFile(tokens, 'alice-token alice\nbob-token bob\n', { mode: 0o600 });
  // Bob's conversation, which his session subscribes to.
  const store = openStore({ home });
  conversation = store.createConversation({ principal: 'token:bob', sessionId: 'elsewhere', harness: 'super-pi-assistant' }).id;
  store.close();
  server = await startHttpServerProcess(box.ws, [
    '--tokens', tokens, '--max-sessions-per-principal', '3', '--session-idle', '1', '--threads', '1', '--tool-threads', '1',
  ], { SUPERPI_HOME: home });
});

test.after(async () => {
  for (const ws of sockets) ws.terminate();
  await server?.stop();
  await box?.cleanup();
  await rm(home, { recursive: true, force: true });
});

interface Client {
  readonly ws: WebSocket;
  /** Resolves with the close code and reason once the server closes the socket. */
  readonly closed: Promise<{ code: number; reason: string }>;
  /** The next message from the server that satisfies `match`. */
  next(match: (message: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  send(message: object): void;
}

/** A socket for `token`'s principal; rejects with the HTTP status if the upgrade is refused. */
function open(token: string): Promise<Client> {
  const ws = new WebSocket(server.wsUrl, 'mcp', { headers: { authorization: `Bearer ${token}` } });
  sockets.push(ws);
  const seen: Record<string, unknown>[] = [];
  const waiting: { match: (m: Record<string, unknown>) => boolean; resolve: (m: Record<string, unknown>) => void }[] = [];
  ws.on('message', (data) => {
    const message = JSON.parse(data.toString()) as Record<string, unknown>;
    const i = waiting.findIndex((w) => w.match(message));
    if (i >= 0) waiting.splice(i, 1)[0]?.resolve(message);
    else seen.push(message);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  const client: Client = {
    ws, closed,
    send: (message) => ws.send(JSON.stringify(message)),
    next: (match) => {
      const i = seen.findIndex(match);
      if (i >= 0) return Promise.resolve(seen.splice(i, 1)[0] as Record<string, unknown>);
      return guarded(new Promise((resolve) => waiting.push({ match, resolve })), 'a message from the server');
    },
  };
  return guarded(new Promise<Client>((resolve, reject) => {
    ws.once('open', () => resolve(client));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    ws.once('error', reject);
  }), 'the WebSocket upgrade');
}

/** An initialized 2025-06-18 session on a new socket. */
async function session(token: string, capabilities: object = {}): Promise<Client> {
  const c = await open(token);
  c.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities, clientInfo: { name: 'idle', version: '1' } } });
  const answer = await c.next((m) => m.id === 'init');
  assert.ok(answer.result, JSON.stringify(answer));
  c.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return c;
}

test('silent sessions up to the quota are closed 1001 naming --session-idle, and a new session is admitted', async () => {
  // A silent initialized session, and two that never sent a frame: the principal's whole quota.
  const held = [await session('alice-token'), await open('alice-token'), await open('alice-token')];
  const refused = await open('alice-token').then(() => null, (err: Error) => err.message);
  assert.is(refused, 'upgrade refused: 429', 'the quota is full');
  for (const c of held) {
    const { code, reason } = await guarded(c.closed, 'the idle session closing');
    assert.is(code, 1001);
    assert.match(reason, '--session-idle');
  }
  const again = await session('alice-token');
  assert.is(again.ws.readyState, WebSocket.OPEN, 'the freed slot is taken');
  again.ws.close();
});

test('a session waiting on a call and one subscribed to a transcript are not reaped; an idle one beside them is', async () => {
  // The call waits for the person's answer (an elicitation for bash), which the test holds back.
  const calling = await session('bob-token', { elicitation: {} });
  calling.send({ jsonrpc: '2.0', id: 'call', method: 'tools/call', params: { name: 'bash', arguments: { command: 'echo held' } } });
  const question = await calling.next((m) => m.method === 'elicitation/create');
  const subscribed = await session('bob-token');
  subscribed.send({ jsonrpc: '2.0', id: 'sub', method: 'resources/subscribe', params: { uri: `superpi://conversation/${conversation}/transcript` } });
  assert.equal((await subscribed.next((m) => m.id === 'sub')).result, {});
  // Used last: when it is reaped, the other two have been silent longer.
  const idle = await session('bob-token');
  const { code } = await guarded(idle.closed, 'the idle session closing');
  assert.is(code, 1001);
  assert.is(calling.ws.readyState, WebSocket.OPEN, 'the session with a call in flight is kept');
  assert.is(subscribed.ws.readyState, WebSocket.OPEN, 'the subscribed session is kept');
  // Its call answered (declined), the first session is idle: it is reaped in its turn.
  calling.send({ jsonrpc: '2.0', id: question.id, result: { action: 'decline' } });
  await calling.next((m) => m.id === 'call');
  assert.is((await guarded(calling.closed, 'the session closing once its call was answered')).code, 1001);
  assert.is(subscribed.ws.readyState, WebSocket.OPEN, 'the subscribed session is still kept');
  subscribed.ws.close();
});

test.run();
