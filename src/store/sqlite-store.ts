// The ConversationStore on one SQLite file (better-sqlite3): WAL journal, synchronous=FULL, foreign keys,
// a busy timeout so several processes can share the file, and every statement prepared once.

import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type Database from 'better-sqlite3';
import { StoreError } from './errors.ts';
import { decodeListCursor, encodeListCursor, type ListPosition } from './list-cursor.ts';
import { migrate, type Migration, MIGRATIONS } from './migrations.ts';
import { type Ownership, processOwnership } from './ownership.ts';
import { checkAfterSeq, checkEntryType, checkMaxPayloadBytes, checkNewConversation, checkStatus, known, pageLimit, serializePayload } from './store-checks.ts';
import {
  CONVERSATION_STATUSES,
  type Conversation,
  type ConversationIds,
  type ConversationPage,
  type ConversationStatus,
  type ConversationStore,
  DEFAULT_ENTRIES_LIMIT,
  DEFAULT_LIST_LIMIT,
  DEFAULT_MAX_PAYLOAD_BYTES,
  type EntriesOptions,
  type Entry,
  ENTRY_TYPES,
  type EntryType,
  type ListOptions,
  MAX_ENTRIES_LIMIT,
  MAX_LIST_LIMIT,
  type NewConversation,
} from './store.ts';

/** The native driver, loaded when the first store opens: a server that runs no task never pays for it. */
let driver: typeof Database | null = null;
function loadDriver(): typeof Database {
  driver ??= createRequire(import.meta.url)('better-sqlite3') as typeof Database;
  return driver;
}

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
}

interface ConversationRow {
  id: string;
  principal: string;
  session_id: string;
  harness: string;
  status: string;
  title: string | null;
  created_at: number;
  updated_at: number;
}

interface EntryRow {
  seq: number;
  conversation_id: string;
  time: number;
  type: string;
  payload: string;
}

const CONVERSATION_COLUMNS = 'id, principal, session_id, harness, status, title, created_at, updated_at';
const ENTRY_COLUMNS = 'seq, conversation_id, time, type, payload';
const NEWEST_FIRST = 'ORDER BY updated_at DESC, id DESC LIMIT @limit';

function prepareStatements(db: Database.Database) {
  return {
    insertConversation: db.prepare<[ConversationRow & { owner: string }]>(
      `INSERT INTO conversations (${CONVERSATION_COLUMNS}, owner) VALUES (@id, @principal, @session_id, @harness, @status, @title, @created_at, @updated_at, @owner)`,
    ),
    getConversation: db.prepare<[string, string], ConversationRow>(`SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE id = ? AND principal = ?`),
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
    // The process that last changes a conversation's status owns it (ownership.ts).
    setStatus: db.prepare<[ConversationStatus, string, number, string]>('UPDATE conversations SET status = ?, owner = ?, updated_at = max(updated_at, ?) WHERE id = ?'),
    // The conversation's own counter: seqs run 1, 2, 3… per conversation and are never reused.
    nextSeq: db.prepare<[number, string], { last_seq: number }>('UPDATE conversations SET last_seq = last_seq + 1, updated_at = max(updated_at, ?) WHERE id = ? RETURNING last_seq'),
    insertEntry: db.prepare<[string, number, number, EntryType, string]>('INSERT INTO entries (conversation_id, seq, time, type, payload) VALUES (?, ?, ?, ?, ?)'),
    running: db.prepare<[], { id: string; owner: string }>("SELECT id, owner FROM conversations WHERE status = 'running'"),
    // Only if nobody resumed it (or interrupted it) since it was found running under this owner.
    interrupt: db.prepare<[number, string, string]>("UPDATE conversations SET status = 'interrupted', updated_at = max(updated_at, ?) WHERE id = ? AND status = 'running' AND owner = ?"),
    idsByPrefix: db.prepare<[IdPrefixParams], { id: string }>(
      'SELECT id FROM conversations WHERE principal = @principal AND substr(id, 1, length(@prefix)) = @prefix ORDER BY updated_at DESC, id DESC LIMIT @limit',
    ),
    countByPrefix: db.prepare<[Omit<IdPrefixParams, 'limit'>], { n: number }>(
      'SELECT count(*) AS n FROM conversations WHERE principal = @principal AND substr(id, 1, length(@prefix)) = @prefix',
    ),
    entriesAfter: db.prepare<[string, number, number], EntryRow>(`SELECT ${ENTRY_COLUMNS} FROM entries WHERE conversation_id = ? AND seq > ? ORDER BY seq LIMIT ?`),
    lastEntry: db.prepare<[string], EntryRow>(`SELECT ${ENTRY_COLUMNS} FROM entries WHERE conversation_id = ? ORDER BY seq DESC LIMIT 1`),
  };
}

interface IdPrefixParams {
  principal: string;
  prefix: string;
  limit: number;
}

interface ListParams {
  principal: string;
  sessionId?: string;
  updatedAt?: number;
  id?: string;
  limit: number;
}

type Statements = ReturnType<typeof prepareStatements>;

