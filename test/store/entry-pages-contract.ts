// Transcript pages bounded by bytes (`EntriesOptions.maxBytes`, `entriesPage`) as a contract every backend
// runs (sqlite-entry-pages.test.ts, postgres-entry-pages.test.ts): the cut counts each payload's UTF-8 JSON
// bytes as every write path recorded them, always admits the first entry, keeps the count limit, says
// whether more follow, reports each entry's recorded size (the UTF-8 bytes of its JSON payload), and a walk
// page by page gets every entry exactly once. Not a *.test.ts file.

import * as assert from 'uvu/assert';
import fc from 'fast-check';
import type { AsyncConversationStore } from '../../src/store/async-store.ts';
import type { Entry, EntryType } from '../../src/store/store.ts';
import { rejectsStoreError } from './contract.ts';
import { contractSuite } from './contract-suite.ts';

const contract = contractSuite();
const pages = contract.add;

/** Registers every test on `suite`, each on a fresh database, its stores closed after. */
export const registerEntryPagesContract = contract.register;
/** Registers every test as skipped (no backend on this machine). */
export const registerEntryPagesSkipped = contract.skip;

const alice = { principal: 'alice', sessionId: 'session-a', harness: 'super-pi-code' };

/** The bytes the store records for a payload: its JSON text as UTF-8. */
const size = (payload: unknown): number => Buffer.byteLength(JSON.stringify(payload), 'utf8');

/** A conversation of alice's with these payloads appended in order; its id. */
async function transcript(store: AsyncConversationStore, payloads: readonly unknown[]): Promise<string> {
  const c = await store.createConversation(alice);
  for (const p of payloads) await store.append(c.id, 'tool_result', p);
  return c.id;
}

const seqs = (entries: readonly Entry[] | null | undefined) => entries?.map((e) => e.seq);

pages('maxBytes cuts at the last entry whose running total of payload bytes stays within it; more says entries follow', async ({ store }) => {
  const payload = 'x'.repeat(98); // 100 bytes of JSON
  assert.is(size(payload), 100);
  const id = await transcript(store, Array.from({ length: 10 }, () => payload));
  const first = await store.entriesPage(id, 'alice', { maxBytes: 350 });
  assert.equal(seqs(first?.entries), [1, 2, 3]);
  assert.is(first?.more, true);
  assert.equal(seqs((await store.entriesPage(id, 'alice', { maxBytes: 300 }))?.entries), [1, 2, 3], 'a total equal to the bound is within it');
  assert.equal(seqs((await store.entriesPage(id, 'alice', { afterSeq: 8, maxBytes: 350 }))?.entries), [9, 10]);
  assert.is((await store.entriesPage(id, 'alice', { afterSeq: 8, maxBytes: 350 }))?.more, false, 'nothing follows the last entry');
  assert.equal(seqs(await store.entries(id, 'alice', { maxBytes: 350 })), [1, 2, 3], 'entries takes the same bound');
  assert.equal(seqs((await store.entriesPage(id, 'alice'))?.entries), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'no bound: the whole page');
  assert.is((await store.entriesPage(id, 'alice'))?.more, false);
});

pages('payload bytes are UTF-8 bytes, not characters: é is two, an emoji four', async ({ store }) => {
  const accented = 'é'.repeat(49); // 49 characters, 100 bytes of JSON
  const emoji = '😀'.repeat(10); // 20 UTF-16 units, 42 bytes of JSON
  assert.is(size(accented), 100);
  assert.is(size(emoji), 42);
  const id = await transcript(store, [accented, accented, accented, emoji, emoji]);
  // Counted as characters the first page would hold all three accented entries (3 × 51 = 153).
  assert.equal(seqs((await store.entriesPage(id, 'alice', { maxBytes: 200 }))?.entries), [1, 2]);
  assert.equal(seqs((await store.entriesPage(id, 'alice', { afterSeq: 3, maxBytes: 83 }))?.entries), [4], 'two emoji entries are 84 bytes');
  assert.equal(seqs((await store.entriesPage(id, 'alice', { afterSeq: 3, maxBytes: 84 }))?.entries), [4, 5]);
});

pages('an entry larger than the bound alone is returned whole, as a page of its own', async ({ store }) => {
  const big = 'b'.repeat(5000);
  const id = await transcript(store, [big, 'small', big]);
  const first = await store.entriesPage(id, 'alice', { maxBytes: 100 });
  assert.equal(first?.entries.map((e) => e.payload), [big], 'the first entry, whole, though it alone is over the bound');
  assert.is(first?.more, true);
  assert.equal((await store.entriesPage(id, 'alice', { afterSeq: 1, maxBytes: 100 }))?.entries.map((e) => e.payload), ['small'], 'the next page stops before the big one');
  assert.equal((await store.entriesPage(id, 'alice', { afterSeq: 2, maxBytes: 100 }))?.entries.map((e) => e.payload), [big]);
});

