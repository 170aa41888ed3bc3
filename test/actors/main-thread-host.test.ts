// In-thread mode (`threads: 0`): actors on the main thread behind the same ActorRef and mailbox API as on
// a scheduler worker — the same behaviours, messages in order, a crash is an exit and a supervisor
// restarts the actor — and no thread started for them.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ActorRef } from '../../src/actors/actor-ref.ts';
import type { Behaviour, BehaviourRef } from '../../src/actors/behaviour.ts';
import type { InlineSeries } from '../../src/actors/inline-tally.ts';
import { MainThreadHost } from '../../src/actors/main-thread-host.ts';
import { Scheduler } from '../../src/actors/scheduler.ts';
import { WORKER_KILLED } from '../../src/actors/scheduler-thread.ts';
import type { ConnectionActorArgs, ConnectionOutput } from '../../src/connection/connection-actor.ts';
import { applicationBehaviours } from '../../src/server/behaviours.ts';
import { schedulerEntry } from '../../src/server/thread-entries.ts';
import { Supervisor, type SupervisorEvent } from '../../src/supervisor/index.ts';
import { echoBehaviour } from './fixtures/test-behaviours.ts';

const fixtures = new URL('./fixtures/test-behaviours.ts', import.meta.url).href;
/** The same fixture a worker loads by module URL, here also registered by name. */
const echo: BehaviourRef = { module: fixtures, export: 'echoBehaviour' };
const echoByName: BehaviourRef = { module: 'builtin', export: 'echo' };
const log = () => {};

const started: Scheduler[] = [];
function inThread(): Scheduler {
  // The entry is asked for on a worker's start only: an in-thread scheduler never reads the tree for it.
  const scheduler = new Scheduler({ threads: 0, log, entry: () => schedulerEntry('source'), behaviours: new Map<string, Behaviour>([['echo', echoBehaviour as Behaviour]]) });
  started.push(scheduler);
  scheduler.startThread(0);
  return scheduler;
}
async function stopAll(): Promise<void> {
  for (const s of started.splice(0)) for (const t of s.threads()) { t.stop(); await t.exited; }
}

const host = suite('actors on the main thread (in-thread mode)');
host.after.each(stopAll);

host('threads: 0 is one slot hosted by the main thread: no worker is started', () => {
  const scheduler = inThread();
  assert.ok(scheduler.inThread);
  assert.is(scheduler.threadCount, 1);
  assert.is(scheduler.threads().length, 1);
  assert.ok(scheduler.threads()[0] instanceof MainThreadHost, 'the slot is the main-thread host, not a SchedulerThread');
  assert.ok(scheduler.threads()[0]?.isReady, 'ready at once: nothing to boot');
});

host('the same behaviour by module URL or by registered name: a call gets its reply; casts run in order, one at a time', async () => {
  const scheduler = inThread();
  for (const ref of [echo, echoByName]) {
    const a = await scheduler.spawn(ref, { greeting: 'hi' });
    assert.equal(await a.call({ op: 'echo', value: 7 }), { greeting: 'hi', value: 7 });
    const seen: unknown[] = [];
    a.onMessage((m) => seen.push(m));
    for (let i = 0; i < 100; i++) a.cast({ op: 'emit', value: i });
    assert.is(await a.call({ op: 'count' }), 102);
    assert.equal(seen, Array.from({ length: 100 }, (_, i) => i));
  }
});

host('what an actor emits is handed on after each message it handles, while the rest of its turn waits in the mailbox', async () => {
  const scheduler = inThread();
  const thread = scheduler.threads()[0] as MainThreadHost;
  const a = await scheduler.spawn(echo, { greeting: 'a' });
  // The mailbox depth each output is seen at: handed on per message, the first comes with 9 still queued;
  // handed on after the turn, every one would see an empty mailbox.
  const depths: number[] = [];
  a.onMessage(() => depths.push(thread.mailboxes.deepest));
  for (let i = 0; i < 10; i++) a.cast({ op: 'emit', value: i });
  assert.is(await a.call({ op: 'count' }), 11);
  assert.equal(depths, [10, 9, 8, 7, 6, 5, 4, 3, 2, 1], 'each output before the next message is handled (the count call still queued behind them)');
});

