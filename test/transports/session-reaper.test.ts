// The idle-session reaper on a fake clock, against the real registry (the Application) and the
// web-standard Streamable HTTP core: an HTTP session idle past the limit is ended (its id answers 404);
// one with a GET stream open, or with a call in flight, is not. Time only moves when the test says so.

import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { TokenTable } from '../../src/auth/tokens.ts';
import { createLogger } from '../../src/log/logger.ts';
import { Application } from '../../src/server/application.ts';
import { FakeClock } from '../../src/supervisor/clock.ts';
import { DEFAULT_ALLOWED_HOSTS } from '../../src/limits.ts';
import { SessionReaper } from '../../src/transports/session-reaper.ts';
import { StreamableHttp } from '../../src/transports/streamable-http.ts';
import { guarded } from '../hang-guard.ts';

const IDLE_MS = 1000;
const logger = createLogger('error');
let workspace: string;
let app: Application;
let http: StreamableHttp;
const clock = new FakeClock();

const headers = (id?: string): Record<string, string> => ({
  host: 'localhost', accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': '2025-06-18',
  ...(id === undefined ? {} : { 'mcp-session-id': id }),
});
const post = (message: object, id?: string) => http.handle(new Request('http://localhost/mcp', { method: 'POST', headers: headers(id), body: JSON.stringify(message) }));

/** An initialized HTTP session's id. */
async function session(capabilities: object = {}): Promise<string> {
  const response = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities, clientInfo: { name: 'reaper', version: '1' } } });
  assert.is(response.status, 200);
  await response.text();
  const id = response.headers.get('mcp-session-id');
  assert.ok(id, 'the session has an id');
  return id as string;
}

const pingStatus = async (id: string) => (await post({ jsonrpc: '2.0', id: 'ping', method: 'ping' }, id)).status;

test.before(async () => {
  workspace = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-reaper-')));
  app = await Application.start({
    workspace, harness: 'super-pi-code', pageSize: 50, toolTimeoutMs: 30_000, threads: 0, toolThreads: 1, chaos: {}, logger,
    serverVersion: 'test', onGiveUp: (m) => { throw new Error(m); }, metrics: false, allowAnonymousWrites: true, clock,
  });
  http = new StreamableHttp({ sessions: app, tokens: new TokenTable(), requireAuth: false, origin: { allowedHosts: DEFAULT_ALLOWED_HOSTS }, maxMessageBytes: 1 << 20, logger });
});

test.after(async () => {
  await app.stop();
  await rm(workspace, { recursive: true, force: true });
});

test('an idle session is reaped past the limit; one with a GET stream open or a call in flight is not', async () => {
  const reaper = new SessionReaper({ host: app, clock, transport: 'http', idleMs: IDLE_MS });
  const idle = await session();
  const streaming = await session();
  const get = await http.handle(new Request('http://localhost/mcp', { method: 'GET', headers: headers(streaming) }));
  assert.is(get.headers.get('content-type'), 'text/event-stream');
  // The call waits for the person's answer (elicitation), which never comes: it stays in flight.
  const calling = await session({ elicitation: {} });
  const call = post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'bash', arguments: { command: 'echo never' } } }, calling);
  await guarded(call, 'the call\'s POST opening its stream for the question');

  clock.advance(IDLE_MS);
  assert.ok(app.registry.get(idle), 'at exactly the limit nothing is reaped');
  clock.advance(IDLE_MS);
  assert.is(app.registry.get(idle), undefined, 'the idle session left the registry');
  assert.is(await pingStatus(idle), 404);
  assert.ok(app.registry.get(streaming), 'the session with a GET stream open is kept');
  assert.ok(app.registry.get(calling), 'the session with a call in flight is kept');

  // Its GET stream closed, the second session is idle too (its last use was its GET, at time 0).
  await get.body?.cancel();
  clock.advance(IDLE_MS);
  assert.is(app.registry.get(streaming), undefined, 'reaped once its stream closed');
  assert.ok(app.registry.get(calling), 'the call is still in flight');
  reaper.stop();
  assert.is(clock.pendingTimers, 0, 'a stopped reaper leaves no timer');
});

test('a session used within the limit is not reaped: each request counts as use', async () => {
  const reaper = new SessionReaper({ host: app, clock, transport: 'http', idleMs: IDLE_MS });
  const used = await session();
  clock.advance(IDLE_MS - 1);
  assert.is(await pingStatus(used), 200);
  clock.advance(IDLE_MS);
  assert.ok(app.registry.get(used), 'used 1 ms before the first look: still open at the second');
  clock.advance(IDLE_MS);
  assert.is(app.registry.get(used), undefined);
  reaper.stop();
});

test.run();
