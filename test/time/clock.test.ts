import { test } from 'uvu';
import * as assert from 'uvu/assert';
// The one Clock everything that waits is timed by: the system clock, and the fake one tests drive.

import { FakeClock } from '../../src/time/fake-clock.ts';
import { systemClock as realClock } from '../../src/time/clock.ts';
import { FakeClock as SupervisorFakeClock, realClock as supervisorRealClock } from '../../src/supervisor/index.ts';

test('FakeClock runs due timers earliest first, ties in the order armed, with now() at each due time', () => {
  const clock = new FakeClock(100);
  const seen: string[] = [];
  clock.setTimeout(() => seen.push(`b@${clock.now()}`), 20);
  clock.setTimeout(() => seen.push(`a@${clock.now()}`), 10);
  clock.setTimeout(() => seen.push(`c@${clock.now()}`), 20);
  clock.setTimeout(() => seen.push('late'), 31);
  clock.advance(30);
  assert.equal(seen, ['a@110', 'b@120', 'c@120']);
  assert.is(clock.now(), 130);
  assert.is(clock.pendingTimers, 1);
});

test('FakeClock runs a timer armed by a timer when it falls due within the same advance', () => {
  const clock = new FakeClock();
  const seen: number[] = [];
  clock.setTimeout(() => clock.setTimeout(() => seen.push(clock.now()), 5), 5);
  clock.advance(10);
  assert.equal(seen, [10]);
});

test('FakeClock.clearTimeout cancels; clearing an unknown handle does nothing', () => {
  const clock = new FakeClock();
  let ran = false;
  const handle = clock.setTimeout(() => (ran = true), 1);
  clock.clearTimeout(handle);
  clock.clearTimeout('nope');
  clock.advance(5);
  assert.is(ran, false);
  assert.is(clock.pendingTimers, 0);
});

test('FakeClock.advance refuses a negative step', () => {
  assert.throws(() => new FakeClock().advance(-1), /non-negative/);
});

test('realClock reads a monotonic time and fires a timer', async () => {
  const t0 = realClock.now();
  await new Promise<void>((resolve) => realClock.setTimeout(resolve, 1));
  assert.ok(realClock.now() >= t0);
  let fired = false;
  const handle = realClock.setTimeout(() => (fired = true), 1);
  realClock.clearTimeout(handle);
  await new Promise((r) => setTimeout(r, 5));
  assert.is(fired, false);
});

test('FakeClock runs an interval every period, each run `ms` after the last began, until cleared', () => {
  const clock = new FakeClock();
  const seen: number[] = [];
  const handle = clock.setInterval(() => seen.push(clock.now()), 100);
  clock.advance(350);
  assert.equal(seen, [100, 200, 300]);
  clock.clearInterval(handle);
  clock.advance(1000);
  assert.equal(seen, [100, 200, 300]);
  assert.is(clock.pendingTimers, 0);
});

test('FakeClock.stall moves the time and runs nothing; what it overran runs once, late, on the next advance', () => {
  const clock = new FakeClock();
  const seen: number[] = [];
  clock.setInterval(() => seen.push(clock.now()), 100);
  clock.advance(100);
  clock.stall(1000);
  assert.equal(seen, [100]);
  assert.is(clock.now(), 1100);
  clock.advance(0);
  assert.equal(seen, [100, 1100]);
  clock.advance(100);
  assert.equal(seen, [100, 1100, 1200]);
});

test('systemClock intervals run and stop when cleared', async () => {
  let runs = 0;
  let stopped!: () => void;
  const done = new Promise<void>((r) => (stopped = r));
  const handle = realClock.setInterval(() => {
    runs++;
    if (runs === 2) {
      realClock.clearInterval(handle);
      stopped();
    }
  }, 1);
  await done;
  await new Promise<void>((resolve) => realClock.setTimeout(resolve, 5));
  assert.is(runs, 2);
});

test('systemClock timers asked to be unref do not keep the process alive; others do', () => {
  const weak = realClock.setTimeout(() => undefined, 1000, { unref: true }) as NodeJS.Timeout;
  const strong = realClock.setInterval(() => undefined, 1000) as NodeJS.Timeout;
  assert.is(weak.hasRef(), false);
  assert.is(strong.hasRef(), true);
  realClock.clearTimeout(weak);
  realClock.clearInterval(strong);
});

test('the supervision API offers the same clocks (realClock is systemClock)', () => {
  assert.is(SupervisorFakeClock, FakeClock);
  assert.is(supervisorRealClock, realClock);
});

test.run();
