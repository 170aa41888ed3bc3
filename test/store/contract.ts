// The conversation store's contract, as one suite every backend runs (sqlite-contract.test.ts,
// postgres-contract.test.ts): conversations and principal isolation on every read path, list paging,
// transcript entries numbered 1..n per conversation, refused calls with their StoreError codes,
// several stores on one database (as several processes or nodes), and ownership of running
// conversations. Ported from the SQLite-only files beside it (conversations, entries, concurrency,
// ownership), which stay. Not a *.test.ts file.

import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import type { AsyncConversationStore } from '../../src/store/async-store.ts';
import { StoreError, type StoreErrorCode } from '../../src/store/errors.ts';
import { decodeListCursor, encodeListCursor } from '../../src/store/list-cursor.ts';
import type { Ownership } from '../../src/store/ownership.ts';
import {
  type Conversation,
  DEFAULT_ENTRIES_LIMIT,
  DEFAULT_LIST_LIMIT,
  type Entry,
  ENTRY_TYPES,
  type EntryType,
  MAX_ENTRIES_LIMIT,
  MAX_LIST_LIMIT,
} from '../../src/store/store.ts';
import { CONSUMED_STATE_GRACE_MS, CONSUMED_STATE_SWEEP_BATCH, MAX_CHECKPOINT_BYTES, MAX_EXPIRED_TASKS, MAX_STATE_DIGEST_LENGTH, TASK_LEASE_MS } from '../../src/limits.ts';
import { ManualClock } from './helpers.ts';

export interface ContractStoreOptions {
  readonly now?: () => number;
  readonly maxPayloadBytes?: number;
  readonly ownership?: Ownership;
  readonly leaseMs?: number;
}

/** One database of the backend: any number of stores may be open on it at once. */
export interface ContractDatabase {
  open(options: ContractStoreOptions): Promise<AsyncConversationStore>;
  /** Deletes the database; every store on it is closed by then. */
  drop(): Promise<void>;
}

export interface StoreBackend {
  /** A new, empty database. */
  database(): Promise<ContractDatabase>;
}

interface Context {
  readonly clock: ManualClock;
  /** A store on a fresh database, on `clock`. */
  readonly store: AsyncConversationStore;
  /** Another store on the same database (closed after the test); its clock is `clock` unless given. */
  open(options?: ContractStoreOptions): Promise<AsyncConversationStore>;
  /** A store on another fresh database. */
  fresh(options?: ContractStoreOptions): Promise<AsyncConversationStore>;
}

interface ContractTest {
  readonly name: string;
  run(ctx: Context): Promise<void>;
}

const tests: ContractTest[] = [];
function contract(name: string, run: (ctx: Context) => Promise<void>): void {
  tests.push({ name, run });
}

/** Registers every contract test on `suite`, each with its own fresh database and stores closed after. */
export function registerContract(suite: Test, backend: StoreBackend): void {
  for (const t of tests) {
    suite(t.name, async () => {
      const clock = new ManualClock();
      const databases: ContractDatabase[] = [];
      const stores: AsyncConversationStore[] = [];
      const openOn = async (db: ContractDatabase, options: ContractStoreOptions) => {
        const store = await db.open({ now: clock.now, ...options });
        stores.push(store);
        return store;
      };
      const newDatabase = async () => {
        const db = await backend.database();
        databases.push(db);
        return db;
      };
      try {
        const db = await newDatabase();
        const store = await openOn(db, {});
        await t.run({
          clock,
          store,
          open: (options = {}) => openOn(db, options),
          fresh: async (options = {}) => openOn(await newDatabase(), options),
        });
      } finally {
        for (const s of stores) await s.close();
        for (const db of databases) await db.drop();
      }
    });
  }
}

/** Registers every contract test as skipped, so a run without the backend says how much it did not check. */
export function registerSkipped(suite: Test): void {
  for (const t of tests) suite.skip(t.name, () => undefined);
}

/** How many tests the contract has (the skip test checks each is reported). */
export function contractTestCount(): number {
  return tests.length;
}

/** Awaits `promise` and checks it rejects with a StoreError with this code; returns it for further checks. */
export async function rejectsStoreError(promise: Promise<unknown>, code: StoreErrorCode): Promise<StoreError> {
  try {
    await promise;
  } catch (error) {
    if (!(error instanceof StoreError)) throw error;
    assert.is(error.code, code, error.message);
    return error;
  }
  throw new Error(`expected a StoreError ${code}, the call resolved`);
}

/** A settable ownership: `self`, and the owners `gone` holds are dead; any other owner is alive. */
export function fakeOwnership(self: string, gone: ReadonlySet<string> = new Set()): Ownership {
  return { self, isAlive: (owner) => owner === self || !gone.has(owner) };
}

const alice = { principal: 'alice', sessionId: 'session-a', harness: 'super-pi-code' };
const bob = { principal: 'bob', sessionId: 'session-b', harness: 'super-pi-code' };
const MISSING = '00000000-0000-4000-8000-000000000000';
const range = (n: number, from = 1) => Array.from({ length: n }, (_, k) => k + from);

/** Every page of a list, following nextCursor to the end. */
async function allPages(store: AsyncConversationStore, principal: string, opts: { sessionId?: string; limit?: number } = {}): Promise<Conversation[][]> {
  const pages: Conversation[][] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listConversations(principal, { ...opts, ...(cursor === undefined ? {} : { cursor }) });
    pages.push(page.items);
    cursor = page.nextCursor;
  } while (cursor !== undefined && pages.length < 100);
  return pages;
}

// ---- conversations --------------------------------------------------------------------------------

contract('create returns a running conversation with a fresh id; get gives it back to its owner', async ({ store, clock }) => {
  const a = await store.createConversation({ ...alice, title: 'fix the parser' });
  const b = await store.createConversation(alice);
  assert.equal(a, { id: a.id, ...alice, status: 'running', createdAt: clock.now(), updatedAt: clock.now(), title: 'fix the parser' });
  assert.is(b.title, null);
  assert.is.not(a.id, b.id);
  assert.match(a.id, /^[0-9a-f-]{36}$/);
  assert.equal(await store.getConversation(a.id, 'alice'), a);
  assert.equal(await store.getConversation(b.id, 'alice'), b);
});

contract('create refuses an empty principal, session or harness', async ({ store }) => {
  await rejectsStoreError(store.createConversation({ ...alice, principal: '' }), 'invalid_argument');
  await rejectsStoreError(store.createConversation({ ...alice, sessionId: '' }), 'invalid_argument');
  await rejectsStoreError(store.createConversation({ ...alice, harness: '' }), 'invalid_argument');
  assert.equal(await store.listConversations('alice'), { items: [] });
});

contract("another principal's conversation is exactly like a missing one, on every read path", async ({ store }) => {
  const a = await store.createConversation(alice);
  await store.append(a.id, 'user', { text: 'secret' });
  assert.is(await store.getConversation(a.id, 'bob'), null);
  assert.is(await store.getConversation(MISSING, 'bob'), null);
  assert.is(await store.entries(a.id, 'bob'), null);
  assert.is(await store.entries(a.id, 'bob', { afterSeq: 0, limit: 10 }), null);
  assert.is(await store.entries(MISSING, 'bob'), null);
  assert.equal(await store.listConversations('bob'), { items: [] });
  assert.equal(await store.listConversations('bob', { sessionId: 'session-b' }), { items: [] });
  assert.equal(await store.listConversations('bob', { sessionId: 'session-a' }), { items: [] });
  assert.equal(await store.listConversations('bob', { limit: 1 }), { items: [] });
  assert.equal(await store.recentConversationIds('bob', a.id.slice(0, 4), 10), { ids: [], total: 0 });
  assert.equal(await store.recentConversationIds('bob', '', 10), { ids: [], total: 0 });
  // a cursor taken from alice's list does not open alice's conversations to bob either
  await store.createConversation(alice);
  const alicePage = await store.listConversations('alice', { limit: 1 });
  assert.ok(alicePage.nextCursor);
  assert.equal(await store.listConversations('bob', { cursor: alicePage.nextCursor }), { items: [] });
  // and the owner still sees it all
  assert.is((await store.getConversation(a.id, 'alice'))?.id, a.id);
  assert.is((await store.entries(a.id, 'alice'))?.length, 1);
});

contract('keys no conversation can have (a NUL, a lone surrogate) answer as missing on reads and not_found on writes', async ({ store }) => {
  const a = await store.createConversation(alice);
  await store.append(a.id, 'user', 'hi');
  for (const odd of ['alice\u0000', '\u0000', 'alice\uD800', '\uDC00alice']) {
    assert.is(await store.getConversation(a.id, odd), null, JSON.stringify(odd));
    assert.is(await store.getConversation(odd, 'alice'), null, JSON.stringify(odd));
    assert.is(await store.entries(a.id, odd), null, JSON.stringify(odd));
    assert.is(await store.entries(odd, 'alice'), null, JSON.stringify(odd));
    assert.is(await store.lastEntry(odd), null, JSON.stringify(odd));
    assert.equal(await store.listConversations(odd), { items: [] }, JSON.stringify(odd));
    assert.equal(await store.listConversations('alice', { sessionId: odd }), { items: [] }, JSON.stringify(odd));
    assert.equal(await store.recentConversationIds(odd, '', 10), { ids: [], total: 0 }, JSON.stringify(odd));
    assert.equal(await store.recentConversationIds('alice', odd, 10), { ids: [], total: 0 }, JSON.stringify(odd));
    await rejectsStoreError(store.append(odd, 'user', 'x'), 'not_found');
    await rejectsStoreError(store.setStatus(odd, 'completed'), 'not_found');
  }
  assert.equal((await store.entries(a.id, 'alice'))?.map((e) => e.seq), [1]);
});

