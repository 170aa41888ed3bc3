// Recovery: from a killed scheduler worker thread to the next successful reply of a session that lived
// on it. In-process, as section 3 of bench/actors.ts does it: an Application (2 scheduler threads), one
// initialized session; each round kills the thread hosting the session's connection actor and sends
// `tools/call read` of a small file (a new id each time) until one succeeds. A read needs the session's
// initialized state, so a success also shows the restarted actor resumed from its checkpoint. A second
// session on the other thread makes a call there first, so the thread the session moves to is warm, as
// in any server with sessions on every thread; a few rounds without it show the cold case.
// Target (issue 6): under 200 ms, judged on the worst warm round. Absolute, so no peer.
// Then (issue 11) a second Application under `--chaos kill-worker=250`: 3,000 read/grep calls pipelined
// (60 in flight); the share that succeeds and the p99 latency of the successful ones, against the same
// run on the code before redelivery (figures measured once on f558321, kept below as literals).
// Usage: npm run build && tsx bench/recovery.ts [--quick]

import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ActorThread } from '../src/actors/actor-thread.ts';
import { Application } from '../src/server/application.ts';
import { createLogger } from '../src/log/logger.ts';
import type { Session } from '../src/connection/session.ts';
import { type BenchOptions, type BenchSection, type BenchSectionRunner, isMain } from './lib/report.ts';
import { RpcClient, type RpcReply } from './lib/rpc-client.ts';
import { fmt, nowUs, percentile, sleep, table } from './lib/stats.ts';

const TARGET_MS = 200;
/** Rounds with a warm surviving thread (the target), then with a cold one (informational). */
const ROUNDS = 30;
const QUICK_ROUNDS = 10;
const COLD_ROUNDS = 6;
const QUICK_COLD_ROUNDS = 3;
/** The schedulers supervisor allows 10 restarts per 2 s: kills are spaced so the bench never trips it. */
const MIN_MS_BETWEEN_KILLS = 250;
/** Calls of the kill-worker run, and how many are kept in flight (under the pool's 64 waiting per session). */
const STORM_CALLS = 3000;
const QUICK_STORM_CALLS = 1000;
const STORM_WINDOW = 60;
const STORM_KILL_EVERY_MS = 250;
/**
 * The same run on f558321 (before redelivery: every request in flight on a dead actor was answered
 * -32010), measured once on the loaded 2-core machine this was written on (2026-12-03, underKillWorker(3000)
 * run in a copy of that tree): 2760 of 3000 succeeded, p99 142.7 ms. The same day this code: 3000 of 3000, p99 129.1 ms.
 */
const BEFORE = { okShare: 2760 / 3000, p99Ms: 142.7 };
/** -32010: a request in flight on the actor when it died. */
const ABORTED = -32010;
const INITIALIZE = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench-recovery', version: '1.0.0' } };
const SMALL_FILE = 'small.txt';
const SMALL_TEXT = Array.from({ length: 20 }, (_, i) => `line ${i + 1}: the quick brown fox`).join('\n');

function isReadSuccess(reply: RpcReply): boolean {
  const result = reply.result as { isError?: boolean; content?: { text?: string }[] } | undefined;
  return result !== undefined && result.isError !== true && result.content?.[0]?.text === SMALL_TEXT;
}

/** One session's 3,000 pipelined read/grep calls while a scheduler worker is killed every 250 ms. */
export async function underKillWorker(calls: number): Promise<{ ok: number; total: number; p99Ms: number; restarts: number; gaveUp: string | null }> {
  const workspace = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-bench-storm-')));
  let app: Application | null = null;
  let gaveUp: string | null = null;
  try {
    await writeFile(path.join(workspace, SMALL_FILE), SMALL_TEXT);
    app = await Application.start({
      workspace, harness: 'super-pi-code', pageSize: 50, toolTimeoutMs: 30_000, threads: 2, toolThreads: 1,
      chaos: { killWorkerEveryMs: STORM_KILL_EVERY_MS }, logger: createLogger('error'), serverVersion: 'bench', onGiveUp: (message) => { gaveUp = message; },
    });
    const client = new RpcClient();
    const sessionEntry = await app.open({ principal: { kind: 'local' }, transport: 'stdio', send: (out) => client.receive(out.line), onGiveUp: (message) => { gaveUp = message; } });
    const session = sessionEntry.session;
    client.attach((text) => session.receiveFrame({ kind: 'line', text }));
    for (let attempt = 0; ; attempt++) {
      if ((await client.request('initialize', INITIALIZE, 30_000)).result !== undefined) break;
      if (attempt >= 5) throw new Error('initialize kept failing under kill-worker');
    }
    const latencies: number[] = [];
    let ok = 0;
    let next = 0;
    await Promise.all(Array.from({ length: STORM_WINDOW }, async () => {
      while (next < calls) {
        const i = next++;
        const params = i % 2 === 0 ? { name: 'read', arguments: { path: SMALL_FILE } } : { name: 'grep', arguments: { pattern: 'fox', path: SMALL_FILE } };
        const t0 = nowUs();
        const reply = await client.request('tools/call', params, 30_000).catch((err: unknown) => ({ error: { code: 0, message: String(err) } }) as RpcReply);
        const result = reply.result as { isError?: boolean } | undefined;
        if (result !== undefined && result.isError !== true) {
          ok++;
          latencies.push((nowUs() - t0) / 1000);
        }
      }
    }));
    return { ok, total: calls, p99Ms: latencies.length > 0 ? percentile(latencies, 99) : Number.NaN, restarts: app.health().restarts, gaveUp };
  } finally {
    await app?.stop();
    await rm(workspace, { recursive: true, force: true });
  }
}

