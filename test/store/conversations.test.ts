// Conversations: create and get, status changes, principal isolation on every read path, and cursor
// pagination of lists (newest activity first).

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeListCursor, encodeListCursor } from '../../src/store/list-cursor.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import { type Conversation, type ConversationStore, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '../../src/store/store.ts';
import { ManualClock, throwsStoreError } from './helpers.ts';

let clock: ManualClock;
let store: ConversationStore;
test.before.each(() => {
  clock = new ManualClock();
  store = SqliteConversationStore.open(':memory:', { now: clock.now });
});
test.after.each(() => {
  store.close();
});

const alice = { principal: 'alice', sessionId: 'session-a', harness: 'super-pi-code' };
const bob = { principal: 'bob', sessionId: 'session-b', harness: 'super-pi-code' };

/** Every page of a list, following nextCursor to the end. */
function allPages(principal: string, opts: { sessionId?: string; limit?: number } = {}): Conversation[][] {
  const pages: Conversation[][] = [];
  let cursor: string | undefined;
  do {
    const page = store.listConversations(principal, { ...opts, ...(cursor === undefined ? {} : { cursor }) });
    pages.push(page.items);
    cursor = page.nextCursor;
  } while (cursor !== undefined && pages.length < 100);
  return pages;
}

test('create returns a running conversation with a fresh id; get gives it back to its owner', () => {
  const a = store.createConversation({ ...alice, title: 'fix the parser' });
  const b = store.createConversation(alice);
  assert.equal(a, { id: a.id, ...alice, status: 'running', createdAt: clock.now(), updatedAt: clock.now(), title: 'fix the parser' });
  assert.is(b.title, null);
  assert.is.not(a.id, b.id);
  assert.match(a.id, /^[0-9a-f-]{36}$/);
  assert.equal(store.getConversation(a.id, 'alice'), a);
  assert.equal(store.getConversation(b.id, 'alice'), b);
});

test('create refuses an empty principal, session or harness', () => {
  throwsStoreError(() => store.createConversation({ ...alice, principal: '' }), 'invalid_argument');
  throwsStoreError(() => store.createConversation({ ...alice, sessionId: '' }), 'invalid_argument');
  throwsStoreError(() => store.createConversation({ ...alice, harness: '' }), 'invalid_argument');
});

test("another principal's conversation is exactly like a missing one, on every read path", () => {
  const a = store.createConversation(alice);
  store.append(a.id, 'user', { text: 'secret' });
  const missing = '00000000-0000-4000-8000-000000000000';
  // get
  assert.is(store.getConversation(a.id, 'bob'), null);
  assert.is(store.getConversation(missing, 'bob'), null);
  // entries
  assert.is(store.entries(a.id, 'bob'), null);
  assert.is(store.entries(a.id, 'bob', { afterSeq: 0, limit: 10 }), null);
  assert.is(store.entries(missing, 'bob'), null);
  // lists: plain, filtered by bob's own session, filtered by alice's session id, and paged
  assert.equal(store.listConversations('bob'), { items: [] });
  assert.equal(store.listConversations('bob', { sessionId: 'session-b' }), { items: [] });
  assert.equal(store.listConversations('bob', { sessionId: 'session-a' }), { items: [] });
  assert.equal(store.listConversations('bob', { limit: 1 }), { items: [] });
  // a cursor taken from alice's list does not open alice's conversations to bob either
  store.createConversation(alice);
  const alicePage = store.listConversations('alice', { limit: 1 });
  assert.ok(alicePage.nextCursor);
  assert.equal(store.listConversations('bob', { cursor: alicePage.nextCursor }), { items: [] });
  // and the owner still sees it all
  assert.is(store.getConversation(a.id, 'alice')?.id, a.id);
  assert.is(store.entries(a.id, 'alice')?.length, 1);
});

test("each principal's list holds its own conversations only, even in the same session id", () => {
  const mine = [store.createConversation(alice), store.createConversation(alice)];
  clock.tick();
  const theirs = store.createConversation({ ...bob, sessionId: 'session-a' });
  assert.equal(store.listConversations('alice').items.map((c) => c.id).sort(), mine.map((c) => c.id).sort());
  assert.equal(store.listConversations('bob').items, [theirs]);
  assert.equal(store.listConversations('bob', { sessionId: 'session-a' }).items, [theirs]);
});

test('lists show the most recently updated first; append and setStatus move a conversation up', () => {
  const first = store.createConversation(alice);
  clock.tick();
  const second = store.createConversation(alice);
  clock.tick();
  const third = store.createConversation(alice);
  assert.equal(store.listConversations('alice').items.map((c) => c.id), [third.id, second.id, first.id]);
  clock.tick();
  store.append(first.id, 'user', 'again');
  assert.equal(store.listConversations('alice').items.map((c) => c.id), [first.id, third.id, second.id]);
  clock.tick();
  store.setStatus(second.id, 'completed');
  assert.equal(store.listConversations('alice').items.map((c) => c.id), [second.id, first.id, third.id]);
});

test('a sessionId filter lists only the conversations that session started', () => {
  const one = store.createConversation(alice);
  clock.tick();
  const other = store.createConversation({ ...alice, sessionId: 'session-a2' });
  clock.tick();
  const two = store.createConversation(alice);
  assert.equal(store.listConversations('alice', { sessionId: 'session-a' }).items.map((c) => c.id), [two.id, one.id]);
  assert.equal(store.listConversations('alice', { sessionId: 'session-a2' }).items, [other]);
  assert.equal(store.listConversations('alice', { sessionId: 'nope' }), { items: [] });
});

