// Undo's memory is bounded whatever the conversation's length: it plans from digests, reading its entries in
// pages of UNDO_PAGE_BYTES that it drops once read (undo-plan.ts), and refuses past UNDO_MAX_SNAPSHOTS
// snapshots not yet undone rather than hold more. Measured as the JS heap still in use, after a full GC, at
// each store call the undo makes: the contents it holds between pages.

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type AsyncConversationStore, SyncStoreAdapter } from '../../src/store/async-store.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import { MAX_ENTRIES_LIMIT } from '../../src/store/store.ts';
import { UNDO_MAX_SNAPSHOTS, UNDO_PAGE_BYTES } from '../../src/limits.ts';
import { undoConversation } from '../../src/task/undo.ts';

v8.setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

let dir: string;
let inner: SqliteConversationStore;
let store: AsyncConversationStore;
test.before.each(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'superpi-undo-memory-'));
  inner = SqliteConversationStore.open(':memory:');
  store = new SyncStoreAdapter(inner);
});
test.after.each(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

/** The heap in use after a full GC. */
function heapInUse(): number {
  gc();
  return process.memoryUsage().heapUsed;
}

/** `store`, measuring at each call the heap in use above `base` (what the caller holds across the call) into `peak`. */
function measured(base: number, peak: { bytes: number; calls: number }): AsyncConversationStore {
  return new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        peak.calls++;
        peak.bytes = Math.max(peak.bytes, heapInUse() - base);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

test('undo of a conversation of more snapshots than one page of entries holds one page of them at a time, not all', async () => {
  // More snapshot entries than MAX_ENTRIES_LIMIT (so more than one page of any count), each ~6 KB: over 60 MB of
  // payload in all, several times UNDO_PAGE_BYTES. Appended through the synchronous store (no promise per entry).
  const { id } = inner.createConversation({ principal: 'local', sessionId: 's', harness: 'super-pi-code' });
  const block = 'x'.repeat(3000);
  const changes = Math.ceil((MAX_ENTRIES_LIMIT + 100) / 2);
  for (let i = 0; i < changes; i++) {
    const before = `${block}${i}\n`;
    const after = `${block}${i + 1}\n`;
    inner.append(id, 'file_snapshot', { id: `w${i}`, path: 'a.txt', before, stage: 'before' });
    inner.append(id, 'file_snapshot', { id: `w${i}`, path: 'a.txt', before, after });
  }
  // Someone else changed the file since: the newest change is refused, so the plan is what is measured.
  await writeFile(path.join(dir, 'a.txt'), 'edited by hand\n');
  const peak = { bytes: 0, calls: 0 };
  const undo = await undoConversation(measured(heapInUse(), peak), id, 'local', dir);
  assert.equal((undo.structured as { refused: string[] }).refused, ['a.txt'], undo.text);
  assert.ok(peak.calls > 2, `read in several pages (${peak.calls} store calls)`);
  // Two pages (the one being read, and the one before it until it is released) and the plan's records; the
  // contents of every page read before would be several times this.
  const bound = 2 * UNDO_PAGE_BYTES + 16 * 1024 * 1024;
  assert.ok(peak.bytes < bound, `held ${(peak.bytes / 2 ** 20).toFixed(1)} MiB across a store call, more than ${(bound / 2 ** 20).toFixed(1)} MiB`);
});

test('restoring a file reads its before-image back alone: many large changes are undone holding about one', async () => {
  const { id } = inner.createConversation({ principal: 'local', sessionId: 's', harness: 'super-pi-code' });
  const files = 24;
  const big = (n: number) => `${String(n).repeat(1)}${'y'.repeat(1024 * 1024)}\n`;
  for (let i = 0; i < files; i++) {
    inner.append(id, 'file_snapshot', { id: `w${i}`, path: `f${i}.txt`, before: big(i), stage: 'before' });
    inner.append(id, 'file_snapshot', { id: `w${i}`, path: `f${i}.txt`, before: big(i), after: 'new\n' });
    await writeFile(path.join(dir, `f${i}.txt`), 'new\n');
  }
  const peak = { bytes: 0, calls: 0 };
  const undo = await undoConversation(measured(heapInUse(), peak), id, 'local', dir, { pageBytes: 2 * 1024 * 1024, maxSnapshots: UNDO_MAX_SNAPSHOTS });
  assert.not.ok(undo.isError, undo.text);
  assert.is((undo.structured as { reverted: number }).reverted, files, undo.text);
  for (let i = 0; i < files; i++) assert.is(await readFile(path.join(dir, `f${i}.txt`), 'utf8'), big(i));
  // 48 MiB of before-images in all (96 MiB of entries); undo holds a page (2 MiB and one entry) or one image.
  assert.ok(peak.bytes < 12 * 1024 * 1024, `held ${(peak.bytes / 2 ** 20).toFixed(1)} MiB across a store call`);
});

test('past UNDO_MAX_SNAPSHOTS snapshots not yet undone the undo is refused before it reverts anything; undone ones do not count', async () => {
  const { id } = inner.createConversation({ principal: 'local', sessionId: 's', harness: 'super-pi-code' });
  const write = (i: number) => {
    inner.append(id, 'file_snapshot', { id: `w${i}`, path: 'a.txt', before: `v${i}\n`, stage: 'before' });
    inner.append(id, 'file_snapshot', { id: `w${i}`, path: 'a.txt', before: `v${i}\n`, after: `v${i + 1}\n` });
  };
  for (let i = 0; i < 3; i++) write(i);
  await writeFile(path.join(dir, 'a.txt'), 'v3\n');
  const bounds = { pageBytes: UNDO_PAGE_BYTES, maxSnapshots: 6 };
  // Six snapshots: within the bound, undone.
  const first = await undoConversation(store, id, 'local', dir, bounds);
  assert.is((first.structured as { reverted: number }).reverted, 3, first.text);
  assert.is(await readFile(path.join(dir, 'a.txt'), 'utf8'), 'v0\n');
  // Eight more, not yet undone: past the bound. The six undone before are not held.
  for (let i = 0; i < 4; i++) write(i);
  await writeFile(path.join(dir, 'a.txt'), 'v4\n');
  const refused = await undoConversation(store, id, 'local', dir, bounds).then(() => null, (err: unknown) => err as Error);
  assert.match(refused?.message ?? 'not refused', /more than UNDO_MAX_SNAPSHOTS \(6\) file snapshots not yet undone.*nothing was reverted/);
  assert.is(await readFile(path.join(dir, 'a.txt'), 'utf8'), 'v4\n', 'the file is untouched');
  // Within a larger bound the same conversation is undone.
  const undone = await undoConversation(store, id, 'local', dir, { ...bounds, maxSnapshots: 8 });
  assert.is((undone.structured as { reverted: number }).reverted, 4, undone.text);
  assert.is(await readFile(path.join(dir, 'a.txt'), 'utf8'), 'v0\n');
});

test.run();
