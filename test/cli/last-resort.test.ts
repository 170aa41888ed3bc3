// The uncaught-failure policy (src/cli/last-resort.ts): an uncaught exception or rejection is logged
// (one escaped line), the work in flight is answered, and the process exits with 1 — never silently.

import { EventEmitter } from 'node:events';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { installLastResort, UNCAUGHT_MESSAGE } from '../../src/cli/last-resort.ts';
import { createLogger } from '../../src/log/logger.ts';

function setup(level: 'error' | 'emergency' = 'error') {
  const lines: string[] = [];
  const exits: number[] = [];
  const target = new EventEmitter();
  const logger = createLogger(level, { write: (t: string) => lines.push(t) });
  const policy = installLastResort(logger, { exit: (code) => exits.push(code), target: target as unknown as Pick<NodeJS.Process, 'on' | 'off'>, graceMs: 10_000 });
  return { lines, exits, target, policy };
}

test('an uncaught exception is logged on one line, the work in flight is answered, then the exit code is 1', async () => {
  const { lines, exits, target, policy } = setup();
  let stopped = false;
  policy.onFailure(async () => { stopped = true; });
  target.emit('uncaughtException', new Error('boom\nforged line'));
  await new Promise((r) => setImmediate(r));
  assert.ok(stopped);
  assert.equal(exits, [1]);
  assert.is(lines.length, 1);
  assert.match(lines[0] ?? '', UNCAUGHT_MESSAGE);
  assert.match(lines[0] ?? '', 'boom\\nforged line');
  assert.is((lines[0] ?? '').indexOf('\n'), (lines[0] ?? '').length - 1);
  policy.uninstall();
});

test('an unhandled rejection follows the same policy, and a stop that fails still exits 1', async () => {
  const { lines, exits, target, policy } = setup();
  policy.onFailure(async () => { throw new Error('cannot drain'); });
  target.emit('unhandledRejection', new Error('lost'));
  await new Promise((r) => setImmediate(r));
  assert.equal(exits, [1]);
  assert.match(lines.join(''), '"kind":"rejection"');
  assert.match(lines.join(''), 'cannot drain');
  policy.uninstall();
});

test('uninstall removes both handlers', () => {
  const { target, policy } = setup();
  policy.uninstall();
  assert.is(target.listenerCount('uncaughtException'), 0);
  assert.is(target.listenerCount('unhandledRejection'), 0);
});

test.run();
