// The node's own health for /health in a cluster: id, backend, whether the store answers (bounded by a
// timeout, so a dead database never hangs a health check) and the running tasks this node holds.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { nodeHealth } from '../../src/server/node-health.ts';
import { HEALTH_STORE_TIMEOUT_MS } from '../../src/limits.ts';
import { SyncStoreAdapter } from '../../src/store/async-store.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import { guarded } from '../hang-guard.ts';

test('a reachable store: reachable, and the count of running tasks this node holds', async () => {
  const store = new SyncStoreAdapter(SqliteConversationStore.open(':memory:'));
  try {
    const c = await store.createConversation({ principal: 'alice', sessionId: 's', harness: 'super-pi-code' });
    const done = await store.createConversation({ principal: 'alice', sessionId: 's', harness: 'super-pi-code' });
    await store.claimTask(c.id, {});
    await store.setStatus(done.id, 'completed');
    assert.equal(await nodeHealth({ node: null, backend: 'sqlite', store }), { node: null, backend: 'sqlite', store: { reachable: true }, tasks: 1 });
  } finally {
    await store.close();
  }
});

test('a store not opened yet is reported reachable with no tasks, without opening it', async () => {
  assert.equal(await nodeHealth({ node: null, backend: 'sqlite', store: null }), { node: null, backend: 'sqlite', store: { reachable: true }, tasks: 0 });
});

test('a store whose query fails is unreachable, with the error, and no task count', async () => {
  const store = { ownedTasks: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432')) };
  assert.equal(await nodeHealth({ node: 'node-a', backend: 'postgres', store }), {
    node: 'node-a', backend: 'postgres', store: { reachable: false, error: 'connect ECONNREFUSED 127.0.0.1:5432' }, tasks: null,
  });
});

test('a store that never answers is reported unreachable after the timeout, not waited on', async () => {
  const store = { ownedTasks: () => new Promise<number>(() => undefined) };
  const health = await guarded(nodeHealth({ node: 'node-a', backend: 'postgres', store, timeoutMs: 20 }), 'the health of a store that never answers');
  assert.equal(health.store, { reachable: false, error: 'the store did not answer within 20 ms' });
  assert.is(HEALTH_STORE_TIMEOUT_MS, 1000);
});

test.run();
