import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RestartType } from '../../src/supervisor/child-spec.ts';
import { crash, type ExitReason, killed, normal, shutdown } from '../../src/supervisor/exit-reason.ts';
import { restartScope, shouldRestart } from '../../src/supervisor/restart-strategy.ts';

const reasons: [string, ExitReason][] = [
  ['normal', normal],
  ['shutdown', shutdown],
  ['crash', crash(new Error('boom'))],
  ['killed', killed],
];
const expected: Record<RestartType, Record<string, boolean>> = {
  permanent: { normal: true, shutdown: true, crash: true, killed: true },
  transient: { normal: false, shutdown: false, crash: true, killed: true },
  temporary: { normal: false, shutdown: false, crash: false, killed: false },
};

test('shouldRestart: restart type × exit reason', () => {
  for (const restart of ['permanent', 'transient', 'temporary'] as const) {
    for (const [name, reason] of reasons) assert.is(shouldRestart(restart, reason), expected[restart][name], `${restart} × ${name}`);
  }
});

test('restartScope: one_for_one takes only the child', () => {
  assert.equal(restartScope('one_for_one', ['a', 'b', 'c'], 'b'), ['b']);
});

test('restartScope: one_for_all takes every child, in start order', () => {
  assert.equal(restartScope('one_for_all', ['a', 'b', 'c'], 'b'), ['a', 'b', 'c']);
});

test('restartScope: rest_for_one takes the child and those started after it', () => {
  assert.equal(restartScope('rest_for_one', ['a', 'b', 'c'], 'b'), ['b', 'c']);
  assert.equal(restartScope('rest_for_one', ['a', 'b', 'c'], 'c'), ['c']);
  assert.equal(restartScope('rest_for_one', ['a', 'b', 'c'], 'a'), ['a', 'b', 'c']);
});

test('restartScope refuses an id that is not a child', () => {
  assert.throws(() => restartScope('one_for_one', ['a'], 'z'), /"z" is not among the children/);
});

test.run();
