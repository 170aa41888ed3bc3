// TaskStatusWatch (src/task/task-status-watch.ts): a possible change of a watched task is read from the
// store once for all its sessions, with one read in flight per task (changes reported meanwhile read once
// more after it); an unwatched task is not read at all; a closed session is forgotten; a failed read is
// reported and the next change reads again.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { StoredTask } from '../../src/mcp/effects.ts';
import { TaskStatusWatch } from '../../src/task/task-status-watch.ts';

const task = (taskId: string, status: StoredTask['status']): StoredTask => ({ taskId, createdAt: 'c', lastUpdatedAt: 'u', status, outcome: null });

/** A store whose reads wait until released, counting them. */
function slowStore() {
  const reads: { taskId: string; principal: string; release: (t: StoredTask | null) => void }[] = [];
  const read = (taskId: string, principal: string) => new Promise<StoredTask | null>((release) => reads.push({ taskId, principal, release }));
  return { reads, read };
}
const tick = () => new Promise((r) => setImmediate(r));

test('an unwatched task is not read; a watched one is read once for every session watching it, with its principal', async () => {
  const { reads, read } = slowStore();
  const watch = new TaskStatusWatch(read, () => undefined);
  watch.changed('t');
  assert.is(reads.length, 0);
  const heard: string[] = [];
  watch.watch('t', 's1', 'alice', (t) => heard.push(`s1:${t.status}`));
  watch.watch('t', 's2', 'alice', (t) => heard.push(`s2:${t.status}`));
  watch.changed('t');
  assert.equal(reads.map((r) => [r.taskId, r.principal]), [['t', 'alice']]);
  reads[0]!.release(task('t', 'completed'));
  await tick();
  assert.equal(heard, ['s1:completed', 's2:completed']);
});

test('changes reported while a read is in flight make one more read after it, not one each', async () => {
  const { reads, read } = slowStore();
  const watch = new TaskStatusWatch(read, () => undefined);
  const heard: string[] = [];
  watch.watch('t', 's', 'alice', (t) => heard.push(t.status));
  watch.changed('t');
  watch.changed('t');
  watch.changed('t');
  assert.is(reads.length, 1);
  reads[0]!.release(task('t', 'running'));
  await tick();
  assert.is(reads.length, 2, 'read once more for the changes reported meanwhile');
  reads[1]!.release(task('t', 'cancelled'));
  await tick();
  assert.equal(heard, ['running', 'cancelled']);
  assert.is(reads.length, 2);
});

test('another principal cannot join a task\'s watchers; a closed session is forgotten and its task no longer read', async () => {
  const { reads, read } = slowStore();
  const watch = new TaskStatusWatch(read, () => undefined);
  const heard: string[] = [];
  watch.watch('t', 's1', 'alice', () => heard.push('alice'));
  watch.watch('t', 's2', 'mallory', () => heard.push('mallory'));
  watch.changed('t');
  reads[0]!.release(task('t', 'completed'));
  await tick();
  assert.equal(heard, ['alice']);
  watch.forget('s1');
  watch.forget('s2');
  assert.is(watch.sessions, 0);
  watch.changed('t');
  assert.is(reads.length, 1);
});

test('a session hears a task while any of its streams names it: each ended stream unwatches once, the last one forgets it', async () => {
  const { reads, read } = slowStore();
  const watch = new TaskStatusWatch(read, () => undefined);
  const heard: string[] = [];
  watch.watch('t', 's', 'alice', (t) => heard.push(t.status));
  watch.watch('t', 's', 'alice', (t) => heard.push(t.status));
  watch.unwatch('t', 's');
  watch.changed('t');
  reads[0]!.release(task('t', 'completed'));
  await tick();
  assert.equal(heard, ['completed'], 'one stream still names it, and the session hears it once');
  watch.unwatch('t', 's');
  assert.equal([watch.tasks, watch.sessions], [0, 0]);
  watch.changed('t');
  assert.is(reads.length, 1, 'not read once nobody listens');
  watch.unwatch('t', 's');
  watch.unwatch('never', 's');
});

test('changedAll reads every watched task again (the change feed was lost a while), each once', async () => {
  const { reads, read } = slowStore();
  const watch = new TaskStatusWatch(read, () => undefined);
  watch.watch('a', 's', 'alice', () => undefined);
  watch.watch('b', 's', 'alice', () => undefined);
  watch.changedAll();
  assert.equal(reads.map((r) => r.taskId).sort(), ['a', 'b']);
});

test('a failed read is reported with the task; the next change reads again', async () => {
  const failures: string[] = [];
  let fail = true;
  const heard: string[] = [];
  const watch = new TaskStatusWatch(async (id) => {
    if (fail) throw new Error('the store is gone');
    return task(id, 'completed');
  }, (taskId, error) => failures.push(`${taskId}: ${error.message}`));
  watch.watch('t', 's', 'alice', (t) => heard.push(t.status));
  watch.changed('t');
  await tick();
  assert.equal(failures, ['t: the store is gone']);
  fail = false;
  watch.changed('t');
  await tick();
  assert.equal(heard, ['completed']);
});

test.run();
