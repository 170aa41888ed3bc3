// The actor runtime on real scheduler worker threads: spawn, call, cast, exits, and the rule that a
// worker's death (thrown, killed, hung, out of memory) is the exit of every actor on it.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type ActorRef, CallTimeoutError } from '../../src/actors/actor-ref.ts';
import type { BehaviourRef } from '../../src/actors/behaviour.ts';
import type { InlineSeries } from '../../src/actors/inline-tally.ts';
import { Scheduler } from '../../src/actors/scheduler.ts';
import { schedulerEntry } from '../../src/server/thread-entries.ts';
import { THREAD_MESSAGES_PER_POST } from '../../src/limits.ts';

const fixtures = new URL('./fixtures/test-behaviours.ts', import.meta.url).href;
const echo: BehaviourRef = { module: fixtures, export: 'echoBehaviour' };
const log = () => {};

/** Every scheduler a test started; stopped after each test even when the test failed, so no thread outlives it. */
const started: Scheduler[] = [];
async function stopAll(): Promise<void> {
  for (const s of started.splice(0)) for (const t of s.threads()) { t.kill(); await t.exited; }
}

function withScheduler(threads: number, limits?: { heartbeatIntervalMs: number; heartbeatTimeoutMs: number; maxOldGenerationSizeMb: number }, onInlineCalls?: (series: readonly InlineSeries[]) => void) {
  // Test behaviours are TypeScript files: the threads run from source.
  const scheduler = new Scheduler({ threads, log, entry: schedulerEntry('source'), ...(limits ? { limits } : {}), ...(onInlineCalls ? { onInlineCalls } : {}) });
  started.push(scheduler);
  for (let i = 0; i < threads; i++) scheduler.startThread(i);
  return { scheduler, stop: async () => { for (const t of scheduler.threads()) { t.stop(); await t.exited; } } };
}

function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<T>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms); });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

const actors = suite('actors on scheduler threads');
actors.after.each(stopAll);

actors('a call gets the behaviour reply; casts run in order, one at a time', async () => {
  const { scheduler, stop } = withScheduler(2);
  const a = await scheduler.spawn(echo, { greeting: 'hi' });
  assert.equal(await a.call({ op: 'echo', value: 7 }), { greeting: 'hi', value: 7 });
  const seen: unknown[] = [];
  a.onMessage((m) => seen.push(m));
  for (let i = 0; i < 100; i++) a.cast({ op: 'emit', value: i });
  assert.is(await a.call({ op: 'count' }), 102);
  assert.equal(seen, Array.from({ length: 100 }, (_, i) => i));
  await stop();
});

actors('what one turn sends a thread arrives in order: past THREAD_MESSAGES_PER_POST, and an actor spawned mid-turn before its casts', async () => {
  const { scheduler, stop } = withScheduler(1);
  const a = await scheduler.spawn(echo, { greeting: 'a' });
  const seenA: unknown[] = [];
  a.onMessage((m) => seenA.push(m));
  const n = THREAD_MESSAGES_PER_POST * 2 + 5;
  // All in one turn of this thread (an await of a spawn settles in a microtask, before the turn ends).
  for (let i = 0; i < n; i++) a.cast({ op: 'emit', value: i });
  const b = await scheduler.spawn(echo, { greeting: 'b' });
  const seenB: unknown[] = [];
  b.onMessage((m) => seenB.push(m));
  for (let i = 0; i < 10; i++) b.cast({ op: 'emit', value: -i });
  const [countA, countB] = await Promise.all([a.call({ op: 'count' }), b.call({ op: 'count' })]);
  assert.is(countA, n + 1);
  assert.is(countB, 11);
  assert.equal(seenA, Array.from({ length: n }, (_, i) => i));
  assert.equal(seenB, Array.from({ length: 10 }, (_, i) => -i));
  await stop();
});

