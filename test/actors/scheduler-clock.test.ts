// The scheduler's waits on the injected clock: a real worker's heartbeat pings when the fake clock says
// so and declares the worker hung past its timeout; a spawn with no thread to go to gives up after
// SPAWN_WAIT_MS of clock time, and takes a thread that comes up before.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Behaviour, BehaviourRef } from '../../src/actors/behaviour.ts';
import { Scheduler } from '../../src/actors/scheduler.ts';
import { SPAWN_WAIT_MS } from '../../src/limits.ts';
import { DEFAULT_THREAD_LIMITS } from '../../src/actors/scheduler-thread.ts';
import { schedulerEntry } from '../../src/server/thread-entries.ts';
import { FakeClock } from '../../src/time/fake-clock.ts';
import { guarded } from '../hang-guard.ts';
import { echoBehaviour } from './fixtures/test-behaviours.ts';

const log = () => {};
const echoByName: BehaviourRef = { module: 'builtin', export: 'echo' };
const behaviours = new Map<string, Behaviour>([['echo', echoBehaviour as Behaviour]]);
/** Lets promise callbacks and one I/O turn run (no time passes on the fake clock). */
const settle = () => new Promise<void>((r) => setImmediate(r));

test('the spawn wait is 10 s', () => {
  assert.is(SPAWN_WAIT_MS, 10_000);
});

test('a real worker is pinged on the fake clock, and declared hung when its ping stays unanswered past 1.5 s', async () => {
  const clock = new FakeClock();
  const scheduler = new Scheduler({ threads: 1, log, clock, entry: schedulerEntry('source') });
  const thread = scheduler.startThread(0);
  try {
    await guarded(thread.ready, 'worker boot');
    // A flush is a round trip, so it shows whether a ping went before it: none has, the fake clock stood still.
    await guarded(thread.flushInline(), 'flush');
    assert.is(thread.heapUsed, 0, 'no pong without a ping');
    clock.advance(DEFAULT_THREAD_LIMITS.heartbeatIntervalMs);
    await guarded(thread.flushInline(), 'flush');
    assert.ok(thread.heapUsed > 0, 'the ping the fake clock sent was answered');

    thread.sabotage('hang');
    clock.advance(DEFAULT_THREAD_LIMITS.heartbeatIntervalMs);
    clock.advance(DEFAULT_THREAD_LIMITS.heartbeatTimeoutMs + DEFAULT_THREAD_LIMITS.heartbeatIntervalMs);
    const reason = await guarded(thread.exited, 'hung worker exit');
    assert.is(reason.kind, 'crash');
    assert.equal(reason.kind === 'crash' ? reason.cause.name : '', 'HeartbeatTimeout');
  } finally {
    thread.kill();
    await thread.exited;
  }
});

test('a spawn with no thread up gives up after SPAWN_WAIT_MS of clock time, not before', async () => {
  const clock = new FakeClock();
  const scheduler = new Scheduler({ threads: 0, log, clock, behaviours, entry: () => schedulerEntry('source') });
  const outcome: { failure: Error | null } = { failure: null };
  const spawned = scheduler.spawn(echoByName, { greeting: 'x' }).catch((err: unknown) => { outcome.failure = err as Error; });
  await settle();
  clock.advance(9_999);
  await settle();
  assert.is(outcome.failure, null);
  clock.advance(1);
  // Only promise callbacks stand between the deadline's timer and the refusal: one turn is enough.
  await settle();
  assert.is(outcome.failure?.message, 'no scheduler thread came up within 10000 ms');
  await spawned;
});

test('a spawn waiting for a thread takes the one that comes up before the limit', async () => {
  const clock = new FakeClock();
  const scheduler = new Scheduler({ threads: 0, log, clock, behaviours, entry: () => schedulerEntry('source') });
  const spawned = scheduler.spawn(echoByName, { greeting: 'late' });
  await settle();
  clock.advance(9_900);
  const thread = scheduler.startThread(0);
  try {
    const ref = await guarded(spawned, 'spawn');
    assert.equal(await ref.call({ op: 'echo', value: 1 }), { greeting: 'late', value: 1 });
  } finally {
    thread.stop();
    await thread.exited;
  }
});

test.run();
