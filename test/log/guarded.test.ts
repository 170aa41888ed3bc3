// The event-callback guard (src/log/guarded.ts): a throw or a rejection in a listener is logged and
// answered, and goes no further; a throw while answering is logged too.

import { EventEmitter } from 'node:events';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { guarded } from '../../src/log/guarded.ts';

function recorder() {
  const lines: { message: string; error: string }[] = [];
  return { lines, log: (_level: 'error', message: string, data: Record<string, unknown>) => lines.push({ message, error: String(data.error) }) };
}

test('a throw in a listener is logged and answered with the listener\'s arguments, and the emit returns', () => {
  const log = recorder();
  const answered: unknown[][] = [];
  const emitter = new EventEmitter();
  emitter.on('request', guarded(log, 'http request', (_a: string, _b: number) => { throw new TypeError('Invalid URL'); }, (error, a, b) => answered.push([(error as Error).message, a, b])));
  emitter.emit('request', 'req', 7);
  assert.equal(answered, [['Invalid URL', 'req', 7]]);
  assert.is(log.lines.length, 1);
  assert.is(log.lines[0]?.message, 'http request: the callback failed');
  assert.match(log.lines[0]?.error ?? '', 'TypeError: Invalid URL');
});

test('a rejected promise returned by a listener is logged and answered', async () => {
  const log = recorder();
  let answered = false;
  guarded(log, 'serve', async () => { throw new Error('later'); }, () => (answered = true))();
  await new Promise((r) => setImmediate(r));
  assert.ok(answered);
  assert.match(log.lines[0]?.error ?? '', 'later');
});

test('a throw while answering is logged as well and goes no further', () => {
  const log = recorder();
  guarded(log, 'upgrade', () => { throw new Error('first'); }, () => { throw new Error('second'); })();
  assert.equal(log.lines.map((l) => l.message), ['upgrade: the callback failed', 'upgrade: answering the failure failed too']);
});

test('a listener that returns normally is neither logged nor answered', () => {
  const log = recorder();
  let answered = false;
  let ran = false;
  guarded(log, 'close', () => { ran = true; }, () => (answered = true))();
  assert.ok(ran);
  assert.not.ok(answered);
  assert.is(log.lines.length, 0);
});

test.run();
