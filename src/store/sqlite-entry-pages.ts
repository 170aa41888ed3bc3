// The SQLite store's transcript reads (sqlite-store.ts): a page of a conversation's entries for its
// principal, bounded by count and, when asked, by payload bytes — the cut found from the recorded sizes
// (migration 9) before any payload is read — and, when asked, of some entry types only (through the type
// index, sqlite-typed-reads.ts); each page read in one transaction, so the ownership check, the cut and
// the rows come from one snapshot. Each row carries its recorded size too (EntriesPage.payloadSizes).

import { StoreError } from './errors.ts';
import type { SqliteDatabase } from './sqlite-driver.ts';
import type { PageRow, Statements } from './sqlite-statements.ts';
import { SqliteTypedReads } from './sqlite-typed-reads.ts';
import { checkAfterSeq, checkEntryTypes, checkMaxBytes, pageLimit } from './store-checks.ts';
import { DEFAULT_ENTRIES_LIMIT, type EntriesOptions, type EntryType, MAX_ENTRIES_LIMIT } from './store.ts';

/** The rows of one page and whether more follow it; null: not the principal's conversation (or none). */
export type EntryRowsPage = { readonly rows: PageRow[]; readonly more: boolean } | null;

/** One read's arguments, checked. */
interface Read {
  readonly conversationId: string;
  readonly principal: string;
  readonly afterSeq: number;
  readonly limit: number;
  readonly maxBytes: number | null;
  /** The type filter, null: every type. */
  readonly types: readonly EntryType[] | null;
  readonly more: boolean;
  readonly now: number;
}

export class SqliteEntryPages {
  readonly #read: (read: Read) => EntryRowsPage;

  constructor(db: SqliteDatabase, s: Statements) {
    const typed = new SqliteTypedReads(db);
    const rowsAfter = (r: Read, limit: number): PageRow[] =>
      r.types === null ? s.entriesAfter.all(r.conversationId, r.afterSeq, limit) : typed.statements(r.types).after.all({ id: r.conversationId, after: r.afterSeq, limit });
    const read = db.transaction((r: Read): EntryRowsPage => {
      if (s.getConversation.get({ id: r.conversationId, principal: r.principal, now: r.now }) === undefined) return null;
      // Neither a byte bound nor the question whether more follow: the page is the next `limit` rows.
      if (r.maxBytes === null && !r.more) return { rows: rowsAfter(r, r.limit), more: false };
      const params = { id: r.conversationId, after: r.afterSeq, limit: r.limit, max: r.maxBytes ?? Number.MAX_SAFE_INTEGER };
      const cut = r.types === null ? s.entriesCut.get(params) : typed.statements(r.types).cut.get(params);
      if (cut === undefined) throw new StoreError('corrupt', 'the page cut of a transcript read returned no row');
      // The admitted entries are the first of those after `afterSeq`: the same rows, read in the same snapshot.
      const rows = cut.admitted === 0 ? [] : rowsAfter(r, cut.admitted);
      return { rows, more: cut.rows > cut.admitted };
    });
    this.#read = (r) => read.deferred(r);
  }

  /**
   * One page by `opts` (checked as the store's contract says), read at `now` (which decides whether a task
   * has expired). `more`: find out whether more entries follow (without it, `more` may say false when they do).
   */
  page(conversationId: string, principal: string, opts: EntriesOptions, now: number, more: boolean): EntryRowsPage {
    const afterSeq = checkAfterSeq(opts.afterSeq ?? 0);
    const limit = pageLimit(opts.limit, DEFAULT_ENTRIES_LIMIT, MAX_ENTRIES_LIMIT, 'limit');
    return this.#read({ conversationId, principal, afterSeq, limit, maxBytes: checkMaxBytes(opts.maxBytes), types: checkEntryTypes(opts.types), more, now });
  }
}
