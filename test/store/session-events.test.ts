// The session event log on PostgreSQL (issue 14: SSE events across nodes): seqs allocated by the insert,
// unique per session and gap-free in commit order even with two stores (nodes) appending at once; the
// retention bounds (events per session, age); another principal's session reads as missing; and NOTIFY
// waking a node's LISTEN connection — session events from every node, transcript entries from other
// nodes only; and what a node needs to answer a request whose node died (unended request streams, a
// running task that answers a request). Skipped, with the reason, without PostgreSQL binaries.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PostgresConversationStore, type PostgresStoreOptions } from '../../src/store/postgres-store.ts';
import { SESSION_EVENTS_MAX_AGE_MS } from '../../src/limits.ts';
import type { PostgresListener } from '../../src/store/postgres-listener.ts';
import { rejectsStoreError } from './contract.ts';
import { guarded } from '../hang-guard.ts';
import { findPostgres, type PostgresServer, startPostgres } from './postgres-server.ts';

const found = findPostgres();
let server: PostgresServer | null = null;
const closing: { close(): Promise<void> }[] = [];

function running(): PostgresServer {
  if (server === null) throw new Error('the PostgreSQL server did not start');
  return server;
}

async function open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresConversationStore> {
  const store = await PostgresConversationStore.open(url, options);
  closing.push(store);
  return store;
}

/** A hang guard for waits on a notification: far longer than a NOTIFY takes, not a speed claim. */
const NOTIFY_GUARD_MS = 30_000;

/** A listener on `store` whose notifications are collected; resolves once it listens. */
async function listening(store: PostgresConversationStore) {
  const events: string[] = [];
  let connections = 0;
  const transcripts: string[] = [];
  const statuses: string[] = [];
  const waiters: (() => void)[] = [];
  const heard = () => waiters.splice(0).forEach((w) => w());
  const listener: PostgresListener = store.listen({
    sessionEvent: (session, seq) => { events.push(`${session} ${seq}`); heard(); },
    transcript: (conversation) => { transcripts.push(conversation); heard(); },
    taskStatus: (conversation) => { statuses.push(conversation); heard(); },
    onConnected: () => { connections++; heard(); },
    onError: () => undefined,
  });
  // Closed before the stores (a listener outlives nothing it listens to).
  closing.unshift(listener);
  await guarded(listener.ready, 'the listener connecting', NOTIFY_GUARD_MS);
  const until = (what: string, ok: () => boolean) => guarded(new Promise<void>((resolve) => {
    const look = () => (ok() ? resolve() : waiters.push(look));
    look();
  }), what, NOTIFY_GUARD_MS);
  return { events, transcripts, statuses, until, connections: () => connections };
}

const cases: [string, () => Promise<void>][] = [];
const pgTest = (name: string, fn: () => Promise<void>) => cases.push([name, fn]);

pgTest('two stores appending to one session at once: every seq unique, and the committed seqs are 1..n with no gap', async () => {
  const url = await running().createDatabase();
  const [a, b] = [await open(url), await open(url)];
  const perStore = 40;
  const appends = [a, b].flatMap((store, s) => Array.from({ length: perStore }, (_, i) => store.appendSessionEvent('sess-1', 'token:alice', 'standalone', `{"from":${s},"i":${i}}`)));
  const seqs = await Promise.all(appends);
  assert.equal([...seqs].sort((x, y) => x - y), Array.from({ length: 2 * perStore }, (_, i) => i + 1));
  const kept = await a.sessionEventsAfter('sess-1', 'token:alice', 0, { limit: 1000 });
  assert.equal(kept?.map((e) => e.seq), Array.from({ length: 2 * perStore }, (_, i) => i + 1));
  // Each event is the one its append was told about.
  const bySeq = new Map(kept?.map((e) => [e.seq, e.data]));
  assert.is(bySeq.get(seqs[0] as number), '{"from":0,"i":0}');
  assert.is(bySeq.get(seqs[perStore] as number), '{"from":1,"i":0}');
});

pgTest('sessions count separately: each starts at 1', async () => {
  const store = await open(await running().createDatabase());
  assert.is(await store.appendSessionEvent('s1', 'local', 'standalone', 'a'), 1);
  assert.is(await store.appendSessionEvent('s2', 'local', 'standalone', 'b'), 1);
  assert.is(await store.appendSessionEvent('s1', 'local', 'standalone', 'c'), 2);
});