host('a receiver that throws on an output handed on mid-turn is reported once, uncaught, and the turn goes on', async () => {
  const scheduler = inThread();
  const a = await scheduler.spawn(echo, { greeting: 'a' });
  const seen: unknown[] = [];
  a.onMessage((m) => {
    seen.push(m);
    if (m === 1) throw new Error('receiver failed');
  });
  const uncaught: unknown[] = [];
  const listeners = process.listeners('uncaughtException');
  process.removeAllListeners('uncaughtException');
  process.on('uncaughtException', (e) => uncaught.push(e));
  try {
    for (let i = 0; i < 4; i++) a.cast({ op: 'emit', value: i });
    assert.is(await a.call({ op: 'count' }), 5, 'the messages after the throw were still handled in order');
    await new Promise((r) => setImmediate(r));
  } finally {
    process.removeAllListeners('uncaughtException');
    for (const l of listeners) process.on('uncaughtException', l);
  }
  assert.equal(seen, [0, 1, 2, 3]);
  assert.is(uncaught.length, 1);
  assert.match(String(uncaught[0]), /receiver failed/);
});

host('a handler that throws is a crash exit carrying the cause; the host and its other actors go on', async () => {
  const scheduler = inThread();
  const a = await scheduler.spawn(echo, { greeting: 'a' });
  const b = await scheduler.spawn(echo, { greeting: 'b' });
  a.cast({ op: 'crash' });
  const reason = await a.exited;
  assert.is(reason.kind, 'crash');
  assert.match(reason.kind === 'crash' ? reason.cause.message : '', /echo asked to crash/);
  assert.is(a.alive, false);
  assert.equal(await b.call({ op: 'echo', value: 1 }), { greeting: 'b', value: 1 });
  assert.ok(scheduler.threads()[0]?.alive);
});

host('a stop outcome replies, runs terminate and exits normal; stop() runs terminate, kill() does not', async () => {
  const scheduler = inThread();
  const a = await scheduler.spawn(echo, { greeting: 'a' });
  const seenA: unknown[] = [];
  a.onMessage((m) => seenA.push(m));
  assert.is(await a.call({ op: 'stop' }), 'bye');
  assert.equal(await a.exited, { kind: 'normal' });
  const b = await scheduler.spawn(echo, { greeting: 'b' });
  const c = await scheduler.spawn(echo, { greeting: 'c' });
  await Promise.all([b.call({ op: 'count' }), c.call({ op: 'count' })]);
  const seenB: unknown[] = [];
  const seenC: unknown[] = [];
  b.onMessage((m) => seenB.push(m));
  c.onMessage((m) => seenC.push(m));
  b.stop();
  c.kill();
  assert.equal(await b.exited, { kind: 'shutdown' });
  assert.equal(await c.exited, { kind: 'killed' });
  // Output is handed over after the turn (a microtask), as a worker's would arrive later.
  await new Promise((r) => setImmediate(r));
  assert.equal(seenA, [{ terminated: 'normal' }]);
  assert.equal(seenB, [{ terminated: 'shutdown' }]);
  assert.equal(seenC, []);
});

host('a crash of the behaviour restarts the actor under its supervisor; the new incarnation answers', async () => {
  const scheduler = inThread();
  const incarnations: ActorRef[] = [];
  const events: SupervisorEvent[] = [];
  const sup = await Supervisor.start({ strategy: 'one_for_one', name: 'session', maxRestarts: 3, periodMs: 60_000 }, [{
    id: 'connection',
    restart: 'transient',
    start: async () => {
      const ref = await scheduler.spawn(echo, { greeting: `incarnation ${incarnations.length + 1}` });
      incarnations.push(ref);
      return ref;
    },
  }], { onEvent: (e) => events.push(e) });
  try {
    const first = incarnations[0] as ActorRef;
    first.cast({ op: 'crash' });
    assert.is((await first.exited).kind, 'crash');
    for (let i = 0; i < 200 && incarnations.length < 2; i++) await new Promise((r) => setImmediate(r));
    const second = incarnations[1];
    assert.ok(second, 'the supervisor started a second incarnation');
    assert.equal(await second.call({ op: 'echo', value: 2 }), { greeting: 'incarnation 2', value: 2 });
    assert.ok(events.some((e) => e.type === 'child-restarted'), 'the restart is a supervisor event');
  } finally {
    sup.stop();
    await sup.exited;
  }
});

