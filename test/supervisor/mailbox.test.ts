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

test('after going idle, a mailbox still orders what is posted next (posted during and after the last operation)', async () => {
  const mailbox = new Mailbox();
  const seen: number[] = [];
  await mailbox.post(async () => void seen.push(1));
  await new Promise((r) => setImmediate(r));
  const hold = gate();
  const a = mailbox.post(async () => {
    await hold.promise;
    seen.push(2);
  });
  const b = mailbox.post(async () => void seen.push(3));
  hold.open();
  // Posted while the tail of `a`/`b` is settling: must still come after them.
  const c = mailbox.post(async () => void seen.push(4));
  await Promise.all([a, b, c]);
  assert.equal(seen, [1, 2, 3, 4]);
});

test.run();