pgTest('a stream is read on its own, and its end marker is kept', async () => {
  const store = await open(await running().createDatabase());
  await store.appendSessionEvent('s', 'local', 'request:n:1', '');
  await store.appendSessionEvent('s', 'local', 'standalone', '{"jsonrpc":"2.0","method":"notifications/message"}');
  await store.appendSessionEvent('s', 'local', 'request:n:1', '{"jsonrpc":"2.0","id":1,"result":{}}', true);
  assert.equal(await store.sessionEventsAfter('s', 'local', 1, { stream: 'request:n:1' }), [{ seq: 3, stream: 'request:n:1', data: '{"jsonrpc":"2.0","id":1,"result":{}}', ends: true }]);
  assert.equal(await store.sessionEventPosition('s', 'local', 1), { kind: 'kept', stream: 'request:n:1', ends: false });
  assert.equal(await store.sessionEventPosition('s', 'local', 3), { kind: 'kept', stream: 'request:n:1', ends: true });
  assert.equal(await store.sessionEventPosition('s', 'local', 4), { kind: 'ahead', last: 3 });
  assert.equal(await store.sessionEventsAfter('s', 'local', 3), []);
});

pgTest('retention by count: past the limit the oldest events are deleted by the append, and their ids read as expired', async () => {
  const store = await open(await running().createDatabase(), { sessionEventsKept: 5 });
  for (let i = 1; i <= 8; i++) await store.appendSessionEvent('s', 'local', 'standalone', `e${i}`);
  const kept = await store.sessionEventsAfter('s', 'local', 0);
  assert.equal(kept?.map((e) => e.data), ['e4', 'e5', 'e6', 'e7', 'e8']);
  assert.equal(await store.sessionEventPosition('s', 'local', 3), { kind: 'expired', last: 8 });
  assert.equal(await store.sessionEventPosition('s', 'local', 4), { kind: 'kept', stream: 'standalone', ends: false });
});

pgTest('retention by bytes: past SESSION_EVENTS_MAX_BYTES the oldest events are deleted by the append, and the rest stay within it', async () => {
  const budget = 1000;
  const store = await open(await running().createDatabase(), { sessionEventsMaxBytes: budget, sessionEventMaxBytes: 500 });
  // Nine events of 300 bytes (2,700): three fit (900), a fourth would not.
  for (let i = 1; i <= 9; i++) await store.appendSessionEvent('s', 'local', 'standalone', `${i}`.repeat(300));
  const kept = (await store.sessionEventsAfter('s', 'local', 0)) ?? [];
  assert.equal(kept.map((e) => e.seq), [7, 8, 9], 'the newest three are kept, the oldest went first');
  assert.ok(kept.reduce((n, e) => n + Buffer.byteLength(e.data), 0) <= budget, 'the kept events fit the budget');
  assert.equal(await store.sessionEventPosition('s', 'local', 6), { kind: 'expired', last: 9 });
  // Multi-byte characters count as the bytes they take: 200 characters of 2 bytes each (as characters, all would fit).
  await store.appendSessionEvent('s', 'local', 'standalone', 'é'.repeat(200));
  assert.equal((await store.sessionEventsAfter('s', 'local', 0))?.map((e) => e.seq), [8, 9, 10]);
  await store.appendSessionEvent('s', 'local', 'standalone', 'é'.repeat(200));
  assert.equal((await store.sessionEventsAfter('s', 'local', 0))?.map((e) => e.seq), [10, 11]);
});

pgTest('an event past SESSION_EVENT_MAX_BYTES is kept as a small notice saying it was too large to replay, and still ends its stream', async () => {
  const store = await open(await running().createDatabase(), { sessionEventsMaxBytes: 10_000, sessionEventMaxBytes: 1000 });
  await store.appendSessionEvent('s', 'local', 'standalone', 'before');
  const answer = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { text: 'x'.repeat(5000) } });
  const seq = await store.appendSessionEvent('s', 'local', 'request:n:1', answer, true);
  const [before, notice] = (await store.sessionEventsAfter('s', 'local', 0)) ?? [];
  assert.is(before?.data, 'before', 'the earlier event is not pushed out by the large one');
  assert.is(notice?.seq, seq);
  assert.is(notice?.ends, true);
  assert.ok(Buffer.byteLength(notice?.data ?? '') < 1000, 'the notice is small');
  const message = JSON.parse(notice?.data ?? '{}') as { method?: string; params?: { data?: string } };
  assert.is(message.method, 'notifications/message');
  assert.match(message.params?.data ?? '', 'too large to replay');
});

