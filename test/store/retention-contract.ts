// The retention of Tasks-extension tasks (src/store/retention.ts) as a contract every backend runs
// (sqlite-retention.test.ts, postgres-retention.test.ts): an expired task reads as a missing one from every
// store on the database, the sweep deletes only expired tasks, in bounded batches, once each with two
// stores sweeping at once, and never a running or parked task nor a conversation without a retention.
// Not a *.test.ts file.

import * as assert from 'uvu/assert';
import type { AsyncConversationStore } from '../../src/store/async-store.ts';
import { TASK_SWEEP_BATCH } from '../../src/limits.ts';
import { fakeOwnership, rejectsStoreError } from './contract.ts';
import { contractSuite } from './contract-suite.ts';

const contract = contractSuite({ ownership: fakeOwnership('node-a') });
const retention = contract.add;

/** Registers every retention test on `suite`, each on a fresh database, its stores closed after. */
export const registerRetentionContract = contract.register;
/** Registers every retention test as skipped (no backend on this machine). */
export const registerRetentionSkipped = contract.skip;

const alice = { principal: 'alice', sessionId: 'session-a', harness: 'super-pi-code' };
const TTL = 1000;

/** A finished task of alice's with retention `ttlMs` (or none), its transcript two entries long. */
async function finishedTask(store: AsyncConversationStore, ttlMs: number | null = TTL, status: 'completed' | 'failed' | 'cancelled' | 'interrupted' = 'completed'): Promise<string> {
  const c = await store.createConversation({ ...alice, ttlMs });
  await store.append(c.id, 'user', { text: 'go' });
  await store.append(c.id, 'final', { text: 'done' });
  await store.setStatus(c.id, status);
  return c.id;
}

/** Sweeps with full batches until a batch deletes nothing; how many it deleted in all. */
async function sweepAll(store: AsyncConversationStore): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await store.sweepExpiredTasks(TASK_SWEEP_BATCH);
    total += n;
    if (n === 0) return total;
  }
}

retention('the retention is kept with the conversation and read back by another store; a bad one is refused', async ({ store, open }) => {
  const c = await store.createConversation({ ...alice, ttlMs: TTL });
  assert.is(c.ttlMs, TTL);
  const other = await open();
  assert.is((await other.getConversation(c.id, 'alice'))?.ttlMs, TTL);
  assert.is((await other.taskRecord(c.id, 'alice'))?.conversation.ttlMs, TTL);
  const plain = await store.createConversation(alice);
  assert.not.ok('ttlMs' in plain, 'a conversation without a retention carries no ttlMs');
  assert.not.ok('ttlMs' in ((await other.getConversation(plain.id, 'alice')) ?? {}));
  for (const bad of [0, -1, 1.5, Number.NaN]) await rejectsStoreError(store.createConversation({ ...alice, ttlMs: bad }), 'invalid_argument');
});

retention('a finished task reads as missing on every store once its retention has passed since its last update, not a millisecond before', async ({ store, clock, open }) => {
  const id = await finishedTask(store);
  const other = await open({ ownership: fakeOwnership('node-b') });
  clock.tick(TTL - 1);
  for (const s of [store, other]) {
    assert.ok(await s.getConversation(id, 'alice'), 'still kept');
    assert.ok(await s.taskRecord(id, 'alice'));
    assert.is((await s.entries(id, 'alice'))?.length, 2);
  }
  clock.tick(1);
  for (const s of [store, other]) {
    assert.is(await s.getConversation(id, 'alice'), null, 'expired: as missing');
    assert.is(await s.taskRecord(id, 'alice'), null);
    assert.is(await s.entries(id, 'alice'), null);
    assert.is(await s.cancelRunningTask(id, 'alice', { message: 'x' }), 'not-found');
  }
});

