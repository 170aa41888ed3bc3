// The PostgreSQL store's reads of some entry types only (`EntriesOptions.types`): one branch per type, each
// an index range of entries_by_type (conversation_id, type, seq) INCLUDE (payload_size; migration 11) from
// `afterSeq` in seq order with its own LIMIT, joined by UNION ALL … ORDER BY seq LIMIT, which PostgreSQL
// plans as a Merge Append that stops at the limit. As `type = ANY($n) … ORDER BY seq LIMIT` it was one scan
// of every matching row after `afterSeq` and a sort, for each page: undo's walk through a conversation cost
// about the square of its snapshots. sqlite-typed-reads.ts is the SQLite store's counterpart.

import { liveSql } from './retention.ts';
import { ENTRY_TYPES, type EntryType } from './store.ts';

const ENTRY_COLUMNS = 'seq, conversation_id, time, type, payload';

/** The two statements of one set of types, in the parameters of ENTRIES and ENTRIES_PAGE less the types. */
export interface TypedPostgresReads {
  /** ENTRIES of these types: $1 conversation, $2 principal, $3 afterSeq, $4 limit, $5 now. */
  readonly entries: string;
  /** ENTRIES_PAGE of these types: the same, and $6 maxBytes. */
  readonly page: string;
}

/**
 * The statements of `types`. The type names in the SQL are ENTRY_TYPES' own strings (the caller's are
 * checked against it before they get here), never the caller's; each type once, whatever the caller repeats.
 */
export function typedPostgresReads(types: readonly EntryType[]): TypedPostgresReads {
  const set = ENTRY_TYPES.filter((type) => types.includes(type));
  /** The `columns` of the entries of `set` in conversation `id` matching `where`, one branch per type, in seq order. */
  const union = (columns: string, id: string, where: string, limit: string) =>
    `SELECT ${columns} FROM (${set.map((type) => `(SELECT ${columns} FROM entries WHERE conversation_id = ${id} AND type = '${type}' AND ${where} ORDER BY seq LIMIT ${limit})`).join(' UNION ALL ')}) typed ORDER BY seq LIMIT ${limit}`;
  return {
    // The conversation joined to its entries after $3, as ENTRIES: no row, not there (or not the principal's);
    // one row with a null seq, there with no entries after $3.
    entries: `
      SELECT e.seq, e.conversation_id, e.time, e.type, e.payload
      FROM conversations c LEFT JOIN LATERAL (${union(ENTRY_COLUMNS, 'c.id', 'seq > $3', '$4')}) e ON true
      WHERE c.id = $1 AND c.principal = $2 AND ${liveSql('$5', 'c')}
      ORDER BY e.seq`,
    // ENTRIES_PAGE's cut, found without reading past it: of the next $4 + 1 entries, the page admits the first
    // always, then while the running total of their sizes stays within $6 and the count within $4. Sizes are
    // never negative, so the admitted rows are a prefix, and `stop` is the first row past it: the window
    // (ROWS UNBOUNDED PRECEDING: each row's sums need only the rows before it) and the Merge Append below it
    // are read only up to that row, so a page bounded by bytes reads the entries it returns and one more, not
    // $4 + 1. The rows are then the entries before `stop` (all, when there is none: then the $4 + 1 were
    // fewer, all admitted). Each row carries the counts as far as the cut read: `rows` more than `admitted`
    // (stop's rank, and the rank before it), more entries follow; both 0, none follow.
    page: `
      WITH owned AS (
        SELECT c.id FROM conversations c WHERE c.id = $1 AND c.principal = $2 AND ${liveSql('$5', 'c')}
      )
      SELECT e.seq, e.conversation_id, e.time, e.type, e.payload, e.payload_size, coalesce(stop.n, 0) AS rows, coalesce(stop.n - 1, 0) AS admitted
      FROM owned LEFT JOIN LATERAL (
        SELECT seq, n FROM (
          SELECT seq, ROW_NUMBER() OVER w AS n, SUM(payload_size) OVER w AS running
          FROM (${union('seq, payload_size', 'owned.id', 'seq > $3', '$4 + 1')}) page WINDOW w AS (ORDER BY seq ROWS UNBOUNDED PRECEDING)
        ) sized WHERE NOT (n = 1 OR (n <= $4 AND running <= $6)) ORDER BY seq LIMIT 1
      ) stop ON true LEFT JOIN LATERAL (${union(`${ENTRY_COLUMNS}, payload_size`, 'owned.id', 'seq > $3 AND seq <= coalesce(stop.seq - 1, 9223372036854775807)', '$4')}) e ON true
      ORDER BY e.seq`,
  };
}