contract("each principal's list holds its own conversations only, even in the same session id", async ({ store, clock }) => {
  const mine = [await store.createConversation(alice), await store.createConversation(alice)];
  clock.tick();
  const theirs = await store.createConversation({ ...bob, sessionId: 'session-a' });
  assert.equal((await store.listConversations('alice')).items.map((c) => c.id).sort(), mine.map((c) => c.id).sort());
  assert.equal((await store.listConversations('bob')).items, [theirs]);
  assert.equal((await store.listConversations('bob', { sessionId: 'session-a' })).items, [theirs]);
});

contract('lists show the most recently updated first; append and setStatus move a conversation up', async ({ store, clock }) => {
  const first = await store.createConversation(alice);
  clock.tick();
  const second = await store.createConversation(alice);
  clock.tick();
  const third = await store.createConversation(alice);
  const ids = async () => (await store.listConversations('alice')).items.map((c) => c.id);
  assert.equal(await ids(), [third.id, second.id, first.id]);
  clock.tick();
  await store.append(first.id, 'user', 'again');
  assert.equal(await ids(), [first.id, third.id, second.id]);
  clock.tick();
  await store.setStatus(second.id, 'completed');
  assert.equal(await ids(), [second.id, first.id, third.id]);
});

contract('a sessionId filter lists only the conversations that session started', async ({ store, clock }) => {
  const one = await store.createConversation(alice);
  clock.tick();
  const other = await store.createConversation({ ...alice, sessionId: 'session-a2' });
  clock.tick();
  const two = await store.createConversation(alice);
  assert.equal((await store.listConversations('alice', { sessionId: 'session-a' })).items.map((c) => c.id), [two.id, one.id]);
  assert.equal((await store.listConversations('alice', { sessionId: 'session-a2' })).items, [other]);
  assert.equal(await store.listConversations('alice', { sessionId: 'nope' }), { items: [] });
});

contract('cursor pagination walks every conversation exactly once, in order, with no cursor on the last page', async ({ store, clock }) => {
  const made: Conversation[] = [];
  for (let i = 0; i < 7; i++) {
    made.push(await store.createConversation(alice));
    clock.tick();
  }
  const pages = await allPages(store, 'alice', { limit: 3 });
  assert.equal(pages.map((p) => p.length), [3, 3, 1]);
  assert.equal(pages.flat().map((c) => c.id), made.map((c) => c.id).reverse());
  assert.equal((await store.listConversations('alice', { limit: 7 })).nextCursor, undefined, 'an exactly full page has no next');
});

contract('pagination is exact when many conversations share one updatedAt (ties broken by id, in byte order)', async ({ store }) => {
  for (let i = 0; i < 10; i++) await store.createConversation(alice); // same clock reading for all
  for (let i = 0; i < 4; i++) await store.createConversation({ ...alice, sessionId: 'other' });
  const pages = await allPages(store, 'alice', { limit: 4 });
  const ids = pages.flat().map((c) => c.id);
  assert.equal(pages.map((p) => p.length), [4, 4, 4, 2]);
  assert.is(new Set(ids).size, 14);
  assert.equal(ids, [...ids].sort().reverse());
  const sessionIds = (await allPages(store, 'alice', { sessionId: 'session-a', limit: 3 })).flat().map((c) => c.id);
  assert.is(sessionIds.length, 10);
  assert.is(new Set(sessionIds).size, 10);
});

contract('pages keep their place while new conversations arrive between them', async ({ store, clock }) => {
  for (let i = 0; i < 5; i++) {
    await store.createConversation(alice);
    clock.tick();
  }
  const first = await store.listConversations('alice', { limit: 2 });
  clock.tick();
  await store.createConversation(alice); // newer than everything: belongs before the first page, not in the next
  const rest = (await allPages(store, 'alice', { limit: 2 })).flat();
  const next = await store.listConversations('alice', { limit: 10, ...(first.nextCursor ? { cursor: first.nextCursor } : {}) });
  assert.is(next.items.length, 3);
  assert.equal([...first.items, ...next.items].map((c) => c.id), rest.slice(1).map((c) => c.id));
});

contract('list limits: the default page size, the maximum, and bad values', async ({ store }) => {
  for (let i = 0; i < DEFAULT_LIST_LIMIT + 1; i++) await store.createConversation(alice);
  assert.is((await store.listConversations('alice')).items.length, DEFAULT_LIST_LIMIT);
  assert.ok((await store.listConversations('alice')).nextCursor);
  assert.is((await store.listConversations('alice', { limit: MAX_LIST_LIMIT * 10 })).items.length, DEFAULT_LIST_LIMIT + 1, 'a huge limit is lowered, not refused');
  await rejectsStoreError(store.listConversations('alice', { limit: 0 }), 'invalid_argument');
  await rejectsStoreError(store.listConversations('alice', { limit: 1.5 }), 'invalid_argument');
});

contract('a forged or damaged cursor is refused', async ({ store }) => {
  const forged = [
    '', 'abc', 'c1.', 'c1.!!!', `c1.${Buffer.from('{"a":1}').toString('base64url')}`, `c1.${Buffer.from('[1.5,"x"]').toString('base64url')}`, 'c1.' + 'A'.repeat(2000),
  ];
  for (const cursor of forged) await rejectsStoreError(store.listConversations('alice', { cursor }), 'invalid_cursor');
  assert.equal(decodeListCursor(encodeListCursor({ updatedAt: 5, id: 'x/y"z' })), { updatedAt: 5, id: 'x/y"z' });
});

contract('recentConversationIds: newest first, by id prefix, at most limit, with the full count', async ({ store, clock }) => {
  const made: Conversation[] = [];
  for (let i = 0; i < 5; i++) {
    made.push(await store.createConversation(alice));
    clock.tick();
  }
  await store.createConversation(bob);
  const newestFirst = made.map((c) => c.id).reverse();
  assert.equal(await store.recentConversationIds('alice', '', 10), { ids: newestFirst, total: 5 });
  assert.equal(await store.recentConversationIds('alice', '', 2), { ids: newestFirst.slice(0, 2), total: 5 });
  const target = made[2]!;
  assert.equal(await store.recentConversationIds('alice', target.id, 10), { ids: [target.id], total: 1 });
  assert.equal(await store.recentConversationIds('alice', 'zzz', 10), { ids: [], total: 0 });
  await rejectsStoreError(store.recentConversationIds('alice', '', 0), 'invalid_argument');
  assert.is((await store.recentConversationIds('alice', '', MAX_LIST_LIMIT * 4)).ids.length, 5, 'a huge limit is lowered, not refused');
});

contract('setStatus changes status and updatedAt; an unknown id or status is refused', async ({ store, clock }) => {
  const c = await store.createConversation(alice);
  clock.tick(10);
  await store.setStatus(c.id, 'interrupted');
  assert.equal(await store.getConversation(c.id, 'alice'), { ...c, status: 'interrupted', updatedAt: c.createdAt + 10 });
  for (const status of ['running', 'completed', 'failed', 'cancelled'] as const) {
    await store.setStatus(c.id, status);
    assert.is((await store.getConversation(c.id, 'alice'))?.status, status);
  }
  await rejectsStoreError(store.setStatus('no-such-id', 'completed'), 'not_found');
  // A caller outside TypeScript's reach (a decoded message) can still pass anything.
  const bogus: unknown = 'paused';
  await rejectsStoreError(store.setStatus(c.id, bogus as 'running'), 'invalid_argument');
});

contract('updatedAt never goes back when the wall clock does', async ({ fresh }) => {
  const clockBack = new ManualClock(2_000);
  const s = await fresh({ now: clockBack.now });
  const c = await s.createConversation(alice);
  clockBack.tick(-1000);
  await s.setStatus(c.id, 'completed');
  await s.append(c.id, 'final', null);
  assert.is((await s.getConversation(c.id, 'alice'))?.updatedAt, 2_000);
});

contract('a clock with fractions of a millisecond is truncated, not refused', async ({ fresh }) => {
  const s = await fresh({ now: () => 1_700_000_000_000.75 });
  const c = await s.createConversation(alice);
  assert.is(c.createdAt, 1_700_000_000_000);
  assert.is((await s.append(c.id, 'user', 1)).time, 1_700_000_000_000);
});

contract('a closed store refuses every call; close twice is fine', async ({ fresh }) => {
  const s = await fresh();
  const c = await s.createConversation(alice);
  await s.close();
  await s.close();
  await rejectsStoreError(s.getConversation(c.id, 'alice'), 'closed');
  await rejectsStoreError(s.listConversations('alice'), 'closed');
  await rejectsStoreError(s.recentConversationIds('alice', '', 1), 'closed');
  await rejectsStoreError(s.append(c.id, 'user', 'x'), 'closed');
  await rejectsStoreError(s.setStatus(c.id, 'completed'), 'closed');
  await rejectsStoreError(s.entries(c.id, 'alice'), 'closed');
  await rejectsStoreError(s.lastEntry(c.id), 'closed');
  await rejectsStoreError(s.createConversation(alice), 'closed');
});

// ---- entries ----------------------------------------------------------------------------------------

