import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Mailbox } from '../../src/supervisor/mailbox.ts';
import { gate } from './fake-child.ts';

test('operations run one at a time, in the order posted', async () => {
  const mailbox = new Mailbox();
  const seen: string[] = [];
  const hold = gate();
  const first = mailbox.post(async () => {
    seen.push('first:begin');
    await hold.promise;
    seen.push('first:end');
  });
  const second = mailbox.post(async () => {
    seen.push('second');
  });
  await new Promise((r) => setImmediate(r));
  assert.equal(seen, ['first:begin']);
  hold.open();
  await Promise.all([first, second]);
  assert.equal(seen, ['first:begin', 'first:end', 'second']);
});

test('a failing operation rejects for its poster only; the next one still runs', async () => {
  const mailbox = new Mailbox();
  const failed = mailbox.post(() => Promise.reject(new Error('no')));
  const next = mailbox.post(async () => 42);
  assert.is(await failed.catch((e: Error) => e.message), 'no');
  assert.is(await next, 42);
});

test.run();
