// Transcript entries: seqs numbered 1, 2, 3… per conversation (nothing about other conversations shows
// through them), seq order on read, payloads intact, paging after a seq, the last entry, and refused
// writes that leave nothing behind.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import { type ConversationStore, DEFAULT_ENTRIES_LIMIT, type Entry, ENTRY_TYPES, type EntryType, MAX_ENTRIES_LIMIT } from '../../src/store/store.ts';
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

const alice = { principal: 'alice', sessionId: 's', harness: 'super-pi-code' };

test('two conversations appended interleaved each number their entries 1..n, and read back in seq order', () => {
  const a = store.createConversation(alice);
  const b = store.createConversation(alice);
  const appended: Entry[] = [];
  for (let i = 0; i < 20; i++) appended.push(store.append(i % 3 === 0 ? b.id : a.id, 'model', { i }));
  const ofA = appended.filter((e) => e.conversationId === a.id);
  const ofB = appended.filter((e) => e.conversationId === b.id);
  assert.equal(ofA.map((e) => e.seq), Array.from({ length: ofA.length }, (_, k) => k + 1));
  assert.equal(ofB.map((e) => e.seq), Array.from({ length: ofB.length }, (_, k) => k + 1));
  assert.equal(store.entries(a.id, 'alice'), ofA);
  assert.equal(store.entries(b.id, 'alice'), ofB);
});

test('a principal cannot infer another principal\'s activity from its seqs', () => {
  // The same conversation of alice's, once with bob idle and once with bob very busy in between.
  const transcriptOfAlice = (bobEntriesBetween: number): number[] => {
    const s = SqliteConversationStore.open(':memory:', { now: clock.now });
    const mine = s.createConversation(alice);
    const his = s.createConversation({ ...alice, principal: 'bob' });
    for (let i = 0; i < 5; i++) {
      s.append(mine.id, 'model', { i });
      for (let k = 0; k < bobEntriesBetween; k++) s.append(his.id, 'model', { k });
    }
    const seqs = (s.entries(mine.id, 'alice') ?? []).map((e) => e.seq);
    s.close();
    return seqs;
  };
  assert.equal(transcriptOfAlice(0), [1, 2, 3, 4, 5]);
  assert.equal(transcriptOfAlice(37), [1, 2, 3, 4, 5]);
});

