// The SQLite store's reads of some entry types only (`EntriesOptions.types`, sqlite-entry-pages.ts): one
// branch per type, each walking the index entries_by_type (conversation_id, type, seq, payload_size;
// migration 10) from `afterSeq` in seq order, joined by UNION ALL … ORDER BY seq, which SQLite runs as a
// merge of the ordered branches that stops at the LIMIT. A filtered page of a long conversation so costs
// the entries it returns, not every row after `afterSeq` (a `type IN (…)` over entries_by_conversation).

import type { SqliteDatabase, SqliteStatement } from './sqlite-driver.ts';
import { type CutParams, type CutRow, cutOfPageSql, PAGE_COLUMNS, type PageRow } from './sqlite-statements.ts';
import { ENTRY_TYPES, type EntryType } from './store.ts';

/** The parameters of a typed read's rows: the page after `after`, at most `limit` entries. */
export interface TypedAfterParams {
  id: string;
  after: number;
  limit: number;
}

/** The two statements of one set of types: the rows of a page, and where a page bounded by bytes ends. */
export interface TypedStatements {
  readonly after: SqliteStatement<[TypedAfterParams], PageRow>;
  readonly cut: SqliteStatement<[CutParams], CutRow>;
}

/** The SQL of TypedStatements for `types`. */
export function typedReadSql(types: readonly EntryType[]): { readonly after: string; readonly cut: string } {
  return { after: typedPageSql(PAGE_COLUMNS, types, '@limit'), cut: cutOfPageSql(typedPageSql('seq, payload_size', types, '@limit + 1')) };
}

/** The rows `columns` of the entries of `types` after @after, in seq order, one index range per type. */
function typedPageSql(columns: string, types: readonly EntryType[], limit: string): string {
  // The type names come from ENTRY_TYPES (the caller's are checked against it), never from the caller's strings.
  const branches = canonical(types).map((type) => `SELECT ${columns} FROM entries WHERE conversation_id = @id AND type = '${type}' AND seq > @after`);
  return `${branches.join(' UNION ALL ')} ORDER BY seq LIMIT ${limit}`;
}

/**
 * The statements of each set of types, prepared on first use and kept: the sets are subsets of ENTRY_TYPES
 * (checked before they get here), so there are at most 2^11 - 1 of them, and the store's callers use three.
 */
export class SqliteTypedReads {
  readonly #db: SqliteDatabase;
  readonly #bySet = new Map<number, TypedStatements>();

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  statements(types: readonly EntryType[]): TypedStatements {
    const key = canonical(types).reduce((mask, type) => mask | (1 << ENTRY_TYPES.indexOf(type)), 0);
    let statements = this.#bySet.get(key);
    if (statements === undefined) {
      const sql = typedReadSql(types);
      statements = { after: this.#db.prepare<[TypedAfterParams], PageRow>(sql.after), cut: this.#db.prepare<[CutParams], CutRow>(sql.cut) };
      this.#bySet.set(key, statements);
    }
    return statements;
  }
}

/** `types` as ENTRY_TYPES' own strings, each once, in ENTRY_TYPES' order. */
function canonical(types: readonly EntryType[]): EntryType[] {
  return ENTRY_TYPES.filter((type) => types.includes(type));
}