export const run: BenchSectionRunner = async (options: BenchOptions = {}): Promise<BenchSection> => {
  const rounds = options.quick ? QUICK_ROUNDS : ROUNDS;
  const coldRounds = options.quick ? QUICK_COLD_ROUNDS : COLD_ROUNDS;
  const progress = options.progress ?? ((line: string) => process.stderr.write(`  ${line}\n`));
  const workspace = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-bench-recovery-')));
  let app: Application | null = null;
  let gaveUp: string | null = null;
  try {
    await writeFile(path.join(workspace, SMALL_FILE), SMALL_TEXT);
    app = await Application.start({
      workspace, harness: 'super-pi-code', pageSize: 50, toolTimeoutMs: 30_000, threads: 2, toolThreads: 1,
      chaos: {}, logger: createLogger('error'), serverVersion: 'bench', onGiveUp: (message) => { gaveUp = message; },
    });
    const started = app;
    const client = new RpcClient();
    const sessionEntry = await started.open({ principal: { kind: 'local' }, transport: 'stdio', send: (out) => client.receive(out.line) });
    const session = sessionEntry.session;
    client.attach((text) => session.receiveFrame({ kind: 'line', text }));
    const init = await client.request('initialize', INITIALIZE);
    if (init.result === undefined) throw new Error(`initialize failed: ${JSON.stringify(init)}`);
    const read = async (): Promise<RpcReply> => client.request('tools/call', { name: 'read', arguments: { path: SMALL_FILE } }, 5_000);
    const first = await read();
    if (!isReadSuccess(first)) throw new Error(`the first read failed: ${JSON.stringify(first)}`);

    const bothReady = async () => {
      for (let i = 0; i < 500; i++) {
        const threads = started.scheduler.threads();
        if (threads.length === 2 && threads.every((t) => t.isReady) && session.actorId !== null) return;
        await sleep(10);
      }
      throw new Error('the scheduler threads did not come back within 5 s');
    };
    const hostOf = (s: Session | null) => (s?.actorId ? started.scheduler.threads().find((t) => t.actors.has(s.actorId ?? '')) ?? null : null);
    /** Threads that have served a tools/call (so they have compiled the read tool's argument validator). */
    const warmed = new WeakSet<ActorThread>();
    const readIn = async (s: Session, c: RpcClient): Promise<void> => {
      const thread = hostOf(s);
      const reply = await c.request('tools/call', { name: 'read', arguments: { path: SMALL_FILE } }, 5_000);
      if (!isReadSuccess(reply)) throw new Error(`read failed: ${JSON.stringify(reply).slice(0, 300)}`);
      if (thread) warmed.add(thread);
    };
    // The neighbour: a second session on the other thread, which makes a call there, as any server with
    // sessions on every thread has; it is replaced when a kill has moved it next to the measured session.
    let neighbour: { session: Session; id: string; client: RpcClient } | null = null;
    const closeNeighbour = async () => {
      if (neighbour) await started.close(neighbour.id);
      neighbour = null;
    };
    const placeNeighbour = async () => {
      if (neighbour && hostOf(neighbour.session) !== hostOf(session)) return;
      await closeNeighbour();
      const c = new RpcClient();
      const sEntry = await started.open({ principal: { kind: 'local' }, transport: 'stdio', send: (out) => c.receive(out.line) });
      const s = sEntry.session;
      c.attach((text) => s.receiveFrame({ kind: 'line', text }));
      if ((await c.request('initialize', INITIALIZE)).result === undefined) throw new Error('the neighbour did not initialize');
      neighbour = { session: s, id: sEntry.id, client: c };
      if (hostOf(s) === hostOf(session)) throw new Error('the neighbour session was placed on the measured session\'s thread');
    };

    const warm: number[] = [];
    const cold: number[] = [];
    const replacementStarted: number[] = [];
    const replacementBooted: number[] = [];
    let aborted = 0;
    let kills = 0;
    let lastKill = 0;
    const oneKill = async (): Promise<{ ms: number; survivorWarm: boolean }> => {
      await bothReady();
      await sleep(Math.max(0, MIN_MS_BETWEEN_KILLS - (performance.now() - lastKill)));
      await readIn(session, client); // the session is up and warm
      const host = hostOf(session);
      if (!host) throw new Error('no thread hosts the session');
      const survivors = new Set(started.scheduler.threads());
      const survivor = [...survivors].find((t) => t !== host);
      const survivorWarm = survivor !== undefined && warmed.has(survivor);
      lastKill = performance.now();
      kills++;
      const t0 = nowUs();
      host.kill();
      // Alongside: until the supervisor starts a replacement thread, and until that thread is ready.
      const replacement = (async () => {
        for (;;) {
          const fresh = started.scheduler.threads().find((t) => !survivors.has(t));
          if (fresh) {
            const at = nowUs() - t0;
            await fresh.ready;
            return { startedAt: at, readyAt: nowUs() - t0 };
          }
          await sleep(1);
        }
      })();
      for (;;) {
        const reply = await read();
        if (isReadSuccess(reply)) break;
        if (reply.error?.code !== ABORTED) throw new Error(`unexpected reply while recovering: ${JSON.stringify(reply).slice(0, 300)}`);
        aborted++;
      }
      const ms = (nowUs() - t0) / 1000;
      if (survivor) warmed.add(survivor);
      const { startedAt, readyAt } = await replacement;
      replacementStarted.push(startedAt / 1000);
      replacementBooted.push((readyAt - startedAt) / 1000);
      return { ms, survivorWarm };
    };

    progress(`recovery: ${rounds} kills with a warm surviving thread`);
    while (warm.length < rounds) {
      await bothReady();
      await placeNeighbour();
      const n = neighbour as { session: Session; client: RpcClient } | null;
      if (n) await readIn(n.session, n.client);
      const k = await oneKill();
      if (!k.survivorWarm) throw new Error('the surviving thread was not warm');
      warm.push(k.ms);
    }
    await closeNeighbour();
    progress(`recovery: ${coldRounds} kills with a cold surviving thread`);
    for (let attempt = 0; cold.length < coldRounds && attempt < coldRounds * 3; attempt++) {
      const k = await oneKill();
      if (!k.survivorWarm) cold.push(k.ms);
    }
    const restarts = started.health().restarts;
    const entryMode = started.scheduler.entryMode;
    await started.close(sessionEntry.id);
    if (gaveUp) throw new Error(`the application gave up: ${gaveUp}`);

    const max = Math.max(...warm);
    const met = max < TARGET_MS;
    const ms = (v: number) => `${fmt(v, v >= 10 ? 1 : 2)} ms`;
    const stats = (xs: number[]) => (xs.length === 0 ? ['n/a', 'n/a', 'n/a'] : [ms(percentile(xs, 50)), ms(percentile(xs, 95)), ms(Math.max(...xs))]);
    const notes = [
      table(['measure', 'rounds', 'p50', 'p95', 'max'], [
        ['kill → successful reply, warm surviving thread', String(warm.length), ...stats(warm)],
        ['kill → successful reply, cold surviving thread', String(cold.length), ...stats(cold)],
        ['kill → replacement thread started', String(replacementStarted.length), ...stats(replacementStarted)],
        ['replacement started → ready (boot)', String(replacementBooted.length), ...stats(replacementBooted)],
      ]),
      `${kills} kills in all; ${aborted} reads were answered -32010 (in flight on the dying actor) on the way; ${restarts} restarts counted by the supervisors. ` +
        `Scheduler threads boot from ${entryMode === 'built' ? 'dist/ (the bundle)' : 'src/ through tsx — dist/ was stale, so boot times are the slow path'}. ` +
        `The session's actor is restarted on the surviving thread, so its reply does not wait for the replacement thread's boot.`,
      `Cold surviving thread: when the thread the session moves to has never served a \`tools/call\` since it booted (here: the previous round's replacement, with no other session on it), ` +
        `the first call there compiles the tool's argument validator (\`src/mcp/arguments.ts\` compiles with Ajv lazily, per thread: about 100–130 ms for the first schema on this machine, measured alone — the bulk of the cold figure; the rest is the call path's first run in that thread), ` +
        `and that lands inside the recovery time${cold.length > 0 && Math.max(...cold) >= TARGET_MS ? `, which then misses the ${TARGET_MS} ms target (max ${ms(Math.max(...cold))})` : ''}. ` +
        `In a server whose threads all host sessions that make calls, the survivor is warm, which is what the target row measures. ` +
        `What it would take: compile the eight validators when a scheduler thread boots, before it reports ready (boot is off the recovery path, since actors restart on the survivor), or generate them at build time with Ajv's standalone code, so no thread ever compiles at its first call.`,
    ];
    if (!met) notes.push(`**Target missed**: the worst warm round took ${ms(max)} (p95 ${ms(percentile(warm, 95))}).`);
    const stormCalls = options.quick ? QUICK_STORM_CALLS : STORM_CALLS;
    progress(`recovery: ${stormCalls} pipelined read/grep calls under kill-worker=${STORM_KILL_EVERY_MS}`);
    const storm = await underKillWorker(stormCalls);
    const share = (x: number) => (Number.isNaN(x) ? 'not measured' : `${fmt(x * 100, 2)}%`);
    notes.push(`Under \`--chaos kill-worker=${STORM_KILL_EVERY_MS}\` (in-process, 2 scheduler threads, 1 tool thread, one session, ${storm.total} calls alternating \`read\` and \`grep\` of a small file, ${STORM_WINDOW} in flight): ` +
      `${storm.ok} succeeded; ${storm.restarts} restarts counted by the supervisors${storm.gaveUp ? `; gave up: ${storm.gaveUp}` : ''}. ` +
      `"Before" is the same run on f558321, when every request in flight on a dead actor was answered -32010.`);
    return {
      title: 'Recovery: a killed scheduler thread to the next successful reply',
      command: 'npm run build && npx tsx bench/recovery.ts',
      method: `In-process, as section 3 of \`bench/actors.ts\`: an \`Application\` with 2 scheduler threads and 1 tool thread, one initialized session driven through \`Session.receiveFrame\`. ` +
        `Each round waits until both threads are ready (kills ≥ ${MIN_MS_BETWEEN_KILLS} ms apart: the schedulers supervisor allows 10 restarts per 2 s), reads once, kills the thread that hosts the session's connection actor (\`SchedulerThread.kill\`: the worker is terminated), then sends \`tools/call read\` of a small file, a new id each time, until one succeeds. ` +
        `A read needs the session's initialized state, so a success shows the actor resumed from its checkpoint. ` +
        `${rounds} rounds with a neighbour session on the other thread that has made a call there (a warm surviving thread, as in a server with sessions on every thread), then ${coldRounds} rounds without (the survivor has served no call since it booted). ` +
        `The target is absolute (no peer) and judged on the worst warm round, not the median.`,
      rows: [
        { measure: `kill → next successful reply, max of ${warm.length}`, ours: ms(max), peer: '', peerName: 'none', ratio: null, target: `< ${TARGET_MS} ms`, met },
        { measure: `kill → next successful reply, p50 of ${warm.length}`, ours: ms(percentile(warm, 50)), peer: '', peerName: 'none', ratio: null, target: '', met: null },
        { measure: `same, cold surviving thread (first call compiles its validator), max of ${cold.length}`, ours: cold.length > 0 ? ms(Math.max(...cold)) : 'n/a', peer: '', peerName: 'none', ratio: null, target: '', met: null },
        { measure: `calls that succeed under kill-worker=${STORM_KILL_EVERY_MS}, ${storm.total} pipelined read/grep`, ours: share(storm.ok / storm.total), peer: share(BEFORE.okShare), peerName: 'before (f558321)', ratio: null, target: '≥ 99%', met: storm.ok >= 0.99 * storm.total },
        { measure: `p99 latency of the calls that succeed, same run`, ours: Number.isNaN(storm.p99Ms) ? 'n/a' : ms(storm.p99Ms), peer: Number.isNaN(BEFORE.p99Ms) ? 'not measured' : ms(BEFORE.p99Ms), peerName: 'before (f558321)', ratio: null, target: '', met: null },
      ],
      notes,
    };
  } finally {
    await app?.stop();
    await rm(workspace, { recursive: true, force: true });
  }
};

if (isMain(import.meta.url)) {
  const { printSection } = await import('./run.ts');
  printSection(await run({ quick: process.argv.includes('--quick') }));
}