contract('two conversations appended interleaved each number their entries 1..n, and read back in seq order', async ({ store }) => {
  const a = await store.createConversation(alice);
  const b = await store.createConversation(alice);
  const appended: Entry[] = [];
  for (let i = 0; i < 20; i++) appended.push(await store.append(i % 3 === 0 ? b.id : a.id, 'model', { i }));
  const ofA = appended.filter((e) => e.conversationId === a.id);
  const ofB = appended.filter((e) => e.conversationId === b.id);
  assert.equal(ofA.map((e) => e.seq), range(ofA.length));
  assert.equal(ofB.map((e) => e.seq), range(ofB.length));
  assert.equal(await store.entries(a.id, 'alice'), ofA);
  assert.equal(await store.entries(b.id, 'alice'), ofB);
});

contract("a principal cannot infer another principal's activity from its seqs", async ({ fresh }) => {
  const transcriptOfAlice = async (bobEntriesBetween: number): Promise<number[]> => {
    const s = await fresh();
    const mine = await s.createConversation(alice);
    const his = await s.createConversation(bob);
    for (let i = 0; i < 5; i++) {
      await s.append(mine.id, 'model', { i });
      for (let k = 0; k < bobEntriesBetween; k++) await s.append(his.id, 'model', { k });
    }
    return ((await s.entries(mine.id, 'alice')) ?? []).map((e) => e.seq);
  };
  assert.equal(await transcriptOfAlice(0), [1, 2, 3, 4, 5]);
  assert.equal(await transcriptOfAlice(37), [1, 2, 3, 4, 5]);
});

contract('payloads of every entry type come back intact', async ({ store, clock }) => {
  const c = await store.createConversation(alice);
  const payloads: unknown[] = [
    { text: 'hello', nested: { list: [1, 2.5, -3e-7, null, true, false], empty: {}, none: [] }, big: 1e300, tiny: 5e-324, order: { z: 1, a: 2, aa: 3 } },
    'a plain string with "quotes", a \\ backslash, a\nnewline, emoji 🧪, ünïcödé and a lone \uD800 surrogate',
    { name: 'edit', arguments: { path: 'src/a.ts', edits: [{ oldText: 'x', newText: 'y' }] }, id: 'call-1' },
    { content: [{ type: 'text', text: 'ok' }], isError: false },
    { id: 'call-2', reason: 'worker died' },
    { text: 'done', usage: { input: 1200, output: 34 } },
    { message: 'boom', code: -32603 },
    { path: 'src/a.ts', before: '\u0000binary-ish\u0001', existed: true },
    { revert: [1, 2, 3] },
    { message: 'the server process died' },
    { key: 'confirm-1-2-1', id: 'call-3', allowed: false, refusal: 'the person answered "decline"' },
  ];
  const types: EntryType[] = [...ENTRY_TYPES];
  assert.is(types.length, payloads.length);
  const written: Entry[] = [];
  for (const [i, type] of types.entries()) written.push(await store.append(c.id, type, payloads[i]));
  const read = await store.entries(c.id, 'alice');
  assert.equal(read, written);
  assert.equal(read?.map((e) => e.payload), payloads);
  assert.equal(read?.map((e) => e.type), types);
  assert.equal(read?.map((e) => e.time), types.map(() => clock.now()));
  // Key order too: a payload is given back as the JSON that was appended.
  assert.equal(Object.keys((read?.[0]?.payload as { order: object }).order), ['z', 'a', 'aa']);
});

contract('top-level JSON scalars are payloads too; the returned entry is a copy, not the caller object', async ({ store }) => {
  const c = await store.createConversation(alice);
  for (const p of [null, 0, 42, 'x', true, []]) assert.equal((await store.append(c.id, 'model', p)).payload, p);
  const mutable = { n: 1 };
  const entry = await store.append(c.id, 'model', mutable);
  mutable.n = 2;
  assert.equal(entry.payload, { n: 1 });
  assert.equal((await store.lastEntry(c.id))?.payload, { n: 1 });
});

contract('entries after a seq, in pages', async ({ store }) => {
  const c = await store.createConversation(alice);
  const all: Entry[] = [];
  for (let i = 0; i < 10; i++) all.push(await store.append(c.id, 'model', { i }));
  assert.equal(await store.entries(c.id, 'alice', { afterSeq: all[6]!.seq }), all.slice(7));
  assert.equal(await store.entries(c.id, 'alice', { afterSeq: all[9]!.seq }), []);
  assert.equal(await store.entries(c.id, 'alice', { afterSeq: 1_000_000 }), []);
  assert.equal(await store.entries(c.id, 'alice', { afterSeq: 0 }), all);
  const paged: Entry[] = [];
  let after = 0;
  for (;;) {
    const page = (await store.entries(c.id, 'alice', { afterSeq: after, limit: 3 })) ?? [];
    if (page.length === 0) break;
    paged.push(...page);
    after = page.at(-1)!.seq;
  }
  assert.equal(paged, all);
});

contract('entries of a conversation with none is an empty list, not null', async ({ store }) => {
  const c = await store.createConversation(alice);
  assert.equal(await store.entries(c.id, 'alice'), []);
  assert.is(await store.lastEntry(c.id), null);
});

contract("entries of another principal's conversation are null, exactly as for one that does not exist", async ({ store }) => {
  const c = await store.createConversation(alice);
  await store.append(c.id, 'user', 'private');
  assert.is((await store.entries(c.id, 'alice'))?.length, 1);
  assert.is(await store.entries(c.id, 'bob'), null);
  assert.is(await store.entries(c.id, 'bob', { afterSeq: 0, limit: 1 }), null);
  assert.is(await store.entries(c.id, ''), null);
  assert.is(await store.entries('no-such-conversation', 'alice'), null);
});

contract('lastEntry is the newest entry of that conversation only', async ({ store }) => {
  const a = await store.createConversation(alice);
  const b = await store.createConversation(alice);
  await store.append(a.id, 'user', 1);
  const lastOfA = await store.append(a.id, 'final', 2);
  await store.append(b.id, 'user', 3);
  assert.equal(await store.lastEntry(a.id), lastOfA);
  assert.is(await store.lastEntry('no-such-conversation'), null);
});

contract('append bumps the conversation updatedAt to the entry time', async ({ store, clock }) => {
  const c = await store.createConversation(alice);
  clock.tick(500);
  const e = await store.append(c.id, 'user', 'hi');
  assert.is((await store.getConversation(c.id, 'alice'))?.updatedAt, e.time);
  assert.is(e.time, c.createdAt + 500);
});

contract('refused appends write nothing: unknown conversation, unknown type, non-JSON, too large', async ({ fresh }) => {
  const small = await fresh({ maxPayloadBytes: 16 });
  const c = await small.createConversation(alice);
  await rejectsStoreError(small.append('no-such-conversation', 'user', 'x'), 'not_found');
  const bogus: unknown = 'thought';
  await rejectsStoreError(small.append(c.id, bogus as EntryType, 'x'), 'invalid_argument');
  await rejectsStoreError(small.append(c.id, 'user', undefined), 'invalid_argument');
  await rejectsStoreError(small.append(c.id, 'user', () => 1), 'invalid_argument');
  const bigint = await rejectsStoreError(small.append(c.id, 'user', { n: 1n }), 'invalid_argument');
  assert.instance(bigint.cause, TypeError);
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  await rejectsStoreError(small.append(c.id, 'user', cyclic), 'invalid_argument');
  const big = await rejectsStoreError(small.append(c.id, 'user', 'x'.repeat(15)), 'payload_too_large');
  assert.is(big.message, 'the payload is 17 bytes of JSON, more than the 16 one entry may hold');
  assert.equal(await small.entries(c.id, 'alice'), []);
  assert.is((await small.append(c.id, 'user', 'x'.repeat(14))).seq, 1, 'no seq was used up by the refused writes');
});

contract('entries limits: default, maximum, bad values', async ({ store }) => {
  const c = await store.createConversation(alice);
  for (let i = 0; i < DEFAULT_ENTRIES_LIMIT + 5; i++) await store.append(c.id, 'model', i);
  assert.is((await store.entries(c.id, 'alice'))?.length, DEFAULT_ENTRIES_LIMIT);
  assert.is((await store.entries(c.id, 'alice', { limit: MAX_ENTRIES_LIMIT * 2 }))?.length, DEFAULT_ENTRIES_LIMIT + 5);
  await rejectsStoreError(store.entries(c.id, 'alice', { limit: 0 }), 'invalid_argument');
  await rejectsStoreError(store.entries(c.id, 'alice', { afterSeq: -1 }), 'invalid_argument');
  await rejectsStoreError(store.entries(c.id, 'alice', { afterSeq: 0.5 }), 'invalid_argument');
});

// ---- several stores on one database ---------------------------------------------------------------

contract("two stores on one database, appending interleaved, share each conversation's sequence", async ({ store: one, open }) => {
  const two = await open();
  const a = await one.createConversation(alice);
  const b = await two.createConversation(alice);
  assert.is((await two.getConversation(a.id, 'alice'))?.id, a.id, "the second store sees the first one's conversation");
  const written: Entry[] = [];
  for (let i = 0; i < 30; i++) {
    written.push(await one.append(a.id, 'model', { tag: 'one', i }));
    written.push(await two.append(a.id, 'model', { tag: 'two', i }));
    written.push(await two.append(b.id, 'model', { tag: 'two-b', i }));
  }
  const ofA = written.filter((e) => e.conversationId === a.id);
  const ofB = written.filter((e) => e.conversationId === b.id);
  assert.equal(ofA.map((e) => e.seq), range(60), 'one sequence for a, across both stores');
  assert.equal(ofB.map((e) => e.seq), range(30));
  assert.equal(await one.entries(a.id, 'alice'), ofA);
  assert.equal(await one.entries(b.id, 'alice'), ofB);
  assert.equal(await two.entries(a.id, 'alice'), ofA);
  assert.equal(await one.lastEntry(a.id), await two.lastEntry(a.id));
});

