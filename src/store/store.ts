// The durable store's one contract: conversations of harness tasks and their transcript entries. SQLite
// implements it today (sqlite-store.ts); a PostgreSQL implementation for several nodes slots in behind it.

import type { ClusterNode } from './cluster-nodes.ts';
import type { ExpiredTask, ParkedResume, RunningCancel, SessionCheckpoint, TakeoverScope, TaskLease } from './task-lease.ts';

/**
 * Where a conversation stands. `interrupted`: its task died mid-run (its actor kept failing, or the
 * process running it died and the process that found it, opening the store, could not continue it) and
 * nobody has continued it yet.
 * `input_required`: a Tasks-extension task parked at a question to its person (task-input.ts): it holds
 * no lease and waits for `tasks/update`, which `resumeParkedTask` lets exactly one node take.
 */
export type ConversationStatus = 'running' | 'completed' | 'failed' | 'cancelled' | 'interrupted' | 'input_required';

export const CONVERSATION_STATUSES: readonly ConversationStatus[] = ['running', 'completed', 'failed', 'cancelled', 'interrupted', 'input_required'];

export interface Conversation {
  id: string;
  /** Who owns it; every principal-taking read treats another principal's conversation as missing. */
  principal: string;
  /** The MCP session that started it. */
  sessionId: string;
  harness: string;
  status: ConversationStatus;
  /** Milliseconds since the epoch (wall clock: these are shown to people and compared across processes). */
  createdAt: number;
  /** Bumped by `setStatus` and by every `append`, so lists show the most recently active first. */
  updatedAt: number;
  title: string | null;
  /**
   * The retention of a Tasks-extension task created while the operator set one (`--task-ttl`): once the
   * task is over and this long has passed since `updatedAt`, it has expired (retention.ts). Absent for
   * every other conversation, which is kept until deleted.
   */
  ttlMs?: number;
}

export type EntryType =
  | 'user'
  | 'model'
  | 'tool_call'
  | 'tool_result'
  | 'tool_interrupted'
  | 'final'
  | 'error'
  | 'file_snapshot'
  | 'undo'
  /** Written by the store at open: the process that ran the conversation died mid-task (`{ message }`). */
  | 'interrupted'
  /**
   * The person's answer to one of the questions a parked task waits at (`recordParkedAnswer`), while others
   * stay unanswered (`{ key, id, allowed, refusal }`: the input request's key, the call it is about).
   */
  | 'person_answer';

export const ENTRY_TYPES: readonly EntryType[] = ['user', 'model', 'tool_call', 'tool_result', 'tool_interrupted', 'final', 'error', 'file_snapshot', 'undo', 'interrupted', 'person_answer'];

export interface Entry {
  /**
   * 1, 2, 3… within its conversation, in commit order (across processes), never reused. Numbered per
   * conversation so that a transcript says nothing about how busy other conversations are.
   */
  seq: number;
  conversationId: string;
  /** Milliseconds since the epoch. */
  time: number;
  type: EntryType;
  /** A JSON value: what `JSON.parse(JSON.stringify(payload))` gives back for what was appended. */
  payload: unknown;
}

/** The harness_task result of a finished run, as the run answered it (task-core.ts `finish`); kept with its status (task-result.ts). */
export interface TaskResult {
  readonly text: string;
  readonly isError: boolean;
  readonly turns: number;
  readonly toolCalls: number;
  /**
   * A park's counts only: when it parked (ms since the epoch, the parking node's wall clock), where the wait
   * for an answer runs from — `updatedAt` moves on with each answer recorded meanwhile. Absent in a park
   * written before (its wait then runs from `updatedAt`).
   */
  readonly parkedAt?: number;
}

/**
 * A conversation as `tasks/get` reads it, in one row: the conversation, its last entry's seq, and the
 * result its last run finished with — null while it runs, and for a run that ended without one recorded
 * (finished before the store kept results, cancelled from another node, interrupted when its process died).
 * Parked `input_required`, the run's counts so far instead (its text empty), written by the park with the
 * status, which a poll numbers the pending turn by when its bounded read cuts the run (task-input.ts).
 */