actors('a handler that throws is a crash exit carrying the cause', async () => {
  const { scheduler, stop } = withScheduler(2);
  const a = await scheduler.spawn(echo, { greeting: 'x' });
  a.cast({ op: 'crash' });
  // A bound on a hang, not a speed: under a loaded 2-core machine the first crash of a thread run from
  // source (tsx maps the error's stack) has taken over 4 s.
  const reason = await within(a.exited, 20_000, 'exit');
  assert.is(reason.kind, 'crash');
  assert.match(reason.kind === 'crash' ? reason.cause.message : '', /echo asked to crash/);
  assert.is(a.alive, false);
  await stop();
});

actors('a stop outcome replies, runs terminate and exits normal', async () => {
  const { scheduler, stop } = withScheduler(2);
  const a = await scheduler.spawn(echo, { greeting: 'x' });
  const seen: unknown[] = [];
  a.onMessage((m) => seen.push(m));
  assert.is(await a.call({ op: 'stop' }), 'bye');
  assert.equal(await a.exited, { kind: 'normal' });
  assert.equal(seen, [{ terminated: 'normal' }]);
  await stop();
});

actors('stop() asks for shutdown (terminate runs); kill() drops the actor at once', async () => {
  const { scheduler, stop } = withScheduler(2);
  const a = await scheduler.spawn(echo, { greeting: 'x' });
  const b = await scheduler.spawn(echo, { greeting: 'y' });
  await a.call({ op: 'count' });
  await b.call({ op: 'count' });
  const seen: unknown[] = [];
  a.onMessage((m) => seen.push(m));
  a.stop();
  b.kill();
  assert.equal(await a.exited, { kind: 'shutdown' });
  assert.equal(await b.exited, { kind: 'killed' });
  assert.equal(seen, [{ terminated: 'shutdown' }]);
  await stop();
});

actors('an init that throws is a crash exit', async () => {
  const { scheduler, stop } = withScheduler(2);
  const a = await scheduler.spawn({ module: fixtures, export: 'failingInitBehaviour' }, null);
  const reason = await within(a.exited, 5000, 'exit');
  assert.is(reason.kind, 'crash');
  await stop();
});

actors('a call to an actor that is busy past the timeout fails with a CallTimeoutError', async () => {
  const { scheduler, stop } = withScheduler(2);
  const a = await scheduler.spawn(echo, { greeting: 'x' });
  a.cast({ op: 'busy', ms: 400 });
  try {
    await a.call({ op: 'count' }, 100);
    assert.unreachable();
  } catch (err) {
    assert.instance(err, CallTimeoutError);
    assert.match((err as Error).message, /timed out/);
  }
  await stop();
});

actors('a full mailbox refuses further casts instead of growing', async () => {
  const { scheduler, stop } = withScheduler(2);
  const a = await scheduler.spawn(echo, { greeting: 'x' });
  let rejected = 0;
  a.onRejected(() => rejected++);
  a.cast({ op: 'busy', ms: 500 });
  await new Promise((r) => setTimeout(r, 50));
  for (let i = 0; i < 12_000; i++) a.cast({ op: 'count' });
  await within(a.call({ op: 'count' }, 10_000).catch(() => 0), 10_000, 'drain');
  assert.ok(rejected >= 1000, `expected refusals past the mailbox limit, got ${rejected}`);
  await stop();
});

actors('linked actors: a crash takes the partner down with a crash naming the link; a normal exit does not', async () => {
  const { scheduler, stop } = withScheduler(2);
  const a = await scheduler.spawn(echo, { greeting: 'a' });
  const b = await scheduler.spawn(echo, { greeting: 'b' });
  const c = await scheduler.spawn(echo, { greeting: 'c' });
  const d = await scheduler.spawn(echo, { greeting: 'd' });
  a.link(b);
  c.link(d);
  a.cast({ op: 'crash' });
  const reason = await within(b.exited, 15_000, 'linked exit');
  assert.is(reason.kind, 'crash');
  assert.match(reason.kind === 'crash' ? reason.cause.message : '', new RegExp(`linked actor ${a.id} exited: echo asked to crash`));
  assert.is(await c.call({ op: 'stop' }), 'bye');
  assert.equal(await c.exited, { kind: 'normal' });
  assert.equal(await d.call({ op: 'echo', value: 1 }), { greeting: 'd', value: 1 }, 'a normal exit does not propagate');
  await stop();
});

