// A WebSocket upgrade whose client goes away while its bearer token is still being checked: a real server
// process with OAuth token introspection, a real introspection endpoint on 127.0.0.1 that holds its
// answer until the client has gone, and a client on a plain socket that sends the upgrade request and then
// resets the connection (an RST; a plain end only half-closes an HTTP server's socket, seen at its next
// write). node:http takes its own 'error' listener off an upgraded socket, and nothing listened until the
// admission was over: the reset was an uncaught ECONNRESET and the whole node exited, for anyone who
// could reach the port with any made-up token. Once that was caught, the admission finishing after the
// socket had closed took a session slot that nothing gave back (the socket's 'close' had come and gone),
// locking the principal (or every anonymous caller) out one early close at a time.

import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'ws';
import { CLIENT_ID, CLIENT_SECRET, type FakeIntrospection, startFakeIntrospection } from '../auth/introspection-fixture.ts';
import { guarded } from '../hang-guard.ts';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from './fixtures.ts';

/** Alice's opaque tokens, each introspected once (an active answer is remembered). */
const TOKENS = ['alice-1', 'alice-2', 'alice-3'];

let fake: FakeIntrospection;
let box: Sandbox;
let server: RunningServer;
let port: number;

test.before(async () => {
  fake = await startFakeIntrospection();
  box = await makeSandbox();
  const secretFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'superpi-ws-admission-')), 'client-secret');
  await writeFile(secretFile, `${CLIENT_SECRET}\n`, { mode: 0o600 });
  server = await startHttpServerProcess(box.ws, [
    '--oauth-issuer', fake.issuer, '--oauth-introspection-client-id', CLIENT_ID, '--oauth-introspection-secret-file', secretFile,
    '--max-sessions-per-principal', '1', '--threads', '1', '--tool-threads', '1',
  ]);
  port = Number(new URL(server.url).port);
  for (const token of TOKENS) fake.answers.set(token, { active: true, iss: fake.issuer, aud: server.url, sub: 'alice', exp: Math.floor(Date.now() / 1000) + 3600, scope: 'mcp:read', token_type: 'Bearer' });
});

test.after(async () => {
  await server?.stop();
  await fake?.close();
  await box?.cleanup();
});

/** An upgrade request with `token`, by hand on a plain socket, reset once the server is checking the token. */
async function upgradeThenReset(token: string): Promise<void> {
  fake.behaviour = 'held';
  const held = new Promise<void>((resolve) => (fake.onHeld = resolve));
  const raw = connect(port, '127.0.0.1');
  raw.on('error', () => {});
  raw.write(`GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: mcp\r\nAuthorization: Bearer ${token}\r\n\r\n`);
  await guarded(held, 'the introspection request');
  raw.resetAndDestroy();
  // The server is told of the reset before the answer it waits for comes: both reach it on the loopback,
  // the reset sent first; the answer is written once the reset has gone out.
  await new Promise((resolve) => setImmediate(resolve));
  fake.behaviour = 'answer';
  fake.release();
}

/** A WebSocket with alice's token: 'open', or how its upgrade was refused. */
function openSocket(token: string): Promise<{ outcome: string; socket: WebSocket }> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/mcp`, 'mcp', { headers: { authorization: `Bearer ${token}` } });
  return guarded(new Promise((resolve) => {
    socket.once('open', () => resolve({ outcome: 'open', socket }));
    socket.once('unexpected-response', (_req, res) => resolve({ outcome: `refused ${res.statusCode}`, socket }));
    socket.once('error', (err) => resolve({ outcome: `error ${err.message}`, socket }));
  }), 'the WebSocket upgrade');
}

/** /health's status, or 0 when the node does not answer. */
async function health(): Promise<number> {
  return fetch(new URL('/health', server.url)).then((r) => r.status, () => 0);
}

test('upgrade requests refused at once (another path, a foreign Host, no URL) and reset as they are sent do not end the node', async () => {
  const requests = [
    ['/elsewhere', `127.0.0.1:${port}`],
    ['/mcp', 'attacker.example'],
    ['http://[', `127.0.0.1:${port}`],
  ] as const;
  for (let i = 0; i < 60; i++) {
    const [target, host] = requests[i % requests.length] as (typeof requests)[number];
    const raw = connect(port, '127.0.0.1');
    raw.on('error', () => {});
    // Connected, or refused: a node that has exited refuses the next connection.
    if (!await new Promise<boolean>((resolve) => {
      raw.once('connect', () => resolve(true));
      raw.once('close', () => resolve(false));
    })) break;
    // The request and the reset leave together: the server reads the request from a connection already reset.
    raw.write(`GET ${target} HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: mcp\r\n\r\n`);
    raw.resetAndDestroy();
  }
  assert.is(await health(), 200, `the node answers /health; exit code ${server.child.exitCode}, stderr: ${server.stderr().slice(-600)}`);
  assert.not.match(server.stderr(), /uncaught failure/);
});

test('a client resetting its upgrade while a made-up token is introspected does not end the node', async () => {
  await upgradeThenReset(`made-up-${randomBytes(8).toString('hex')}`);
  // Whatever the server does with the reset, it has done it before answering a request sent after it.
  assert.is(await health(), 200, `the node answers /health; exit code ${server.child.exitCode}, stderr: ${server.stderr().slice(-600)}`);
  assert.is(server.child.exitCode, null, 'the node is still running');
  assert.not.match(server.stderr(), /uncaught failure/);
});

test('an upgrade whose client went away before its valid token was admitted leaves its session slot free', async () => {
  for (const [round, token] of TOKENS.entries()) {
    await upgradeThenReset(token);
    assert.is(await health(), 200);
    // Alice may hold one session: a slot the reset upgrade kept would refuse her with 429.
    const { outcome, socket } = await openSocket(token);
    assert.is(outcome, 'open', `round ${round}: alice can open her one WebSocket`);
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.close();
    await guarded(closed, 'the socket closing');
    // The slot is given back when the server sees the close; a request after it is served after that.
    assert.is(await health(), 200);
  }
});

test.run();