export interface TaskRecord {
  readonly conversation: Conversation;
  readonly lastSeq: number;
  readonly result: TaskResult | null;
}

export interface NewConversation {
  principal: string;
  sessionId: string;
  harness: string;
  title?: string | null;
  /** The task's retention (`Conversation.ttlMs`); absent or null: kept until deleted. */
  ttlMs?: number | null;
}

export interface ListOptions {
  /** Only the conversations started by this MCP session. */
  sessionId?: string;
  /** Items per page: default `DEFAULT_LIST_LIMIT`, at most `MAX_LIST_LIMIT` (larger values are lowered to it). */
  limit?: number;
  /** The `nextCursor` of the previous page, unchanged. */
  cursor?: string;
}

export interface ConversationPage {
  /** Most recently updated first (ties: by id, descending). */
  items: Conversation[];
  /** Present when more items follow; pass it back as `cursor`. */
  nextCursor?: string;
}

export interface ConversationIds {
  /** Most recently updated first. */
  ids: string[];
  /** How many of the principal's conversations match in all (may exceed `ids.length`). */
  total: number;
}

export interface EntriesOptions {
  /** Only entries with a larger seq: default 0 (from the start). */
  afterSeq?: number;
  /** At most this many entries: default `DEFAULT_ENTRIES_LIMIT`, at most `MAX_ENTRIES_LIMIT` (larger values are lowered to it). */
  limit?: number;
  /**
   * At most this many bytes of payload (each entry's payload as the UTF-8 JSON text the store keeps, its
   * recorded size), counted in seq order: the page ends at the last entry that keeps the total within it.
   * The first entry is always returned, even one larger than the bound alone (an entry is at most
   * `DEFAULT_MAX_PAYLOAD_BYTES`), so a page is never empty while entries follow. The cut is made from the
   * sizes alone: no payload past it is read. Absent: no byte bound.
   */
  maxBytes?: number;
  /**
   * Only entries of these types (one at least, each an `EntryType`): the store skips the others, reading
   * no payload of theirs, and the limit, the byte bound and `more` count the matching entries alone. Page on
   * with `afterSeq` as ever (the last seq of the page). Absent: every type.
   */
  types?: readonly EntryType[];
}

/** One page of entries, and whether more follow it (after its last seq, at the time of the read). */
export interface EntriesPage {
  entries: Entry[];
  /**
   * `payloadSizes[i]`: the size `entries[i]`'s payload is recorded with (`payload_size`, measured at its
   * write: its JSON text as UTF-8 bytes), the size `maxBytes` counts. A reader that totals what it loaded
   * takes it from here rather than serialising each payload again.
   */
  payloadSizes: number[];
  more: boolean;
}

/** Conversations per list page when the caller names no limit. */
export const DEFAULT_LIST_LIMIT = 50;
/** The largest list page, whatever the caller asks: bounds one read's memory. */
export const MAX_LIST_LIMIT = 500;
/** Entries per `entries` call when the caller names no limit; page on with `afterSeq`. */
export const DEFAULT_ENTRIES_LIMIT = 1000;
/** The most entries one `entries` call returns, whatever the caller asks. */
export const MAX_ENTRIES_LIMIT = 10_000;
/** The largest payload one entry may carry, as UTF-8 JSON (a file snapshot is the big case). */
export const DEFAULT_MAX_PAYLOAD_BYTES = 16 * 1024 * 1024;

/**
 * Synchronous by design: every write is committed — durable on disk, not just visible — when the call
 * returns, so a caller can send a reply that depends on an entry right after `append` returns. Failures
 * are thrown as `StoreError` (errors.ts) or, for the storage engine's own failures, its error.
 *
 * Principal isolation: the reads that take a principal answer another principal's conversation exactly
 * as they answer a missing one. So do `getConversation`, `taskRecord`, `entries` and `cancelRunningTask`
 * for an expired task (retention.ts), until the sweep deletes it. The methods without a principal (`setStatus`, `append`, `lastEntry`) are
 * for the task actor that runs a conversation, which got its id from an isolated call.
 */
