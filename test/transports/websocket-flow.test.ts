// WebSocket flow control over a real socket on 127.0.0.1, against the real Application: reading stops while
// the session's unhandled input is over its budget, and while the client leaves its answers unread; past the
// output backlog the socket is closed with 1008. Asserts on the server's own accounting (the session's
// counted input, the transport's reports), not on process memory.

import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'ws';
import { TokenTable } from '../../src/auth/tokens.ts';
import { createLogger, type Logger } from '../../src/log/logger.ts';
import type { LogLevel } from '../../src/mcp/logging-level.ts';
import { Application } from '../../src/server/application.ts';
import { DEFAULT_ALLOWED_HOSTS } from '../../src/limits.ts';
import type { FlowLimits } from '../../src/transports/socket-flow.ts';
import { WebSocketTransport } from '../../src/transports/websocket.ts';
import { guarded, pollUntil } from '../hang-guard.ts';

interface Record { readonly level: LogLevel; readonly message: string; readonly data: { readonly [k: string]: unknown } }
interface Answer { id?: number | string; result?: unknown; error?: unknown }

const FRAME_CHARS = 256 * 1024;
const INITIALIZE = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'flow', version: '1' } };

let workspace = '';
const apps: Application[] = [];
const servers: Server[] = [];

/** A transport (with these budgets) on a real port, its reports recorded. */
async function serve(limits: Partial<FlowLimits>): Promise<{ app: Application; port: number; reports: Record[] }> {
  workspace ||= await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-ws-flow-')));
  const app = await Application.start({
    workspace, harness: 'super-pi-code', pageSize: 50, toolTimeoutMs: 30_000, threads: 0, toolThreads: 1,
    chaos: {}, logger: createLogger('error'), serverVersion: 'test', onGiveUp: (m) => { throw new Error(`the tree gave up: ${m}`); }, metrics: false,
  });
  apps.push(app);
  const reports: Record[] = [];
  const logger: Logger = { level: 'debug', log: (level, message, data = {}) => void reports.push({ level, message, data }) };
  const transport = new WebSocketTransport({
    sessions: app, tokens: new TokenTable(), requireAuth: false, origin: { allowedHosts: DEFAULT_ALLOWED_HOSTS }, maxMessageBytes: 4 * FRAME_CHARS, logger, ...limits,
  });
  const server = createServer((_req, res) => res.writeHead(404).end());
  server.on('upgrade', (req, socket, head: Buffer) => transport.upgrade(req, socket, head));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { app, port: (server.address() as AddressInfo).port, reports };
}

/** An initialized client socket; `answers` collects every answer by id. */
async function client(port: number): Promise<{ socket: WebSocket; answers: Map<string, Answer>; closed: Promise<number> }> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/mcp`, 'mcp');
  const answers = new Map<string, Answer>();
  socket.on('message', (data) => {
    const m = JSON.parse(String(data)) as Answer;
    if (m.id !== undefined) answers.set(String(m.id), m);
  });
  const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
  await guarded(new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  }), 'the WebSocket opening');
  socket.send(JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: INITIALIZE }));
  await pollUntil('the initialize answer', () => answers.get('init') ?? null, 10_000, 5);
  socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  return { socket, answers, closed };
}

const paused = (reports: readonly Record[], why: 'input' | 'output') => reports.filter((r) => r.message === 'WebSocket reading paused' && r.data.why === why);
const resumed = (reports: readonly Record[]) => reports.filter((r) => r.message === 'WebSocket reading resumed');

test('a client sending large frames faster than its session handles them is not read past the input budget', async () => {
  const budget = 4 * FRAME_CHARS;
  const { app, port, reports } = await serve({ maxInputBacklogBytes: budget });
  const { socket, answers, closed } = await client(port);
  const [session] = [...app.sessions()];
  assert.ok(session, 'the session is open');
  // The session's own count of what it holds unhandled, sampled while the frames arrive.
  let most = 0;
  const sampler = setInterval(() => (most = Math.max(most, session?.pendingInput ?? 0)), 1);
  const frames = 60;
  const pad = 'x'.repeat(FRAME_CHARS);
  for (let i = 0; i < frames; i++) socket.send(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'ping', params: { pad } }));
  await pollUntil('every ping answered', () => (answers.size === frames + 1 ? true : null), 30_000, 5);
  clearInterval(sampler);
  const inputPauses = paused(reports, 'input');
  assert.ok(inputPauses.length > 0, 'reading stopped at least once for the input backlog');
  // Reading stops once a frame takes the count past the budget; a frame the parser had nearly finished may follow.
  for (const p of inputPauses) assert.ok((p.data.bytes as number) <= budget + 2 * (FRAME_CHARS + 100), `paused at ${String(p.data.bytes)}`);
  assert.ok(most <= budget + 2 * (FRAME_CHARS + 100), `the session never held more than its budget and two frames (held ${most})`);
  assert.ok(resumed(reports).length > 0, 'reading resumed once the session caught up');
  assert.is(session?.pendingInput, 0, 'everything read was handled');
  assert.is(socket.readyState, WebSocket.OPEN, 'the socket is still open');
  socket.close();
  assert.is(await guarded(closed, 'the socket closing'), 1005);
});

test('a slow reader is paused, not closed, while its unread answers are within the output backlog', async () => {
  const { port, reports } = await serve({ outputPauseBytes: 64 * 1024 });
  const { socket, answers, closed } = await client(port);
  socket.pause();
  // About 16 MB of answers (13 KB each): more than loopback's socket buffers hold (a reader that does not
  // read does not grow its window), far less than the backlog (64 MiB).
  const requests = 1200;
  const id = 'y'.repeat(200);
  for (let i = 0; i < requests; i++) socket.send(JSON.stringify({ jsonrpc: '2.0', id: `${id}${i}`, method: 'tools/list' }));
  await pollUntil('reading paused for the output', () => (paused(reports, 'output').length > 0 ? true : null), 30_000, 5);
  assert.is(reports.filter((r) => r.level === 'warning').length, 0, 'no overflow');
  socket.resume();
  await pollUntil('every answer read', () => (answers.size === requests + 1 ? true : null), 30_000, 5);
  assert.ok(resumed(reports).length > 0, 'reading resumed once the answers had left');
  socket.send(JSON.stringify({ jsonrpc: '2.0', id: 'after', method: 'ping' }));
  await pollUntil('the ping after', () => answers.get('after') ?? null, 10_000, 5);
  assert.is(socket.readyState, WebSocket.OPEN, 'the socket is still open');
  socket.close();
  assert.is(await guarded(closed, 'the socket closing'), 1005);
});

test('a client that leaves its answers unread past the output backlog is closed with 1008', async () => {
  const backlog = 1024 * 1024;
  const { port, reports } = await serve({ outputPauseBytes: 64 * 1024, maxOutputBacklogBytes: backlog });
  const { socket, closed } = await client(port);
  socket.pause();
  const requests = 2000;
  for (let i = 0; i < requests; i++) socket.send(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/list' }));
  const overflow = await pollUntil('the overflow', () => reports.find((r) => r.level === 'warning') ?? null, 30_000, 5);
  assert.match(overflow.message, 'too much output unread');
  assert.ok((overflow.data.bytes as number) > backlog, 'closed past the backlog, not before');
  socket.resume();
  assert.is(await guarded(closed, 'the close frame behind the backlog', 30_000), 1008);
});

test.after(async () => {
  for (const app of apps) await app.stop();
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  if (workspace) await rm(workspace, { recursive: true, force: true });
});

test.run();
