// runner-timeout-ms: 600000
// A crash costs one request, not a mailbox (issue 11), over Streamable HTTP and WebSocket: one server per
// fault mode, an HTTP session and a WebSocket session side by side, 3,000 pipelined read/grep calls each.
// Each test first proves from outside that the faults happened (the restart count on /health, which
// counts only real restarts) — at least N, in as many rounds of calls as that takes (at most five) — then asserts what survived. Past the session's
// restart intensity, every request is answered and the session is closed: its id answers 404, its
// socket is closed.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { describeTally, httpWire, type HttpWire, pipeline, type Wire, wsWire, type WsWire } from './chaos-wire.ts';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from './fixtures.ts';

const CALLS = 3000;
/** Calls kept in flight per session: under the tool pool's 64 waiting calls per session. */
const WINDOW = 60;
const ANSWER_WITHIN_MS = 30_000;

const chaos = suite('crash recovery over HTTP and WebSocket');
let box: Sandbox;
const servers: RunningServer[] = [];

chaos.before(async () => {
  box = await makeSandbox();
});
chaos.after.each(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});
chaos.after(async () => {
  await box.cleanup();
});

/**
 * At crash-actor=0.002 the crashes a second grow with the server's speed; a session's default intensity (10
 * a second, the crash-actor=0.05 case below) would then make the test measure the machine, so those runs
 * give the session room (`tolerant`) and test recovery: every request answered, 99% succeeding.
 */
const TOLERANT = ['--restart-intensity', 'session=1000/1'];

async function server(flag: string, tolerant = false): Promise<RunningServer> {
  const s = await startHttpServerProcess(box.ws, ['--threads', '2', '--tool-threads', '1', '--chaos', flag, ...(tolerant ? TOLERANT : [])]);
  servers.push(s);
  return s;
}

async function restarts(s: RunningServer): Promise<number> {
  const health = await (await fetch(new URL('/health', s.url))).json() as { restarts?: number };
  assert.type(health.restarts, 'number', '/health reports restarts');
  return health.restarts as number;
}

async function stillWorks(wire: Wire): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const r = await wire.request('tools/call', { name: 'read', arguments: { path: 'README.md' } }, ANSWER_WITHIN_MS);
    if (r?.result && !r.result.isError) {
      assert.match(r.result.content?.[0]?.text ?? '', /Demo project/);
      return;
    }
  }
  assert.unreachable('the session does not work after the faults');
}

/**
 * Rounds of CALLS per session run until the faults reached the test's minimum (at most this many): on a
 * fast run one round can end before the fourth fault, and the count, not the luck, is what is tested.
 */
const MAX_ROUNDS = 5;

for (const [flag, minRestarts] of [['kill-worker=250', 4], ['crash-actor=0.002', 4]] as const) {
  chaos(`--chaos ${flag}: faults really happen; every request over HTTP and WebSocket is answered, >= 99% succeed, both sessions work after`, async () => {
    const s = await server(flag, flag.startsWith('crash-actor'));
    const http: HttpWire = await httpWire(s.url);
    const socket: WsWire = await wsWire(s.wsUrl);
    const before = await restarts(s);
    let faults = 0;
    let rounds = 0;
    while (rounds < MAX_ROUNDS && (rounds === 0 || faults < minRestarts)) {
      rounds++;
      const [overHttp, overWs] = await Promise.all([pipeline(http, CALLS, WINDOW, ANSWER_WITHIN_MS), pipeline(socket, CALLS, WINDOW, ANSWER_WITHIN_MS)]);
      faults = (await restarts(s)) - before;
      console.log(`  ${flag}, round ${rounds}: HTTP ${describeTally(overHttp)}; WebSocket ${describeTally(overWs)}; ${faults} restarts so far`);
      for (const [name, tally] of [['HTTP', overHttp], ['WebSocket', overWs]] as const) {
        assert.is(tally.unanswered, 0, `${name}: every request is answered (round ${rounds})`);
        assert.ok(tally.ok >= 0.99 * CALLS, `${name}: at least 99% succeed (round ${rounds}): ${describeTally(tally)}`);
      }
    }
    assert.ok(faults >= minRestarts, `at least ${minRestarts} restarts during ${rounds} round(s) (${faults})`);
    await stillWorks(http);
    await stillWorks(socket);
    await socket.close();
    await http.close();
  });
}

chaos('--chaos crash-actor=0.05 (past the restart intensity): every request is answered, then the HTTP session answers 404 and the socket is closed', async () => {
  const s = await server('crash-actor=0.05');
  const http = await httpWire(s.url);
  const socket = await wsWire(s.wsUrl);
  const before = await restarts(s);
  // The bound: all answered within 10 s — each request's own deadline, not a timing assertion.
  const [overHttp, overWs] = await Promise.all([pipeline(http, CALLS, WINDOW, 10_000), pipeline(socket, CALLS, CALLS, 10_000)]);
  const faults = (await restarts(s)) - before;
  console.log(`  crash-actor=0.05: HTTP ${describeTally(overHttp)}; WebSocket ${describeTally(overWs)}; ${faults} restarts`);
  assert.ok(faults >= 10, `at least 10 restarts (${faults})`);
  assert.is(overHttp.unanswered, 0, `HTTP: every request is answered: ${describeTally(overHttp)}`);
  assert.ok((overHttp.errors.get('session-given-up') ?? 0) > 0, `HTTP: the give-up is named in the answers: ${describeTally(overHttp)}`);
  assert.ok((overHttp.errors.get('http-404') ?? 0) > 0, `HTTP: requests after the session closed get 404: ${describeTally(overHttp)}`);
  assert.is(await http.status(), 404, 'the given-up HTTP session answers 404');
  // Every call was written before the give-up, so each is answered before the close frame.
  assert.is(overWs.unanswered, 0, `WebSocket: every request is answered: ${describeTally(overWs)}`);
  assert.is(await socket.closed, 1011, 'the given-up WebSocket session is closed');
  assert.ok((overWs.errors.get('session-given-up') ?? 0) > 0, `WebSocket: the give-up is named in the answers: ${describeTally(overWs)}`);
});

chaos.run();
