// A stream resumed from the session event log (issue 14), through Streamable HTTP's web-standard entry,
// on a node that does not hold the session: the events after Last-Event-ID of that stream only, then its
// later events as a NOTIFY wakes it, until the event that ends it; a client that goes away leaves no
// wait behind. And the id source of a session on such a store: each event kept before it is written,
// writes in the order the events were emitted whatever order the store answers in, and a failed append
// written without an id rather than lost; and a stream whose request died with its node, ended node-died
// by its look-out. The store here is in memory; the PostgreSQL one is tested in
// test/store/session-events.test.ts and end to end in test/e2e/cluster-events.test.ts.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { TokenTable } from '../../src/auth/tokens.ts';
import { createLogger } from '../../src/log/logger.ts';
import { type FeedStore, SessionEventFeed } from '../../src/store/session-event-feed.ts';
import type { SessionEventStore } from '../../src/store/session-events.ts';
import { MemoryLog } from './memory-event-log.ts';
import { OrphanRequests } from '../../src/cluster/orphan-requests.ts';
import type { ClusterSessions } from '../../src/cluster/session-locator.ts';
import { FakeClock } from '../../src/time/fake-clock.ts';
import { Cluster } from '../cluster/orphan-store.ts';
import type { SessionHost } from '../../src/transports/session-host.ts';
import { StoredEventIds } from '../../src/transports/sse-stream.ts';
import { StreamableHttp } from '../../src/transports/streamable-http.ts';
import { DEFAULT_ALLOWED_HOSTS, ORPHAN_CHECK_MS } from '../../src/limits.ts';
import { guarded } from '../hang-guard.ts';
import { sseReader } from '../e2e/sse-reader.ts';

// This node holds no session: anything but `find` (which finds nothing) fails the test.
const holdsNothing = new Proxy({}, {
  get: (_t, name) => {
    if (name === 'find') return () => undefined;
    throw new Error(`the session host was asked for ${String(name)}`);
  },
}) as SessionHost;

function node() {
  const log = new MemoryLog();
  const feed = new SessionEventFeed(log, { transcriptChanged: () => undefined, onError: (what, error) => { throw new Error(`${what}: ${error.message}`); } });
  const http = new StreamableHttp({ sessions: holdsNothing, tokens: new TokenTable(), requireAuth: false, origin: { allowedHosts: DEFAULT_ALLOWED_HOSTS }, maxMessageBytes: 1024, logger: createLogger('error'), events: feed });
  const get = (lastEventId: string, signal?: AbortSignal) => http.handle(new Request('http://localhost/mcp', {
    method: 'GET', headers: { host: 'localhost', accept: 'text/event-stream', 'mcp-session-id': 's1', 'last-event-id': lastEventId }, ...(signal ? { signal } : {}),
  }));
  return { log, feed, get };
}

test('a POST stream resumed on a node that does not hold the session: its events after the id, then each later one as it is appended, then the end', async () => {
  const { log, feed, get } = node();
  await log.appendSessionEvent('s1', 'anonymous', 'request:n:2', '');
  await log.appendSessionEvent('s1', 'anonymous', 'standalone', '{"jsonrpc":"2.0","method":"notifications/message"}');
  await log.appendSessionEvent('s1', 'anonymous', 'request:n:2', '{"jsonrpc":"2.0","method":"notifications/progress"}');
  const res = await guarded(get('1'), 'the resumed stream');
  assert.is(res.status, 200);
  assert.is(res.headers.get('mcp-session-id'), 's1');
  const events = sseReader(res.body as ReadableStream<Uint8Array>);
  assert.equal(await guarded(events.next(), 'the kept event'), { id: '3', data: '{"jsonrpc":"2.0","method":"notifications/progress"}' });
  await log.appendSessionEvent('s1', 'anonymous', 'standalone', '{"jsonrpc":"2.0","method":"notifications/message"}');
  await log.appendSessionEvent('s1', 'anonymous', 'request:n:2', '{"jsonrpc":"2.0","id":2,"result":{}}', true);
  assert.equal(await guarded(events.rest(), 'the answer, then the end'), [{ id: '5', data: '{"jsonrpc":"2.0","id":2,"result":{}}' }]);
  assert.is(feed.waiting, 0, 'the ended stream waits for nothing');
  await feed.close();
});

test('a resumed GET stream follows until the client goes, and then waits for nothing', async () => {
  const { log, feed, get } = node();
  await log.appendSessionEvent('s1', 'anonymous', 'standalone', '{"a":1}');
  const client = new AbortController();
  const res = await guarded(get('1', client.signal), 'the resumed stream');
  const events = sseReader(res.body as ReadableStream<Uint8Array>);
  await log.appendSessionEvent('s1', 'anonymous', 'standalone', '{"a":2}');
  assert.equal(await guarded(events.next(), 'the later event'), { id: '2', data: '{"a":2}' });
  assert.is(feed.waiting, 1);
  client.abort();
  await guarded((async () => {
    while (feed.waiting > 0) await new Promise((r) => setImmediate(r));
  })(), 'the stream forgetting its wait once the client went');
  assert.is(feed.waiting, 0);
  await feed.close();
});

