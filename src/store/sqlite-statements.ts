// Every statement of the SQLite store (sqlite-store.ts), prepared once when it opens, with the row shapes
// they read and the parameters they take.

import type { SqliteDatabase } from './sqlite-driver.ts';
import type { ConversationStatus, EntryType } from './store.ts';
import { expiredSql, liveSql } from './retention.ts';

export interface ConversationRow {
  id: string;
  principal: string;
  session_id: string;
  harness: string;
  status: string;
  title: string | null;
  created_at: number;
  updated_at: number;
  /** The task's retention (retention.ts); null: kept until deleted. */
  ttl_ms: number | null;
}

/** A conversation row with what `taskRecord` reads besides: its seq counter and its last run's result (JSON text). */
export interface TaskRecordRow extends ConversationRow {
  last_seq: number;
  task_result: string | null;
}

export interface EntryRow {
  seq: number;
  conversation_id: string;
  time: number;
  type: string;
  payload: string;
}

/** A row of a transcript page: an entry with the size its payload was recorded with (migration 9). */
export interface PageRow extends EntryRow {
  payload_size: number;
}

const CONVERSATION_COLUMNS = 'id, principal, session_id, harness, status, title, created_at, updated_at, ttl_ms';
export const ENTRY_COLUMNS = 'seq, conversation_id, time, type, payload';
/** The columns of a transcript page's rows (sqlite-entry-pages.ts): an entry's and its recorded payload size. */
export const PAGE_COLUMNS = `${ENTRY_COLUMNS}, payload_size`;
const NEWEST_FIRST = 'ORDER BY updated_at DESC, id DESC LIMIT @limit';
/** The directory a task's setup records (`workspace`, a non-empty string), else null: none, or a setup that is not JSON. */
const RECORDED = "nullif(CASE WHEN json_valid(task_setup) AND json_type(task_setup, '$.workspace') = 'text' THEN json_extract(task_setup, '$.workspace') END, '')";

/**
 * Where a page bounded by bytes ends (EntriesOptions.maxBytes), from the sizes alone (the index entries_sizes
 * covers the query, so no payload is read): of the next @limit + 1 entries, how many the page admits — the
 * first always, then while the running total stays within @max and the count within @limit — and how many
 * there are (more than admitted: more entries follow the page).
 */
export const ENTRIES_CUT = entriesCutSql('');

/** ENTRIES_CUT over the entries that also match `filter` (a condition on the entry's columns, `AND …`). */
export function entriesCutSql(filter: string): string {
  return cutOfPageSql(`SELECT seq, payload_size FROM entries WHERE conversation_id = @id AND seq > @after${filter} ORDER BY seq LIMIT @limit + 1`);
}

/** ENTRIES_CUT over the rows `page` selects (`seq, payload_size` of the next @limit + 1 entries, in seq order). */
export function cutOfPageSql(page: string): string {
  return `
  WITH page AS (${page}),
  sized AS (SELECT ROW_NUMBER() OVER w AS n, SUM(payload_size) OVER w AS running FROM page WINDOW w AS (ORDER BY seq ROWS UNBOUNDED PRECEDING))
  SELECT coalesce(max(n) FILTER (WHERE n = 1 OR (n <= @limit AND running <= @max)), 0) AS admitted, count(*) AS rows FROM sized`;
}

