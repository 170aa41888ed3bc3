// The ConversationStore on one SQLite file (node:sqlite or better-sqlite3: sqlite-driver.ts): WAL journal, synchronous=FULL, foreign keys,
// a busy timeout so several processes can share the file, and every statement prepared once.

import { randomUUID } from 'node:crypto';
import { SqliteConsumedStates } from './consumed-states.ts';
import { StoreError } from './errors.ts';
import { decodeListCursor, encodeListCursor, type ListPosition } from './list-cursor.ts';
import { migrate, type Migration, MIGRATIONS } from './migrations.ts';
import { type ConversationRow, type EntryRow, type ListParams, prepareStatements, type Statements } from './sqlite-statements.ts';
import { decodeTaskResult, encodeTaskResult } from './task-result.ts';
import { type Ownership, processOwnership } from './ownership.ts';
import {
  checkCheckpoint, checkEntryType, checkEpoch, checkMaxPayloadBytes, checkNewConversation, checkSessionKey, checkStatus, known, pageLimit, serializePayload,
} from './store-checks.ts';
import type { ClusterNode } from './cluster-nodes.ts';
import { decodeNodeOwner } from './node-ownership.ts';
import { openSqlite, type SqliteDatabase, type SqliteDriverName } from './sqlite-driver.ts';
import { SqliteEntryPages } from './sqlite-entry-pages.ts';
import type { ChangeSource, ConversationMark } from './sqlite-change-feed.ts';
import { belowPrefix, checkLeaseMs, type ExpiredTask, type ParkedResume, type RunningCancel, type SessionCheckpoint, type TakeoverScope, type TaskLease } from './task-lease.ts';
import { checkPatienceMs, orphanAction, orphanMessage, type OrphanVerdict } from './orphan-verdict.ts';
import { MAX_EXPIRED_TASKS, ORPHAN_TASK_PATIENCE_MS, TASK_LEASE_MS, TASK_SWEEP_BATCH } from '../limits.ts';
import { checkTtlMs } from './retention.ts';
import {
  CONVERSATION_STATUSES,
  type Conversation,
  type ConversationIds,
  type ConversationPage,
  type ConversationStatus,
  type ConversationStore,
  DEFAULT_LIST_LIMIT,
  DEFAULT_MAX_PAYLOAD_BYTES,
  type EntriesOptions,
  type EntriesPage,
  type Entry,
  ENTRY_TYPES,
  type EntryType,
  type ListOptions,
  MAX_LIST_LIMIT,
  type NewConversation,
  type TaskRecord,
  type TaskResult,
} from './store.ts';

/** How long a write waits for another connection's write lock (another process, or another store on
 * the same file) before failing with SQLITE_BUSY. Commits take milliseconds, so this is generous. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

export interface SqliteStoreOptions {
  /** Default `DEFAULT_BUSY_TIMEOUT_MS`. */
  readonly busyTimeoutMs?: number;
  /** Default `DEFAULT_MAX_PAYLOAD_BYTES`. */
  readonly maxPayloadBytes?: number;
  /** Wall-clock milliseconds for `createdAt`, `updatedAt` and entry times. Default `Date.now`. */
  readonly now?: () => number;
  /** Default `MIGRATIONS`; tests pass their own. */
  readonly migrations?: readonly Migration[];
  /** Who this store's process is, and whether another owner is alive. Default: `processOwnership()`. */
  readonly ownership?: Ownership;
  /** The term of a task lease this store grants (task-lease.ts). Default `TASK_LEASE_MS`. */
  readonly leaseMs?: number;
  /** Default: node:sqlite where this Node has it, else better-sqlite3 (sqlite-driver.ts). */
  readonly driver?: SqliteDriverName;
  /**
   * What this process says of a task whose owner process is dead (orphan-verdict.ts): one it continues (its
   * takeover, task-takeover.ts) has its lease released at open, for the first takeover pass to take it; one
   * another process may continue is left running until `orphanPatienceMs` past its lease; any other is
   * marked interrupted. Default: every such task is marked interrupted, as nobody here judges it.
   */
  readonly judgeOrphan?: (task: ExpiredTask) => OrphanVerdict;
  /** How long past its lease a task left for another process waits for one (default ORPHAN_TASK_PATIENCE_MS). */
  readonly orphanPatienceMs?: number;
}

