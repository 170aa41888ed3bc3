// Streams resumed from the session event log on one node (issue 22): capped per session and per principal
// (429 past it), and read once per session whatever their number — one appended event is one log read,
// and one orphan look per ORPHAN_CHECK_MS covers every resumed request stream of the session. The log is
// in memory and counts its reads; the PostgreSQL one is tested in test/store/session-events.test.ts.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { TokenTable } from '../../src/auth/tokens.ts';
import { OrphanRequests } from '../../src/cluster/orphan-requests.ts';
import type { ClusterSessions } from '../../src/cluster/session-locator.ts';
import { createLogger } from '../../src/log/logger.ts';
import { SessionEventFeed } from '../../src/store/session-event-feed.ts';
import type { SessionEvent } from '../../src/store/session-events.ts';
import { FakeClock } from '../../src/time/fake-clock.ts';
import type { SessionHost } from '../../src/transports/session-host.ts';
import { StreamableHttp } from '../../src/transports/streamable-http.ts';
import type { ResumedStreamLimits } from '../../src/transports/resumed-streams.ts';
import { DEFAULT_ALLOWED_HOSTS, ORPHAN_CHECK_MS } from '../../src/limits.ts';
import { Cluster } from '../cluster/orphan-store.ts';
import { sseReader, type SseReader } from '../e2e/sse-reader.ts';
import { collectGarbage } from '../collect-garbage.ts';
import { guarded, HANG_GUARD_MS, pollUntil } from '../hang-guard.ts';

// This node holds no session: anything but `find` (which finds nothing) fails the test.
const holdsNothing = new Proxy({}, {
  get: (_t, name) => {
    if (name === 'find') return () => undefined;
    throw new Error(`the session host was asked for ${String(name)}`);
  },
}) as SessionHost;

/** The log in memory (with the orphan lookups of a cluster), counting the reads of each session's events. */
class CountingLog extends Cluster {
  reads = 0;

  override async sessionEventsAfter(sessionId: string, principal: string, afterSeq: number, options: { stream?: string; limit?: number } = {}): Promise<SessionEvent[] | null> {
    this.reads++;
    return super.sessionEventsAfter(sessionId, principal, afterSeq, options);
  }
}

function node(limits?: ResumedStreamLimits) {
  const log = new CountingLog();
  const clock = new FakeClock(1000);
  const orphans = new OrphanRequests({ store: log, clock, logger: createLogger('error') });
  const feed = new SessionEventFeed(log, { transcriptChanged: () => undefined, onError: (what, error) => { throw new Error(`${what}: ${error.message}`); } });
  const cluster: ClusterSessions = {
    nodeId: 'node-b',
    confirmHeld: () => Promise.reject(new Error('a resumed stream is not served by the session\'s home')),
    locate: () => Promise.reject(new Error('a resumed stream is never located')),
    watchOrphans: (sessionId, principal) => orphans.watchSession(sessionId, principal),
  };
  const tokens = new TokenTable();
  tokens.add('tok-alice-1234', 'alice');
  const http = new StreamableHttp({
    sessions: holdsNothing, tokens, requireAuth: false, origin: { allowedHosts: DEFAULT_ALLOWED_HOSTS }, maxMessageBytes: 1024,
    logger: createLogger('error'), events: feed, cluster: () => cluster, ...(limits ? { resumedStreamLimits: limits } : {}),
  });
  const get = (session: string, lastEventId: string, signal?: AbortSignal) => http.handle(new Request('http://localhost/mcp', {
    method: 'GET', headers: { host: 'localhost', accept: 'text/event-stream', authorization: 'Bearer tok-alice-1234', 'mcp-session-id': session, 'last-event-id': lastEventId }, ...(signal ? { signal } : {}),
  }));
  return { log, clock, feed, get };
}

/** Lets every pending read and write run (the log answers at once, so a few turns settle everything). */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

test('past the resumed streams one session may hold, the next is refused 429 with a body naming the limit; closing one makes room', async () => {
  const { log, feed, get } = node({ perSession: 3, perPrincipal: 100 });
  await log.appendSessionEvent('s1', 'token:alice', 'standalone', '{"a":1}');
  const clients = [new AbortController(), new AbortController(), new AbortController()];
  for (const c of clients) assert.is((await guarded(get('s1', '1', c.signal), 'a resumed stream')).status, 200);
  const refused = await guarded(get('s1', '1'), 'the fourth');
  assert.is(refused.status, 429);
  assert.match(await refused.text(), 'resumed streams open on this node, the limit');
  clients[0]?.abort();
  await settle();
  const again = new AbortController();
  assert.is((await guarded(get('s1', '1', again.signal), 'a stream after one closed')).status, 200);
  for (const c of [...clients, again]) c.abort();
  await feed.close();
});

