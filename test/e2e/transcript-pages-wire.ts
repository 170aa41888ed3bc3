// What the transcript page tests share (transcript-pages.test.ts, transcript-pages-postgres.test.ts): a
// transcript past both page bounds, a walk from its URI by `_meta["superpi/nextUri"]` until a page names
// none, and the checks that the walk got every entry once with each page within the bounds. Not a *.test.ts file.

import * as assert from 'uvu/assert';
import { TRANSCRIPT_READ_MAX_BYTES, TRANSCRIPT_READ_MAX_ENTRIES } from '../../src/limits.ts';
import type { AsyncConversationStore } from '../../src/store/async-store.ts';

export const NEXT = 'superpi/nextUri';
export const uriOf = (id: string) => `superpi://conversation/${id}/transcript`;

/**
 * Big entries (past the byte bound together), then more small ones than one page may hold, each payload
 * numbered `n` = its seq; the conversation is left finished (a running one's lease lapses, and a server
 * would take it over and write to it).
 */
export async function seedTranscript(store: AsyncConversationStore, principal: string): Promise<{ id: string; count: number }> {
  const c = await store.createConversation({ principal, sessionId: 'elsewhere', harness: 'super-pi-code' });
  const big = 'ü'.repeat(600 * 1024); // 1.2 MB of UTF-8 each
  let count = 0;
  for (let i = 0; i < 6; i++) await store.append(c.id, 'file_snapshot', { n: ++count, big });
  for (let i = 0; i < TRANSCRIPT_READ_MAX_ENTRIES + 200; i++) await store.append(c.id, 'tool_result', { n: ++count, text: `small ${count}` });
  await store.setStatus(c.id, 'completed');
  return { id: c.id, count };
}

export type Contents = { uri: string; text?: string; _meta?: Record<string, unknown> }[];

/** Reads from the transcript's URI on until a page names no next one: each page's content. */
export async function walk(read: (uri: string) => Promise<Contents>, first: string): Promise<Contents[number][]> {
  const pages: Contents[number][] = [];
  let uri: string | undefined = first;
  while (uri !== undefined && pages.length < 50) {
    const contents = await read(uri);
    assert.is(contents.length, 1);
    const page = contents[0]!;
    assert.is(page.uri, uri, 'the content names the URI read');
    pages.push(page);
    const next = page._meta?.[NEXT];
    assert.ok(next === undefined || typeof next === 'string');
    uri = next as string | undefined;
  }
  return pages;
}

export function checkPages(pages: Contents[number][], count: number): void {
  const lines = pages.flatMap((p) => (p.text === undefined || p.text === '' ? [] : p.text.split('\n')));
  const entries = lines.map((l) => JSON.parse(l) as { seq: number; payload: { n: number } });
  assert.equal(entries.map((e) => e.seq), Array.from({ length: count }, (_, i) => i + 1), 'every entry exactly once, in order');
  assert.equal(entries.map((e) => e.payload.n), Array.from({ length: count }, (_, i) => i + 1));
  for (const p of pages) {
    assert.ok(Buffer.byteLength(p.text ?? '', 'utf8') <= TRANSCRIPT_READ_MAX_BYTES, `a page of ${Buffer.byteLength(p.text ?? '', 'utf8')} bytes`);
    assert.ok((p.text ?? '').split('\n').length <= TRANSCRIPT_READ_MAX_ENTRIES);
  }
  assert.ok(pages.length >= 3, `${pages.length} pages`);
  assert.is(pages.at(-1)?._meta?.[NEXT], undefined, 'the last page names no next one');
}

