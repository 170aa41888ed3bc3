// The chart's window: calls per whole second and nearest-rank p50/p99, a fixed ring of seconds.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CALL_WINDOW_SECONDS, CallWindow, quantile } from '../../src/observer/call-window.ts';

test('counts calls per second and reports p50 and p99 of their latencies; seconds without calls are empty', () => {
  let now = 1_000_000;
  const w = new CallWindow(() => now);
  for (let i = 1; i <= 100; i++) w.record(i);
  now += 2000;
  const points = w.points(3);
  assert.equal(points.map((p) => p.calls), [0, 100, 0]);
  assert.is(points[1]?.p50, 50);
  assert.is(points[1]?.p99, 99);
  assert.is(points[0]?.p50, null);
});

test('a second older than the ring is forgotten, not mixed into the new one', () => {
  let now = 5_000_000;
  const w = new CallWindow(() => now);
  w.record(10);
  now += CALL_WINDOW_SECONDS * 1000;
  w.record(20);
  now += 1000;
  assert.equal(w.points(1), [{ t: Math.floor(now / 1000) - 1, calls: 1, p50: 20, p99: 20 }]);
});

test('quantile is nearest-rank and null for no values', () => {
  assert.is(quantile([], 0.5), null);
  assert.is(quantile([7], 0.99), 7);
  assert.is(quantile([1, 2, 3, 4], 0.5), 2);
});

test.run();
