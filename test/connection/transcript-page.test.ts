// One transcript read is one page (src/connection/transcript-page.ts), through the effect runner on a real
// SQLite store: at most TRANSCRIPT_READ_MAX_ENTRIES lines and TRANSCRIPT_READ_MAX_BYTES of text (one entry
// larger than that alone is a page of its own, whole), the next page named while more follow, and a walk
// page by page gets every entry exactly once, in order.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { EffectResult } from '../../src/mcp/effects.ts';
import { TRANSCRIPT_READ_MAX_BYTES, TRANSCRIPT_READ_MAX_ENTRIES } from '../../src/limits.ts';
import { EffectRunner } from '../../src/connection/effect-runner.ts';
import { entryLine, LINE_OVERHEAD_BYTES, PAGE_PAYLOAD_BYTES } from '../../src/connection/transcript-page.ts';
import type { TaskContext } from '../../src/task/task-context.ts';
import { createLogger } from '../../src/log/logger.ts';
import { SyncStoreAdapter } from '../../src/store/async-store.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import { DEFAULT_MAX_PAYLOAD_BYTES, ENTRY_TYPES } from '../../src/store/store.ts';

const store = SqliteConversationStore.open(':memory:');
const logger = createLogger('error', { write: () => true });
const alice: TaskContext = { store: () => new SyncStoreAdapter(store), principal: 'alice', local: false, forbidWrites: false, sessionId: 's', env: {}, supervise: async () => undefined };

type Page = Extract<EffectResult, { kind: 'transcript' }>;

function read(conversationId: string, afterSeq: number, task: TaskContext = alice): Promise<Page> {
  return new Promise((resolve) => new EffectRunner({ workspace: '/nonexistent', logger, toolTimeoutMs: 1000, task }, (r) => resolve(r as Page))
    .run({ kind: 'readTranscript', ticket: 1, conversationId, afterSeq }));
}

/** Every page from the first, by `nextAfterSeq`, with a guard against a walk that does not end. */
async function walk(conversationId: string): Promise<Page[]> {
  const pages: Page[] = [];
  let after = 0;
  for (let guard = 0; guard < 100; guard++) {
    const page = await read(conversationId, after);
    pages.push(page);
    if (page.nextAfterSeq === undefined) return pages;
    after = page.nextAfterSeq;
  }
  throw new Error('the walk did not end');
}

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

test('a line adds at most LINE_OVERHEAD_BYTES to its payload, whatever its seq, time and type', () => {
  for (const type of ENTRY_TYPES) {
    for (const [seq, time] of [[1, 0], [Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER], [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER]] as const) {
      const line = entryLine({ seq, time, type, conversationId: 'c', payload: null });
      assert.ok(bytes(line) + 1 - bytes('null') <= LINE_OVERHEAD_BYTES, `${type} ${seq} ${time}`);
    }
  }
  assert.ok(PAGE_PAYLOAD_BYTES > TRANSCRIPT_READ_MAX_BYTES * 0.9, 'the lines take a small share of the bound');
});

test('a transcript over the bound, in big and small entries, is read page by page: each page within both bounds, every entry exactly once', async () => {
  const c = store.createConversation({ principal: 'alice', sessionId: 's', harness: 'super-pi-code' });
  const big = 'é'.repeat(700 * 1024); // 1.4 MB of UTF-8, 700 Ki characters
  const payloads: unknown[] = [];
  for (let i = 0; i < 8; i++) payloads.push({ i, big });
  for (let i = 8; i < 8 + TRANSCRIPT_READ_MAX_ENTRIES + 300; i++) payloads.push({ i, text: `small ${i}` });
  for (const p of payloads) store.append(c.id, 'tool_result', p);

  const pages = await walk(c.id);
  const lines = pages.flatMap((p) => (p.jsonl === '' || p.jsonl === null ? [] : p.jsonl.split('\n')));
  const entries = lines.map((l) => JSON.parse(l) as { seq: number; payload: { i: number } });
  assert.equal(entries.map((e) => e.seq), payloads.map((_, i) => i + 1), 'every entry once, in order');
  assert.equal(entries.map((e) => e.payload.i), payloads.map((_, i) => i));
  for (const page of pages) {
    const text = page.jsonl ?? '';
    assert.ok(bytes(text) <= TRANSCRIPT_READ_MAX_BYTES, `a page of ${bytes(text)} bytes`);
    assert.ok(text.split('\n').length <= TRANSCRIPT_READ_MAX_ENTRIES);
  }
  assert.ok(pages.length >= 4, `${pages.length} pages: the big entries take three, the small ones two (by count)`);
  assert.is(pages.at(-1)?.nextAfterSeq, undefined, 'the last page names none');
  assert.equal(pages.slice(0, -1).map((p) => p.nextAfterSeq), pages.slice(0, -1).map((p) => (JSON.parse(p.jsonl!.split('\n').at(-1)!) as { seq: number }).seq), 'each names its own last seq');
});

test('an entry larger than the bound alone is a page of its own, whole; a read past the end is an empty page', async () => {
  const c = store.createConversation({ principal: 'alice', sessionId: 's', harness: 'super-pi-code' });
  const huge = 'h'.repeat(TRANSCRIPT_READ_MAX_BYTES + 1000);
  assert.ok(bytes(JSON.stringify(huge)) < DEFAULT_MAX_PAYLOAD_BYTES);
  store.append(c.id, 'file_snapshot', 'before');
  store.append(c.id, 'file_snapshot', huge);
  store.append(c.id, 'final', 'after');
  const pages = await walk(c.id);
  assert.equal(pages.map((p) => p.jsonl?.split('\n').map((l) => (JSON.parse(l) as { seq: number }).seq)), [[1], [2], [3]]);
  assert.is((JSON.parse(pages[1]!.jsonl!) as { payload: string }).payload, huge, 'whole, not cut');
  assert.equal(await read(c.id, 3), { kind: 'transcript', ticket: 1, jsonl: '' });
  assert.equal(await read(c.id, 99), { kind: 'transcript', ticket: 1, jsonl: '' });
});

test('another principal\'s transcript is null on every page, as a missing one', async () => {
  const c = store.createConversation({ principal: 'alice', sessionId: 's', harness: 'super-pi-code' });
  store.append(c.id, 'user', 'hi');
  const bob = { ...alice, principal: 'bob' };
  assert.equal(await read(c.id, 0, bob), { kind: 'transcript', ticket: 1, jsonl: null });
  assert.equal(await read(c.id, 1, bob), await read('00000000-0000-4000-8000-000000000000', 1, bob));
});

test.after(() => store.close());

test.run();
