// The PostgreSQL store's statements that are more than a line (postgres-store.ts runs them): each write
// is one statement, so one transaction, and its NOTIFY goes out at its commit.

import { leaseNow, payloadSize } from './postgres-rows.ts';
import { expiredSql, liveSql } from './retention.ts';
import { TASK_STATUS_CHANNEL, TRANSCRIPTS_CHANNEL } from './session-events.ts';

export const CONVERSATION_COLUMNS = 'id, principal, session_id, harness, status, title, created_at, updated_at, ttl_ms';
export const ENTRY_COLUMNS = 'seq, conversation_id, time, type, payload';
export const NEWEST_FIRST = 'ORDER BY updated_at DESC, id DESC';

// Bumps the conversation's counter and inserts the entry under it in one statement, so one transaction:
// the UPDATE takes the conversation's row lock, and a concurrent append (any pool, any node) waits for it
// and then bumps the committed counter. The fence ($5, when not null) is compared on the row as locked:
// a takeover committed meanwhile is seen (READ COMMITTED re-reads the row it waited for), and the stale
// writer's UPDATE matches nothing. No row (no such conversation, or fenced): nothing is inserted.
// Its NOTIFY (TRANSCRIPTS_CHANNEL, `<origin> <conversation>`) is sent at commit: every node's listener
// hears of the entry, and this store's own origin ($6) tells its node to ignore what it announced itself.
export const APPEND = `
  WITH bumped AS (
    UPDATE conversations SET last_seq = last_seq + 1, updated_at = greatest(updated_at, $2)
    WHERE id = $1 AND ($5::bigint IS NULL OR epoch = $5) RETURNING id, last_seq
  ), added AS (
    INSERT INTO entries (conversation_id, seq, time, type, payload, payload_size) SELECT id, last_seq, $2, $3, $4, ${payloadSize(4)} FROM bumped RETURNING conversation_id, seq
  )
  SELECT seq, pg_notify('${TRANSCRIPTS_CHANNEL}', $6 || ' ' || conversation_id) FROM added`;

// The same, only while the conversation is still `running` under the owner found gone: if another store
// resumed or interrupted it in the meantime, the row no longer matches and nothing is written. Its NOTIFY
// tells the other nodes' status listeners, as a status change's does.
export const INTERRUPT = `
  WITH hit AS (
    UPDATE conversations SET status = 'interrupted', task_result = NULL, epoch = epoch + 1, last_seq = last_seq + 1, updated_at = greatest(updated_at, $3)
    WHERE id = $1 AND status = 'running' AND owner = $2 RETURNING id, last_seq
  ), added AS (
    INSERT INTO entries (conversation_id, seq, time, type, payload, payload_size) SELECT id, last_seq, $3, 'interrupted', $4, ${payloadSize(4)} FROM hit RETURNING conversation_id, seq
  )
  SELECT seq, pg_notify('${TASK_STATUS_CHANNEL}', $5 || ' ' || conversation_id) FROM added`;

// The type filter of the transcript reads (EntriesOptions.types): $n, a text[], null for every type — which is
// all the store sends: a read of some types goes through postgres-typed-reads.ts, which stops at its page. The
// type is a column of the row itself, so the rows skipped have no payload read (a large one lives out of
// line, in TOAST, untouched).
const ofTypes = (n: number): string => `($${n}::text[] IS NULL OR e.type = ANY($${n}::text[]))`;

// One statement, so the ownership check and the rows come from one snapshot: the conversation joined to
// its entries after `afterSeq` (of the types $6 names, null: all). No row: not there (or not the
// principal's). One row with a null seq: there, with no entries after `afterSeq`.
export const ENTRIES = `
  SELECT e.seq, e.conversation_id, e.time, e.type, e.payload
  FROM conversations c LEFT JOIN entries e ON e.conversation_id = c.id AND e.seq > $3 AND ${ofTypes(6)}
  WHERE c.id = $1 AND c.principal = $2 AND ${liveSql('$5', 'c')}
  ORDER BY e.seq LIMIT $4`;