pages('the count limit still holds beside the byte bound, and more says so when it cut', async ({ store }) => {
  const id = await transcript(store, ['a', 'b', 'c', 'd']);
  const page = await store.entriesPage(id, 'alice', { limit: 2, maxBytes: 1_000_000 });
  assert.equal(seqs(page?.entries), [1, 2]);
  assert.is(page?.more, true);
  const exact = await store.entriesPage(id, 'alice', { afterSeq: 2, limit: 2 });
  assert.equal(seqs(exact?.entries), [3, 4]);
  assert.is(exact?.more, false, 'a page that ends exactly at the last entry: nothing follows');
});

pages('no entries after afterSeq is an empty page with nothing more; another principal\'s or a missing conversation is null', async ({ store }) => {
  const id = await transcript(store, ['a']);
  assert.equal(await store.entriesPage(id, 'alice', { afterSeq: 1, maxBytes: 10 }), { entries: [], payloadSizes: [], more: false });
  const empty = await store.createConversation(alice);
  assert.equal(await store.entriesPage(empty.id, 'alice', { maxBytes: 10 }), { entries: [], payloadSizes: [], more: false });
  assert.is(await store.entriesPage(id, 'bob', { maxBytes: 10 }), null);
  assert.is(await store.entries(id, 'bob', { maxBytes: 10 }), null);
  assert.is(await store.entriesPage('00000000-0000-4000-8000-000000000000', 'alice', { maxBytes: 10 }), null);
});

pages('a maxBytes that is not a positive whole number is invalid_argument', async ({ store }) => {
  const id = await transcript(store, ['a']);
  for (const maxBytes of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
    await rejectsStoreError(store.entriesPage(id, 'alice', { maxBytes }), 'invalid_argument');
    await rejectsStoreError(store.entries(id, 'alice', { maxBytes }), 'invalid_argument');
  }
});

pages('every write path records its entry\'s size: a cancel\'s entry and a parked answer count by their bytes too', async ({ store, open }) => {
  const c = await store.createConversation(alice);
  await store.append(c.id, 'user', 'u'.repeat(98));
  const other = await open();
  const cancelled = { message: 'c'.repeat(200) };
  assert.is(await other.cancelRunningTask(c.id, 'alice', cancelled), 'cancelled');
  const bound = size('u'.repeat(98)) + size(cancelled);
  assert.equal(seqs((await store.entriesPage(c.id, 'alice', { maxBytes: bound - 1 }))?.entries), [1], 'the cancel\'s entry counts its bytes');
  assert.equal(seqs((await store.entriesPage(c.id, 'alice', { maxBytes: bound }))?.entries), [1, 2]);

  const parked = await store.createConversation(alice);
  await store.append(parked.id, 'user', 'p'.repeat(98));
  await store.setStatus(parked.id, 'input_required');
  const answer = { key: 'k', id: 'call-1', allowed: true, refusal: 'r'.repeat(300) };
  assert.ok(await store.recordParkedAnswer(parked.id, 'alice', 1, answer));
  const parkedBound = size('p'.repeat(98)) + size(answer);
  assert.equal(seqs((await store.entriesPage(parked.id, 'alice', { maxBytes: parkedBound - 1 }))?.entries), [1], 'the parked answer counts its bytes');
  assert.equal(seqs((await store.entriesPage(parked.id, 'alice', { maxBytes: parkedBound }))?.entries), [1, 2]);
});

pages('each entry\'s reported size is the UTF-8 byte length of its JSON payload, on every write path, with or without a bound or a type filter', async ({ store, open }) => {
  const payloads: unknown[] = ['é'.repeat(49), { text: '😀 and ascii', n: 1.5, nested: [null, true] }, 42, 'x'.repeat(5000)];
  const c = await store.createConversation(alice);
  for (const p of payloads) await store.append(c.id, 'tool_result', p);
  const cancelled = { message: 'ç'.repeat(30) };
  assert.is(await (await open()).cancelRunningTask(c.id, 'alice', cancelled), 'cancelled');
  const all = [...payloads, cancelled];
  for (const opts of [{}, { maxBytes: 1_000_000 }, { maxBytes: 1 }, { afterSeq: 2, limit: 2 }, { types: ['error'] as EntryType[] }]) {
    const page = await store.entriesPage(c.id, 'alice', opts);
    assert.ok(page !== null && page.entries.length > 0, JSON.stringify(opts));
    assert.equal(page.payloadSizes, page.entries.map((e) => size(e.payload)), JSON.stringify(opts));
    assert.equal(page.payloadSizes, page.entries.map((e) => size(all[e.seq - 1])), `the size of what was written, ${JSON.stringify(opts)}`);
  }

  const parked = await store.createConversation(alice);
  await store.append(parked.id, 'user', 'p');
  await store.setStatus(parked.id, 'input_required');
  const answer = { key: 'k', id: 'call-1', allowed: false, refusal: 'ü'.repeat(40) };
  assert.ok(await store.recordParkedAnswer(parked.id, 'alice', 1, answer));
  assert.equal((await store.entriesPage(parked.id, 'alice'))?.payloadSizes, [size('p'), size(answer)], 'a parked answer reports its size too');
});

