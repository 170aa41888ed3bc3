// The rule that calls a scheduler worker hung, on a fake clock: a ping unanswered for longer than the
// heartbeat timeout (1.5 s by default) is a hang; a ping answered in time, or a main thread that was
// itself blocked and sent no ping, is not.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Heartbeat } from '../../src/actors/heartbeat.ts';
import { DEFAULT_THREAD_LIMITS } from '../../src/actors/scheduler-thread.ts';
import { FakeClock } from '../../src/time/fake-clock.ts';

/** The heartbeat of a worker that came up at 0, with the server's limits (a ping every 250 ms, hung after 1500 ms). */
function watched() {
  const clock = new FakeClock();
  const pings: number[] = [];
  const hung: number[] = [];
  const deferred: (() => void)[] = [];
  const heartbeat = new Heartbeat(clock, DEFAULT_THREAD_LIMITS, {
    ping: () => pings.push(clock.now()),
    hung: (silentForMs) => hung.push(silentForMs),
    // The check after pending I/O, run when the test says the I/O has been read.
    afterPendingIo: (fn) => deferred.push(fn),
  });
  heartbeat.start();
  const readPendingIo = () => { for (const fn of deferred.splice(0)) fn(); };
  return { clock, heartbeat, pings, hung, readPendingIo };
}

test('the default limits: a ping every 250 ms, hung after 1500 ms unanswered', () => {
  assert.is(DEFAULT_THREAD_LIMITS.heartbeatIntervalMs, 250);
  assert.is(DEFAULT_THREAD_LIMITS.heartbeatTimeoutMs, 1500);
});

test('a worker whose ping stays unanswered for more than 1.5 s is declared hung, at the first tick past it', () => {
  const { clock, pings, hung, readPendingIo } = watched();
  clock.advance(250);
  assert.equal(pings, [250]);
  // 1500 ms after the ping: not yet past the timeout.
  clock.advance(1500);
  readPendingIo();
  assert.equal(hung, []);
  clock.advance(250);
  readPendingIo();
  assert.equal(hung, [1750]);
  // No second ping went out while one was unanswered, and a hung worker is declared once.
  clock.advance(5000);
  readPendingIo();
  assert.equal(pings, [250]);
  assert.equal(hung, [1750]);
});

test('a worker that answers its ping at 1.4 s is not hung, and is pinged again', () => {
  const { clock, heartbeat, pings, hung, readPendingIo } = watched();
  clock.advance(250);
  clock.advance(1400);
  heartbeat.pong();
  // The next ping goes out at the next tick, and is not overdue 1 s later.
  clock.advance(1000);
  readPendingIo();
  assert.equal(hung, []);
  assert.equal(pings, [250, 1750]);
});

test('a pong already queued when the timeout is seen is read before the worker is called hung', () => {
  const { clock, heartbeat, hung, readPendingIo } = watched();
  clock.advance(250);
  clock.advance(1750);
  heartbeat.pong();
  readPendingIo();
  assert.equal(hung, []);
});

test('a blocked main thread (no ping sent) does not count against a worker', () => {
  const { clock, heartbeat, pings, hung, readPendingIo } = watched();
  clock.advance(250);
  heartbeat.pong();
  // The main thread blocks for 5 s: no tick runs, no ping is sent.
  clock.stall(5000);
  clock.advance(0);
  readPendingIo();
  assert.equal(hung, []);
  // The late tick sent a fresh ping rather than charging the worker with the 5 s.
  assert.equal(pings, [250, 5250]);
});

test('a worker blocked while its ping was out is hung once the main thread runs again', () => {
  const { clock, pings, hung, readPendingIo } = watched();
  clock.advance(250);
  clock.stall(5000);
  clock.advance(0);
  readPendingIo();
  assert.equal(pings, [250]);
  assert.equal(hung, [5000]);
});

test('no ping before the worker is up, and none after the heartbeat stops', () => {
  const clock = new FakeClock();
  const pings: number[] = [];
  const heartbeat = new Heartbeat(clock, DEFAULT_THREAD_LIMITS, { ping: () => pings.push(clock.now()), hung: () => undefined });
  clock.advance(1000);
  assert.equal(pings, []);
  heartbeat.start();
  clock.advance(250);
  assert.equal(pings, [1250]);
  heartbeat.stop();
  assert.is(clock.pendingTimers, 0);
});

test.run();
