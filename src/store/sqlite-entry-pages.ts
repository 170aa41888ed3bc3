// The SQLite store's transcript reads (sqlite-store.ts): a page of a conversation's entries for its
// principal, bounded by count and, when asked, by payload bytes — the cut found from the recorded sizes
// (migration 9) before any payload is read — each page read in one transaction, so the ownership check,
// the cut and the rows come from one snapshot.

import { StoreError } from './errors.ts';
import type { SqliteDatabase } from './sqlite-driver.ts';
import type { EntryRow, Statements } from './sqlite-statements.ts';
import { checkAfterSeq, checkMaxBytes, pageLimit } from './store-checks.ts';
import { DEFAULT_ENTRIES_LIMIT, type EntriesOptions, MAX_ENTRIES_LIMIT } from './store.ts';

/** The rows of one page and whether more follow it; null: not the principal's conversation (or none). */
export type EntryRowsPage = { readonly rows: EntryRow[]; readonly more: boolean } | null;

export class SqliteEntryPages {
  readonly #read: (conversationId: string, principal: string, afterSeq: number, limit: number, maxBytes: number | null, more: boolean, now: number) => EntryRowsPage;

  constructor(db: SqliteDatabase, s: Statements) {
    const read = db.transaction((conversationId: string, principal: string, afterSeq: number, limit: number, maxBytes: number | null, more: boolean, now: number): EntryRowsPage => {
      if (s.getConversation.get({ id: conversationId, principal, now }) === undefined) return null;
      // Neither a byte bound nor the question whether more follow: the page is the next `limit` rows.
      if (maxBytes === null && !more) return { rows: s.entriesAfter.all(conversationId, afterSeq, limit), more: false };
      const cut = s.entriesCut.get({ id: conversationId, after: afterSeq, limit, max: maxBytes ?? Number.MAX_SAFE_INTEGER });
      if (cut === undefined) throw new StoreError('corrupt', 'the page cut of a transcript read returned no row');
      // The admitted entries are the first of those after `afterSeq`: the same rows, read in the same snapshot.
      const rows = cut.admitted === 0 ? [] : s.entriesAfter.all(conversationId, afterSeq, cut.admitted);
      return { rows, more: cut.rows > cut.admitted };
    });
    this.#read = (...args) => read.deferred(...args);
  }

  /**
   * One page by `opts` (checked as the store's contract says), read at `now` (which decides whether a task
   * has expired). `more`: find out whether more entries follow (without it, `more` may say false when they do).
   */
  page(conversationId: string, principal: string, opts: EntriesOptions, now: number, more: boolean): EntryRowsPage {
    const afterSeq = checkAfterSeq(opts.afterSeq ?? 0);
    const limit = pageLimit(opts.limit, DEFAULT_ENTRIES_LIMIT, MAX_ENTRIES_LIMIT, 'limit');
    return this.#read(conversationId, principal, afterSeq, limit, checkMaxBytes(opts.maxBytes), more, now);
  }
}
