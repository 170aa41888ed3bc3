// How the PostgreSQL store's rows read back (bigint columns arrive as strings) and the database clock
// its lease statements share: used by every part of the store (postgres-store.ts, postgres-leases.ts,
// postgres-session-events.ts).

import { StoreError } from './errors.ts';
import { known } from './store-checks.ts';
import { CONVERSATION_STATUSES, type Conversation, type Entry, ENTRY_TYPES } from './store.ts';

// The database's clock in milliseconds. `now()` is the transaction's start, so one statement sets and
// compares lease times against a single instant (every lease statement here is its own transaction).
export const DATABASE_NOW_MS = '(extract(epoch from now()) * 1000)::bigint';

/** The lease clock of a statement: parameter `$n` when the store has an injected `leaseClock`, else (null) the database's. */
export const leaseNow = (n: number) => `coalesce($${n}::bigint, ${DATABASE_NOW_MS})`;

export interface ConversationRow {
  id: string;
  principal: string;
  session_id: string;
  harness: string;
  status: string;
  title: string | null;
  created_at: string;
  updated_at: string;
  /** The task's retention (retention.ts); null: kept until deleted. */
  ttl_ms: string | null;
}

/** A conversation row with what `taskRecord` reads besides: its seq counter and its last run's result (JSON text). */
export interface TaskRecordRow extends ConversationRow {
  last_seq: string;
  task_result: string | null;
}

/**
 * The size an entry's payload is recorded with (`payload_size`, migration 10), measured from parameter `$n`
 * (its JSON text) as UTF-8 whatever the server's encoding, exactly as the migration measured the rows before it.
 */
export const payloadSize = (n: number): string => `octet_length(convert_to($${n}, 'UTF8'))`;

export interface EntryRow {
  seq: string;
  conversation_id: string;
  time: string;
  type: string;
  payload: string;
}

/** An entry row with the size its payload was recorded with (`payload_size`, bigint, as a string). */
export interface SizedEntryRow extends EntryRow {
  payload_size: string;
}

/** A row of ENTRIES_PAGE: an entry with its size (or nulls), with the page's counts (bigint, as strings). */
export type EntryPageRow = (SizedEntryRow | { [K in keyof SizedEntryRow]: null }) & { rows: string; admitted: string };

/** The conversation's row of the ENTRIES join when it has no entry after `afterSeq`. */
export type NoEntryRow = { [K in keyof EntryRow]: null };

export function hasEntry<R extends { seq: string | null }>(row: R): row is Extract<R, { seq: string }> {
  return row.seq !== null;
}

/** A bigint column (the driver gives it as a string) as a number: any value the store writes is a safe integer. */
export function integer(value: string | undefined, what: string): number {
  const n = Number(value);
  if (value === undefined || !/^-?\d+$/.test(value) || !Number.isSafeInteger(n)) throw new StoreError('corrupt', `${what} is "${String(value)}", which no super-pi writes`);
  return n;
}

export function fromRow(row: ConversationRow): Conversation {
  return {
    id: row.id, principal: row.principal, sessionId: row.session_id, harness: row.harness,
    status: known(CONVERSATION_STATUSES, row.status, `conversation ${row.id} status`),
    createdAt: integer(row.created_at, `conversation ${row.id} created_at`),
    updatedAt: integer(row.updated_at, `conversation ${row.id} updated_at`),
    ...(row.ttl_ms === null || row.ttl_ms === undefined ? {} : { ttlMs: integer(row.ttl_ms, `conversation ${row.id} ttl_ms`) }),
    title: row.title,
  };
}

export function entryFromRow(row: EntryRow): Entry {
  return {
    seq: integer(row.seq, 'entry seq'), conversationId: row.conversation_id, time: integer(row.time, `entry ${row.seq} time`),
    type: known(ENTRY_TYPES, row.type, `entry ${row.seq} type`),
    payload: JSON.parse(row.payload),
  };
}