export class SqliteConversationStore implements ConversationStore {
  readonly #db: Database.Database;
  readonly #statements: Statements;
  readonly #maxPayloadBytes: number;
  readonly #clock: () => number;
  readonly #ownership: Ownership;
  readonly #appendTx: (conversationId: string, type: EntryType, json: string, time: number) => number;
  readonly #interruptTx: (conversationId: string, owner: string, json: string, time: number) => boolean;
  readonly #entriesTx: (conversationId: string, principal: string, afterSeq: number, limit: number) => EntryRow[] | null;
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
    let db: Database.Database;
    try {
      // `timeout` is SQLite's busy timeout: a locked database is retried for this long before SQLITE_BUSY.
      db = new (loadDriver())(filename, { timeout: busyTimeoutMs });
    } catch (cause) {
      throw new StoreError('open_failed', `${filename}: cannot open the database: ${String(cause)}`, { cause });
    }
    try {
      configure(db, filename);
      migrate(db, filename, options.migrations ?? MIGRATIONS);
      const store = new SqliteConversationStore(db, options);
      store.#interruptOrphans();
      return store;
    } catch (error) {
      db.close();
      throw error;
    }
  }

  private constructor(db: Database.Database, options: SqliteStoreOptions) {
    this.#db = db;
    this.#statements = prepareStatements(db);
    this.#maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    this.#clock = options.now ?? Date.now;
    this.#ownership = options.ownership ?? processOwnership();
    const s = this.#statements;
    // IMMEDIATE: take the write lock before reading anything, so a concurrent writer makes this wait
    // (busy timeout) instead of failing on a stale snapshot.
    const appendTx = db.transaction((conversationId: string, type: EntryType, json: string, time: number): number => {
      const row = s.nextSeq.get(time, conversationId);
      if (row === undefined) throw new StoreError('not_found', `no conversation ${conversationId}`);
      s.insertEntry.run(conversationId, row.last_seq, time, type, json);
      return row.last_seq;
    });
    this.#appendTx = (...args) => appendTx.immediate(...args);
    const interruptTx = db.transaction((conversationId: string, owner: string, json: string, time: number): boolean => {
      if (s.interrupt.run(time, conversationId, owner).changes === 0) return false;
      appendTx(conversationId, 'interrupted', json, time);
      return true;
    });
    this.#interruptTx = (...args) => interruptTx.immediate(...args);
    // One read transaction, so the ownership check and the rows come from the same snapshot.
    const entriesTx = db.transaction((conversationId: string, principal: string, afterSeq: number, limit: number): EntryRow[] | null => {
      if (s.getConversation.get(conversationId, principal) === undefined) return null;
      return s.entriesAfter.all(conversationId, afterSeq, limit);
    });
    this.#entriesTx = (...args) => entriesTx.deferred(...args);
  }

  createConversation(input: NewConversation): Conversation {
    this.#assertOpen();
    checkNewConversation(input);
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
    };
    this.#statements.insertConversation.run({ ...toRow(conversation), owner: this.#ownership.self });
    return conversation;
  }

  getConversation(id: string, principal: string): Conversation | null {
    this.#assertOpen();
    const row = this.#statements.getConversation.get(id, principal);
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

  setStatus(id: string, status: ConversationStatus): void {
    this.#assertOpen();
    checkStatus(status);
    if (this.#statements.setStatus.run(status, this.#ownership.self, this.#now(), id).changes === 0) throw new StoreError('not_found', `no conversation ${id}`);
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
   * Conversations left `running` by an owner that is gone (a server killed mid-task) are marked
   * `interrupted`, with an entry saying so, so they can be seen as such and continued.
   */
  #interruptOrphans(): void {
    for (const { id, owner } of this.#statements.running.all()) {
      if (this.#ownership.isAlive(owner)) continue;
      const message = `The server process running this task stopped before the task finished (it was killed or crashed), so the task was interrupted. Continue it with conversation_id ${id}.`;
      this.#interruptTx(id, owner, JSON.stringify({ message }), this.#now());
    }
  }

  append(conversationId: string, type: EntryType, payload: unknown): Entry {
    this.#assertOpen();
    checkEntryType(type);
    const json = serializePayload(payload, this.#maxPayloadBytes);
    const time = this.#now();
    const seq = this.#appendTx(conversationId, type, json, time);
    // Hand back what a later read will return, not the caller's object (which it may go on mutating).
    return { seq, conversationId, time, type, payload: JSON.parse(json) };
  }

  entries(conversationId: string, principal: string, opts: EntriesOptions = {}): Entry[] | null {
    this.#assertOpen();
    const afterSeq = checkAfterSeq(opts.afterSeq ?? 0);
    const limit = pageLimit(opts.limit, DEFAULT_ENTRIES_LIMIT, MAX_ENTRIES_LIMIT, 'limit');
    const rows = this.#entriesTx(conversationId, principal, afterSeq, limit);
    return rows === null ? null : rows.map(entryFromRow);
  }

  lastEntry(conversationId: string): Entry | null {
    this.#assertOpen();
    const row = this.#statements.lastEntry.get(conversationId);
    return row === undefined ? null : entryFromRow(row);
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
function configure(db: Database.Database, filename: string): void {
  if (!db.memory) {
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal') throw new StoreError('open_failed', `${filename}: cannot use the WAL journal (SQLite kept "${String(mode)}"); is it on a network filesystem?`);
  }
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
}

function toRow(c: Conversation): ConversationRow {
  return {
    id: c.id, principal: c.principal, session_id: c.sessionId, harness: c.harness,
    status: c.status, title: c.title, created_at: c.createdAt, updated_at: c.updatedAt,
  };
}

function fromRow(row: ConversationRow): Conversation {
  return {
    id: row.id, principal: row.principal, sessionId: row.session_id, harness: row.harness,
    status: known(CONVERSATION_STATUSES, row.status, `conversation ${row.id} status`),
    createdAt: row.created_at, updatedAt: row.updated_at, title: row.title,
  };
}

function entryFromRow(row: EntryRow): Entry {
  return {
    seq: row.seq, conversationId: row.conversation_id, time: row.time,
    type: known(ENTRY_TYPES, row.type, `entry ${row.seq} type`),
    payload: JSON.parse(row.payload),
  };
}