test('payloads of every entry type come back intact', () => {
  const c = store.createConversation(alice);
  const payloads: unknown[] = [
    { text: 'hello', nested: { list: [1, 2.5, -3e-7, null, true, false], empty: {}, none: [] } },
    'a plain string with "quotes", a \\ backslash, a\nnewline, emoji 🧪 and ünïcödé',
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
  const written = types.map((type, i) => store.append(c.id, type, payloads[i]));
  const read = store.entries(c.id, 'alice');
  assert.equal(read, written);
  assert.equal(read?.map((e) => e.payload), payloads);
  assert.equal(read?.map((e) => e.type), types);
  assert.equal(read?.map((e) => e.time), types.map(() => clock.now()));
});

test('top-level JSON scalars are payloads too; the returned entry is a copy, not the caller object', () => {
  const c = store.createConversation(alice);
  for (const p of [null, 0, 42, 'x', true, []]) assert.equal(store.append(c.id, 'model', p).payload, p);
  const mutable = { n: 1 };
  const entry = store.append(c.id, 'model', mutable);
  mutable.n = 2;
  assert.equal(entry.payload, { n: 1 });
  assert.equal(store.lastEntry(c.id)?.payload, { n: 1 });
});

test('entries after a seq, in pages', () => {
  const c = store.createConversation(alice);
  const all = Array.from({ length: 10 }, (_, i) => store.append(c.id, 'model', { i }));
  assert.equal(store.entries(c.id, 'alice', { afterSeq: all[6]!.seq }), all.slice(7));
  assert.equal(store.entries(c.id, 'alice', { afterSeq: all[9]!.seq }), []);
  assert.equal(store.entries(c.id, 'alice', { afterSeq: 0 }), all);
  const paged: Entry[] = [];
  let after = 0;
  for (;;) {
    const page = store.entries(c.id, 'alice', { afterSeq: after, limit: 3 }) ?? [];
    if (page.length === 0) break;
    paged.push(...page);
    after = page.at(-1)!.seq;
  }
  assert.equal(paged, all);
});

test('entries of a conversation with none is an empty list, not null', () => {
  const c = store.createConversation(alice);
  assert.equal(store.entries(c.id, 'alice'), []);
  assert.is(store.lastEntry(c.id), null);
});

test('entries of another principal\'s conversation are null, exactly as for one that does not exist', () => {
  const c = store.createConversation(alice);
  store.append(c.id, 'user', 'private');
  assert.is(store.entries(c.id, 'alice')?.length, 1);
  assert.is(store.entries(c.id, 'bob'), null);
  assert.is(store.entries(c.id, 'bob', { afterSeq: 0, limit: 1 }), null);
  assert.is(store.entries(c.id, ''), null);
  assert.is(store.entries('no-such-conversation', 'alice'), null);
});

test('lastEntry is the newest entry of that conversation only', () => {
  const a = store.createConversation(alice);
  const b = store.createConversation(alice);
  store.append(a.id, 'user', 1);
  const lastOfA = store.append(a.id, 'final', 2);
  store.append(b.id, 'user', 3);
  assert.equal(store.lastEntry(a.id), lastOfA);
  assert.is(store.lastEntry('no-such-conversation'), null);
});

test('append bumps the conversation updatedAt to the entry time', () => {
  const c = store.createConversation(alice);
  clock.tick(500);
  const e = store.append(c.id, 'user', 'hi');
  assert.is(store.getConversation(c.id, 'alice')?.updatedAt, e.time);
  assert.is(e.time, c.createdAt + 500);
});

test('refused appends write nothing: unknown conversation, unknown type, non-JSON, too large', () => {
  const small = SqliteConversationStore.open(':memory:', { maxPayloadBytes: 16 });
  const c = small.createConversation(alice);
  throwsStoreError(() => small.append('no-such-conversation', 'user', 'x'), 'not_found');
  const bogus: unknown = 'thought';
  throwsStoreError(() => small.append(c.id, bogus as EntryType, 'x'), 'invalid_argument');
  throwsStoreError(() => small.append(c.id, 'user', undefined), 'invalid_argument');
  throwsStoreError(() => small.append(c.id, 'user', () => 1), 'invalid_argument');
  const bigint = throwsStoreError(() => small.append(c.id, 'user', { n: 1n }), 'invalid_argument');
  assert.instance(bigint.cause, TypeError);
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  throwsStoreError(() => small.append(c.id, 'user', cyclic), 'invalid_argument');
  const big = throwsStoreError(() => small.append(c.id, 'user', 'x'.repeat(15)), 'payload_too_large');
  assert.is(big.message, 'the payload is 17 bytes of JSON, more than the 16 one entry may hold');
  assert.equal(small.entries(c.id, 'alice'), []);
  assert.is(small.append(c.id, 'user', 'x'.repeat(14)).seq, 1, 'no seq was used up by the refused writes');
  small.close();
});

test('entries limits: default, maximum, bad values', () => {
  const c = store.createConversation(alice);
  for (let i = 0; i < DEFAULT_ENTRIES_LIMIT + 5; i++) store.append(c.id, 'model', i);
  assert.is(store.entries(c.id, 'alice')?.length, DEFAULT_ENTRIES_LIMIT);
  assert.is(store.entries(c.id, 'alice', { limit: MAX_ENTRIES_LIMIT * 2 })?.length, DEFAULT_ENTRIES_LIMIT + 5);
  throwsStoreError(() => store.entries(c.id, 'alice', { limit: 0 }), 'invalid_argument');
  throwsStoreError(() => store.entries(c.id, 'alice', { afterSeq: -1 }), 'invalid_argument');
  throwsStoreError(() => store.entries(c.id, 'alice', { afterSeq: 0.5 }), 'invalid_argument');
});

test.run();