export interface ConversationStore {
  /** A new conversation, status `running`, with a fresh random id. */
  createConversation(input: NewConversation): Conversation;
  /** The conversation, or null when it does not exist or belongs to another principal. */
  getConversation(id: string, principal: string): Conversation | null;
  /** The principal's conversations, most recently updated first; throws `invalid_cursor` on a forged cursor. */
  listConversations(principal: string, opts?: ListOptions): ConversationPage;
  /** The principal's conversation ids that start with `prefix`, newest first, at most `limit` (≤ `MAX_LIST_LIMIT`). */
  recentConversationIds(principal: string, prefix: string, limit: number): ConversationIds;
  /**
   * Throws `not_found` when there is no such conversation. This process becomes its owner (ownership.ts).
   * With `epoch`, only while that lease epoch is current (else `fenced`); without, the change overrides
   * any holder: the epoch is bumped, so the holder's later writes are refused. `result`: what the run
   * finished with, kept in the same write (`taskRecord` reads it); without, none is kept.
   */
  setStatus(id: string, status: ConversationStatus, epoch?: number, result?: TaskResult): void;
  /**
   * Appends an entry and bumps the conversation's `updatedAt`; committed before it returns. Throws
   * `not_found`; with `epoch`, `fenced` when that lease epoch is no longer current (checked in the
   * append's own transaction).
   */
  append(conversationId: string, type: EntryType, payload: unknown, epoch?: number): Entry;
  /** Entries in seq order, or null when the conversation does not exist or belongs to another principal. */
  entries(conversationId: string, principal: string, opts?: EntriesOptions): Entry[] | null;
  /** `entries`, saying whether more entries follow the page (in the same read): what a paged transcript read needs. */
  entriesPage(conversationId: string, principal: string, opts?: EntriesOptions): EntriesPage | null;
  /** The entry with the largest seq, or null when there is none (or no such conversation). */
  lastEntry(conversationId: string): Entry | null;
  /** The conversation with its last seq and its last run's result (task-result.ts), in one read; null as `getConversation`. */
  taskRecord(id: string, principal: string): TaskRecord | null;
  /**
   * Runs the conversation under this store's owner from now on: status `running`, the epoch bumped (any
   * earlier holder is fenced), a lease until now + the store's lease term. `setup` (a JSON value) is kept
   * for whoever takes the task over; the result of an earlier run is dropped. Throws `not_found`.
   */
  claimTask(id: string, setup: unknown): TaskLease;
  /** Extends the holder's lease by a term from now. Throws `fenced` when `epoch` is not current (or the task stopped running), `not_found`. */
  renewLease(id: string, epoch: number): TaskLease;
  /**
   * Running conversations of other owners whose lease lapsed, longest lapsed first, at most `limit` (≤
   * `MAX_EXPIRED_TASKS`); with `scope`, only those a takeover pass of that scope can act on.
   */
  expiredTasks(limit: number, scope?: TakeoverScope): ExpiredTask[];
  /**
   * Takes another owner's lapsed task over: only while it is still running at `epoch` with its lease lapsed, so of
   * several stores trying at once exactly one gets the new lease; the others (and a stale epoch) get null.
   */
  takeOverTask(id: string, epoch: number): TaskLease | null;
  /**
   * Cancels the principal's task wherever it runs: only while it is still `running` or parked for input (checked in the same
   * write), appends an `error` entry with `entry` as its payload, sets the status `cancelled` and moves
   * the epoch on, so its holder's next write or lease renewal is fenced and it stops. A task that finished
   * first is left as it is (`not-running`); another principal's is `not-found`, as a missing one.
   */
  cancelRunningTask(id: string, principal: string, entry: unknown): RunningCancel;
  /**
   * Resumes the principal's task parked for input (`input_required`) — only while it is still parked and its
   * transcript still ends at `seq`, checked in the same write — under this store's owner: status `running`,
   * the epoch bumped, a lease for a term, the counts its park kept as its result dropped; the setup kept at
   * its claim is left as it is and returned. Of several nodes answering the same question at once exactly
   * one gets it; the others, a stale `seq`, another principal's or a missing task get null.
   */
  resumeParkedTask(id: string, principal: string, seq: number): ParkedResume | null;
  /**
   * Records the person's answer to one of the questions the principal's parked task waits at, while others
   * stay unanswered: appends a `person_answer` entry with `answer` as its payload, only while the task is
   * still parked (`input_required`) and its transcript still ends at `seq`, checked in the same write. Its
   * `updatedAt` moves, as an append's does (the task's `lastUpdatedAt`; the wait runs from the park's own
   * time, `TaskResult.parkedAt`); the status and the epoch stay. Of several answers
   * written at once at the same `seq` exactly one lands; the others, a stale `seq`, another principal's or a
   * missing task get null.
   */
  recordParkedAnswer(id: string, principal: string, seq: number, answer: unknown): Entry | null;
  /** How many running conversations this store's owner holds. */
  ownedTasks(): number;
  /**
   * Deletes at most `limit` (≤ `TASK_SWEEP_BATCH`) expired tasks (retention.ts), their entries with them, in
   * one write that checks each is still expired: a task continued, or updated, meanwhile stays. Safe with
   * several stores sweeping one database at once (each task goes once). How many it deleted.
   */
  sweepExpiredTasks(limit: number): number;
  /**
   * Records that the person's confirmation sealed in a 2026-07-28 `requestState` was used (its digest, the
   * state's expiry): true when this call recorded it — its first use, so the confirmed call may run — false
   * when it was already recorded. Of any number of stores on one database consuming one digest at once,
   * exactly one gets true. In the same write, deletes at most CONSUMED_STATE_SWEEP_BATCH rows whose state
   * expired CONSUMED_STATE_GRACE_MS ago or more (consumed-states.ts). Throws `invalid_argument` for a
   * digest that is not 1 to MAX_STATE_DIGEST_LENGTH base64url characters or an expiry that is not whole ms.
   */
  consumeRequestState(digest: string, expiresAt: number): boolean;
  /**
   * Holds the session from now on: its row is made (empty checkpoint) or its epoch bumped (fencing the
   * earlier holder). Null when the session id is another principal's: it is not theirs to take.
   */
  claimSession(sessionId: string, principal: string): { readonly epoch: number } | null;
  /** Stores the session's checkpoint. Throws `fenced` when `epoch` is not current, `not_found`, `payload_too_large` past `MAX_CHECKPOINT_BYTES`. */
  saveCheckpoint(sessionId: string, epoch: number, bytes: Uint8Array): void;
  /** The session's checkpoint, or null when there is none or it is another principal's session. */
  loadCheckpoint(sessionId: string, principal: string): SessionCheckpoint | null;
  /**
   * Takes the session over from a home found gone: only while it is still the principal's at `epoch`, so
   * of several nodes trying at once exactly one gets the next epoch; the others (and a stale epoch) get null.
   */
  takeOverSession(sessionId: string, principal: string, epoch: number): { readonly epoch: number } | null;
  /** The session ended (DELETE, idle): its row goes, unless another claim moved it past `epoch`. */
  forgetSession(sessionId: string, epoch: number): void;
  /** Registers this store's owner as a node reachable at `advertiseUrl`, or renews its lease: a term from now. */
  renewNode(advertiseUrl: string): void;
  /** This store's owner leaves the registry (a clean stop): its lease is lapsed at once. */
  forgetNode(): void;
  /** The registered node with this owner key, or null when none is (it never registered, or left). */
  nodeOf(owner: string): ClusterNode | null;
  /** Releases the database; idempotent. Any other call afterwards throws `closed`. */
  close(): void;
}