export function prepareStatements(db: SqliteDatabase) {
  return {
    // Held by its creator for one lease term: a claim follows at once, and no other node may take over
    // a conversation between its creation and that claim.
    insertConversation: db.prepare<[ConversationRow & { owner: string; lease_expires: number }]>(
      `INSERT INTO conversations (${CONVERSATION_COLUMNS}, owner, lease_expires) VALUES (@id, @principal, @session_id, @harness, @status, @title, @created_at, @updated_at, @ttl_ms, @owner, @lease_expires)`,
    ),
    // An expired task (retention.ts) reads as a missing one, until the sweep deletes it.
    getConversation: db.prepare<[PrincipalRead], ConversationRow>(`SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE id = @id AND principal = @principal AND ${liveSql('@now')}`),
    taskRecord: db.prepare<[PrincipalRead], TaskRecordRow>(`SELECT ${CONVERSATION_COLUMNS}, last_seq, task_result FROM conversations WHERE id = @id AND principal = @principal AND ${liveSql('@now')}`),
    // Expired tasks, soonest expired first, through the expiry index, at most @limit; the condition is the
    // DELETE's own, in its one write: a task another store deleted first, or one continued meanwhile, is not there to delete.
    sweepExpired: db.prepare<[{ now: number; limit: number }]>(
      `DELETE FROM conversations WHERE id IN (SELECT id FROM conversations WHERE ${expiredSql('@now')} ORDER BY updated_at + ttl_ms LIMIT @limit)`,
    ),
    // Four list shapes rather than one with `@x IS NULL OR …`: each of these can walk its index.
    list: db.prepare<[ListParams], ConversationRow>(`SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE principal = @principal ${NEWEST_FIRST}`),
    listAfter: db.prepare<[ListParams], ConversationRow>(
      `SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE principal = @principal AND (updated_at, id) < (@updatedAt, @id) ${NEWEST_FIRST}`,
    ),
    listSession: db.prepare<[ListParams], ConversationRow>(
      `SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE principal = @principal AND session_id = @sessionId ${NEWEST_FIRST}`,
    ),
    listSessionAfter: db.prepare<[ListParams], ConversationRow>(
      `SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE principal = @principal AND session_id = @sessionId AND (updated_at, id) < (@updatedAt, @id) ${NEWEST_FIRST}`,
    ),
    // max(): a wall clock stepping back must not make a conversation look older than it was.
    // The process that last changes a conversation's status owns it (ownership.ts). Fenced with an
    // epoch; without one, the change supersedes whoever held the lease, so the epoch moves on.
    // The run's result goes in the same write (null: none), so a status is never read with another run's result.
    setStatus: db.prepare<[{ status: ConversationStatus; owner: string; now: number; id: string; epoch: number | null; result: string | null }]>(
      'UPDATE conversations SET status = @status, task_result = @result, owner = @owner, updated_at = max(updated_at, @now), epoch = CASE WHEN @epoch IS NULL THEN epoch + 1 ELSE epoch END WHERE id = @id AND (@epoch IS NULL OR epoch = @epoch)',
    ),
    // The conversation's own counter: seqs run 1, 2, 3… per conversation and are never reused; the
    // fence is compared in the same statement, inside the append's write transaction.
    nextSeq: db.prepare<[{ time: number; id: string; epoch: number | null }], { last_seq: number }>(
      'UPDATE conversations SET last_seq = last_seq + 1, updated_at = max(updated_at, @time) WHERE id = @id AND (@epoch IS NULL OR epoch = @epoch) RETURNING last_seq',
    ),
    epochOf: db.prepare<[string], { epoch: number }>('SELECT epoch FROM conversations WHERE id = ?'),
    claimTask: db.prepare<[{ owner: string; expires: number; setup: string; now: number; id: string }], LeaseRow>(
      "UPDATE conversations SET status = 'running', task_result = NULL, owner = @owner, epoch = epoch + 1, lease_expires = @expires, task_setup = @setup, updated_at = max(updated_at, @now) WHERE id = @id RETURNING epoch, lease_expires",
    ),
    renewLease: db.prepare<[{ expires: number; id: string; epoch: number }], LeaseRow>(
      "UPDATE conversations SET lease_expires = @expires WHERE id = @id AND epoch = @epoch AND status = 'running' RETURNING epoch, lease_expires",
    ),
    // With a scope (@scoped = 1; task-lease.ts TakeoverScope): only tasks the pass can act on, so tasks it
    // leaves to a process of their workspace never fill its page.
    expiredTasks: db.prepare<[ExpiredParams], ExpiredRow & { lapsed_ms: number }>(
      `SELECT id, principal, harness, epoch, task_setup, @now - lease_expires AS lapsed_ms FROM conversations WHERE status = 'running' AND lease_expires < @now AND owner <> @owner
       AND (@scoped = 0 OR lease_expires <= @now - @patience OR ${RECORDED} IS NULL OR ${RECORDED} = @workspace OR substr(${RECORDED}, 1, length(@below)) = @below)
       ORDER BY lease_expires, id LIMIT @limit`,
    ),
    // Only while still running at the epoch seen with its lease lapsed, and held by another owner (a
    // holder renews its own lease rather than fence itself): a second taker finds the row moved on.
    takeOverTask: db.prepare<[{ owner: string; expires: number; id: string; epoch: number; now: number }], LeaseRow>(
      "UPDATE conversations SET owner = @owner, epoch = epoch + 1, lease_expires = @expires WHERE id = @id AND status = 'running' AND epoch = @epoch AND lease_expires < @now AND owner <> @owner RETURNING epoch, lease_expires",
    ),
    // Only while the caller's and still running (or parked for input), in the cancel's write transaction: a run that finished
    // first keeps its status. The epoch moves on, so the holder's next write or renewal is fenced.
    cancelRunning: db.prepare<[{ owner: string; now: number; id: string; principal: string }], { last_seq: number }>(
      "UPDATE conversations SET status = 'cancelled', task_result = NULL, owner = @owner, epoch = epoch + 1, last_seq = last_seq + 1, updated_at = max(updated_at, @now) WHERE id = @id AND principal = @principal AND status IN ('running', 'input_required') RETURNING last_seq",
    ),
    // Only while the principal's, still parked for input and ending at the seq the answer was asked at:
    // of two answers at once the second finds the row running. The setup of the first claim stays.
    resumeParked: db.prepare<[{ owner: string; expires: number; now: number; id: string; principal: string; seq: number }], LeaseRow & { task_setup: string | null }>(
      "UPDATE conversations SET status = 'running', task_result = NULL, owner = @owner, epoch = epoch + 1, lease_expires = @expires, updated_at = max(updated_at, @now) WHERE id = @id AND principal = @principal AND status = 'input_required' AND last_seq = @seq RETURNING epoch, lease_expires, task_setup",
    ),
    // The same check, for an answer recorded while other questions of the park wait: the seq moves on (so a
    // second answer written at the same seq matches nothing) and updated_at with it, as an append moves it;
    // the status and epoch stay.
    parkedAnswerSeq: db.prepare<[{ id: string; principal: string; seq: number; now: number }], { last_seq: number }>(
      "UPDATE conversations SET last_seq = last_seq + 1, updated_at = max(updated_at, @now) WHERE id = @id AND principal = @principal AND status = 'input_required' AND last_seq = @seq RETURNING last_seq",
    ),
    ownedTasks: db.prepare<[string], { n: number }>("SELECT count(*) AS n FROM conversations WHERE status = 'running' AND owner = ?"),
    // A new session starts at epoch 1; a known one of the same principal moves to the next epoch.
    claimSession: db.prepare<[{ id: string; principal: string; owner: string; now: number }], { epoch: number }>(
      "INSERT INTO session_checkpoints (session_id, principal, owner, epoch, bytes, updated_at) VALUES (@id, @principal, @owner, 1, x'', @now) " +
        'ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner, epoch = epoch + 1, updated_at = max(updated_at, excluded.updated_at) WHERE principal = excluded.principal RETURNING epoch',
    ),
    saveCheckpoint: db.prepare<[{ bytes: Uint8Array; now: number; id: string; epoch: number }]>(
      'UPDATE session_checkpoints SET bytes = @bytes, updated_at = max(updated_at, @now) WHERE session_id = @id AND epoch = @epoch',
    ),
    // Only at the epoch seen and for the same principal: of several takers, the first moves the epoch on.
    takeOverSession: db.prepare<[{ owner: string; now: number; id: string; principal: string; epoch: number }], { epoch: number }>(
      'UPDATE session_checkpoints SET owner = @owner, epoch = epoch + 1, updated_at = max(updated_at, @now) WHERE session_id = @id AND principal = @principal AND epoch = @epoch RETURNING epoch',
    ),
    forgetSession: db.prepare<[string, number]>('DELETE FROM session_checkpoints WHERE session_id = ? AND epoch = ?'),
    renewNode: db.prepare<[{ owner: string; node: string; url: string; expires: number }]>(
      'INSERT INTO cluster_nodes (owner, node_id, advertise_url, lease_expires) VALUES (@owner, @node, @url, @expires) ' +
        'ON CONFLICT (owner) DO UPDATE SET node_id = excluded.node_id, advertise_url = excluded.advertise_url, lease_expires = excluded.lease_expires',
    ),
    forgetNode: db.prepare<[string]>('DELETE FROM cluster_nodes WHERE owner = ?'),
    nodeOf: db.prepare<[string], { owner: string; node_id: string; advertise_url: string; lease_expires: number }>('SELECT owner, node_id, advertise_url, lease_expires FROM cluster_nodes WHERE owner = ?'),
    sessionEpoch: db.prepare<[string], { epoch: number }>('SELECT epoch FROM session_checkpoints WHERE session_id = ?'),
    loadCheckpoint: db.prepare<[string, string], CheckpointRow>('SELECT session_id, owner, epoch, bytes, updated_at FROM session_checkpoints WHERE session_id = ? AND principal = ?'),
    // The payload's size is measured where it is stored, as migration 9 measured the rows before it.
    insertEntry: db.prepare<[NewEntryRow]>('INSERT INTO entries (conversation_id, seq, time, type, payload, payload_size) VALUES (@id, @seq, @time, @type, @payload, length(CAST(@payload AS BLOB)))'),
    running: db.prepare<[], ExpiredRow & { owner: string; lease_expires: number }>("SELECT id, owner, principal, harness, epoch, task_setup, lease_expires FROM conversations WHERE status = 'running'"),
    // Only if nobody took it over (or interrupted it) since it was found running under this owner: its
    // lease counts as lapsed from now, so a takeover pass (task-takeover.ts) takes it at once.
    releaseLease: db.prepare<[{ released: number; id: string; owner: string; epoch: number }]>(
      "UPDATE conversations SET lease_expires = min(lease_expires, @released) WHERE id = @id AND status = 'running' AND owner = @owner AND epoch = @epoch",
    ),
    // Only if nobody resumed it (or interrupted it) since it was found running under this owner.
    // The epoch moves on: should the owner judged gone still write, its writes are refused.
    interrupt: db.prepare<[number, string, string]>("UPDATE conversations SET status = 'interrupted', task_result = NULL, epoch = epoch + 1, updated_at = max(updated_at, ?) WHERE id = ? AND status = 'running' AND owner = ?"),
    idsByPrefix: db.prepare<[IdPrefixParams], { id: string }>(
      'SELECT id FROM conversations WHERE principal = @principal AND substr(id, 1, length(@prefix)) = @prefix ORDER BY updated_at DESC, id DESC LIMIT @limit',
    ),
    countByPrefix: db.prepare<[Omit<IdPrefixParams, 'limit'>], { n: number }>(
      'SELECT count(*) AS n FROM conversations WHERE principal = @principal AND substr(id, 1, length(@prefix)) = @prefix',
    ),
    entriesAfter: db.prepare<[string, number, number], PageRow>(`SELECT ${PAGE_COLUMNS} FROM entries WHERE conversation_id = ? AND seq > ? ORDER BY seq LIMIT ?`),
    entriesCut: db.prepare<[CutParams], CutRow>(ENTRIES_CUT),
    lastEntry: db.prepare<[string], EntryRow>(`SELECT ${ENTRY_COLUMNS} FROM entries WHERE conversation_id = ? ORDER BY seq DESC LIMIT 1`),
    // The change feed (sqlite-change-feed.ts): whether another connection committed, and the marks of
    // the conversations it watches, named as one JSON array, each found by its primary key.
    dataVersion: db.prepare<[], { data_version: number }>('PRAGMA data_version'),
    conversationMarks: db.prepare<[string], { id: string; status: string; last_seq: number; epoch: number }>(
      'SELECT id, status, last_seq, epoch FROM conversations WHERE id IN (SELECT value FROM json_each(?))',
    ),
  };
}