retention('every way a task ends expires; an update moves its expiry on', async ({ store, clock }) => {
  const ids = [];
  for (const status of ['completed', 'failed', 'cancelled', 'interrupted'] as const) ids.push(await finishedTask(store, TTL, status));
  const [first] = ids;
  clock.tick(TTL / 2);
  await store.append(first ?? '', 'undo', { reverted: [] });
  clock.tick(TTL / 2);
  assert.ok(await store.taskRecord(first ?? '', 'alice'), 'updated half-way: kept a retention from then');
  for (const id of ids.slice(1)) assert.is(await store.taskRecord(id, 'alice'), null);
  assert.is(await sweepAll(store), 3);
  clock.tick(TTL / 2);
  assert.is(await sweepAll(store), 1);
});

retention('a task still running or parked for input never expires nor is swept', async ({ store, clock }) => {
  const running = await store.createConversation({ ...alice, ttlMs: TTL });
  await store.claimTask(running.id, {});
  const parked = await store.createConversation({ ...alice, ttlMs: TTL });
  await store.setStatus(parked.id, 'input_required');
  clock.tick(100 * TTL);
  assert.is(await sweepAll(store), 0);
  assert.is((await store.taskRecord(running.id, 'alice'))?.conversation.status, 'running');
  assert.is((await store.taskRecord(parked.id, 'alice'))?.conversation.status, 'input_required');
  // Once over, its retention counts from its end.
  await store.setStatus(running.id, 'completed');
  clock.tick(TTL - 1);
  assert.is(await sweepAll(store), 0);
  clock.tick(1);
  assert.is(await sweepAll(store), 1);
  assert.ok(await store.taskRecord(parked.id, 'alice'));
});

retention('a conversation without a retention is never expired nor swept, however old', async ({ store, clock }) => {
  const id = await finishedTask(store, null);
  clock.tick(10 * 365 * 24 * 3600_000);
  assert.is(await sweepAll(store), 0);
  assert.is((await store.entries(id, 'alice'))?.length, 2);
  assert.is((await store.taskRecord(id, 'alice'))?.conversation.status, 'completed');
});

retention('the sweep deletes expired tasks with their transcripts, at most the limit per call, leaving the rest', async ({ store, clock }) => {
  const expired = [];
  for (let i = 0; i < 5; i++) expired.push(await finishedTask(store));
  const kept = await finishedTask(store, null);
  clock.tick(TTL);
  const fresh = await finishedTask(store);
  assert.is(await store.sweepExpiredTasks(2), 2);
  assert.is(await store.sweepExpiredTasks(2), 2);
  assert.is(await store.sweepExpiredTasks(2), 1);
  assert.is(await store.sweepExpiredTasks(2), 0);
  for (const id of expired) {
    assert.is(await store.lastEntry(id), null, 'its entries are gone');
    await rejectsStoreError(store.append(id, 'user', { text: 'again' }), 'not_found');
  }
  assert.is((await store.entries(kept, 'alice'))?.length, 2);
  assert.is((await store.entries(fresh, 'alice'))?.length, 2);
});

retention('a task continued after it expired (claimed again) is not swept', async ({ store, clock }) => {
  const id = await finishedTask(store);
  clock.tick(TTL);
  assert.is(await store.taskRecord(id, 'alice'), null);
  await store.claimTask(id, {});
  assert.is(await sweepAll(store), 0);
  assert.is((await store.taskRecord(id, 'alice'))?.conversation.status, 'running');
  assert.is((await store.entries(id, 'alice'))?.length, 2);
});

retention('two stores sweeping the same database at once delete each expired task once', async ({ store, clock, open }) => {
  const other = await open({ ownership: fakeOwnership('node-b') });
  const n = 2 * TASK_SWEEP_BATCH + 7;
  for (let i = 0; i < n; i++) await finishedTask(i % 2 === 0 ? store : other);
  const kept = await finishedTask(store, null);
  clock.tick(TTL);
  const [a, b] = await Promise.all([sweepAll(store), sweepAll(other)]);
  assert.is((a ?? 0) + (b ?? 0), n);
  assert.is(await store.sweepExpiredTasks(TASK_SWEEP_BATCH), 0);
  assert.is((await other.entries(kept, 'alice'))?.length, 2);
});