contract('two stores appending to one conversation at once: seqs 1..N, no gap, no duplicate, each as it was told', async ({ store: one, open }) => {
  const two = await open();
  const c = await one.createConversation(alice);
  const perStore = 60;
  // Every append is issued before any is awaited: with an asynchronous driver they race for real.
  const calls: Promise<Entry>[] = [];
  for (let i = 0; i < perStore; i++) {
    calls.push(one.append(c.id, 'model', { tag: 'one', i }));
    calls.push(two.append(c.id, 'model', { tag: 'two', i }));
  }
  const told = await Promise.all(calls);
  const stored = (await one.entries(c.id, 'alice')) ?? [];
  assert.equal(stored.map((e) => e.seq), range(2 * perStore), 'the conversation counts 1..N across both stores');
  assert.equal([...told].sort((x, y) => x.seq - y.seq), stored, 'each append was told the seq it is stored under');
  assert.equal((await two.lastEntry(c.id))?.seq, 2 * perStore);
  const next = await two.append(c.id, 'final', 'done');
  assert.is(next.seq, 2 * perStore + 1);
});

contract('an entry whose append resolved is read by a store opened afterwards, the writer still open', async ({ store, open }) => {
  const c = await store.createConversation(alice);
  const written: Entry[] = [];
  for (let i = 0; i < 25; i++) written.push(await store.append(c.id, 'model', { i }));
  // Default ownership: stores of one process are one owner, so this open interrupts nothing.
  const reader = await open();
  assert.is((await reader.getConversation(c.id, 'alice'))?.status, 'running');
  assert.equal(await reader.entries(c.id, 'alice'), written);
  assert.equal(await reader.getConversation(c.id, 'alice'), await store.getConversation(c.id, 'alice'));
});

// ---- ownership of running conversations -----------------------------------------------------------

// Ownership is injected (fakeOwnership): which owners are gone is the ownership module's question
// (ownership.ts, node-ownership.ts), not the store's; the store's part is what it does with the answer.
contract('a store marks conversations of a gone owner interrupted at open, once, with an entry; others are untouched', async ({ open }) => {
  const first = await open({ ownership: fakeOwnership('a') });
  const orphan = await first.createConversation(alice);
  await first.append(orphan.id, 'user', { text: 'go' });
  const finished = await first.createConversation(alice);
  await first.setStatus(finished.id, 'completed');
  const other = await open({ ownership: fakeOwnership('b') });
  const running = await other.createConversation(alice);
  const gone = new Set(['a']);

  const third = await open({ ownership: fakeOwnership('c', gone) });
  assert.is((await third.getConversation(orphan.id, 'alice'))?.status, 'interrupted');
  const last = await third.lastEntry(orphan.id);
  assert.is(last?.type, 'interrupted');
  assert.is(last?.seq, 2);
  assert.match(String((last?.payload as { message: string }).message), `Continue it with conversation_id ${orphan.id}`);
  assert.is((await third.getConversation(finished.id, 'alice'))?.status, 'completed', 'only running conversations');
  assert.is((await third.getConversation(running.id, 'alice'))?.status, 'running', 'a live owner keeps its task');
  assert.is(await third.lastEntry(running.id), null);

  // Marked once: later opens, even two at the same moment, find nothing to do.
  await Promise.all([open({ ownership: fakeOwnership('d', gone) }), open({ ownership: fakeOwnership('e', gone) })]);
  assert.equal((await third.entries(orphan.id, 'alice'))?.map((e) => e.type), ['user', 'interrupted']);
});

contract('two stores opening at once with the same gone owner interrupt its conversation exactly once', async ({ open }) => {
  const first = await open({ ownership: fakeOwnership('a') });
  const orphans: Conversation[] = [];
  for (let i = 0; i < 5; i++) orphans.push(await first.createConversation(alice));
  const gone = new Set(['a']);
  const [x] = await Promise.all([open({ ownership: fakeOwnership('x', gone) }), open({ ownership: fakeOwnership('y', gone) }), open({ ownership: fakeOwnership('z', gone) })]);
  for (const o of orphans) assert.equal((await x.entries(o.id, 'alice'))?.map((e) => [e.seq, e.type]), [[1, 'interrupted']], o.id);
});

contract('continuing an interrupted conversation makes this store its owner', async ({ open }) => {
  const first = await open({ ownership: fakeOwnership('a') });
  const c = await first.createConversation(alice);
  const second = await open({ ownership: fakeOwnership('b', new Set(['a'])) });
  assert.is((await second.getConversation(c.id, 'alice'))?.status, 'interrupted');
  await second.setStatus(c.id, 'running');
  // 'a' is gone but no longer the owner; 'b' is alive: running it stays.
  const third = await open({ ownership: fakeOwnership('c', new Set(['a'])) });
  assert.is((await third.getConversation(c.id, 'alice'))?.status, 'running');
  // Once 'b' is gone too, the next open interrupts it again.
  const fourth = await open({ ownership: fakeOwnership('d', new Set(['a', 'b'])) });
  assert.is((await fourth.getConversation(c.id, 'alice'))?.status, 'interrupted');
  assert.equal((await fourth.entries(c.id, 'alice'))?.map((e) => e.type), ['interrupted', 'interrupted']);
});

contract('a conversation created by a store is owned by it', async ({ open }) => {
  const maker = await open({ ownership: fakeOwnership('maker') });
  const c = await maker.createConversation(alice);
  assert.is((await (await open({ ownership: fakeOwnership('x', new Set(['other'])) })).getConversation(c.id, 'alice'))?.status, 'running');
  assert.is((await (await open({ ownership: fakeOwnership('y', new Set(['maker'])) })).getConversation(c.id, 'alice'))?.status, 'interrupted');
});

// ---- task leases and fencing ----------------------------------------------------------------------

// Times come from the stores' clock (the contract's ManualClock), never from sleeps: a lease lapses when
// the clock is moved past it.
const LEASE = 1000;

contract('claiming a task runs it under this owner with a fresh lease of one term; every claim moves the epoch on', async ({ open, clock }) => {
  const a = await open({ ownership: fakeOwnership('a'), leaseMs: LEASE });
  const c = await a.createConversation(alice);
  const first = await a.claimTask(c.id, { maxTurns: 5 });
  assert.equal(first, { conversationId: c.id, epoch: 1, expiresAt: clock.now() + LEASE });
  await a.setStatus(c.id, 'completed', 1);
  clock.tick(10);
  const again = await a.claimTask(c.id, { maxTurns: 6 });
  assert.equal(again, { conversationId: c.id, epoch: 2, expiresAt: clock.now() + LEASE });
  assert.is((await a.getConversation(c.id, 'alice'))?.status, 'running', 'a claim makes it running again');
  assert.is(await a.ownedTasks(), 1);
  await rejectsStoreError(a.claimTask(MISSING, {}), 'not_found');
});

contract('a new conversation is held by its creator for one term at epoch 0, so no node takes it over before its claim', async ({ open, clock }) => {
  const a = await open({ ownership: fakeOwnership('a'), leaseMs: LEASE });
  const b = await open({ ownership: fakeOwnership('b'), leaseMs: LEASE });
  const c = await a.createConversation(alice);
  assert.equal(await b.expiredTasks(10), []);
  assert.is(await b.takeOverTask(c.id, 0), null);
  clock.tick(LEASE + 1);
  assert.equal((await b.expiredTasks(10)).map((t) => [t.conversationId, t.epoch, t.setup]), [[c.id, 0, null]]);
});

contract('the default lease term is TASK_LEASE_MS', async ({ store, clock }) => {
  const c = await store.createConversation(alice);
  assert.is((await store.claimTask(c.id, null)).expiresAt, clock.now() + TASK_LEASE_MS);
  assert.is(TASK_LEASE_MS, 10_000);
});

contract('the holder renews its lease to one term from now; a stale epoch cannot renew and is told it is fenced', async ({ open, clock }) => {
  const a = await open({ ownership: fakeOwnership('a'), leaseMs: LEASE });
  const c = await a.createConversation(alice);
  const { epoch } = await a.claimTask(c.id, {});
  clock.tick(LEASE - 1);
  assert.equal(await a.renewLease(c.id, epoch), { conversationId: c.id, epoch, expiresAt: clock.now() + LEASE });
  await rejectsStoreError(a.renewLease(c.id, epoch - 1), 'fenced');
  await rejectsStoreError(a.renewLease(c.id, epoch + 1), 'fenced');
  await rejectsStoreError(a.renewLease(MISSING, epoch), 'not_found');
  await a.setStatus(c.id, 'completed', epoch);
  await rejectsStoreError(a.renewLease(c.id, epoch), 'fenced');
});

