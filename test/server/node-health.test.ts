// The node's own health for /health in a cluster: id, backend, whether the store answers (bounded by a
// timeout, so a dead database never hangs a health check) and the running tasks this node holds; and the
// watch that keeps the last probe, refusing new sessions (503, Retry-After) while the store is lost.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type NodeHealth, nodeHealth, STORE_LOST_MESSAGE, StoreWatch } from '../../src/server/node-health.ts';
import { HEALTH_STORE_TIMEOUT_MS, STORE_PROBE_INTERVAL_MS } from '../../src/limits.ts';
import type { Logger } from '../../src/log/logger.ts';
import { FakeClock } from '../../src/time/fake-clock.ts';
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

const up: NodeHealth = { node: 'node-a', backend: 'postgres', store: { reachable: true }, tasks: 0 };
const down: NodeHealth = { node: 'node-a', backend: 'postgres', store: { reachable: false, error: 'connect ECONNREFUSED 127.0.0.1:5432' }, tasks: null };

/** A watch on a store whose answer the test sets, on a FakeClock; the lines it logs. */
function watched(intervalMs?: number) {
  const clock = new FakeClock();
  let answer: NodeHealth = up;
  let probes = 0;
  const lines: string[] = [];
  const logger: Logger = { level: 'debug', log: (level, message) => void lines.push(`${level}: ${message}`) };
  const watch = new StoreWatch({ probe: async () => { probes++; return answer; }, clock, logger, ...(intervalMs === undefined ? {} : { intervalMs }) });
  return { clock, watch, lines, probes: () => probes, set: (h: NodeHealth) => { answer = h; } };
}

/** Lets the probe promises a timer started settle (FakeClock runs timers, not promise callbacks). */
const settle = () => new Promise((r) => setImmediate(r));

test('a watch accepts sessions until a probe finds the store unreachable, then refuses them with 503, Retry-After and why', async () => {
  const w = watched();
  assert.is(w.watch.refusal(), null, 'the store answered when the node opened it');
  w.set(down);
  assert.equal(await w.watch.probe(), { ...down, acceptingSessions: false });
  assert.equal(w.watch.refusal(), { status: 503, message: STORE_LOST_MESSAGE, headers: { 'Retry-After': '2' } });
  assert.match(STORE_LOST_MESSAGE, 'the conversation store cannot be reached');
  assert.not.match(STORE_LOST_MESSAGE, 'ECONNREFUSED', 'the driver\'s text (the database host) is for /health, not for every caller');
  assert.is(STORE_PROBE_INTERVAL_MS, 2000);
  w.set(up);
  assert.equal(await w.watch.probe(), { ...up, acceptingSessions: true });
  assert.is(w.watch.refusal(), null, 'once it answers again, new sessions are accepted');
  assert.equal(w.lines, ['error: the conversation store cannot be reached; refusing new sessions until it answers', 'info: the conversation store answers again; accepting new sessions']);
});

test('a started watch probes every interval by itself, so a node notices a lost store without a /health call', async () => {
  const w = watched();
  w.watch.start();
  try {
    w.clock.advance(STORE_PROBE_INTERVAL_MS - 1);
    await settle();
    assert.is(w.probes(), 0);
    w.set(down);
    w.clock.advance(1);
    await settle();
    assert.is(w.probes(), 1);
    assert.is(w.watch.acceptingSessions, false);
    w.set(up);
    w.clock.advance(STORE_PROBE_INTERVAL_MS);
    await settle();
    assert.is(w.probes(), 2);
    assert.is(w.watch.acceptingSessions, true);
  } finally {
    w.watch.stop();
  }
  w.clock.advance(10 * STORE_PROBE_INTERVAL_MS);
  await settle();
  assert.is(w.probes(), 2, 'a stopped watch probes no more');
});

test('a stopped watch keeps no probe that ends after the stop (the node closing its store is no lost store)', async () => {
  let answer!: (h: NodeHealth) => void;
  const clock = new FakeClock();
  const lines: string[] = [];
  const watch = new StoreWatch({ probe: () => new Promise<NodeHealth>((r) => { answer = r; }), clock, logger: { level: 'debug', log: (level, message) => void lines.push(`${level}: ${message}`) } });
  const probing = watch.probe();
  watch.stop();
  answer(down);
  await probing;
  assert.is(watch.refusal(), null);
  assert.equal(lines, []);
});

test('Retry-After is the probe interval rounded up to whole seconds; a probe under way is joined, not doubled', async () => {
  const w = watched(2500);
  w.set(down);
  const [a, b] = await Promise.all([w.watch.probe(), w.watch.probe()]);
  assert.equal(a, b);
  assert.is(w.probes(), 1);
  assert.equal(w.watch.refusal()?.headers, { 'Retry-After': '3' });
});

test.run();