test('past the resumed streams one principal may hold, across its sessions, the next is refused 429', async () => {
  const { log, feed, get } = node({ perSession: 10, perPrincipal: 3 });
  for (const s of ['s1', 's2']) await log.appendSessionEvent(s, 'token:alice', 'standalone', '{"a":1}');
  const clients = [new AbortController(), new AbortController(), new AbortController()];
  for (const [i, c] of clients.entries()) assert.is((await guarded(get(i < 2 ? 's1' : 's2', '1', c.signal), 'a resumed stream')).status, 200);
  const refused = await guarded(get('s2', '1'), 'the fourth of the principal');
  assert.is(refused.status, 429);
  assert.match(await refused.text(), 'this principal has 3 resumed streams');
  for (const c of clients) c.abort();
  await feed.close();
});

test('with K streams of one session resumed here, one appended event costs one read of the log, and every stream gets it', async () => {
  const { log, feed, get } = node();
  const k = 10;
  await log.appendSessionEvent('s1', 'token:alice', 'standalone', '{"a":1}');
  const clients: AbortController[] = [];
  const readers: SseReader[] = [];
  for (let i = 0; i < k; i++) {
    const client = new AbortController();
    const res = await guarded(get('s1', '1', client.signal), 'a resumed stream');
    clients.push(client);
    readers.push(sseReader(res.body as ReadableStream<Uint8Array>));
  }
  await settle();
  assert.is(feed.waiting, 1, 'one wait for the session, not one per stream');
  log.reads = 0;
  await log.appendSessionEvent('s1', 'token:alice', 'standalone', '{"a":2}');
  for (const r of readers) assert.equal(await guarded(r.next(), 'the event on every stream'), { id: '2', data: '{"a":2}' });
  await settle();
  assert.is(log.reads, 1, `one read for ${k} streams`);
  for (const c of clients) c.abort();
  // The aborts reach the server through each Request's signal; the test after this one holds that to a collection.
  await pollUntil('the streams gone, nothing waits', () => (feed.waiting === 0 ? true : null), HANG_GUARD_MS, 10);
  await feed.close();
});

test('a client\'s abort closes its stream even when nothing holds the Request it was made with (the collector ran in between)', async () => {
  // undici's Request follows the caller's signal through a WeakRef to its own controller: unless the reply holds
  // the Request, the collector takes that controller and the abort is lost (CI saw a stream left open).
  const { log, feed, get } = node();
  await log.appendSessionEvent('s1', 'token:alice', 'standalone', '{"a":1}');
  const clients = Array.from({ length: 5 }, () => new AbortController());
  for (const c of clients) assert.is((await guarded(get('s1', '1', c.signal), 'a resumed stream')).status, 200);
  await settle();
  assert.is(feed.waiting, 1);
  await collectGarbage();
  for (const c of clients) c.abort();
  await pollUntil('every stream closed by its client\'s abort', () => (feed.waiting === 0 ? true : null), HANG_GUARD_MS, 10);
  await feed.close();
});

test('K resumed request streams of one session whose home died: one orphan look per ORPHAN_CHECK_MS for all of them, and each ends node-died', async () => {
  const { log, clock, feed, get } = node();
  const k = 5;
  for (let i = 1; i <= k; i++) await log.appendSessionEvent('s1', 'token:alice', `request:n:${i}`, '');
  log.homeFresh = false;
  const rests: Promise<unknown[]>[] = [];
  for (let i = 1; i <= k; i++) {
    const res = await guarded(get('s1', String(i)), 'a resumed request stream');
    rests.push(sseReader(res.body as ReadableStream<Uint8Array>).rest());
  }
  await settle();
  const before = log.lookups;
  clock.advance(ORPHAN_CHECK_MS);
  await settle();
  assert.is(log.lookups - before, 1, 'one look for the session, not one per stream');
  clock.advance(ORPHAN_CHECK_MS);
  await settle();
  assert.is(log.lookups - before, 2);
  const ended = await guarded(Promise.all(rests), 'every stream ended node-died');
  for (const events of ended) assert.match(JSON.stringify(events), 'node-died');
  assert.is(feed.waiting, 0);
  assert.is(clock.pendingTimers, 0, 'no look-out timer is left');
  await feed.close();
});

test.run();