actors('many actors share a few threads', async () => {
  const { scheduler, stop } = withScheduler(2);
  const refs: ActorRef[] = [];
  for (let i = 0; i < 2000; i++) refs.push(await scheduler.spawn(echo, { greeting: String(i) }));
  const replies = await Promise.all(refs.map((r, i) => r.call({ op: 'echo', value: i })));
  assert.is(replies.length, 2000);
  assert.equal(replies[1999], { greeting: '1999', value: 1999 });
  assert.is(scheduler.threads().length, 2);
  const sizes = scheduler.threads().map((t) => t.actors.size);
  assert.ok(Math.abs((sizes[0] ?? 0) - (sizes[1] ?? 0)) <= 1, `placement should balance: ${sizes.join('/')}`);
  await stop();
});

actors('an actor that yields with continueWith lets the thread answer its heartbeat and other actors between slices', async () => {
  // 20 slices of 100 ms: 2 s of work on a thread whose heartbeat gives up after 500 ms of silence.
  const { scheduler, stop } = withScheduler(1, { heartbeatIntervalMs: 100, heartbeatTimeoutMs: 500, maxOldGenerationSizeMb: 256 });
  const worker = await scheduler.spawn(echo, { greeting: 'worker' });
  const neighbour = await scheduler.spawn(echo, { greeting: 'neighbour' });
  const seen: unknown[] = [];
  let finished = () => {};
  const done = new Promise<void>((resolve) => { finished = resolve; });
  worker.onMessage((m) => {
    seen.push(m);
    if (m === 'after the slices') finished();
  });
  worker.cast({ op: 'slices', n: 20, ms: 100 });
  worker.cast({ op: 'emit', value: 'after the slices' });
  assert.equal(await neighbour.call({ op: 'echo', value: 1 }), { greeting: 'neighbour', value: 1 });
  assert.ok(!seen.includes('sliced'), 'the neighbour was answered while the slices were still running');
  await within(done, 10_000, 'all slices');
  assert.ok(worker.alive && scheduler.threads()[0]?.actors.has(worker.id), 'the thread was not taken for hung');
  assert.is(await worker.call({ op: 'count' }), 22);
  // A continuation runs before the mailbox: the message cast after the slices comes out after them.
  assert.equal(seen, ['sliced', 'after the slices']);
  await stop();
});

actors.run();

const inline = suite('inline calls counted on the threads');
inline.after.each(stopAll);

inline('after flushInlineCalls, every call the actors counted before it has been reported, each once', async () => {
  let reported = 0;
  const { scheduler, stop } = withScheduler(2, undefined, (series) => { for (const s of series) reported += s.ok + s.error; });
  const refs = await Promise.all([1, 2, 3, 4].map((i) => scheduler.spawn(echo, { greeting: String(i) })));
  // Both threads count some: placement spreads four actors over two threads.
  assert.ok(scheduler.threads().every((t) => t.actors.size > 0), 'each thread hosts actors');
  for (const r of refs) r.cast({ op: 'inline', n: 10 });
  await Promise.all(refs.map((r) => r.call({ op: 'count' })));
  await scheduler.flushInlineCalls();
  assert.is(reported, 40);
  await scheduler.flushInlineCalls();
  assert.is(reported, 40, 'a second flush reports nothing again');
  await stop();
});

inline.run();

const deaths = suite('a worker death is the exit of every actor on it');
deaths.after.each(stopAll);