export class SqliteConversationStore implements ConversationStore, ChangeSource {
  readonly #db: SqliteDatabase;
  readonly #statements: Statements;
  readonly #maxPayloadBytes: number;
  readonly #clock: () => number;
  readonly #ownership: Ownership;
  readonly #leaseMs: number;
  readonly #parkedAnswerTx: (id: string, principal: string, seq: number, json: string, time: number) => number | null;
  readonly #appendTx: (conversationId: string, type: EntryType, json: string, time: number, epoch: number | null) => number;
  readonly #interruptTx: (conversationId: string, owner: string, json: string, time: number) => boolean;
  readonly #cancelTx: (id: string, principal: string, json: string, time: number) => RunningCancel;
  /** Transcript pages (sqlite-entry-pages.ts). */
  readonly #pages: SqliteEntryPages;
  /** Spent 2026-07-28 confirmations (consumed-states.ts). */
  readonly #consumed: SqliteConsumedStates;
  #closed = false;

  /**
   * Opens (creating if needed) the database at `filename` — a path, or `':memory:'` for a private
   * in-memory one — configures it and applies pending migrations. Throws `StoreError` (`open_failed`,
   * `schema_too_new`, `migration_failed`) with the database already closed again.
   */
  static open(filename: string, options: SqliteStoreOptions = {}): SqliteConversationStore {
    const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
    if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) throw new StoreError('invalid_argument', `busyTimeoutMs must be a whole number of milliseconds, not ${busyTimeoutMs}`);
    const maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    checkMaxPayloadBytes(maxPayloadBytes);
    checkLeaseMs(options.leaseMs ?? TASK_LEASE_MS);
    const patienceMs = checkPatienceMs(options.orphanPatienceMs ?? ORPHAN_TASK_PATIENCE_MS);
    let db: SqliteDatabase;
    try {
      // The driver is loaded when the first store opens: a server that runs no task never pays for it.
      db = openSqlite(filename, { busyTimeoutMs, ...(options.driver === undefined ? {} : { driver: options.driver }) });
    } catch (cause) {
      throw new StoreError('open_failed', `${filename}: cannot open the database: ${String(cause)}`, { cause });
    }
    try {
      configure(db, filename);
      migrate(db, filename, options.migrations ?? MIGRATIONS);
      const store = new SqliteConversationStore(db, options);
      store.#settleOrphans(options.judgeOrphan ?? (() => 'interrupt'), patienceMs);
      return store;
    } catch (error) {
      db.close();
      throw error;
    }
  }

  private constructor(db: SqliteDatabase, options: SqliteStoreOptions) {
    this.#db = db;
    this.#statements = prepareStatements(db);
    this.#consumed = new SqliteConsumedStates(db);
    this.#maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    this.#clock = options.now ?? Date.now;
    this.#ownership = options.ownership ?? processOwnership();
    this.#leaseMs = checkLeaseMs(options.leaseMs ?? TASK_LEASE_MS);
    const s = this.#statements;
    // IMMEDIATE: take the write lock before reading anything, so a concurrent writer makes this wait
    // (busy timeout) instead of failing on a stale snapshot.
    const appendTx = db.transaction((conversationId: string, type: EntryType, json: string, time: number, epoch: number | null): number => {
      const row = s.nextSeq.get({ time, id: conversationId, epoch });
      if (row === undefined) throw this.#missedWrite(conversationId, epoch);
      s.insertEntry.run({ id: conversationId, seq: row.last_seq, time, type, payload: json });
      return row.last_seq;
    });
    this.#appendTx = (...args) => appendTx.immediate(...args);
    const interruptTx = db.transaction((conversationId: string, owner: string, json: string, time: number): boolean => {
      if (s.interrupt.run(time, conversationId, owner).changes === 0) return false;
      appendTx(conversationId, 'interrupted', json, time, null);
      return true;
    });
    this.#interruptTx = (...args) => interruptTx.immediate(...args);
    // The status, the epoch and the entry in one write transaction: all of them, or (not running) none.
    const cancelTx = db.transaction((id: string, principal: string, json: string, time: number): RunningCancel => {
      const row = s.cancelRunning.get({ owner: this.#ownership.self, now: time, id, principal });
      if (row === undefined) return s.getConversation.get({ id, principal, now: time }) === undefined ? 'not-found' : 'not-running';
      s.insertEntry.run({ id, seq: row.last_seq, time, type: 'error', payload: json });
      return 'cancelled';
    });
    this.#cancelTx = (...args) => cancelTx.immediate(...args);
    // The seq checked and moved on and the entry inserted in one write transaction: both, or neither.
    const parkedAnswerTx = db.transaction((id: string, principal: string, seq: number, json: string, time: number): number | null => {
      const row = s.parkedAnswerSeq.get({ id, principal, seq, now: time });
      if (row === undefined) return null;
      s.insertEntry.run({ id, seq: row.last_seq, time, type: 'person_answer', payload: json });
      return row.last_seq;
    });
    this.#parkedAnswerTx = (...args) => parkedAnswerTx.immediate(...args);
    this.#pages = new SqliteEntryPages(db, s);
  }

  createConversation(input: NewConversation): Conversation {
    this.#assertOpen();
    checkNewConversation(input);
    const ttlMs = checkTtlMs(input.ttlMs);
    const now = this.#now();
    const conversation: Conversation = {
      id: randomUUID(),
      principal: input.principal,
      sessionId: input.sessionId,
      harness: input.harness,
      status: 'running',
      createdAt: now,
      updatedAt: now,
      title: input.title ?? null,
      ...(ttlMs === null ? {} : { ttlMs }),
    };
    this.#statements.insertConversation.run({ ...toRow(conversation), owner: this.#ownership.self, lease_expires: now + this.#leaseMs });
    return conversation;
  }

  getConversation(id: string, principal: string): Conversation | null {
    this.#assertOpen();
    const row = this.#statements.getConversation.get({ id, principal, now: this.#now() });
    return row === undefined ? null : fromRow(row);
  }

  listConversations(principal: string, opts: ListOptions = {}): ConversationPage {
    this.#assertOpen();
    const limit = pageLimit(opts.limit, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, 'limit');
    let after: ListPosition | null = null;
    if (opts.cursor !== undefined) {
      after = decodeListCursor(opts.cursor);
      if (after === null) throw new StoreError('invalid_cursor', 'Invalid cursor: pass a nextCursor from an earlier page, unchanged');
    }
    const s = this.#statements;
    // One row more than the page, to learn whether another page follows without a COUNT.
    const params: ListParams = { principal, limit: limit + 1, ...(opts.sessionId === undefined ? {} : { sessionId: opts.sessionId }), ...(after ?? {}) };
    const statement = opts.sessionId === undefined ? (after ? s.listAfter : s.list) : after ? s.listSessionAfter : s.listSession;
    const rows = statement.all(params);
    const items = rows.slice(0, limit).map(fromRow);
    const last = items.at(-1);
    if (rows.length <= limit || last === undefined) return { items };
    return { items, nextCursor: encodeListCursor({ updatedAt: last.updatedAt, id: last.id }) };
  }

  setStatus(id: string, status: ConversationStatus, epoch?: number, result?: TaskResult): void {
    this.#assertOpen();
    checkStatus(status);
    const fence = epoch === undefined ? null : checkEpoch(epoch);
    const json = encodeTaskResult(result, this.#maxPayloadBytes);
    if (this.#statements.setStatus.run({ status, owner: this.#ownership.self, now: this.#now(), id, epoch: fence, result: json }).changes === 0) throw this.#missedWrite(id, fence);
  }

  taskRecord(id: string, principal: string): TaskRecord | null {
    this.#assertOpen();
    const row = this.#statements.taskRecord.get({ id, principal, now: this.#now() });
    return row === undefined ? null : { conversation: fromRow(row), lastSeq: row.last_seq, result: decodeTaskResult(row.task_result) };
  }

  claimTask(id: string, setup: unknown): TaskLease {
    this.#assertOpen();
    const json = serializePayload(setup, this.#maxPayloadBytes);
    const now = this.#now();
    const row = this.#statements.claimTask.get({ owner: this.#ownership.self, expires: now + this.#leaseMs, setup: json, now, id });
    if (row === undefined) throw new StoreError('not_found', `no conversation ${id}`);
    return { conversationId: id, epoch: row.epoch, expiresAt: row.lease_expires };
  }

  renewLease(id: string, epoch: number): TaskLease {
    this.#assertOpen();
    const row = this.#statements.renewLease.get({ expires: this.#now() + this.#leaseMs, id, epoch: checkEpoch(epoch) });
    if (row === undefined) throw this.#missedWrite(id, epoch, 'its lease');
    return { conversationId: id, epoch: row.epoch, expiresAt: row.lease_expires };
  }

  expiredTasks(limit: number, scope?: TakeoverScope): ExpiredTask[] {
    this.#assertOpen();
    const max = pageLimit(limit, limit, MAX_EXPIRED_TASKS, 'limit');
    const scoped = { scoped: scope ? 1 : 0, workspace: scope?.workspace ?? null, below: scope?.below && scope.workspace !== null ? belowPrefix(scope.workspace) : null, patience: scope?.patienceMs ?? 0 } as const;
    return this.#statements.expiredTasks.all({ now: this.#now(), owner: this.#ownership.self, limit: max, ...scoped }).map((r) => ({
      conversationId: r.id, principal: r.principal, harness: r.harness, epoch: r.epoch, setup: parseSetup(r.task_setup), lapsedMs: r.lapsed_ms,
    }));
  }

  takeOverTask(id: string, epoch: number): TaskLease | null {
    this.#assertOpen();
    const now = this.#now();
    const row = this.#statements.takeOverTask.get({ owner: this.#ownership.self, expires: now + this.#leaseMs, id, epoch: checkEpoch(epoch), now });
    return row === undefined ? null : { conversationId: id, epoch: row.epoch, expiresAt: row.lease_expires };
  }

  cancelRunningTask(id: string, principal: string, entry: unknown): RunningCancel {
    this.#assertOpen();
    const json = serializePayload(entry, this.#maxPayloadBytes);
    return this.#cancelTx(id, principal, json, this.#now());
  }

  resumeParkedTask(id: string, principal: string, seq: number): ParkedResume | null {
    this.#assertOpen();
    if (!Number.isSafeInteger(seq) || seq < 1) return null;
    const now = this.#now();
    const row = this.#statements.resumeParked.get({ owner: this.#ownership.self, expires: now + this.#leaseMs, now, id, principal, seq });
    if (row === undefined) return null;
    return { lease: { conversationId: id, epoch: row.epoch, expiresAt: row.lease_expires }, setup: parseSetup(row.task_setup) };
  }

  recordParkedAnswer(id: string, principal: string, seq: number, answer: unknown): Entry | null {
    this.#assertOpen();
    if (!Number.isSafeInteger(seq) || seq < 1) return null;
    const json = serializePayload(answer, this.#maxPayloadBytes);
    const time = this.#now();
    const written = this.#parkedAnswerTx(id, principal, seq, json, time);
    return written === null ? null : { seq: written, conversationId: id, time, type: 'person_answer', payload: JSON.parse(json) };
  }

  ownedTasks(): number {
    this.#assertOpen();
    return this.#statements.ownedTasks.get(this.#ownership.self)?.n ?? 0;
  }

  sweepExpiredTasks(limit: number): number {
    this.#assertOpen();
    const max = pageLimit(limit, limit, TASK_SWEEP_BATCH, 'limit');
    // One statement: SQLite runs it in one write transaction, so another process sweeping the same file
    // waits for it (busy timeout) and then finds these rows gone. Entries go by ON DELETE CASCADE.
    return Number(this.#statements.sweepExpired.run({ now: this.#now(), limit: max }).changes);
  }

  consumeRequestState(digest: string, expiresAt: number): boolean {
    this.#assertOpen();
    return this.#consumed.consume(digest, expiresAt, this.#now());
  }

  claimSession(sessionId: string, principal: string): { readonly epoch: number } | null {
    this.#assertOpen();
    checkSessionKey(sessionId, principal);
    const row = this.#statements.claimSession.get({ id: sessionId, principal, owner: this.#ownership.self, now: this.#now() });
    return row === undefined ? null : { epoch: row.epoch };
  }

  saveCheckpoint(sessionId: string, epoch: number, bytes: Uint8Array): void {
    this.#assertOpen();
    checkCheckpoint(bytes);
    if (this.#statements.saveCheckpoint.run({ bytes, now: this.#now(), id: sessionId, epoch: checkEpoch(epoch) }).changes > 0) return;
    if (this.#statements.sessionEpoch.get(sessionId) === undefined) throw new StoreError('not_found', `no session ${sessionId}`);
    throw new StoreError('fenced', `session ${sessionId} was claimed again since epoch ${epoch}; this holder must stop`);
  }

  loadCheckpoint(sessionId: string, principal: string): SessionCheckpoint | null {
    this.#assertOpen();
    const row = this.#statements.loadCheckpoint.get(sessionId, principal);
    return row === undefined ? null : { sessionId: row.session_id, owner: row.owner, epoch: row.epoch, bytes: new Uint8Array(row.bytes), updatedAt: row.updated_at };
  }

  takeOverSession(sessionId: string, principal: string, epoch: number): { readonly epoch: number } | null {
    this.#assertOpen();
    checkSessionKey(sessionId, principal);
    const row = this.#statements.takeOverSession.get({ owner: this.#ownership.self, now: this.#now(), id: sessionId, principal, epoch: checkEpoch(epoch) });
    return row === undefined ? null : { epoch: row.epoch };
  }

  forgetSession(sessionId: string, epoch: number): void {
    this.#assertOpen();
    this.#statements.forgetSession.run(sessionId, checkEpoch(epoch));
  }

  renewNode(advertiseUrl: string): void {
    this.#assertOpen();
    const self = this.#ownership.self;
    this.#statements.renewNode.run({ owner: self, node: decodeNodeOwner(self)?.node ?? self, url: advertiseUrl, expires: this.#now() + this.#leaseMs });
  }

  forgetNode(): void {
    this.#assertOpen();
    this.#statements.forgetNode.run(this.#ownership.self);
  }

  nodeOf(owner: string): ClusterNode | null {
    this.#assertOpen();
    const row = this.#statements.nodeOf.get(owner);
    if (row === undefined) return null;
    const remainingMs = Math.max(0, row.lease_expires - this.#now());
    return { owner: row.owner, node: row.node_id, advertiseUrl: row.advertise_url, fresh: remainingMs > 0, remainingMs };
  }

  /** Why a write that named a conversation (and maybe an epoch) changed no row: no such conversation, or a stale epoch. */
  #missedWrite(id: string, epoch: number | null, what = 'the conversation'): StoreError {
    const row = this.#statements.epochOf.get(id);
    if (row === undefined || epoch === null) return new StoreError('not_found', `no conversation ${id}`);
    return new StoreError('fenced', `${what} of ${id} is at epoch ${row.epoch}, not ${epoch}: another claim superseded this holder, which must stop`);
  }

  recentConversationIds(principal: string, prefix: string, limit: number): ConversationIds {
    this.#assertOpen();
    const max = pageLimit(limit, limit, MAX_LIST_LIMIT, 'limit');
    const params = { principal, prefix };
    const ids = this.#statements.idsByPrefix.all({ ...params, limit: max }).map((r) => r.id);
    const total = ids.length < max ? ids.length : (this.#statements.countByPrefix.get(params)?.n ?? ids.length);
    return { ids, total };
  }

  /**
   * Conversations left `running` by an owner that is gone (a server killed mid-task): one this process
   * continues has its lease released (its takeover takes it over at once, under the next epoch); one left
   * for another process stays running until the patience past its lease; any other is marked
   * `interrupted`, with an entry saying so, so it can be seen as such and continued.
   */
  #settleOrphans(judge: (task: ExpiredTask) => OrphanVerdict, patienceMs: number): void {
    for (const row of this.#statements.running.all()) {
      const { id, owner } = row;
      if (this.#ownership.isAlive(owner)) continue;
      const lapsedMs = this.#now() - row.lease_expires;
      const verdict = judge({ conversationId: id, principal: row.principal, harness: row.harness, epoch: row.epoch, setup: setupAtOpen(row.task_setup), lapsedMs });
      const action = orphanAction(verdict, lapsedMs, patienceMs);
      if (action === 'release') this.#statements.releaseLease.run({ released: this.#now() - 1, id, owner, epoch: row.epoch });
      if (action !== 'interrupt') continue;
      const message = orphanMessage(id, verdict === 'leave' ? patienceMs : null);
      this.#interruptTx(id, owner, JSON.stringify({ message }), this.#now());
    }
  }

  append(conversationId: string, type: EntryType, payload: unknown, epoch?: number): Entry {
    this.#assertOpen();
    checkEntryType(type);
    const fence = epoch === undefined ? null : checkEpoch(epoch);
    const json = serializePayload(payload, this.#maxPayloadBytes);
    const time = this.#now();
    const seq = this.#appendTx(conversationId, type, json, time, fence);
    // Hand back what a later read will return, not the caller's object (which it may go on mutating).
    return { seq, conversationId, time, type, payload: JSON.parse(json) };
  }

  entries(conversationId: string, principal: string, opts: EntriesOptions = {}): Entry[] | null {
    this.#assertOpen();
    const page = this.#pages.page(conversationId, principal, opts, this.#now(), false);
    return page === null ? null : page.rows.map(entryFromRow);
  }

  entriesPage(conversationId: string, principal: string, opts: EntriesOptions = {}): EntriesPage | null {
    this.#assertOpen();
    const page = this.#pages.page(conversationId, principal, opts, this.#now(), true);
    return page === null ? null : { entries: page.rows.map(entryFromRow), payloadSizes: page.rows.map((r) => r.payload_size), more: page.more };
  }

  lastEntry(conversationId: string): Entry | null {
    this.#assertOpen();
    const row = this.#statements.lastEntry.get(conversationId);
    return row === undefined ? null : entryFromRow(row);
  }

  dataVersion(): number {
    this.#assertOpen();
    return Number(this.#statements.dataVersion.get()?.data_version ?? 0);
  }

  conversationMarks(ids: readonly string[]): ConversationMark[] {
    this.#assertOpen();
    if (ids.length === 0) return [];
    return this.#statements.conversationMarks.all(JSON.stringify(ids)).map((r) => ({ id: r.id, status: r.status, lastSeq: r.last_seq, epoch: r.epoch }));
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#db.close();
  }

  #assertOpen(): void {
    if (this.#closed) throw new StoreError('closed', 'the conversation store is closed');
  }

  #now(): number {
    // The columns are STRICT INTEGER: an injected clock with fractions must not make a write fail.
    return Math.trunc(this.#clock());
  }
}

/**
 * WAL: readers never block the writer and a commit is one append to the log. synchronous=FULL: with WAL,
 * NORMAL survives a crash of the process but may lose the last commits on power loss or an OS crash,
 * because it syncs only at checkpoints; FULL syncs the log on every commit, so a reply sent after
 * `append` returns never refers to an entry that a power cut could take back. The cost is one fsync
 * per write, small next to a model call.
 */
function configure(db: SqliteDatabase, filename: string): void {
  if (!db.memory) {
    const mode = db.pragma('journal_mode = WAL');
    if (mode !== 'wal') throw new StoreError('open_failed', `${filename}: cannot use the WAL journal (SQLite kept "${String(mode)}"); is it on a network filesystem?`);
  }
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
}

function toRow(c: Conversation): ConversationRow {
  return {
    id: c.id, principal: c.principal, session_id: c.sessionId, harness: c.harness,
    status: c.status, title: c.title, created_at: c.createdAt, updated_at: c.updatedAt, ttl_ms: c.ttlMs ?? null,
  };
}

function fromRow(row: ConversationRow): Conversation {
  return {
    id: row.id, principal: row.principal, sessionId: row.session_id, harness: row.harness,
    status: known(CONVERSATION_STATUSES, row.status, `conversation ${row.id} status`),
    createdAt: row.created_at, updatedAt: row.updated_at, title: row.title,
    ...(row.ttl_ms === null ? {} : { ttlMs: row.ttl_ms }),
  };
}

function entryFromRow(row: EntryRow): Entry {
  return {
    seq: row.seq, conversationId: row.conversation_id, time: row.time,
    type: known(ENTRY_TYPES, row.type, `entry ${row.seq} type`),
    payload: JSON.parse(row.payload),
  };
}

/** A kept setup as its claimer wrote it, or null when none was kept. */
function parseSetup(json: string | null): unknown {
  return json === null ? null : JSON.parse(json);
}

/** The same at open, where a setup damaged by hand must not keep the store from opening: none (so the task is interrupted). */
function setupAtOpen(json: string | null): unknown {
  try {
    return parseSetup(json);
  } catch {
    return null;
  }
}
