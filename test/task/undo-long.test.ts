// Undo sees the whole conversation, however long: its changes are read page by page (not the store's
// default first page of DEFAULT_ENTRIES_LIMIT entries), and only its `file_snapshot` and `undo` entries are
// read — the store filters by type, so the message entries between them are never loaded.

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type AsyncConversationStore, SyncStoreAdapter } from '../../src/store/async-store.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import { DEFAULT_ENTRIES_LIMIT, MAX_ENTRIES_LIMIT } from '../../src/store/store.ts';
import { undoConversation } from '../../src/task/undo.ts';
import { planUndo } from '../../src/task/undo-plan.ts';
import { conversationWith, type EntrySpec, spiedReads } from './fixtures/conversation.ts';

let dir: string;
let store: AsyncConversationStore;
test.before.each(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'superpi-undo-long-'));
  store = new SyncStoreAdapter(SqliteConversationStore.open(':memory:'));
});
test.after.each(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

/** A conversation of `local`'s, with `messages` tool_result entries appended after `before`. */
function conversation(before: readonly EntrySpec[], messages: number): Promise<string> {
  const results = Array.from({ length: messages }, (_, i): EntrySpec => ['tool_result', { id: `r${i}`, name: 'read', text: `line ${i}`, isError: false }]);
  return conversationWith(store, [...before, ...results]);
}

/** A write of `path` from `before` to `after` as a task records it: its before-image, then its after-image. */
const write = (id: string, file: string, before: string | null, after: string): EntrySpec[] => [
  ['file_snapshot', { id, path: file, before, stage: 'before' }],
  ['file_snapshot', { id, path: file, before, after }],
];

test('a change recorded after the first DEFAULT_ENTRIES_LIMIT entries is undone', async () => {
  const id = await conversation([], DEFAULT_ENTRIES_LIMIT + 200);
  for (const [type, payload] of write('w1', 'a.txt', 'original\n', 'changed\n')) await store.append(id, type, payload);
  await writeFile(path.join(dir, 'a.txt'), 'changed\n');
  const undo = await undoConversation(store, id, 'local', dir);
  assert.not.ok(undo.isError, undo.text);
  assert.is((undo.structured as { reverted: number }).reverted, 1, undo.text);
  assert.is(await readFile(path.join(dir, 'a.txt'), 'utf8'), 'original\n');
});

test('changes on both sides of a page boundary are undone newest first, and a second undo finds them undone', async () => {
  // w1 then, past MAX_ENTRIES_LIMIT messages (more than one page of any size), w2 of the same file.
  const id = await conversation(write('w1', 'a.txt', 'v0\n', 'v1\n'), MAX_ENTRIES_LIMIT + 10);
  for (const [type, payload] of write('w2', 'a.txt', 'v1\n', 'v2\n')) await store.append(id, type, payload);
  await writeFile(path.join(dir, 'a.txt'), 'v2\n');
  const undo = await undoConversation(store, id, 'local', dir);
  assert.not.ok(undo.isError, undo.text);
  assert.is((undo.structured as { reverted: number }).reverted, 2, undo.text);
  assert.is(await readFile(path.join(dir, 'a.txt'), 'utf8'), 'v0\n');
  // The undo entry is read back too (it is at the end, past every page): nothing is left to undo.
  const again = await undoConversation(store, id, 'local', dir);
  assert.is((again.structured as { reverted: number }).reverted, 0, again.text);
  assert.is(await readFile(path.join(dir, 'a.txt'), 'utf8'), 'v0\n');
});

test('undo reads only file_snapshot and undo entries from the store', async () => {
  const id = await conversation(write('w1', 'a.txt', 'original\n', 'changed\n'), 50);
  await writeFile(path.join(dir, 'a.txt'), 'changed\n');
  const { store: spy, read } = spiedReads(store);
  const undo = await undoConversation(spy, id, 'local', dir);
  assert.is((undo.structured as { reverted: number }).reverted, 1, undo.text);
  assert.equal([...new Set(read.map((e) => e.type))], ['file_snapshot'], 'no message entry was loaded');
  assert.is(read.length, 3, 'its two snapshots, and its before-image again when the file is restored (undo-plan.ts)');
});

test('another principal\'s conversation is not found', async () => {
  const id = await conversation(write('w1', 'a.txt', 'original\n', 'changed\n'), 0);
  const refused = await undoConversation(store, id, 'mallory', dir).then(() => null, (err: unknown) => err as Error);
  assert.match(refused?.message ?? 'no error', /not found/);
});


test('the plan lets the event loop turn between its pages: an undo over many large snapshots does not hold the main thread', async () => {
  // Review wt/advdurable: the SQLite store answers in a microtask, so an undo over 30 edits of a 4 MB file
  // planned in one turn of the main thread (2.3 s, every session's ping waiting). Each page ends a turn now.
  const big = 'x'.repeat(64 * 1024);
  const changes = Array.from({ length: 12 }, (_, i) => write(`w${i}`, 'a.txt', `${big}${i}`, `${big}${i + 1}`)).flat();
  const id = await conversationWith(store, changes);
  await writeFile(path.join(dir, 'a.txt'), `${big}12`);
  let turns = 0;
  let counting = true;
  const count = (): void => {
    turns++;
    if (counting) setImmediate(count);
  };
  setImmediate(count);
  const plan = await planUndo(store, id, 'local', { pageBytes: 128 * 1024, maxSnapshots: 1000 });
  const planTurns = turns;
  counting = false;
  assert.is(plan?.length, 12);
  const undo = await undoConversation(store, id, 'local', dir, { pageBytes: 128 * 1024, maxSnapshots: 1000 });
  assert.not.ok(undo.isError, undo.text);
  assert.is((undo.structured as { reverted: number }).reverted, 12, undo.text);
  assert.is(await readFile(path.join(dir, 'a.txt'), 'utf8'), `${big}0`);
  // 24 entries of 64 KB or 128 KB, at most 128 KB a page: at least 12 pages, so at least 11 turns while planning.
  assert.ok(planTurns >= 11, `the event loop turned ${planTurns} times while the undo was planned`);
});

test.run();
