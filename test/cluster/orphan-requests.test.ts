// Requests that died with their node (src/cluster/orphan-requests.ts): the stream name gives back the
// request id it was made from; at a session takeover every unended request stream no running task
// answers is ended `node-died`; a resumed stream's look-out ends its stream only once the session's home
// has no fresh lease and no running task answers the request, two looks in a row. On an event log in
// memory (the PostgreSQL one is tested in test/store/session-events.test.ts) and a fake clock.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { nodeDiedLine, OrphanRequests, requestOfStream } from '../../src/cluster/orphan-requests.ts';
import { createLogger } from '../../src/log/logger.ts';
import { idKey } from '../../src/mcp/jsonrpc.ts';
import { requestStream, STANDALONE_STREAM } from '../../src/store/session-events.ts';
import { FakeClock } from '../../src/time/fake-clock.ts';
import { ORPHAN_CHECK_MS } from '../../src/limits.ts';
import { Cluster } from './orphan-store.ts';

const logger = createLogger('error', { write: () => true });

const NODE_DIED_1 = '{"jsonrpc":"2.0","id":1,"error":{"code":-32010,"message":"the node running this request stopped (its lease lapsed) before answering; its effect is unknown, so it is not run again: check before you retry","data":{"reason":"node-died"}}}';

test('the node-died answer: -32010, data.reason "node-died", the request\'s own id', () => {
  assert.is(nodeDiedLine(1), NODE_DIED_1);
  assert.equal(JSON.parse(nodeDiedLine('a b')).id, 'a b');
});

test('a request stream\'s name gives back the request id it was made from (numbers and strings stay apart); other streams none', () => {
  fc.assert(fc.property(fc.oneof(fc.string(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })), (id) => {
    // -0 is sent as 0 (JSON has no -0), so its stream is 0's.
    const expected = Object.is(id, -0) ? 0 : id;
    assert.equal(requestOfStream(requestStream(idKey(id))), expected);
  }));
  assert.is(requestOfStream(STANDALONE_STREAM), null);
  assert.is(requestOfStream('request:n:'), null);
  assert.is(requestOfStream('request:n:01'), null);
  assert.is(requestOfStream('request:x:1'), null);
});

test('at a takeover, every unended request stream no running task answers is ended node-died; ended and standalone streams are left', async () => {
  const store = new Cluster();
  const orphans = new OrphanRequests({ store, clock: new FakeClock(), logger });
  await store.appendSessionEvent('s', 'token:alice', 'request:n:1', '');
  await store.appendSessionEvent('s', 'token:alice', STANDALONE_STREAM, '{"jsonrpc":"2.0","method":"notifications/message"}');
  await store.appendSessionEvent('s', 'token:alice', 'request:s:task', '');
  await store.appendSessionEvent('s', 'token:alice', 'request:n:3', '');
  await store.appendSessionEvent('s', 'token:alice', 'request:n:3', '{"jsonrpc":"2.0","id":3,"result":{}}', true);
  store.answered.add('s token:alice "task"');
  assert.is(await orphans.endOrphans('s', 'token:alice'), 1);
  assert.equal(store.endings('s'), [
    { stream: 'request:n:3', data: '{"jsonrpc":"2.0","id":3,"result":{}}' },
    { stream: 'request:n:1', data: NODE_DIED_1 },
  ]);
  assert.is(await orphans.endOrphans('s', 'token:alice'), 0, 'nothing twice');
});

test('a look-out ends its stream once the home\'s lease lapsed and no task answers it, at the second look in a row; not before a look is due', async () => {
  const store = new Cluster();
  const clock = new FakeClock(1000);
  const orphans = new OrphanRequests({ store, clock, logger });
  await store.appendSessionEvent('s', 'token:alice', 'request:n:1', '');
  const watch = orphans.watch('s', 'token:alice', 'request:n:1');
  if (watch === null) throw new Error('a request stream has a look-out');
  assert.is(await watch.lookIfDue(), false);
  assert.is(store.lookups, 0, 'not due yet: the store is not asked');
  clock.advance(ORPHAN_CHECK_MS);
  assert.is(await watch.lookIfDue(), false, 'the home is alive');
  store.homeFresh = false;
  clock.advance(ORPHAN_CHECK_MS);
  assert.is(await watch.lookIfDue(), false, 'orphaned at one look only: suspected');
  clock.advance(ORPHAN_CHECK_MS);
  assert.is(await watch.lookIfDue(), true);
  assert.equal(store.endings('s'), [{ stream: 'request:n:1', data: NODE_DIED_1 }]);
});

test('a look-out never ends a stream a running task answers, nor one whose session has no row; the standalone stream has none', async () => {
  const store = new Cluster();
  const clock = new FakeClock(1000);
  const orphans = new OrphanRequests({ store, clock, logger });
  await store.appendSessionEvent('s', 'token:alice', 'request:n:1', '');
  store.homeFresh = false;
  store.answered.add('s token:alice 1');
  const watch = orphans.watch('s', 'token:alice', 'request:n:1');
  if (watch === null) throw new Error('a request stream has a look-out');
  for (let i = 0; i < 3; i++) {
    clock.advance(ORPHAN_CHECK_MS);
    assert.is(await watch.lookIfDue(), false);
  }
  store.answered.clear();
  store.owner = null;
  for (let i = 0; i < 3; i++) {
    clock.advance(ORPHAN_CHECK_MS);
    assert.is(await watch.lookIfDue(), false);
  }
  assert.is(store.lookups, 6);
  assert.equal(store.endings('s'), []);
  assert.is(orphans.watch('s', 'token:alice', STANDALONE_STREAM), null);
});

test('a look-out\'s wait resolves when the look is due, and at once when cancelled', async () => {
  const clock = new FakeClock(1000);
  const watch = new OrphanRequests({ store: new Cluster(), clock, logger }).watch('s', 'local', 'request:n:1');
  if (watch === null) throw new Error('a request stream has a look-out');
  let fired = false;
  const due = watch.untilDue();
  void due.done.then(() => (fired = true));
  clock.advance(ORPHAN_CHECK_MS - 1);
  await Promise.resolve();
  assert.is(fired, false);
  clock.advance(1);
  await due.done;
  const cancelled = watch.untilDue();
  cancelled.cancel();
  await cancelled.done;
  assert.is(clock.pendingTimers, 0);
});

test.run();