// ENTRIES bounded by bytes too ($6, EntriesOptions.maxBytes), in one statement (one snapshot): of the next
// $4 + 1 entries, the page admits the first always, then while the running total of their recorded sizes
// stays within $6 and the count within $4; only the admitted rows' payloads are read (the cut reads
// `payload_size` alone, and a large payload lives out of line in TOAST, untouched). Each row carries the
// page's counts: `rows` more than `admitted`, more entries follow; and its own recorded size
// (EntriesPage.payloadSizes). No row: not there (or not the
// principal's); one row with a null seq: there, with no entries after $3. Of the types $7 names alone
// (null: all), in the cut and in the rows.
export const ENTRIES_PAGE = `
  WITH owned AS (
    SELECT c.id FROM conversations c WHERE c.id = $1 AND c.principal = $2 AND ${liveSql('$5', 'c')}
  ), page AS (
    SELECT e.seq, e.payload_size FROM entries e WHERE e.conversation_id IN (SELECT id FROM owned) AND e.seq > $3 AND ${ofTypes(7)} ORDER BY e.seq LIMIT $4 + 1
  ), sized AS (
    SELECT seq, ROW_NUMBER() OVER w AS n, SUM(payload_size) OVER w AS running FROM page WINDOW w AS (ORDER BY seq ROWS UNBOUNDED PRECEDING)
  ), cut AS (
    SELECT max(seq) FILTER (WHERE n = 1 OR (n <= $4 AND running <= $6)) AS last,
           count(*) FILTER (WHERE n = 1 OR (n <= $4 AND running <= $6)) AS admitted, count(*) AS rows FROM sized
  )
  SELECT e.seq, e.conversation_id, e.time, e.type, e.payload, e.payload_size, cut.rows, cut.admitted
  FROM owned CROSS JOIN cut LEFT JOIN entries e ON e.conversation_id = owned.id AND e.seq > $3 AND e.seq <= cut.last AND ${ofTypes(7)}
  ORDER BY e.seq`;

// An unfenced status change supersedes whoever held the lease, so the epoch moves on; a fenced one ($5)
// happens only while its epoch is current. The run's result ($6, null: none) goes in the same write. Its
// NOTIFY (TASK_STATUS_CHANNEL, `<origin> <conversation>`, at commit) tells the other nodes' status
// listeners (task-status-watch.ts); this store's own node ignores it, having heard it first-hand.
export const SET_STATUS = `
  WITH hit AS (
    UPDATE conversations SET status = $1, task_result = $6, owner = $2, updated_at = greatest(updated_at, $3), epoch = CASE WHEN $5::bigint IS NULL THEN epoch + 1 ELSE epoch END
    WHERE id = $4 AND ($5::bigint IS NULL OR epoch = $5) RETURNING id
  )
  SELECT pg_notify('${TASK_STATUS_CHANNEL}', $7 || ' ' || id) FROM hit`;

// Lease statements take the lease clock's reading ($n, null: the database's) and the term ($m), so the
// expiry is computed where it is compared: on one clock for every node.
export const INSERT_CONVERSATION = `
  INSERT INTO conversations (${CONVERSATION_COLUMNS}, owner, lease_expires) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $12, $9, ${leaseNow(10)} + $11)`;

// Expired tasks (retention.ts), soonest expired first through the expiry index, at most $2, picked once (a
// MATERIALIZED CTE: as an `IN (subquery … LIMIT)` the planner may run the pick again per row and delete past
// the limit). SKIP LOCKED: a row another node is deleting (or a writer holds) is left to it, so two nodes
// sweeping at once neither wait for each other nor delete a task twice. The condition is checked again on
// the row as locked (READ COMMITTED re-reads a row it waited for), so a task continued meanwhile stays.
// Entries go by ON DELETE CASCADE.
export const SWEEP_EXPIRED = `
  WITH picked AS MATERIALIZED (
    SELECT id FROM conversations WHERE ${expiredSql('$1')} ORDER BY updated_at + ttl_ms LIMIT $2 FOR UPDATE SKIP LOCKED
  )
  DELETE FROM conversations c USING picked WHERE c.id = picked.id AND ${expiredSql('$1', 'c')}`;