contract('a lease lapses one term after its last renewal, and only then do other owners see the task expired', async ({ open, clock }) => {
  const a = await open({ ownership: fakeOwnership('a'), leaseMs: LEASE });
  const b = await open({ ownership: fakeOwnership('b'), leaseMs: LEASE });
  const c = await a.createConversation(alice);
  const { epoch } = await a.claimTask(c.id, { maxTurns: 7 });
  clock.tick(LEASE);
  assert.equal(await b.expiredTasks(10), [], 'still held at the last millisecond of the term');
  await a.renewLease(c.id, epoch);
  clock.tick(LEASE);
  assert.equal(await b.expiredTasks(10), []);
  clock.tick(1);
  assert.equal(await b.expiredTasks(10), [{ conversationId: c.id, principal: 'alice', harness: 'super-pi-code', epoch, setup: { maxTurns: 7 }, lapsedMs: 1 }]);
  assert.equal(await a.expiredTasks(10), [], 'a holder does not take its own task over');
  await a.setStatus(c.id, 'completed', epoch);
  assert.equal(await b.expiredTasks(10), [], 'a finished task has no lease to lapse');
});

contract('takeover: of two owners taking a lapsed task over at once exactly one wins, with the next epoch and a fresh lease', async ({ open, clock }) => {
  const a = await open({ ownership: fakeOwnership('a'), leaseMs: LEASE });
  const b = await open({ ownership: fakeOwnership('b'), leaseMs: LEASE });
  const d = await open({ ownership: fakeOwnership('d'), leaseMs: LEASE });
  const c = await a.createConversation(alice);
  const { epoch } = await a.claimTask(c.id, {});
  assert.is(await b.takeOverTask(c.id, epoch), null, 'a live lease is not taken');
  clock.tick(LEASE + 1);
  assert.is(await a.takeOverTask(c.id, epoch), null, 'its holder does not take it over (it renews instead)');
  const [byB, byD] = await Promise.all([b.takeOverTask(c.id, epoch), d.takeOverTask(c.id, epoch)]);
  const won = [byB, byD].filter((l) => l !== null);
  assert.equal(won, [{ conversationId: c.id, epoch: epoch + 1, expiresAt: clock.now() + LEASE }]);
  const winner = byB !== null ? b : d;
  const loser = byB !== null ? d : b;
  assert.is(await winner.ownedTasks(), 1);
  assert.is(await loser.ownedTasks(), 0);
  assert.is(await a.ownedTasks(), 0);
  assert.is(await loser.takeOverTask(c.id, epoch + 1), null, 'the winner\'s lease is live');
  clock.tick(LEASE + 1);
  assert.is(await loser.takeOverTask(c.id, epoch), null, 'a stale epoch takes nothing, even once the lease lapsed');
  assert.is((await loser.takeOverTask(c.id, epoch + 1))?.epoch, epoch + 2);
});

contract("a superseded holder's append, status change and renewal are refused as fenced and write nothing", async ({ open, clock }) => {
  const a = await open({ ownership: fakeOwnership('a'), leaseMs: LEASE });
  const b = await open({ ownership: fakeOwnership('b'), leaseMs: LEASE });
  const c = await a.createConversation(alice);
  const old = await a.claimTask(c.id, {});
  await a.append(c.id, 'user', { text: 'go' }, old.epoch);
  clock.tick(LEASE + 1);
  const taken = await b.takeOverTask(c.id, old.epoch);
  assert.ok(taken);
  const refused = await rejectsStoreError(a.append(c.id, 'model', { text: 'late' }, old.epoch), 'fenced');
  assert.match(refused.message, c.id);
  await rejectsStoreError(a.setStatus(c.id, 'completed', old.epoch), 'fenced');
  await rejectsStoreError(a.renewLease(c.id, old.epoch), 'fenced');
  const next = await b.append(c.id, 'model', { text: 'taken over' }, taken.epoch);
  assert.is(next.seq, 2, 'the refused append used no seq');
  assert.equal((await b.entries(c.id, 'alice'))?.map((e) => [e.seq, e.type]), [[1, 'user'], [2, 'model']]);
  assert.is((await b.getConversation(c.id, 'alice'))?.status, 'running');
  await rejectsStoreError(a.append(MISSING, 'model', {}, 1), 'not_found');
  await rejectsStoreError(a.append(c.id, 'model', {}, -1), 'invalid_argument');
});

contract('a fenced append racing a takeover: each append either lands before the takeover or is refused, seqs stay 1..N', async ({ open, clock }) => {
  const a = await open({ ownership: fakeOwnership('a'), leaseMs: LEASE });
  const b = await open({ ownership: fakeOwnership('b'), leaseMs: LEASE });
  const c = await a.createConversation(alice);
  const { epoch } = await a.claimTask(c.id, {});
  clock.tick(LEASE + 1);
  const appends = range(20).map((i) => a.append(c.id, 'model', { i }, epoch).then((e) => e.seq, (err: unknown) => err));
  const taken = await b.takeOverTask(c.id, epoch);
  const outcomes = await Promise.all(appends);
  assert.ok(taken);
  const landed = outcomes.filter((o): o is number => typeof o === 'number');
  for (const o of outcomes) if (typeof o !== 'number') assert.is((o as StoreError).code, 'fenced');
  assert.equal(landed, range(landed.length), 'the appends that landed hold 1..k');
  assert.is((await b.append(c.id, 'final', {}, taken.epoch)).seq, landed.length + 1);
});

const CANCELLED = { message: 'the task was cancelled by the client (tasks/cancel)', status: 'cancelled' };

contract("cancelRunningTask from another owner: the entry appended, the status cancelled, and the holder's next append, status change and renewal fenced", async ({ open }) => {
  const a = await open({ ownership: fakeOwnership('a'), leaseMs: LEASE });
  const b = await open({ ownership: fakeOwnership('b'), leaseMs: LEASE });
  const c = await a.createConversation(alice);
  const { epoch } = await a.claimTask(c.id, {});
  await a.append(c.id, 'user', { text: 'go' }, epoch);
  assert.is(await b.cancelRunningTask(c.id, 'alice', CANCELLED), 'cancelled');
  assert.is((await a.getConversation(c.id, 'alice'))?.status, 'cancelled');
  assert.equal((await a.entries(c.id, 'alice'))?.map((e) => [e.seq, e.type, e.payload]), [[1, 'user', { text: 'go' }], [2, 'error', CANCELLED]]);
  await rejectsStoreError(a.append(c.id, 'model', { text: 'late' }, epoch), 'fenced');
  await rejectsStoreError(a.renewLease(c.id, epoch), 'fenced');
  await rejectsStoreError(a.setStatus(c.id, 'completed', epoch), 'fenced');
  assert.is((await b.getConversation(c.id, 'alice'))?.status, 'cancelled', 'the fenced holder did not overwrite it');
  assert.is((await b.lastEntry(c.id))?.seq, 2, 'nor appended after it');
  assert.is(await a.ownedTasks(), 0);
  assert.is(await b.ownedTasks(), 0, 'a cancelled task is nobody\'s to run');
  assert.is(await b.cancelRunningTask(c.id, 'alice', CANCELLED), 'not-running', 'a second cancel writes nothing');
  assert.is((await b.lastEntry(c.id))?.seq, 2);
});

contract('cancelRunningTask of a task that finished first leaves it as it is: not-running, no entry', async ({ open }) => {
  const a = await open({ ownership: fakeOwnership('a'), leaseMs: LEASE });
  const b = await open({ ownership: fakeOwnership('b'), leaseMs: LEASE });
  const c = await a.createConversation(alice);
  const { epoch } = await a.claimTask(c.id, {});
  await a.append(c.id, 'final', { text: 'done' }, epoch);
  await a.setStatus(c.id, 'completed', epoch);
  assert.is(await b.cancelRunningTask(c.id, 'alice', CANCELLED), 'not-running');
  assert.is((await b.getConversation(c.id, 'alice'))?.status, 'completed');
  assert.equal((await b.entries(c.id, 'alice'))?.map((e) => e.type), ['final']);
  // Claimed again (a continuation): the fence moved, and the new run is the one cancelled.
  const next = await a.claimTask(c.id, {});
  assert.is(next.epoch, epoch + 1);
  assert.is(await b.cancelRunningTask(c.id, 'alice', CANCELLED), 'cancelled');
  await rejectsStoreError(a.renewLease(c.id, next.epoch), 'fenced');
});

contract('cancelRunningTask racing the holder finishing: exactly one of them lands', async ({ open }) => {
  const a = await open({ ownership: fakeOwnership('a'), leaseMs: LEASE });
  const b = await open({ ownership: fakeOwnership('b'), leaseMs: LEASE });
  for (let i = 0; i < 10; i++) {
    const c = await a.createConversation(alice);
    const { epoch } = await a.claimTask(c.id, {});
    const [finished, cancelled] = await Promise.all([
      a.setStatus(c.id, 'completed', epoch).then(() => 'completed', (err: unknown) => (err as StoreError).code),
      b.cancelRunningTask(c.id, 'alice', CANCELLED),
    ]);
    const status = (await a.getConversation(c.id, 'alice'))?.status;
    const types = (await a.entries(c.id, 'alice'))?.map((e) => e.type);
    if (cancelled === 'cancelled') assert.equal([finished, status, types], ['fenced', 'cancelled', ['error']]);
    else assert.equal([finished, cancelled, status, types], ['completed', 'not-running', 'completed', []]);
  }
});