pgTest('retention by age: the sweep deletes events older than SESSION_EVENTS_MAX_AGE_MS, keeps newer ones and the counter', async () => {
  let now = 1_000_000;
  const store = await open(await running().createDatabase(), { now: () => now });
  await store.appendSessionEvent('s', 'local', 'standalone', 'old');
  now += SESSION_EVENTS_MAX_AGE_MS;
  await store.appendSessionEvent('s', 'local', 'standalone', 'new');
  now += 1;
  assert.is(await store.pruneSessionEvents(), 1);
  assert.equal((await store.sessionEventsAfter('s', 'local', 0))?.map((e) => e.data), ['new']);
  assert.equal(await store.sessionEventPosition('s', 'local', 1), { kind: 'expired', last: 2 });
  assert.is(await store.appendSessionEvent('s', 'local', 'standalone', 'next'), 3, 'the counter goes on: ids are never reused');
});

pgTest('another principal\'s session reads as missing, and cannot be appended to', async () => {
  const store = await open(await running().createDatabase());
  await store.appendSessionEvent('s', 'token:alice', 'standalone', 'secret');
  assert.is(await store.sessionEventsAfter('s', 'token:mallory', 0), null);
  assert.is(await store.sessionEventPosition('s', 'token:mallory', 1), null);
  assert.is(await store.sessionEventsAfter('nope', 'token:alice', 0), null);
  await rejectsStoreError(store.appendSessionEvent('s', 'token:mallory', 'standalone', 'x'), 'not_found');
  assert.equal((await store.sessionEventsAfter('s', 'token:alice', 0))?.map((e) => e.data), ['secret']);
});

pgTest('unended request streams: those with events but no ending event, oldest first, never the standalone stream', async () => {
  const store = await open(await running().createDatabase());
  await store.appendSessionEvent('s', 'token:alice', 'request:n:1', '');
  await store.appendSessionEvent('s', 'token:alice', 'standalone', '{"jsonrpc":"2.0","method":"notifications/message"}');
  await store.appendSessionEvent('s', 'token:alice', 'request:s:two', '');
  await store.appendSessionEvent('s', 'token:alice', 'request:n:3', '');
  await store.appendSessionEvent('s', 'token:alice', 'request:n:3', '{"jsonrpc":"2.0","id":3,"result":{}}', true);
  await store.appendSessionEvent('other', 'token:alice', 'request:n:9', '');
  assert.equal(await store.unendedRequestStreams('s', 'token:alice'), ['request:n:1', 'request:s:two']);
  assert.equal(await store.unendedRequestStreams('s', 'token:mallory'), [], 'another principal\'s session has none');
  assert.equal(await store.unendedRequestStreams('nope', 'token:alice'), []);
  await store.appendSessionEvent('s', 'token:alice', 'request:n:1', '{"jsonrpc":"2.0","id":1,"result":{}}', true);
  assert.equal(await store.unendedRequestStreams('s', 'token:alice'), ['request:s:two']);
});

pgTest('a running task answers the request its stored setup names (session, principal and id as JSON); a finished one no longer does', async () => {
  const store = await open(await running().createDatabase());
  const c = await store.createConversation({ principal: 'token:alice', sessionId: 's', harness: 'super-pi-code' });
  await store.claimTask(c.id, { maxTurns: 3, local: false, forbidWrites: false, answers: { session: 's', principal: 'token:alice', request: 7 } });
  const other = await store.createConversation({ principal: 'token:alice', sessionId: 's', harness: 'super-pi-code' });
  await store.claimTask(other.id, { maxTurns: 3, local: false, forbidWrites: false });
  assert.is(await store.taskAnswers('s', 'token:alice', 7), true);
  assert.is(await store.taskAnswers('s', 'token:alice', '7'), false, 'the string "7" is another request');
  assert.is(await store.taskAnswers('s', 'token:alice', 8), false);
  assert.is(await store.taskAnswers('s2', 'token:alice', 7), false);
  assert.is(await store.taskAnswers('s', 'token:mallory', 7), false);
  await store.setStatus(c.id, 'completed');
  assert.is(await store.taskAnswers('s', 'token:alice', 7), false);
});

