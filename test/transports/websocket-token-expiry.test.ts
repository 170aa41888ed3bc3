// A WebSocket opened with an OAuth access token lives until the token's `exp`, over a real socket on
// 127.0.0.1 against the real Application: a token expiring in 30 days keeps its socket serving (a delay
// past what a Node timer holds once closed it 1 ms after it opened), and one already past `exp` (still
// within the clock skew, so admitted) is closed with 1008.

import { mkdtemp, realpath } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'ws';
import { AccessTokenVerifier } from '../../src/auth/access-token.ts';
import { BearerAuthority } from '../../src/auth/bearer-authority.ts';
import { oauthConfig } from '../../src/auth/oauth-config.ts';
import { TokenTable } from '../../src/auth/tokens.ts';
import { createLogger } from '../../src/log/logger.ts';
import { Application } from '../../src/server/application.ts';
import { DEFAULT_ALLOWED_HOSTS } from '../../src/limits.ts';
import { WebSocketTransport } from '../../src/transports/websocket.ts';
import { guarded } from '../hang-guard.ts';
import { ISSUER, MemoryIssuer, RESOURCE, sign, signingKey } from '../auth/issuer-fixture.ts';

const key = await signingKey('k1');
const workspace = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-ws-expiry-')));
const app = await Application.start({
  workspace, harness: 'super-pi-code', pageSize: 50, toolTimeoutMs: 30_000, threads: 0, toolThreads: 1,
  chaos: {}, logger: createLogger('error'), serverVersion: 'test', onGiveUp: (m) => { throw new Error(`the tree gave up: ${m}`); }, metrics: false,
});
const config = oauthConfig({ issuers: [ISSUER], resource: RESOURCE });
const auth = new BearerAuthority({
  tokens: new TokenTable(), requireAuth: false,
  oauth: { config, verifier: new AccessTokenVerifier(config, { fetchJson: new MemoryIssuer(ISSUER, [key]).fetchJson }), metadataUrl: `${RESOURCE}/.well-known` },
});
const transport = new WebSocketTransport({
  sessions: app, tokens: new TokenTable(), requireAuth: false, auth, origin: { allowedHosts: DEFAULT_ALLOWED_HOSTS }, maxMessageBytes: 1 << 20, logger: createLogger('error'),
});
const server: Server = createServer((_req, res) => res.writeHead(404).end());
server.on('upgrade', (req, socket, head: Buffer) => transport.upgrade(req, socket, head));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = (server.address() as AddressInfo).port;

/** A socket opened with a token expiring `seconds` from now; its answers by id and its close code. */
async function open(seconds: number) {
  const token = await sign(key, { iss: ISSUER, aud: RESOURCE, sub: 'alice', scope: 'mcp:read', exp: Math.floor(Date.now() / 1000) + seconds });
  const socket = new WebSocket(`ws://127.0.0.1:${port}/mcp`, 'mcp', { headers: { authorization: `Bearer ${token}` } });
  const answers = new Map<string, (value: unknown) => void>();
  socket.on('message', (data) => {
    const m = JSON.parse(String(data)) as { id?: string };
    if (m.id !== undefined) answers.get(m.id)?.(m);
  });
  const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
  await guarded(new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  }), 'the WebSocket opening');
  /** The answer to a request, or the close code if the socket closes first. */
  const ask = (id: string, method: string, params: unknown = {}) => {
    const answered = new Promise<unknown>((resolve) => answers.set(id, resolve));
    socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    return guarded(Promise.race([answered, closed.then((code) => ({ closed: code }))]), `the answer to ${method}`);
  };
  return { socket, closed, ask };
}

test('a token expiring in 30 days (past what one Node timer holds) keeps its socket open and serving', async () => {
  const { socket, closed, ask } = await open(30 * 86_400);
  const init = await ask('init', 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'expiry', version: '1' } }) as { result?: unknown; closed?: number };
  assert.ok(init.result !== undefined, `initialize answered, not ${JSON.stringify(init)}`);
  const ping = await ask('ping', 'ping') as { result?: unknown; closed?: number };
  assert.ok(ping.result !== undefined, `ping answered, not ${JSON.stringify(ping)}`);
  assert.is(socket.readyState, WebSocket.OPEN);
  socket.close();
  assert.is(await guarded(closed, 'the socket closing'), 1005);
});

test('a token past its exp (admitted within the clock skew) has its socket closed with 1008', async () => {
  const { closed } = await open(-5);
  assert.is(await guarded(closed, 'the close at exp'), 1008);
});

test.after(async () => {
  await app.stop();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

test.run();