host('the connection behaviour runs in-thread as on a worker: a line in, its reply out', async () => {
  const scheduler = new Scheduler({ threads: 0, log, entry: () => schedulerEntry('source'), behaviours: applicationBehaviours });
  started.push(scheduler);
  scheduler.startThread(0);
  const args: ConnectionActorArgs = {
    config: { server: { name: 'super-pi', version: '0.0.0' }, harness: 'super-pi-code', workspace: process.cwd(), principal: { kind: 'local' }, pageSize: 50, allowAnonymousWrites: false, allowAnonymousTasks: false, roots: 'ignore' },
  };
  const actor = await scheduler.spawn({ module: 'builtin', export: 'connection' }, args, 'session');
  const out = new Promise<ConnectionOutput>((resolve) => actor.onMessage((m) => resolve(m as ConnectionOutput)));
  actor.cast({ k: 'line', line: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) });
  const output = await out;
  assert.equal(output.replies.map((r) => JSON.parse(r.line) as unknown), [{ jsonrpc: '2.0', id: 1, result: {} }]);
  assert.is(output.handled, 1);
});

host('a killed host is a killed worker: every actor on it exits as WORKER_KILLED, calls fail, and a new host fills the slot', async () => {
  const scheduler = inThread();
  const a = await scheduler.spawn(echo, { greeting: 'a' });
  const b = await scheduler.spawn(echo, { greeting: 'b' });
  a.cast({ op: 'busy', ms: 50 });
  const pending = a.call({ op: 'count' }, 10_000);
  const thread = scheduler.threads()[0];
  thread?.kill();
  const reasons = await Promise.all([a.exited, b.exited]);
  for (const r of reasons) {
    assert.is(r.kind, 'crash');
    assert.is(r.kind === 'crash' ? r.cause.name : '', WORKER_KILLED);
  }
  await pending.then(() => assert.unreachable('the call was answered by a killed host'), (err: Error) => assert.match(err.message, /exit|stopped/));
  assert.equal(await thread?.exited, { kind: 'killed' });
  assert.is(scheduler.threads().length, 0, 'the slot is empty until its supervisor restarts it');
  scheduler.startThread(0);
  const c = await scheduler.spawn(echo, { greeting: 'c' });
  assert.equal(await c.call({ op: 'echo', value: 3 }), { greeting: 'c', value: 3 });
});

host('only a thread survives a hang or running out of memory: the main-thread host refuses that sabotage', () => {
  const scheduler = inThread();
  const thread = scheduler.threads()[0];
  assert.throws(() => thread?.sabotage('hang'), /needs a scheduler worker thread/);
  assert.throws(() => thread?.sabotage('oom'), /needs a scheduler worker thread/);
  assert.ok(thread?.alive);
});

host('inline calls counted on the main thread reach onInlineCalls: flushInlineCalls reports them at once, each once', async () => {
  let reported = 0;
  const tools: string[] = [];
  const scheduler = new Scheduler({
    threads: 0, log, entry: () => schedulerEntry('source'),
    behaviours: new Map<string, Behaviour>([['echo', echoBehaviour as Behaviour]]),
    onInlineCalls: (series: readonly InlineSeries[]) => { for (const s of series) { reported += s.ok + s.error; tools.push(s.tool); } },
  });
  started.push(scheduler);
  scheduler.startThread(0);
  const refs = await Promise.all([1, 2].map((i) => scheduler.spawn(echoByName, { greeting: String(i) })));
  for (const r of refs) r.cast({ op: 'inline', n: 10 });
  await Promise.all(refs.map((r) => r.call({ op: 'count' })));
  await scheduler.flushInlineCalls();
  assert.is(reported, 20);
  assert.ok(tools.length > 0 && tools.every((t) => t === 'read'), `the fixture counts reads: ${tools.join(', ')}`);
  await scheduler.flushInlineCalls();
  assert.is(reported, 20, 'a second flush reports nothing again');
});

host('the calls a killed host counted are still reported, and its successor counts on its own', async () => {
  let reported = 0;
  const scheduler = new Scheduler({
    threads: 0, log, entry: () => schedulerEntry('source'),
    behaviours: new Map<string, Behaviour>([['echo', echoBehaviour as Behaviour]]),
    onInlineCalls: (series: readonly InlineSeries[]) => { for (const s of series) reported += s.ok + s.error; },
  });
  started.push(scheduler);
  const first = scheduler.startThread(0);
  const a = await scheduler.spawn(echoByName, { greeting: 'a' });
  a.cast({ op: 'inline', n: 3 });
  await a.call({ op: 'count' });
  first.kill();
  await first.exited;
  assert.is(reported, 3, 'the end of the host reported what it had counted');
  scheduler.startThread(0);
  const b = await scheduler.spawn(echoByName, { greeting: 'b' });
  b.cast({ op: 'inline', n: 5 });
  await b.call({ op: 'count' });
  await scheduler.flushInlineCalls();
  assert.is(reported, 8);
});

host.run();
