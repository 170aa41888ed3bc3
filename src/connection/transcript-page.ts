// One page of a transcript as `resources/read` returns it: the entries after a seq, as JSON lines, at most
// TRANSCRIPT_READ_MAX_ENTRIES of them and TRANSCRIPT_READ_MAX_BYTES of text — cut by the store from the
// payload sizes it recorded, before any payload past the cut is read — and whether more follow.

import type { AsyncConversationStore } from '../store/async-store.ts';
import { ENTRY_TYPES, type Entry } from '../store/store.ts';
import { TRANSCRIPT_READ_MAX_BYTES, TRANSCRIPT_READ_MAX_ENTRIES } from '../limits.ts';

/**
 * The most bytes a line adds to its payload's JSON: `{"seq":…,"time":…,"type":"…","payload":…}` and the
 * newline, with a seq of up to 16 digits, a time of up to 17 characters (a sign and 16 digits: any safe
 * integer) and the longest entry type.
 */
export const LINE_OVERHEAD_BYTES = '{"seq":,"time":,"type":"","payload":}\n'.length + 16 + 17 + Math.max(...ENTRY_TYPES.map((t) => t.length));

/** Payload bytes a page may hold: the bound less the most its lines can add, so the lines stay within the bound. */
export const PAGE_PAYLOAD_BYTES = TRANSCRIPT_READ_MAX_BYTES - TRANSCRIPT_READ_MAX_ENTRIES * LINE_OVERHEAD_BYTES;

export interface TranscriptPage {
  /** One compact entry per line, in seq order; '' when no entry follows `afterSeq`. */
  readonly jsonl: string;
  /** More entries follow: the next page starts after this seq (the page's last). */
  readonly nextAfterSeq?: number;
}

/** The line of one entry. */
export const entryLine = (e: Entry): string => JSON.stringify({ seq: e.seq, time: e.time, type: e.type, payload: e.payload });

/** The page of the principal's conversation after `afterSeq`; null when it is not the principal's (or does not exist). */
export async function readTranscriptPage(store: AsyncConversationStore, conversationId: string, principal: string, afterSeq: number): Promise<TranscriptPage | null> {
  const page = await store.entriesPage(conversationId, principal, { afterSeq, limit: TRANSCRIPT_READ_MAX_ENTRIES, maxBytes: PAGE_PAYLOAD_BYTES });
  if (page === null) return null;
  const jsonl = page.entries.map(entryLine).join('\n');
  const last = page.entries.at(-1);
  return page.more && last !== undefined ? { jsonl, nextAfterSeq: last.seq } : { jsonl };
}
