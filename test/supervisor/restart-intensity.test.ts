import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DEFAULT_MAX_RESTARTS, DEFAULT_PERIOD_MS, restartIntensity } from '../../src/supervisor/restart-intensity.ts';

test('defaults are 3 restarts in 5000 ms', () => {
  assert.equal([DEFAULT_MAX_RESTARTS, DEFAULT_PERIOD_MS], [3, 5000]);
});

test('the first restart is allowed and recorded', () => {
  assert.equal(restartIntensity([], 1000, 3, 5000), { allowed: true, restarts: [1000] });
});

test('the 3rd restart in the period is allowed, the 4th is not (and is not recorded)', () => {
  assert.equal(restartIntensity([0, 10], 20, 3, 5000), { allowed: true, restarts: [0, 10, 20] });
  assert.equal(restartIntensity([0, 10, 20], 30, 3, 5000), { allowed: false, restarts: [0, 10, 20] });
});

test('restarts older than the period leave the window', () => {
  assert.equal(restartIntensity([0, 10, 20], 5015, 3, 5000), { allowed: true, restarts: [20, 5015] });
});

test('a restart exactly periodMs ago no longer counts', () => {
  assert.equal(restartIntensity([0, 1, 2], 5000, 3, 5000), { allowed: true, restarts: [1, 2, 5000] });
});

test('maxRestarts 0 refuses every restart', () => {
  assert.equal(restartIntensity([], 0, 0, 5000), { allowed: false, restarts: [] });
});

test('omitted limits use the defaults', () => {
  assert.is(restartIntensity([1, 2, 3], 4).allowed, false);
  assert.is(restartIntensity([1, 2], 4).allowed, true);
});

test('it does not mutate the window it was given', () => {
  const past = [0, 10];
  restartIntensity(past, 20, 3, 5000);
  assert.equal(past, [0, 10]);
});

test.run();