/** An entry as `insertEntry` writes it (its payload's size is measured by the statement). */
export interface NewEntryRow {
  id: string;
  seq: number;
  time: number;
  type: EntryType;
  payload: string;
}

/** `entriesCut`'s parameters: the page after `after`, at most `limit` entries and `max` bytes of payload. */
export interface CutParams {
  id: string;
  after: number;
  limit: number;
  max: number;
}

/** Entries `entriesCut` admits to the page, and how many of the next `limit + 1` there are. */
export interface CutRow {
  admitted: number;
  rows: number;
}

export interface LeaseRow {
  epoch: number;
  lease_expires: number;
}

/** `expiredTasks`' parameters: `scoped` 0 asks for every lapsed task, and the scope's fields are then ignored. */
export interface ExpiredParams {
  now: number;
  owner: string;
  limit: number;
  scoped: 0 | 1;
  workspace: string | null;
  /** The prefix of directories below the workspace (`belowPrefix`), null when those are not asked for. */
  below: string | null;
  patience: number;
}

export interface ExpiredRow {
  id: string;
  principal: string;
  harness: string;
  epoch: number;
  task_setup: string | null;
}

export interface CheckpointRow {
  session_id: string;
  owner: string;
  epoch: number;
  bytes: Buffer;
  updated_at: number;
}

export interface IdPrefixParams {
  principal: string;
  prefix: string;
  limit: number;
}

/** A read of one conversation for a principal, at the store's `now` (which decides whether a task has expired). */
export interface PrincipalRead {
  id: string;
  principal: string;
  now: number;
}

export interface ListParams {
  principal: string;
  sessionId?: string;
  updatedAt?: number;
  id?: string;
  limit: number;
}

export type Statements = ReturnType<typeof prepareStatements>;
