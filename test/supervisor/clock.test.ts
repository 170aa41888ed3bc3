import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock, realClock } from '../../src/supervisor/clock.ts';

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

test.run();