pages('any transcript, walked page by page under any bound and limit, gives every entry exactly once, each page within its bound unless one entry', async ({ store }) => {
  await fc.assert(fc.asyncProperty(
    fc.array(fc.oneof(fc.string({ maxLength: 60 }), fc.string({ unit: 'grapheme', maxLength: 20 }), fc.integer()), { minLength: 0, maxLength: 25 }),
    fc.integer({ min: 1, max: 200 }),
    fc.integer({ min: 1, max: 8 }),
    async (payloads, maxBytes, limit) => {
      const id = await transcript(store, payloads);
      const seen: number[] = [];
      let after = 0;
      for (let guard = 0; guard <= payloads.length + 1; guard++) {
        const page = await store.entriesPage(id, 'alice', { afterSeq: after, maxBytes, limit });
        assert.ok(page !== null);
        assert.equal(page.payloadSizes, page.entries.map((e) => size(e.payload)), 'each entry\'s reported size is its JSON payload\'s UTF-8 bytes');
        const bytes = page.entries.reduce((n, e) => n + size(e.payload), 0);
        assert.ok(page.entries.length <= limit);
        assert.ok(page.entries.length === 1 || bytes <= maxBytes, `a page of ${page.entries.length} entries holds ${bytes} bytes, over ${maxBytes}`);
        seen.push(...page.entries.map((e) => e.seq));
        if (!page.more) break;
        assert.ok(page.entries.length > 0, 'a page with more after it is never empty');
        after = page.entries.at(-1)?.seq ?? after;
      }
      assert.equal(seen, payloads.map((_, i) => i + 1));
    },
  ), { numRuns: 25 });
});

/** A conversation of alice's with these [type, payload] entries appended in order; its id. */
async function typed(store: AsyncConversationStore, entries: readonly (readonly [EntryType, unknown])[]): Promise<string> {
  const c = await store.createConversation(alice);
  for (const [type, payload] of entries) await store.append(c.id, type, payload);
  return c.id;
}

pages('types: only entries of those types, each read counting the matching entries alone; paging on by afterSeq', async ({ store }) => {
  // 1 user, 2 snapshot, 3 model, 4 snapshot, 5 undo, 6 model
  const id = await typed(store, [['user', 'u'], ['file_snapshot', 's'.repeat(98)], ['model', 'm'], ['file_snapshot', 't'.repeat(98)], ['undo', 'x'], ['model', 'n']]);
  const changes: EntryType[] = ['file_snapshot', 'undo'];
  assert.equal(seqs(await store.entries(id, 'alice', { types: changes })), [2, 4, 5]);
  assert.equal((await store.entries(id, 'alice', { types: ['model'] }))?.map((e) => e.payload), ['m', 'n'], 'the rows are the matching ones, payloads and all');
  const first = await store.entriesPage(id, 'alice', { types: changes, limit: 2 });
  assert.equal(seqs(first?.entries), [2, 4], 'the limit counts matching entries');
  assert.is(first?.more, true, 'a matching entry follows');
  const last = await store.entriesPage(id, 'alice', { types: changes, afterSeq: 4, limit: 2 });
  assert.equal(seqs(last?.entries), [5]);
  assert.is(last?.more, false, 'the model entry after it does not count as more');
  assert.equal(seqs(await store.entries(id, 'alice', { types: changes, afterSeq: 2, limit: 1 })), [4]);
  // The byte bound counts the matching entries alone: 100 + 100 + 3 bytes, the user and model entries not at all.
  assert.equal(seqs((await store.entriesPage(id, 'alice', { types: changes, maxBytes: 200 }))?.entries), [2, 4]);
  assert.equal(seqs((await store.entriesPage(id, 'alice', { types: changes, maxBytes: 203 }))?.entries), [2, 4, 5]);
  assert.equal(seqs(await store.entries(id, 'alice', { types: changes, maxBytes: 150 })), [2]);
  assert.equal(seqs(await store.entries(id, 'alice', { types: ['user', 'model', 'file_snapshot', 'undo'] })), [1, 2, 3, 4, 5, 6]);
});

pages('types: none matching is an empty page with nothing more; another principal\'s or a missing conversation is still null', async ({ store }) => {
  const id = await typed(store, [['user', 'u'], ['model', 'm']]);
  assert.equal(await store.entries(id, 'alice', { types: ['undo'] }), []);
  assert.equal(await store.entriesPage(id, 'alice', { types: ['undo'], maxBytes: 10 }), { entries: [], payloadSizes: [], more: false });
  assert.is(await store.entries(id, 'bob', { types: ['user'] }), null);
  assert.is(await store.entriesPage(id, 'bob', { types: ['user'] }), null);
  assert.is(await store.entriesPage('00000000-0000-4000-8000-000000000000', 'alice', { types: ['user'] }), null);
});

pages('types that are empty or name no entry type are invalid_argument', async ({ store }) => {
  const id = await typed(store, [['user', 'u']]);
  for (const types of [[], ['nonsense'], ['user', 'file_snapshot; DROP TABLE entries']] as unknown as EntryType[][]) {
    await rejectsStoreError(store.entries(id, 'alice', { types }), 'invalid_argument');
    await rejectsStoreError(store.entriesPage(id, 'alice', { types }), 'invalid_argument');
  }
});
