// The idle-session reaper on a fake clock, against the real registry (the Application) and the
// web-standard Streamable HTTP core: an HTTP session idle past the limit is ended (its id answers 404);
// one with a GET stream open, or with a call in flight, is not. Time only moves when the test says so.

import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { TokenTable } from '../../src/auth/tokens.ts';
import { createLogger } from '../../src/log/logger.ts';
import { Application } from '../../src/server/application.ts';
import { FakeClock } from '../../src/supervisor/clock.ts';
import { DEFAULT_ALLOWED_HOSTS } from '../../src/limits.ts';
import { SessionReaper } from '../../src/transports/session-reaper.ts';
import type { HostedSession, SessionHost } from '../../src/transports/session-host.ts';
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

  // Its GET stream closed, the second session is idle too, counted from the last look that found the
  // stream open (a session busy at a look was in use then), not from its GET at time 0.
  await get.body?.cancel();
  clock.advance(IDLE_MS);
  assert.ok(app.registry.get(streaming), 'one idle limit has not passed since the stream was last seen open');
  clock.advance(IDLE_MS);
  assert.is(app.registry.get(streaming), undefined, 'reaped once idle past the limit after its stream closed');
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

/** One step of a schedule: time passes, then each session is used or not, and is busy or not from then on. */
interface Step { readonly ms: number; readonly used: readonly boolean[]; readonly busy: readonly boolean[] }

test('property: a session is ended only when not busy and idle past the limit since its last use and the last look that found it busy', () => {
  const SESSIONS = 3;
  const step = fc.record({
    ms: fc.integer({ min: 1, max: 2 * IDLE_MS }),
    used: fc.array(fc.boolean(), { minLength: SESSIONS, maxLength: SESSIONS }),
    busy: fc.array(fc.boolean(), { minLength: SESSIONS, maxLength: SESSIONS }),
  });
  fc.assert(fc.property(fc.array(step, { minLength: 1, maxLength: 30 }), (steps: Step[]) => {
    const fake = new FakeClock();
    // Stub sessions that record their last use and the last time a look found them busy.
    const open = new Map<string, Omit<HostedSession, 'lastActivity'> & { lastActivity: number; busyNow: boolean; busySeen: number }>();
    for (let i = 0; i < SESSIONS; i++) {
      const s = {
        id: `s${i}`, principal: { kind: 'anonymous' } as const, transport: 'websocket' as const, lastActivity: 0, inFlight: 0, pendingInput: 0,
        busyNow: false, busySeen: Number.NEGATIVE_INFINITY,
        whenInputBelow: async () => {}, deliver: () => {}, drain: async () => {}, answerInFlight: () => {}, watching: () => false,
        touch() { this.lastActivity = fake.now(); },
        busy() { if (this.busyNow) this.busySeen = fake.now(); return this.busyNow; },
      };
      open.set(s.id, s);
    }
    const ended: string[] = [];
    const host: Pick<SessionHost, 'sessions' | 'close'> = { sessions: () => open.values(), close: async () => {} };
    const reaper = new SessionReaper({
      host, clock: fake, transport: 'websocket', idleMs: IDLE_MS,
      end: (s) => {
        const stub = open.get(s.id);
        assert.ok(stub, 'an ended session is not ended again');
        assert.not.ok(stub.busyNow, `${s.id} was ended while busy`);
        const since = fake.now() - Math.max(stub.lastActivity, stub.busySeen);
        assert.ok(since > IDLE_MS, `${s.id} was ended ${since} ms after its last use or busy look (limit ${IDLE_MS})`);
        open.delete(s.id);
        ended.push(s.id);
      },
    });
    for (const { ms, used, busy } of steps) {
      fake.advance(ms);
      for (const [i, s] of [...Array(SESSIONS).keys()].map((i) => [i, open.get(`s${i}`)] as const)) {
        if (!s) continue;
        if (used[i]) s.lastActivity = fake.now();
        s.busyNow = busy[i] === true;
      }
    }
    // Nothing busy any more: every session is ended within two idle limits and a look.
    for (const s of open.values()) s.busyNow = false;
    fake.advance(3 * IDLE_MS);
    assert.is(open.size, 0, 'every session left idle was ended');
    reaper.stop();
  }), { numRuns: 300 });
});

test.run();
