import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { crash, describeExit, type ExitReason, isAbnormal, killed, normal, shutdown } from '../../src/supervisor/exit-reason.ts';

test('isAbnormal: crash and killed are abnormal; normal and shutdown are orderly', () => {
  const table: [ExitReason, boolean][] = [
    [normal, false],
    [shutdown, false],
    [killed, true],
    [crash(new Error('x')), true],
  ];
  for (const [reason, abnormal] of table) assert.is(isAbnormal(reason), abnormal, reason.kind);
});

test('describeExit names each kind and includes a crash cause message', () => {
  assert.is(describeExit(normal), 'normal exit');
  assert.is(describeExit(shutdown), 'shutdown');
  assert.is(describeExit(killed), 'killed');
  assert.is(describeExit(crash(new TypeError('bad input'))), 'crash: TypeError: bad input');
  assert.is(describeExit(crash('worker gone')), 'crash: worker gone');
  assert.is(describeExit(crash({ code: 7 })), 'crash: {"code":7}');
});

test('describeExit follows the cause chain', () => {
  const reason = crash(new Error('task failed', { cause: new Error('disk full') }));
  assert.is(describeExit(reason), 'crash: Error: task failed (caused by: Error: disk full)');
});

test('describeExit does not throw on an unserialisable cause and stops on a cause cycle', () => {
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assert.match(describeExit(crash(cyclic)), /^crash: \[object Object\] \(unserialisable: /);
  const loop = new Error('loop');
  loop.cause = loop;
  assert.is(describeExit(crash(loop)).split('caused by').length - 1, 4);
});

test('the reason constants are frozen so no caller can change what normal means', () => {
  assert.ok(Object.isFrozen(normal) && Object.isFrozen(shutdown) && Object.isFrozen(killed));
});

test.run();