test('cursor pagination walks every conversation exactly once, in order, with no cursor on the last page', () => {
  const made: Conversation[] = [];
  for (let i = 0; i < 7; i++) {
    made.push(store.createConversation(alice));
    clock.tick();
  }
  const pages = allPages('alice', { limit: 3 });
  assert.equal(pages.map((p) => p.length), [3, 3, 1]);
  assert.equal(pages.flat().map((c) => c.id), made.map((c) => c.id).reverse());
  assert.equal(store.listConversations('alice', { limit: 7 }).nextCursor, undefined, 'an exactly full page has no next');
});

test('pagination is exact when many conversations share one updatedAt (ties broken by id)', () => {
  for (let i = 0; i < 10; i++) store.createConversation(alice); // same clock reading for all
  for (let i = 0; i < 4; i++) store.createConversation({ ...alice, sessionId: 'other' });
  const pages = allPages('alice', { limit: 4 });
  const ids = pages.flat().map((c) => c.id);
  assert.equal(pages.map((p) => p.length), [4, 4, 4, 2]);
  assert.is(new Set(ids).size, 14);
  assert.equal(ids, [...ids].sort().reverse());
  const sessionIds = allPages('alice', { sessionId: 'session-a', limit: 3 }).flat().map((c) => c.id);
  assert.is(sessionIds.length, 10);
  assert.is(new Set(sessionIds).size, 10);
});

test('pages keep their place while new conversations arrive between them', () => {
  for (let i = 0; i < 5; i++) {
    store.createConversation(alice);
    clock.tick();
  }
  const first = store.listConversations('alice', { limit: 2 });
  clock.tick();
  store.createConversation(alice); // newer than everything: belongs before the first page, not in the next
  const rest = allPages('alice', { limit: 2 }).flat();
  const next = store.listConversations('alice', { limit: 10, ...(first.nextCursor ? { cursor: first.nextCursor } : {}) });
  assert.is(next.items.length, 3);
  assert.equal([...first.items, ...next.items].map((c) => c.id), rest.slice(1).map((c) => c.id));
});

test('limits: the default page size, the maximum, and bad values', () => {
  for (let i = 0; i < DEFAULT_LIST_LIMIT + 1; i++) store.createConversation(alice);
  assert.is(store.listConversations('alice').items.length, DEFAULT_LIST_LIMIT);
  assert.ok(store.listConversations('alice').nextCursor);
  assert.is(store.listConversations('alice', { limit: MAX_LIST_LIMIT * 10 }).items.length, DEFAULT_LIST_LIMIT + 1, 'a huge limit is lowered, not refused');
  throwsStoreError(() => store.listConversations('alice', { limit: 0 }), 'invalid_argument');
  throwsStoreError(() => store.listConversations('alice', { limit: 1.5 }), 'invalid_argument');
});

test('a forged or damaged cursor is refused', () => {
  for (const cursor of ['', 'abc', 'c1.', 'c1.!!!', `c1.${Buffer.from('{"a":1}').toString('base64url')}`, `c1.${Buffer.from('[1.5,"x"]').toString('base64url')}`, 'c1.' + 'A'.repeat(2000)]) {
    throwsStoreError(() => store.listConversations('alice', { cursor }), 'invalid_cursor');
  }
  assert.equal(decodeListCursor(encodeListCursor({ updatedAt: 5, id: 'x/y"z' })), { updatedAt: 5, id: 'x/y"z' });
});

test('setStatus changes status and updatedAt; an unknown id or status is refused', () => {
  const c = store.createConversation(alice);
  clock.tick(10);
  store.setStatus(c.id, 'interrupted');
  assert.equal(store.getConversation(c.id, 'alice'), { ...c, status: 'interrupted', updatedAt: c.createdAt + 10 });
  for (const status of ['running', 'completed', 'failed', 'cancelled'] as const) {
    store.setStatus(c.id, status);
    assert.is(store.getConversation(c.id, 'alice')?.status, status);
  }
  throwsStoreError(() => store.setStatus('no-such-id', 'completed'), 'not_found');
  // A caller outside TypeScript's reach (a decoded message) can still pass anything.
  const bogus: unknown = 'paused';
  throwsStoreError(() => store.setStatus(c.id, bogus as 'running'), 'invalid_argument');
});

test('updatedAt never goes back when the wall clock does', () => {
  const clockBack = new ManualClock(2_000);
  const s = SqliteConversationStore.open(':memory:', { now: clockBack.now });
  const c = s.createConversation(alice);
  clockBack.tick(-1000);
  s.setStatus(c.id, 'completed');
  s.append(c.id, 'final', null);
  assert.is(s.getConversation(c.id, 'alice')?.updatedAt, 2_000);
  s.close();
});

test('a closed store refuses every call; close twice is fine', () => {
  const c = store.createConversation(alice);
  store.close();
  store.close();
  throwsStoreError(() => store.getConversation(c.id, 'alice'), 'closed');
  throwsStoreError(() => store.listConversations('alice'), 'closed');
  throwsStoreError(() => store.append(c.id, 'user', 'x'), 'closed');
  throwsStoreError(() => store.createConversation(alice), 'closed');
});

test.run();