contract("cancelRunningTask of another principal's task (or none) is not-found and writes nothing", async ({ open }) => {
  const a = await open({ ownership: fakeOwnership('a'), leaseMs: LEASE });
  const c = await a.createConversation(alice);
  const { epoch } = await a.claimTask(c.id, {});
  assert.is(await a.cancelRunningTask(c.id, 'mallory', CANCELLED), 'not-found');
  assert.is(await a.cancelRunningTask(MISSING, 'alice', CANCELLED), 'not-found');
  assert.is(await a.cancelRunningTask('bad\u0000id', 'alice', CANCELLED), 'not-found');
  assert.is((await a.getConversation(c.id, 'alice'))?.status, 'running');
  assert.equal(await a.entries(c.id, 'alice'), []);
  await a.renewLease(c.id, epoch);
});

contract('a task parked input_required holds no lease: no node takes it over, none owns it, and it is left parked', async ({ open, clock }) => {
  const a = await open({ ownership: fakeOwnership('a'), leaseMs: LEASE });
  const b = await open({ ownership: fakeOwnership('b', new Set(['a'])), leaseMs: LEASE });
  const c = await a.createConversation(alice);
  const { epoch } = await a.claimTask(c.id, { maxTurns: 7 });
  await a.append(c.id, 'user', { text: 'go' }, epoch);
  await a.setStatus(c.id, 'input_required', epoch);
  assert.is((await b.getConversation(c.id, 'alice'))?.status, 'input_required');
  clock.tick(LEASE * 3);
  assert.equal(await b.expiredTasks(10), [], 'a parked task is not a crashed one');
  assert.is(await a.ownedTasks(), 0);
  assert.is(await b.takeOverTask(c.id, epoch), null);
  await rejectsStoreError(a.renewLease(c.id, epoch), 'fenced');
  assert.is((await b.getConversation(c.id, 'alice'))?.status, 'input_required');
});

contract('resumeParkedTask: one write checks parked-at-seq and claims; of two answers exactly one wins, with the setup of the first claim', async ({ open }) => {
  const a = await open({ ownership: fakeOwnership('a'), leaseMs: LEASE });
  const b = await open({ ownership: fakeOwnership('b'), leaseMs: LEASE });
  const c = await a.createConversation(alice);
  const { epoch } = await a.claimTask(c.id, { maxTurns: 7 });
  await a.append(c.id, 'user', { text: 'go' }, epoch);
  await a.append(c.id, 'model', { text: 'bash?' }, epoch);
  await a.setStatus(c.id, 'input_required', epoch, { text: '', isError: false, turns: 1, toolCalls: 0 });
  assert.equal((await a.taskRecord(c.id, 'alice'))?.result?.turns, 1, 'the park keeps its counts with the status');
  assert.is(await b.resumeParkedTask(c.id, 'alice', 1), null, 'a stale seq');
  assert.is(await b.resumeParkedTask(c.id, 'mallory', 2), null, "another principal's");
  assert.is(await b.resumeParkedTask(MISSING, 'alice', 2), null, 'none');
  assert.is(await b.resumeParkedTask('bad\u0000id', 'alice', 2), null);
  assert.is((await a.getConversation(c.id, 'alice'))?.status, 'input_required', 'refusals changed nothing');
  const [first, second] = await Promise.all([a.resumeParkedTask(c.id, 'alice', 2), b.resumeParkedTask(c.id, 'alice', 2)]);
  const won = [first, second].filter((r) => r !== null);
  assert.is(won.length, 1, 'exactly one answer resumes it');
  const resumed = won[0]!;
  assert.is(resumed.lease.epoch, epoch + 1);
  assert.equal(resumed.setup, { maxTurns: 7 });
  assert.is((await a.getConversation(c.id, 'alice'))?.status, 'running');
  assert.is((await a.taskRecord(c.id, 'alice'))?.result, null, 'the resume clears them: a running row holds no result');
  const winner = first !== null ? a : b;
  assert.is(await winner.ownedTasks(), 1);
  await winner.renewLease(c.id, resumed.lease.epoch);
  assert.is((await winner.append(c.id, 'tool_call', { id: 'x' }, resumed.lease.epoch)).seq, 3);
  assert.is(await a.resumeParkedTask(c.id, 'alice', 2), null, 'a duplicate answer after the resume');
  assert.is(await a.resumeParkedTask(c.id, 'alice', 3), null, 'nor at the new seq while it runs');
});

contract('recordParkedAnswer: appends a person_answer only while parked at seq, status and park time kept, updatedAt moved to the answer; of two at once exactly one lands; the resume claims at the new end', async ({ open, clock }) => {
  const a = await open({ ownership: fakeOwnership('a'), leaseMs: LEASE });
  const b = await open({ ownership: fakeOwnership('b'), leaseMs: LEASE });
  const c = await a.createConversation(alice);
  const { epoch } = await a.claimTask(c.id, { maxTurns: 7 });
  await a.append(c.id, 'user', { text: 'go' }, epoch);
  await a.append(c.id, 'model', { text: 'two bash calls' }, epoch);
  await a.setStatus(c.id, 'input_required', epoch, { text: '', isError: false, turns: 1, toolCalls: 0, parkedAt: clock.now() });
  const parkedAt = (await a.getConversation(c.id, 'alice'))!.updatedAt;
  clock.tick(1000);
  const yes = { key: 'confirm-1-2-1', id: 'call-0', allowed: true, refusal: '' };
  assert.is(await b.recordParkedAnswer(c.id, 'alice', 1, yes), null, 'a stale seq');
  assert.is(await b.recordParkedAnswer(c.id, 'mallory', 2, yes), null, "another principal's");
  assert.is(await b.recordParkedAnswer(MISSING, 'alice', 2, yes), null, 'none');
  assert.is(await b.recordParkedAnswer('bad\u0000id', 'alice', 2, yes), null);
  assert.is((await a.taskRecord(c.id, 'alice'))?.lastSeq, 2, 'refusals wrote nothing');
  const no = { ...yes, allowed: false, refusal: 'the person answered "decline"' };
  const [first, second] = await Promise.all([a.recordParkedAnswer(c.id, 'alice', 2, yes), b.recordParkedAnswer(c.id, 'alice', 2, no)]);
  const landed = [first, second].filter((e) => e !== null);
  assert.is(landed.length, 1, 'exactly one answer at that place lands');
  assert.is(landed[0]!.seq, 3);
  assert.is(landed[0]!.type, 'person_answer');
  const record = (await b.taskRecord(c.id, 'alice'))!;
  assert.is(record.conversation.status, 'input_required', 'still parked');
  assert.is(record.conversation.updatedAt, parkedAt + 1000, 'updatedAt (the task\'s lastUpdatedAt) moved to the answer, as an append moves it');
  assert.is(landed[0]!.time, parkedAt + 1000);
  assert.is(record.lastSeq, 3);
  assert.equal([record.result?.turns, record.result?.parkedAt], [1, parkedAt], 'the park\'s counts stay, and its time: the wait still runs from the park');
  assert.equal((await b.entries(c.id, 'alice'))?.at(-1)?.payload, first !== null ? yes : no, 'any node reads the answer that landed');
  assert.equal(await b.expiredTasks(10), [], 'still nobody\'s to take over');
  const other = { key: 'confirm-1-2-2', id: 'call-1', allowed: true, refusal: '' };
  assert.is((await a.recordParkedAnswer(c.id, 'alice', 3, other))?.seq, 4);
  assert.is(await a.resumeParkedTask(c.id, 'alice', 3), null, 'the resume must name the new end');
  const resumed = await b.resumeParkedTask(c.id, 'alice', 4);
  assert.is(resumed?.lease.epoch, epoch + 1, 'the epoch did not move while it was parked');
  assert.is(await a.recordParkedAnswer(c.id, 'alice', 4, other), null, 'nor once it runs');
  await b.setStatus(c.id, 'completed', resumed!.lease.epoch);
  assert.is(await a.recordParkedAnswer(c.id, 'alice', 4, other), null, 'nor once it finished');
});

contract('cancelRunningTask of a parked task cancels it in the same write; a resume after it gets null', async ({ open }) => {
  const a = await open({ ownership: fakeOwnership('a'), leaseMs: LEASE });
  const b = await open({ ownership: fakeOwnership('b'), leaseMs: LEASE });
  const c = await a.createConversation(alice);
  const { epoch } = await a.claimTask(c.id, {});
  await a.append(c.id, 'user', { text: 'go' }, epoch);
  await a.setStatus(c.id, 'input_required', epoch);
  assert.is(await b.cancelRunningTask(c.id, 'mallory', CANCELLED), 'not-found');
  assert.is(await b.cancelRunningTask(c.id, 'alice', CANCELLED), 'cancelled');
  assert.is((await a.getConversation(c.id, 'alice'))?.status, 'cancelled');
  assert.equal((await a.entries(c.id, 'alice'))?.map((e) => e.type), ['user', 'error']);
  assert.is(await a.resumeParkedTask(c.id, 'alice', 1), null);
  assert.is(await a.resumeParkedTask(c.id, 'alice', 2), null);
});

const RESULT = { text: 'It says aubergine.', isError: false, turns: 2, toolCalls: 1 };

contract('taskRecord: the conversation, its last seq and the result stored with its status, in one read; another principal\'s is null', async ({ open }) => {
  const a = await open({ ownership: fakeOwnership('a'), leaseMs: LEASE });
  const b = await open({ ownership: fakeOwnership('b'), leaseMs: LEASE });
  const c = await a.createConversation(alice);
  const { epoch } = await a.claimTask(c.id, {});
  assert.equal(await a.taskRecord(c.id, 'alice'), { conversation: await a.getConversation(c.id, 'alice'), lastSeq: 0, result: null });
  await a.append(c.id, 'user', { text: 'go' }, epoch);
  await a.append(c.id, 'final', { text: RESULT.text }, epoch);
  await a.setStatus(c.id, 'completed', epoch, RESULT);
  const record = await b.taskRecord(c.id, 'alice');
  assert.equal(record, { conversation: await b.getConversation(c.id, 'alice'), lastSeq: 2, result: RESULT }, 'another store (node) reads what the run stored');
  assert.is(record?.conversation.status, 'completed');
  assert.is(await b.taskRecord(c.id, 'mallory'), null);
  assert.is(await b.taskRecord(MISSING, 'alice'), null);
  assert.is(await b.taskRecord('bad\u0000id', 'alice'), null);
});