pgTest('NOTIFY wakes another node\'s listener with the session and seq of each event appended', async () => {
  const url = await running().createDatabase();
  const [a, b] = [await open(url), await open(url)];
  const onB = await listening(b);
  const seq = await a.appendSessionEvent('sess-x', 'local', 'standalone', 'hello');
  await onB.until('node B hearing the event', () => onB.events.length > 0);
  assert.equal(onB.events, [`sess-x ${seq}`]);
});

pgTest('a transcript append NOTIFYs other nodes with its conversation; the appending node ignores its own', async () => {
  const url = await running().createDatabase();
  const [a, b] = [await open(url), await open(url)];
  const [onA, onB] = [await listening(a), await listening(b)];
  const conversation = await a.createConversation({ principal: 'local', sessionId: 's', harness: 'super-pi-code' });
  await a.append(conversation.id, 'user', { text: 'hi' });
  await onB.until('node B hearing the append', () => onB.transcripts.length > 0);
  assert.equal(onB.transcripts, [conversation.id]);
  // NOTIFYs reach a listener in commit order: once A hears a later session event, it would have heard its own append.
  await a.appendSessionEvent('s', 'local', 'standalone', 'marker');
  await onA.until('node A hearing the later event', () => onA.events.length > 0);
  assert.equal(onA.transcripts, []);
});

pgTest('a status change NOTIFYs other nodes with its conversation (task status listeners); the node that set it ignores its own', async () => {
  const url = await running().createDatabase();
  const [a, b] = [await open(url), await open(url)];
  const [onA, onB] = [await listening(a), await listening(b)];
  const conversation = await a.createConversation({ principal: 'local', sessionId: 's', harness: 'super-pi-code' });
  const { epoch } = await a.claimTask(conversation.id, {});
  await a.setStatus(conversation.id, 'completed', epoch, { text: 'done', isError: false, turns: 1, toolCalls: 0 });
  await onB.until('node B hearing the status change', () => onB.statuses.length > 0);
  assert.equal(onB.statuses, [conversation.id]);
  await a.appendSessionEvent('s', 'local', 'standalone', 'marker');
  await onA.until('node A hearing the later event', () => onA.events.length > 0);
  assert.equal(onA.statuses, []);
  // A status write that changed nothing (a stale epoch) announces nothing.
  await rejectsStoreError(a.setStatus(conversation.id, 'failed', epoch - 1), 'fenced');
  await a.appendSessionEvent('s', 'local', 'standalone', 'second marker');
  await onB.until('node B hearing the second marker', () => onB.events.length > 1);
  assert.equal(onB.statuses, [conversation.id]);
});

pgTest('a LISTEN connection the server cuts is opened again, says so (waiters look again), and hears later events', async () => {
  const url = await running().createDatabase();
  const store = await open(url);
  const on = await listening(store);
  assert.is(on.connections(), 1);
  const cut = await running().query<{ n: string }>(new URL(url).pathname.slice(1), "SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'");
  assert.is(cut.rows[0]?.n, '1');
  await on.until('the listener connecting again', () => on.connections() === 2);
  const seq = await store.appendSessionEvent('s', 'local', 'standalone', 'after the cut');
  await on.until('the event after the cut', () => on.events.length > 0);
  assert.equal(on.events, [`s ${seq}`]);
});

if (found.ok) {
  test.before(async () => {
    server = await startPostgres(found);
  });
  test.after.each(async () => {
    for (const s of closing.splice(0)) await s.close();
  });
  test.after(async () => {
    await server?.stop();
  });
  for (const [name, fn] of cases) test(name, fn);
} else {
  console.log(`  (skipped: the session event log tests need a PostgreSQL server: ${found.reason})`);
  for (const [name] of cases) test.skip(name, () => undefined);
  test('without PostgreSQL binaries the skip says why', () => {
    assert.match(found.reason, 'PostgreSQL');
  });
}

test.run();
