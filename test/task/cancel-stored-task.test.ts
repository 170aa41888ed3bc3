// tasks/cancel's store side (detached-tasks.ts `cancelStoredTask`): a task this node does not run is
// cancelled in the store, only while still running, so its holder is fenced; a finished task keeps its
// status; another principal's task is not found. The cross-node run stopping is test/e2e/modern-tasks.test.ts.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SyncStoreAdapter } from '../../src/store/async-store.ts';
import { StoreError } from '../../src/store/errors.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import { cancelStoredTask } from '../../src/task/detached-tasks.ts';

const alice = { principal: 'alice', sessionId: 's', harness: 'super-pi-assistant' };

test('a running task this node does not hold is cancelled in the store: the cancelled entry, the status, and its holder fenced', async () => {
  const store = new SyncStoreAdapter(SqliteConversationStore.open(':memory:'));
  try {
    const c = await store.createConversation(alice);
    const { epoch } = await store.claimTask(c.id, {});
    assert.is(await cancelStoredTask(store, 'alice', c.id, undefined), 'fenced');
    assert.is((await store.getConversation(c.id, 'alice'))?.status, 'cancelled');
    assert.equal((await store.entries(c.id, 'alice'))?.map((e) => [e.type, e.payload]), [['error', { message: 'the task was cancelled by the client (tasks/cancel)', status: 'cancelled' }]]);
    const refused = await store.renewLease(c.id, epoch).then(() => null, (err: unknown) => err);
    assert.ok(refused instanceof StoreError && refused.code === 'fenced', 'the holder meets the fence at its next renewal');
    assert.is(await cancelStoredTask(store, 'alice', c.id, undefined), 'terminal', 'a second cancel acks and writes nothing');
    assert.is((await store.entries(c.id, 'alice'))?.length, 1);
  } finally {
    await store.close();
  }
});

test('a finished task keeps its status; another principal\'s task is not found and stays running', async () => {
  const store = new SyncStoreAdapter(SqliteConversationStore.open(':memory:'));
  try {
    const done = await store.createConversation(alice);
    const lease = await store.claimTask(done.id, {});
    await store.setStatus(done.id, 'completed', lease.epoch);
    assert.is(await cancelStoredTask(store, 'alice', done.id, undefined), 'terminal');
    assert.is((await store.getConversation(done.id, 'alice'))?.status, 'completed');
    const running = await store.createConversation(alice);
    await store.claimTask(running.id, {});
    assert.is(await cancelStoredTask(store, 'bob', running.id, undefined), 'not-found');
    assert.is((await store.getConversation(running.id, 'alice'))?.status, 'running');
    assert.equal(await store.entries(running.id, 'alice'), []);
  } finally {
    await store.close();
  }
});

test.run();