contract('a stored result goes with its run: a status set without one, a new claim and a cancel from another owner each leave none', async ({ open }) => {
  const a = await open({ ownership: fakeOwnership('a'), leaseMs: LEASE });
  const b = await open({ ownership: fakeOwnership('b'), leaseMs: LEASE });
  const c = await a.createConversation(alice);
  let { epoch } = await a.claimTask(c.id, {});
  await a.setStatus(c.id, 'completed', epoch, RESULT);
  ({ epoch } = await a.claimTask(c.id, {}));
  assert.equal([(await a.taskRecord(c.id, 'alice'))?.conversation.status, (await a.taskRecord(c.id, 'alice'))?.result], ['running', null], 'a new run has no result yet');
  await a.setStatus(c.id, 'failed', epoch, { text: 'the model endpoint answered 500', isError: true, turns: 1, toolCalls: 0 });
  await a.setStatus(c.id, 'interrupted');
  assert.is((await a.taskRecord(c.id, 'alice'))?.result, null, 'a status set without a result keeps none');
  await a.claimTask(c.id, {});
  assert.is(await b.cancelRunningTask(c.id, 'alice', CANCELLED), 'cancelled');
  assert.equal([(await a.taskRecord(c.id, 'alice'))?.conversation.status, (await a.taskRecord(c.id, 'alice'))?.result], ['cancelled', null]);
});

contract('a result that is not one is refused (invalid_argument), and the status is left as it was', async ({ open }) => {
  const a = await open({ ownership: fakeOwnership('a'), leaseMs: LEASE });
  const c = await a.createConversation(alice);
  const { epoch } = await a.claimTask(c.id, {});
  for (const bad of [{ ...RESULT, turns: -1 }, { ...RESULT, text: 7 }, { ...RESULT, toolCalls: 1.5 }, { ...RESULT, parkedAt: 'now' }, { ...RESULT, parkedAt: -5 }]) {
    await rejectsStoreError(a.setStatus(c.id, 'completed', epoch, bad as unknown as typeof RESULT), 'invalid_argument');
  }
  assert.is((await a.getConversation(c.id, 'alice'))?.status, 'running');
});

contract('a status change without an epoch supersedes the holder; an append without one is not fenced', async ({ open }) => {
  const a = await open({ ownership: fakeOwnership('a'), leaseMs: LEASE });
  const c = await a.createConversation(alice);
  const { epoch } = await a.claimTask(c.id, {});
  await a.append(c.id, 'undo', { reverted: [] });
  await a.setStatus(c.id, 'interrupted');
  await rejectsStoreError(a.append(c.id, 'model', {}, epoch), 'fenced');
  assert.is((await a.claimTask(c.id, {})).epoch, epoch + 2);
});

contract("interrupting a gone owner's task at open fences that owner", async ({ open }) => {
  const a = await open({ ownership: fakeOwnership('a'), leaseMs: LEASE });
  const c = await a.createConversation(alice);
  const { epoch } = await a.claimTask(c.id, {});
  await open({ ownership: fakeOwnership('b', new Set(['a'])) });
  await rejectsStoreError(a.append(c.id, 'model', { text: 'zombie' }, epoch), 'fenced');
  assert.equal((await a.entries(c.id, 'alice'))?.map((e) => e.type), ['interrupted']);
});

contract('expiredTasks pages at most MAX_EXPIRED_TASKS, longest lapsed first', async ({ open, clock }) => {
  const a = await open({ ownership: fakeOwnership('a'), leaseMs: LEASE });
  const b = await open({ ownership: fakeOwnership('b'), leaseMs: LEASE });
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const c = await a.createConversation(alice);
    await a.claimTask(c.id, { i });
    ids.push(c.id);
    clock.tick(1);
  }
  clock.tick(LEASE + 1);
  assert.equal((await b.expiredTasks(2)).map((t) => t.conversationId), ids.slice(0, 2));
  assert.equal((await b.expiredTasks(1000)).map((t) => t.setup), [{ i: 0 }, { i: 1 }, { i: 2 }]);
  await rejectsStoreError(b.expiredTasks(0), 'invalid_argument');
});

contract('expiredTasks with a scope: tasks of other workspaces never fill the page, however many; its own, those naming no workspace and those past the patience come', async ({ open, clock }) => {
  const a = await open({ ownership: fakeOwnership('a'), leaseMs: LEASE });
  const b = await open({ ownership: fakeOwnership('b'), leaseMs: LEASE });
  const claim = async (setup: unknown) => {
    const c = await a.createConversation(alice);
    await a.claimTask(c.id, setup);
    return c.id;
  };
  const others: string[] = [];
  for (let i = 0; i < MAX_EXPIRED_TASKS + 5; i++) {
    others.push(await claim({ maxTurns: 4, workspace: '/srv/other-project' }));
    clock.tick(1);
  }
  const own = await claim({ maxTurns: 4, workspace: '/srv/ws' });
  const below = await claim({ maxTurns: 4, workspace: '/srv/ws/packages/a' });
  const sibling = await claim({ maxTurns: 4, workspace: '/srv/ws-2' });
  const unnamed = await claim({ maxTurns: 4 });
  const bare = await claim(null);
  const odd = await claim({ maxTurns: 4, workspace: 7 });
  clock.tick(LEASE + 1);
  const PATIENCE = 60_000;
  const ids = async (scope: { workspace: string | null; below: boolean; patienceMs: number }) => (await b.expiredTasks(MAX_EXPIRED_TASKS, scope)).map((t) => t.conversationId).sort();
  assert.equal((await b.expiredTasks(MAX_EXPIRED_TASKS)).map((t) => t.conversationId), others.slice(0, MAX_EXPIRED_TASKS), 'unscoped: the page is all other-workspace tasks');
  assert.equal(await ids({ workspace: '/srv/ws', below: false, patienceMs: PATIENCE }), [own, unnamed, bare, odd].sort(), 'its own and the unplaceable, past every other workspace\'s');
  assert.equal(await ids({ workspace: '/srv/ws', below: true, patienceMs: PATIENCE }), [own, below, unnamed, bare, odd].sort(), 'below it too, not a sibling that shares its prefix');
  assert.equal(await ids({ workspace: null, below: true, patienceMs: PATIENCE }), [unnamed, bare, odd].sort(), 'no workspace served: only the unplaceable');
  assert.is((await b.expiredTasks(MAX_EXPIRED_TASKS, { workspace: '/srv/ws', below: false, patienceMs: PATIENCE })).find((t) => t.conversationId === own)?.lapsedMs, 1);
  assert.ok(sibling);
  // The first other lapsed 26 ms ago, the last 2 ms ago: each comes once it lapsed the patience ago, longest lapsed first.
  clock.tick(PATIENCE - 26);
  assert.equal(await ids({ workspace: '/srv/ws', below: false, patienceMs: PATIENCE }), [others[0], own, unnamed, bare, odd].sort(), 'the one lapsed exactly the patience ago');
  clock.tick(MAX_EXPIRED_TASKS);
  const overdue = await b.expiredTasks(MAX_EXPIRED_TASKS, { workspace: '/srv/ws', below: false, patienceMs: PATIENCE });
  assert.equal(overdue.map((t) => t.conversationId), others.slice(0, MAX_EXPIRED_TASKS), 'past it, they fill the page again: a pass marks them interrupted');
  assert.is(overdue[0]?.lapsedMs, PATIENCE + MAX_EXPIRED_TASKS);
});

// ---- session checkpoints --------------------------------------------------------------------------

const bytes = (...b: number[]) => new Uint8Array(b);

contract('a session is claimed at epoch 1, its checkpoint saved and loaded by its principal; another principal finds nothing', async ({ open, clock }) => {
  const a = await open({ ownership: fakeOwnership('a') });
  assert.equal(await a.claimSession('s-1', 'alice'), { epoch: 1 });
  assert.equal(await a.loadCheckpoint('s-1', 'alice'), { sessionId: 's-1', owner: 'a', epoch: 1, bytes: bytes(), updatedAt: clock.now() });
  clock.tick(5);
  await a.saveCheckpoint('s-1', 1, bytes(1, 2, 0, 255));
  assert.equal(await a.loadCheckpoint('s-1', 'alice'), { sessionId: 's-1', owner: 'a', epoch: 1, bytes: bytes(1, 2, 0, 255), updatedAt: clock.now() });
  assert.is(await a.loadCheckpoint('s-1', 'bob'), null, "another principal's session is as missing");
  assert.is(await a.loadCheckpoint('s-2', 'alice'), null);
  assert.is(await a.claimSession('s-1', 'bob'), null, "another principal cannot claim it");
  assert.is((await a.loadCheckpoint('s-1', 'alice'))?.epoch, 1, "bob's claim changed nothing");
});