async function actorsOnOneThread(scheduler: Scheduler, n: number) {
  const refs: ActorRef[] = [];
  for (let i = 0; i < n; i++) refs.push(await scheduler.spawn(echo, { greeting: String(i) }));
  await Promise.all(refs.map((r) => r.call({ op: 'count' })));
  const thread = scheduler.threads()[0]!;
  const mine = refs.filter((r) => thread.actors.has(r.id));
  const others = refs.filter((r) => !thread.actors.has(r.id));
  // Checks over `mine` and `others` hold vacuously for an empty list: each must have actors.
  assert.ok(mine.length >= 1 && others.length >= 1, `placement spread ${n} actors over both threads (${mine.length} on the first)`);
  return { thread, mine, others };
}

deaths('an uncaught exception in the worker crashes all its actors, and only them', async () => {
  const { scheduler, stop } = withScheduler(2);
  const { thread, mine, others } = await actorsOnOneThread(scheduler, 10);
  thread.sabotage('throw');
  const reasons = await within(Promise.all(mine.map((r) => r.exited)), 5000, 'exits');
  assert.ok(reasons.every((r) => r.kind === 'crash'));
  assert.ok(others.every((r) => r.alive));
  assert.is((await others[0]!.call({ op: 'echo', value: 1 }) as { value: number }).value, 1);
  await stop();
});

deaths('a worker stuck in an infinite loop is detected by its heartbeat and its actors exit', async () => {
  const { scheduler, stop } = withScheduler(2, { heartbeatIntervalMs: 100, heartbeatTimeoutMs: 500, maxOldGenerationSizeMb: 256 });
  const { thread, mine } = await actorsOnOneThread(scheduler, 6);
  thread.sabotage('hang');
  // The cause names the heartbeat, which is what this checks; how fast it came is not (loaded machines).
  const reason = await within(thread.exited, 10_000, 'hung worker exit');
  assert.is(reason.kind, 'crash');
  assert.match(reason.kind === 'crash' ? reason.cause.message : '', /heartbeat/);
  for (const r of mine) assert.is((await r.exited).kind, 'crash');
  await stop();
});

deaths('a flush asked of a hung worker resolves when its heartbeat ends it, so a scrape never waits forever', async () => {
  const { scheduler, stop } = withScheduler(2, { heartbeatIntervalMs: 100, heartbeatTimeoutMs: 500, maxOldGenerationSizeMb: 256 });
  const { thread } = await actorsOnOneThread(scheduler, 6);
  thread.sabotage('hang');
  const flushed = scheduler.flushInlineCalls();
  await within(thread.exited, 10_000, 'hung worker exit');
  await within(flushed, 5000, 'flush after the hung worker ended');
  await stop();
});

deaths('a worker that exhausts its memory limit dies alone; the process lives on', async () => {
  const { scheduler, stop } = withScheduler(2, { heartbeatIntervalMs: 250, heartbeatTimeoutMs: 10_000, maxOldGenerationSizeMb: 64 });
  const { thread, mine } = await actorsOnOneThread(scheduler, 4);
  thread.sabotage('oom');
  const reason = await within(thread.exited, 20_000, 'oom worker exit');
  assert.is(reason.kind, 'crash');
  for (const r of mine) assert.is((await r.exited).kind, 'crash');
  const fresh = scheduler.startThread(thread.index);
  await fresh.ready;
  const a = await scheduler.spawn(echo, { greeting: 'again' });
  assert.equal(await a.call({ op: 'echo', value: 2 }), { greeting: 'again', value: 2 });
  await stop();
});

deaths('a pending call fails when the worker dies under it', async () => {
  const { scheduler, stop } = withScheduler(1);
  const a = await scheduler.spawn(echo, { greeting: 'x' });
  a.cast({ op: 'busy', ms: 2000 });
  const call = a.call({ op: 'count' }, 10_000);
  scheduler.threads()[0]!.kill();
  try {
    await within(call, 3000, 'call');
    assert.unreachable();
  } catch (err) {
    assert.match((err as Error).message, /exit/);
  }
  await stop();
});

deaths.run();