test('resuming after the event that ended a POST stream: the stream ends at once, nothing waits', async () => {
  const { log, feed, get } = node();
  await log.appendSessionEvent('s1', 'anonymous', 'request:n:2', '');
  await log.appendSessionEvent('s1', 'anonymous', 'request:n:2', '{"jsonrpc":"2.0","id":2,"result":{}}', true);
  const res = await guarded(get('2'), 'the resumed stream');
  assert.is(res.status, 200);
  assert.equal(await guarded(sseReader(res.body as ReadableStream<Uint8Array>).rest(), 'the end'), []);
  assert.is(feed.waiting, 0);
  await feed.close();
});

test('another principal\'s log is 404 even with the session\'s id', async () => {
  const { log, feed, get } = node();
  await log.appendSessionEvent('s1', 'token:alice', 'standalone', '{}');
  const res = await get('1');
  assert.is(res.status, 404);
  await feed.close();
});

test('a resumed POST stream whose request died with its node (the home\'s lease lapsed, no task answers it) is ended node-died by its look-out, at the second look', async () => {
  const log = new Cluster();
  const clock = new FakeClock(1000);
  const orphans = new OrphanRequests({ store: log, clock, logger: createLogger('error') });
  const feed = new SessionEventFeed(log, { transcriptChanged: () => undefined, onError: (what, error) => { throw new Error(`${what}: ${error.message}`); } });
  const cluster: ClusterSessions = {
    nodeId: 'node-b',
    confirmHeld: () => Promise.reject(new Error('a resumed stream is not served by the session\'s home')),
    locate: () => Promise.reject(new Error('a resumed stream is never located')),
    watchOrphans: (sessionId, principal) => orphans.watchSession(sessionId, principal),
  };
  const http = new StreamableHttp({ sessions: holdsNothing, tokens: new TokenTable(), requireAuth: false, origin: { allowedHosts: DEFAULT_ALLOWED_HOSTS }, maxMessageBytes: 1024, logger: createLogger('error'), events: feed, cluster: () => cluster });
  await log.appendSessionEvent('s1', 'anonymous', 'request:n:7', '');
  log.homeFresh = false;
  const res = await guarded(http.handle(new Request('http://localhost/mcp', {
    method: 'GET', headers: { host: 'localhost', accept: 'text/event-stream', 'mcp-session-id': 's1', 'last-event-id': '1' },
  })), 'the resumed stream');
  const rest = sseReader(res.body as ReadableStream<Uint8Array>).rest();
  let ended = false;
  void rest.then(() => (ended = true), () => (ended = true));
  await guarded((async () => {
    while (!ended) {
      await new Promise((r) => setTimeout(r, 2));
      clock.advance(ORPHAN_CHECK_MS);
    }
  })(), 'the look-out ending the stream');
  assert.equal(await rest, [{ id: '2', data: '{"jsonrpc":"2.0","id":7,"error":{"code":-32010,"message":"the node running this request stopped (its lease lapsed) before answering; its effect is unknown, so it is not run again: check before you retry","data":{"reason":"node-died"}}}' }]);
  assert.ok(log.lookups >= 2, 'two looks at least: one alone only suspects');
  assert.is(feed.waiting, 0);
  assert.is(clock.pendingTimers, 0, 'the ended stream keeps no look-out timer');
  await feed.close();
});

test('stored ids: whatever order the store answers in, events are written in the order emitted, each with its own seq', async () => {
  await fc.assert(fc.asyncProperty(fc.array(fc.nat(5), { minLength: 1, maxLength: 12 }), async (delays) => {
    let seq = 0;
    // Seqs given out in call order, each answered after turns of its own: unordered answers.
    const store: SessionEventStore = {
      appendSessionEvent: async () => {
        const mine = ++seq;
        for (let i = 0; i < (delays[mine - 1] ?? 0); i++) await new Promise((r) => setImmediate(r));
        return mine;
      },
      sessionEventPosition: async () => null,
      sessionEventsAfter: async () => null,
      pruneSessionEvents: async () => 0,
    };
    const ids = new StoredEventIds(store, 's', 'local', (e) => { throw e; });
    const written: string[] = [];
    for (const [i] of delays.entries()) ids.emit('standalone', `e${i}`, false, (id) => written.push(`${id}:e${i}`));
    await new Promise<void>((r) => ids.afterWrites(r));
    assert.equal(written, delays.map((_, i) => `${i + 1}:e${i}`));
  }), { numRuns: 50 });
});

test('stored ids: a failed append is reported and its event written without an id; later events still get theirs', async () => {
  let n = 0;
  const log = new MemoryLog();
  const failing: FeedStore = Object.assign(Object.create(log) as MemoryLog, {
    appendSessionEvent: async (...args: Parameters<MemoryLog['appendSessionEvent']>) => {
      if (++n === 2) throw new Error('connection lost');
      return log.appendSessionEvent(...args);
    },
  });
  const errors: string[] = [];
  const ids = new StoredEventIds(failing, 's', 'local', (e) => errors.push(e.message));
  const written: (string | null)[] = [];
  for (const data of ['a', 'b', 'c']) ids.emit('standalone', data, false, (id) => written.push(id));
  await new Promise<void>((r) => ids.afterWrites(r));
  assert.equal(written, ['1', null, '2']);
  assert.equal(errors, ['connection lost']);
});

test.run();