contract("claiming a session again (another node) fences the earlier holder's saves", async ({ open }) => {
  const a = await open({ ownership: fakeOwnership('a') });
  const b = await open({ ownership: fakeOwnership('b') });
  await a.claimSession('s-1', 'alice');
  await a.saveCheckpoint('s-1', 1, bytes(1));
  assert.equal(await b.claimSession('s-1', 'alice'), { epoch: 2 });
  await rejectsStoreError(a.saveCheckpoint('s-1', 1, bytes(9)), 'fenced');
  assert.equal(await b.loadCheckpoint('s-1', 'alice').then((c) => [c?.owner, c?.epoch, c?.bytes]), ['b', 2, bytes(1)], 'the checkpoint carries over; the stale save wrote nothing');
  await b.saveCheckpoint('s-1', 2, bytes(2));
  assert.equal((await a.loadCheckpoint('s-1', 'alice'))?.bytes, bytes(2));
  await rejectsStoreError(a.saveCheckpoint('s-missing', 1, bytes(1)), 'not_found');
});

contract('a checkpoint over MAX_CHECKPOINT_BYTES is refused; bad session keys are refused', async ({ store }) => {
  await store.claimSession('s-1', 'alice');
  await rejectsStoreError(store.saveCheckpoint('s-1', 1, new Uint8Array(MAX_CHECKPOINT_BYTES + 1)), 'payload_too_large');
  await store.saveCheckpoint('s-1', 1, new Uint8Array(MAX_CHECKPOINT_BYTES));
  assert.is((await store.loadCheckpoint('s-1', 'alice'))?.bytes.byteLength, MAX_CHECKPOINT_BYTES);
  await rejectsStoreError(store.claimSession('', 'alice'), 'invalid_argument');
  await rejectsStoreError(store.claimSession('s-2', ''), 'invalid_argument');
  await rejectsStoreError(store.claimSession('s\u0000', 'alice'), 'invalid_argument');
});

contract('a session taken over at the epoch seen moves to the next epoch for one taker only; a stale epoch or another principal gets null', async ({ open }) => {
  const a = await open({ ownership: fakeOwnership('a') });
  const b = await open({ ownership: fakeOwnership('b') });
  const c = await open({ ownership: fakeOwnership('c') });
  await a.claimSession('s-1', 'alice');
  await a.saveCheckpoint('s-1', 1, bytes(7));
  const taken = await Promise.all([b.takeOverSession('s-1', 'alice', 1), c.takeOverSession('s-1', 'alice', 1)]);
  assert.equal(taken.filter((t) => t !== null), [{ epoch: 2 }], 'exactly one winner');
  const winner = taken[0] === null ? 'c' : 'b';
  assert.equal(await a.loadCheckpoint('s-1', 'alice').then((r) => [r?.owner, r?.epoch, r?.bytes]), [winner, 2, bytes(7)], 'the checkpoint carries over');
  await rejectsStoreError(a.saveCheckpoint('s-1', 1, bytes(9)), 'fenced');
  assert.is(await b.takeOverSession('s-1', 'bob', 2), null, "another principal's session is not taken");
  assert.is(await b.takeOverSession('s-missing', 'alice', 1), null);
});

contract('a forgotten session is gone for its principal; a forget at a stale epoch leaves the row', async ({ open }) => {
  const a = await open({ ownership: fakeOwnership('a') });
  const b = await open({ ownership: fakeOwnership('b') });
  await a.claimSession('s-1', 'alice');
  await b.takeOverSession('s-1', 'alice', 1);
  await a.forgetSession('s-1', 1);
  assert.is((await a.loadCheckpoint('s-1', 'alice'))?.epoch, 2, 'the stale holder does not end the session it lost');
  await b.forgetSession('s-1', 2);
  assert.is(await a.loadCheckpoint('s-1', 'alice'), null);
});

contract('a node registers with its advertise URL; every store sees it fresh; it lapses a term after its last renewal; a forgotten node is unknown', async ({ open, clock }) => {
  const LEASE = 50;
  const a = await open({ ownership: fakeOwnership('node:v1:["node-a","i1"]'), leaseMs: LEASE });
  const b = await open({ ownership: fakeOwnership('b'), leaseMs: LEASE });
  assert.is(await b.nodeOf('node:v1:["node-a","i1"]'), null, 'not registered yet');
  await a.renewNode('http://10.0.0.1:8080');
  const seen = await b.nodeOf('node:v1:["node-a","i1"]');
  assert.equal([seen?.owner, seen?.node, seen?.advertiseUrl, seen?.fresh], ['node:v1:["node-a","i1"]', 'node-a', 'http://10.0.0.1:8080', true]);
  assert.ok((seen?.remainingMs ?? 0) > 0 && (seen?.remainingMs ?? 0) <= LEASE, String(seen?.remainingMs));
  // SQLite judges the lease on the store's clock, PostgreSQL on the database's: both have moved past it.
  clock.tick(LEASE + 1);
  await new Promise((r) => setTimeout(r, LEASE + 20));
  assert.equal(await b.nodeOf('node:v1:["node-a","i1"]').then((n) => [n?.fresh, n?.remainingMs]), [false, 0]);
  await a.renewNode('http://10.0.0.1:9090');
  assert.equal(await b.nodeOf('node:v1:["node-a","i1"]').then((n) => [n?.fresh, n?.advertiseUrl]), [true, 'http://10.0.0.1:9090'], 'renewed, with the new URL');
  await a.forgetNode();
  assert.is(await b.nodeOf('node:v1:["node-a","i1"]'), null);
});

// ---- spent 2026-07-28 confirmations (single-use requestState) -------------------------------------

const digestOf = (n: number | string) => `digest-${n}-${'x'.repeat(30)}`;

contract('consumeRequestState: the first use of a digest is true, every later one false, from any store on the database', async ({ store, open, fresh, clock }) => {
  const other = await open({ ownership: fakeOwnership('b') });
  const expires = clock.now() + 60_000;
  assert.is(await store.consumeRequestState(digestOf(1), expires), true, 'first use');
  assert.is(await store.consumeRequestState(digestOf(1), expires), false, 'the same store again');
  assert.is(await other.consumeRequestState(digestOf(1), expires), false, 'another store (process, node) on the database');
  assert.is(await other.consumeRequestState(digestOf(2), expires), true, 'another digest is another confirmation');
  assert.is(await (await fresh()).consumeRequestState(digestOf(1), expires), true, 'another database knows nothing of it');
});

contract('consumeRequestState: stores on one database racing for one digest, many times each: exactly one wins', async ({ store, open, clock }) => {
  const stores = [store, ...(await Promise.all(['b', 'c', 'd'].map((o) => open({ ownership: fakeOwnership(o) }))))];
  const expires = clock.now() + 60_000;
  for (const round of [1, 2, 3]) {
    const answers = await Promise.all(stores.flatMap((s) => [s, s].map((x) => x.consumeRequestState(digestOf(`race-${round}`), expires))));
    assert.is(answers.filter((a) => a).length, 1, `round ${round}: ${JSON.stringify(answers)}`);
  }
});

contract('consumeRequestState sweeps rows expired more than the grace ago, at most a batch per use, soonest first; a row within the grace stays', async ({ store, open, clock }) => {
  const other = await open({ ownership: fakeOwnership('b') });
  const t0 = clock.now();
  const rows = CONSUMED_STATE_SWEEP_BATCH + 4;
  for (let i = 0; i < rows; i++) assert.is(await store.consumeRequestState(digestOf(`old-${i}`), t0 + i), true);
  assert.is(await store.consumeRequestState(digestOf('recent'), t0 + 10 * CONSUMED_STATE_GRACE_MS), true);
  // Within the grace after an expiry nothing is swept: a replay there is still refused.
  clock.tick(CONSUMED_STATE_GRACE_MS - 1);
  assert.is(await other.consumeRequestState(digestOf('trigger-1'), t0 + 10 * CONSUMED_STATE_GRACE_MS), true);
  assert.is(await other.consumeRequestState(digestOf('old-0'), t0), false, 'the soonest expired row is within the grace');
  // Past the grace of every one, one use sweeps a batch, soonest expired first: the newest expired row is still there after it.
  clock.tick(rows + 1);
  assert.is(await other.consumeRequestState(digestOf('trigger-2'), t0 + 10 * CONSUMED_STATE_GRACE_MS), true);
  assert.is(await store.consumeRequestState(digestOf(`old-${rows - 1}`), t0 + rows - 1), false, 'not in the first batch');
  assert.is(await store.consumeRequestState(digestOf('old-0'), t0 + 10 * CONSUMED_STATE_GRACE_MS), true, 'the soonest expired was swept');
  assert.is(await store.consumeRequestState(digestOf('recent'), t0 + 10 * CONSUMED_STATE_GRACE_MS), false, 'a live row is never swept');
});

contract('consumeRequestState refuses a digest that is empty, too long or not base64url, and an expiry that is not whole ms', async ({ store, clock }) => {
  const expires = clock.now() + 1000;
  for (const bad of ['', 'a'.repeat(MAX_STATE_DIGEST_LENGTH + 1), 'has space', 'slash/plus+', 'nul\u0000']) {
    await rejectsStoreError(store.consumeRequestState(bad, expires), 'invalid_argument');
  }
  for (const bad of [1.5, Number.NaN, Number.POSITIVE_INFINITY]) await rejectsStoreError(store.consumeRequestState(digestOf(1), bad), 'invalid_argument');
  assert.is(await store.consumeRequestState('a'.repeat(MAX_STATE_DIGEST_LENGTH), expires), true, 'the longest digest is taken');
});
