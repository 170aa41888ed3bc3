// The retention sweep (src/task/task-retention.ts) on a real SQLite store: a pass deletes expired tasks a
// bounded batch at a time and no more batches than a pass may run (the rest at the next pass), finds nothing
// to do without a store, logs a failing store and tries again, and paces itself by the node's retention.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SyncStoreAdapter } from '../../src/store/async-store.ts';
import { databasePath } from '../../src/store/location.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import { RetentionSweep, sweepIntervalMs } from '../../src/task/task-retention.ts';
import { FakeClock } from '../../src/time/fake-clock.ts';
import type { Logger } from '../../src/log/logger.ts';
import { TASK_SWEEP_INTERVAL_MS, TASK_SWEEP_MIN_INTERVAL_MS } from '../../src/limits.ts';
import { ManualClock, removeHome, tempHome } from '../store/helpers.ts';

const TTL = 1000;

function recordingLogger(): Logger & { readonly lines: { level: string; message: string }[] } {
  const lines: { level: string; message: string }[] = [];
  return { lines, log: (level, message) => void lines.push({ level, message }) } as Logger & { readonly lines: typeof lines };
}

async function withStore(run: (store: SyncStoreAdapter, wall: ManualClock) => Promise<void>): Promise<void> {
  const home = await tempHome();
  const wall = new ManualClock();
  const sqlite = SqliteConversationStore.open(databasePath(home), { now: wall.now });
  try {
    await run(new SyncStoreAdapter(sqlite), wall);
  } finally {
    sqlite.close();
    await removeHome(home);
  }
}

async function expiredTasks(store: SyncStoreAdapter, n: number, ttlMs: number | null = TTL): Promise<string[]> {
  const ids = [];
  for (let i = 0; i < n; i++) {
    const c = await store.createConversation({ principal: 'alice', sessionId: 's', harness: 'super-pi-code', ttlMs });
    await store.append(c.id, 'user', { text: 'go' });
    await store.setStatus(c.id, 'completed');
    ids.push(c.id);
  }
  return ids;
}

test('a pass deletes at most batch × batches expired tasks; the next pass the rest; a task without a retention never', () => withStore(async (store, wall) => {
  await expiredTasks(store, 7);
  const [kept] = await expiredTasks(store, 1, null);
  wall.tick(TTL);
  const sweep = new RetentionSweep({ store: () => store, ttlMs: TTL, logger: recordingLogger(), batch: 2, batchesPerPass: 3 });
  assert.is(await sweep.pass(), 6);
  assert.is(await sweep.pass(), 1);
  assert.is(await sweep.pass(), 0);
  assert.is((await store.entries(kept ?? '', 'alice'))?.length, 1);
}));

test('a pass stops at the first batch that finds fewer than it may take', () => withStore(async (store, wall) => {
  await expiredTasks(store, 3);
  wall.tick(TTL);
  let calls = 0;
  const counted = { sweepExpiredTasks: async (limit: number) => { calls++; return store.sweepExpiredTasks(limit); } } as unknown as SyncStoreAdapter;
  assert.is(await new RetentionSweep({ store: () => counted, ttlMs: TTL, logger: recordingLogger(), batch: 2, batchesPerPass: 10 }).pass(), 3);
  assert.is(calls, 2);
}));

test('without a store there is nothing to sweep; a failing store is logged and the pass resolves', async () => {
  assert.is(await new RetentionSweep({ store: () => null, ttlMs: TTL, logger: recordingLogger() }).pass(), 0);
  const logger = recordingLogger();
  const failing = { sweepExpiredTasks: () => Promise.reject(new Error('disk gone')) } as unknown as SyncStoreAdapter;
  assert.is(await new RetentionSweep({ store: () => failing, ttlMs: TTL, logger }).pass(), 0);
  assert.equal(logger.lines.map((l) => l.level), ['warning']);
  assert.match(logger.lines[0]?.message ?? '', 'sweeping expired tasks failed');
});

test('passes run every retention, within the named bounds, from start until stop', () => withStore(async (store, wall) => {
  assert.is(sweepIntervalMs(10), TASK_SWEEP_MIN_INTERVAL_MS);
  assert.is(sweepIntervalMs(5000), 5000);
  assert.is(sweepIntervalMs(24 * 3600_000), TASK_SWEEP_INTERVAL_MS);
  const clock = new FakeClock();
  const sweep = new RetentionSweep({ store: () => store, ttlMs: 5000, logger: recordingLogger(), clock });
  sweep.start();
  assert.is(clock.pendingTimers, 1);
  await expiredTasks(store, 1, 5000);
  wall.tick(5000);
  clock.advance(5000);
  await sweep.stop();
  assert.is(await store.sweepExpiredTasks(10), 0, 'the timer\'s pass deleted it');
  assert.is(clock.pendingTimers, 0);
}));

test.run();
