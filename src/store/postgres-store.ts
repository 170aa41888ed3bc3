// The conversation store on PostgreSQL (the `pg` driver), for several super-pi nodes sharing one
// database. Same semantics as the SQLite store (store.ts, async-store.ts), through a connection pool:
// every write is one statement (its own transaction), committed before its promise resolves, and the
// per-conversation seq comes from the conversation row's counter, bumped in that same statement — the
// row lock makes concurrent appenders, from this pool or another node's, take turns, and the primary key
// (conversation_id, seq) would refuse a duplicate if anything ever got past it.

import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { ClientBase, Pool, PoolConfig } from 'pg';
import type { AsyncConversationStore } from './async-store.ts';
import { consumePostgres } from './consumed-states.ts';
import { StoreError } from './errors.ts';
import { decodeListCursor, encodeListCursor, type ListPosition } from './list-cursor.ts';
import type { ClusterNode } from './cluster-nodes.ts';
import { nodeOwnership } from './node-ownership.ts';
import type { Ownership } from './ownership.ts';
import { PostgresLeases } from './postgres-leases.ts';
import { migratePostgres, POSTGRES_MIGRATIONS, type PostgresMigration } from './postgres-migrations.ts';
import { type ConversationRow, entryFromRow, type EntryPageRow, type EntryRow, fromRow, hasEntry, integer, type NoEntryRow, type TaskRecordRow } from './postgres-rows.ts';
import { PostgresSessionEventLog } from './postgres-session-events.ts';
import { typedPostgresReads } from './postgres-typed-reads.ts';
import {
  checkAfterSeq,
  checkEntryType,
  checkEntryTypes,
  checkEpoch,
  checkMaxBytes,
  checkMaxPayloadBytes,
  checkNewConversation,
  checkStatus,
  pageLimit,
  serializePayload,
  storableText,
} from './store-checks.ts';
import { checkLeaseMs, type ExpiredTask, type ParkedResume, type RunningCancel, type SessionCheckpoint, type TakeoverScope, type TaskLease } from './task-lease.ts';
import { PostgresListener } from './postgres-listener.ts';
import { APPEND, CONVERSATION_COLUMNS, ENTRIES, ENTRIES_PAGE, ENTRY_COLUMNS, INSERT_CONVERSATION, INTERRUPT, NEWEST_FIRST, SET_STATUS, SWEEP_EXPIRED } from './postgres-statements.ts';
import { guarded } from '../log/guarded.ts';
import { type EventPosition, type OrphanLookup, SESSION_EVENTS_CHANNEL, type SessionEvent, type SessionEventStore, TASK_STATUS_CHANNEL, TRANSCRIPTS_CHANNEL } from './session-events.ts';
import { decodeTaskResult, encodeTaskResult } from './task-result.ts';
import { POSTGRES_QUERY_TIMEOUT_MS, TASK_LEASE_MS, TASK_SWEEP_BATCH } from '../limits.ts';
import { checkTtlMs, liveSql } from './retention.ts';
import {
  type Conversation,
  type ConversationIds,
  type ConversationPage,
  type ConversationStatus,
  DEFAULT_ENTRIES_LIMIT,
  DEFAULT_LIST_LIMIT,
  DEFAULT_MAX_PAYLOAD_BYTES,
  type EntriesOptions,
  type EntriesPage,
  type Entry,
  type EntryType,
  type ListOptions,
  MAX_ENTRIES_LIMIT,
  MAX_LIST_LIMIT,
  type NewConversation,
  type TaskRecord,
  type TaskResult,
} from './store.ts';

/** The most connections one store holds open: concurrent calls beyond it queue in the pool. */
export const DEFAULT_POOL_SIZE = 10;
/** How long opening a connection may take before the call that needed it fails. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

export interface PostgresStoreOptions {
  /** Default `DEFAULT_POOL_SIZE`. */
  readonly poolSize?: number;
  /** Default `DEFAULT_CONNECT_TIMEOUT_MS`. */
  readonly connectTimeoutMs?: number;
  /** A statement unanswered this long fails, and its connection is dropped. Default `POSTGRES_QUERY_TIMEOUT_MS`. */
  readonly queryTimeoutMs?: number;
  /** Default `DEFAULT_MAX_PAYLOAD_BYTES`. */
  readonly maxPayloadBytes?: number;
  /**
   * Wall-clock milliseconds for `createdAt`, `updatedAt`, entry and checkpoint times. Default `Date.now`.
   * Not lease times: those are the database's clock (`leaseClock`).
   */
  readonly now?: () => number;
  /**
   * Milliseconds that task leases are set by and compared with. Default: the database's clock, the one
   * clock every node sharing the database agrees on, so a node whose own clock is off neither takes a
   * live task over nor lets its own lease look longer than it is. Tests pass one to move leases
   * deterministically.
   */
  readonly leaseClock?: () => number;
  /** Default `POSTGRES_MIGRATIONS`; tests pass their own. */
  readonly migrations?: readonly PostgresMigration[];
  /** Who this store runs as, and which owners are gone. Default: `nodeOwnership(defaultNodeId())`. */
  readonly ownership?: Ownership;
  /** The term of a task lease this store grants (task-lease.ts). Default `TASK_LEASE_MS`. */
  readonly leaseMs?: number;
  /** Events kept per session in the session event log. Default `SESSION_EVENTS_KEPT`. */
  readonly sessionEventsKept?: number;
  /** Bytes kept per session in the session event log. Default `SESSION_EVENTS_MAX_BYTES`. */
  readonly sessionEventsMaxBytes?: number;
  /** The largest event kept as it is (a larger one is kept as a notice). Default `SESSION_EVENT_MAX_BYTES`. */
  readonly sessionEventMaxBytes?: number;
  /**
   * An idle pooled connection failed (the server restarted, a network cut): the pool drops it and the
   * next call opens another. Default: one line on stderr (stdout may be the MCP protocol stream).
   */
  readonly onIdleError?: (error: Error) => void;
}

/**
 * The node id when the operator names none: host name and pid, unique among live processes. With it, a
 * restarted node is a new node, so its earlier run's conversations are never marked interrupted from
 * here (node-ownership.ts): only a stable operator-given id lets a node recognise its own earlier run.
 */
export function defaultNodeId(): string {
  return `${os.hostname()}:${process.pid}`;
}

/** Pools whose store closed (or never finished opening). */
const ended = new WeakSet<Pool>();

export class PostgresConversationStore implements AsyncConversationStore, SessionEventStore, OrphanLookup {
  readonly #pool: Pool;
  readonly #maxPayloadBytes: number;
  readonly #clock: () => number;
  readonly #ownership: Ownership;
  readonly #leaseMs: number;
  /** The database, for the node's LISTEN connection (`listen`). */
  readonly #connection: string | PoolConfig;
  /** Tags this store's transcript NOTIFYs, so its own node can tell them from other nodes'. */
  readonly #origin = randomUUID();
  readonly #leaseClock: (() => number) | null;
  /** Task leases, session claims and checkpoints, the node registry (postgres-leases.ts). */
  readonly #leases: PostgresLeases;
  /** The session event log and the orphan lookup (postgres-session-events.ts). */
  readonly #events: PostgresSessionEventLog;
  #closing: Promise<void> | null = null;

  /**
   * Connects to `connection` (a `postgres://` URL or a `pg` pool configuration), applies pending
   * migrations under the migration lock, marks the conversations of owners known to be gone
   * `interrupted`, and resolves to the store. Rejects with `StoreError` (`open_failed`, `schema_too_new`,
   * `migration_failed`, `invalid_argument`) with the pool already closed again.
   */
  static async open(connection: string | PoolConfig, options: PostgresStoreOptions = {}): Promise<PostgresConversationStore> {
    const maxPayloadBytes = checkMaxPayloadBytes(options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES);
    const poolSize = pageLimit(options.poolSize, DEFAULT_POOL_SIZE, Number.MAX_SAFE_INTEGER, 'poolSize');
    const connectTimeoutMs = pageLimit(options.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS, Number.MAX_SAFE_INTEGER, 'connectTimeoutMs');
    const queryTimeoutMs = pageLimit(options.queryTimeoutMs, POSTGRES_QUERY_TIMEOUT_MS, Number.MAX_SAFE_INTEGER, 'queryTimeoutMs');
    checkLeaseMs(options.leaseMs ?? TASK_LEASE_MS);
    const label = describe(connection);
    const { default: pg } = await import('pg');
    const config: PoolConfig = typeof connection === 'string' ? { connectionString: connection } : { ...connection };
    // A statement the database leaves unanswered fails after `queryTimeoutMs`, and the pool drops its
    // connection (pg-pool removes a client released with an error), so no request waits on a silent database.
    const pool = new pg.Pool({ ...config, max: poolSize, connectionTimeoutMillis: connectTimeoutMs, query_timeout: queryTimeoutMs });
    const onIdleError = options.onIdleError ?? ((error: Error) => process.stderr.write(`super-pi: ${label}: an idle database connection failed: ${error.message}\n`));
    // `pool.end()` resolves once its connections are told to close, not once they have: a server
    // shutting down meanwhile fails them, which after close is expected and reported to nobody.
    const report = { log: (_level: 'error', message: string, data: Record<string, unknown>) => process.stderr.write(`super-pi: ${label}: ${message}: ${JSON.stringify(data.error)}\n`) };
    pool.on('error', guarded(report, 'idle connection error', (error: Error) => {
      if (!ended.has(pool)) onIdleError(error);
    }));
    try {
      // Migrations on a connection of their own, without the statement timeout: a node may wait for
      // another's migrations under their lock, and a migration may rightly take long.
      const client = new pg.Client({ ...config, connectionTimeoutMillis: connectTimeoutMs });
      client.on('error', guarded(report, 'migration connection error', (error: Error) => onIdleError(error)));
      await client.connect().catch(async (cause: unknown) => {
        await client.end().catch(() => undefined);
        throw new StoreError('open_failed', `${label}: cannot connect: ${String(cause)}`, { cause });
      });
      try {
        await requireDurableCommits(client, label);
        await migratePostgres(client, label, options.migrations ?? POSTGRES_MIGRATIONS);
      } finally {
        await client.end().catch(() => undefined);
      }
      const store = new PostgresConversationStore(pool, maxPayloadBytes, options, config);
      await store.#interruptOrphans();
      return store;
    } catch (error) {
      ended.add(pool);
      await pool.end();
      throw error;
    }
  }

  private constructor(pool: Pool, maxPayloadBytes: number, options: PostgresStoreOptions, connection: string | PoolConfig) {
    this.#pool = pool;
    this.#connection = connection;
    this.#maxPayloadBytes = maxPayloadBytes;
    this.#clock = options.now ?? Date.now;
    this.#ownership = options.ownership ?? nodeOwnership(defaultNodeId());
    this.#leaseMs = options.leaseMs ?? TASK_LEASE_MS;
    this.#leaseClock = options.leaseClock ?? null;
    const shared = { pool, assertOpen: () => this.#assertOpen(), now: () => this.#now() };
    this.#events = new PostgresSessionEventLog({ ...shared, sessionEventsKept: options.sessionEventsKept, sessionEventsMaxBytes: options.sessionEventsMaxBytes, sessionEventMaxBytes: options.sessionEventMaxBytes });
    this.#leases = new PostgresLeases({
      ...shared, ownership: this.#ownership, leaseMs: this.#leaseMs, maxPayloadBytes, origin: this.#origin, leaseNow: () => this.#leaseNow(),
      missedWrite: (id, epoch, what) => this.#missedWrite(id, epoch, what),
    });
  }

  async createConversation(input: NewConversation): Promise<Conversation> {
    this.#assertOpen();
    checkNewConversation(input);
    for (const [field, value] of [['principal', input.principal], ['sessionId', input.sessionId], ['harness', input.harness], ['title', input.title ?? '']] as const) {
      if (!storableText(value)) throw new StoreError('invalid_argument', `${field} must not hold a NUL character or a lone surrogate`);
    }
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
    // Held by its creator for one lease term: a claim follows at once, and no other node may take over
    // a conversation between its creation and that claim.
    await this.#pool.query(
      INSERT_CONVERSATION,
      [conversation.id, conversation.principal, conversation.sessionId, conversation.harness, conversation.status, conversation.title, now, now, this.#ownership.self, this.#leaseNow(), this.#leaseMs, ttlMs],
    );
    return conversation;
  }

  async getConversation(id: string, principal: string): Promise<Conversation | null> {
    this.#assertOpen();
    if (!storableText(id) || !storableText(principal)) return null;
    // An expired task (retention.ts) reads as a missing one, until the sweep deletes it.
    const { rows } = await this.#pool.query<ConversationRow>(`SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE id = $1 AND principal = $2 AND ${liveSql('$3')}`, [id, principal, this.#now()]);
    return rows[0] === undefined ? null : fromRow(rows[0]);
  }

  async listConversations(principal: string, opts: ListOptions = {}): Promise<ConversationPage> {
    this.#assertOpen();
    const limit = pageLimit(opts.limit, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, 'limit');
    let after: ListPosition | null = null;
    if (opts.cursor !== undefined) {
      after = decodeListCursor(opts.cursor);
      // No list hands out a cursor whose id could not be stored: such a cursor was made up.
      if (after === null || !storableText(after.id)) throw new StoreError('invalid_cursor', 'Invalid cursor: pass a nextCursor from an earlier page, unchanged');
    }
    if (!storableText(principal) || (opts.sessionId !== undefined && !storableText(opts.sessionId))) return { items: [] };
    const params: unknown[] = [principal];
    let where = 'principal = $1';
    if (opts.sessionId !== undefined) {
      params.push(opts.sessionId);
      where += ` AND session_id = $${params.length}`;
    }
    if (after !== null) {
      params.push(after.updatedAt, after.id);
      where += ` AND (updated_at, id) < ($${params.length - 1}, $${params.length})`;
    }
    // One row more than the page, to learn whether another page follows without a COUNT.
    params.push(limit + 1);
    const { rows } = await this.#pool.query<ConversationRow>(`SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE ${where} ${NEWEST_FIRST} LIMIT $${params.length}`, params);
    const items = rows.slice(0, limit).map(fromRow);
    const last = items.at(-1);
    if (rows.length <= limit || last === undefined) return { items };
    return { items, nextCursor: encodeListCursor({ updatedAt: last.updatedAt, id: last.id }) };
  }

  async recentConversationIds(principal: string, prefix: string, limit: number): Promise<ConversationIds> {
    this.#assertOpen();
    const max = pageLimit(limit, limit, MAX_LIST_LIMIT, 'limit');
    if (!storableText(principal) || !storableText(prefix)) return { ids: [], total: 0 };
    const match = 'principal = $1 AND starts_with(id, $2)';
    const { rows } = await this.#pool.query<{ id: string }>(`SELECT id FROM conversations WHERE ${match} ${NEWEST_FIRST} LIMIT $3`, [principal, prefix, max]);
    const ids = rows.map((r) => r.id);
    if (ids.length < max) return { ids, total: ids.length };
    const count = await this.#pool.query<{ n: string }>(`SELECT count(*) AS n FROM conversations WHERE ${match}`, [principal, prefix]);
    return { ids, total: integer(count.rows[0]?.n, 'conversation count') };
  }

  async setStatus(id: string, status: ConversationStatus, epoch?: number, result?: TaskResult): Promise<void> {
    this.#assertOpen();
    checkStatus(status);
    const fence = epoch === undefined ? null : checkEpoch(epoch);
    const json = encodeTaskResult(result, this.#maxPayloadBytes);
    if (json !== null && !storableText(json)) throw new StoreError('invalid_argument', 'a task result must not hold a NUL character or a lone surrogate');
    const written = storableText(id) ? await this.#pool.query(SET_STATUS, [status, this.#ownership.self, this.#now(), id, fence, json, this.#origin]) : null;
    if (written === null || written.rowCount === 0) throw await this.#missedWrite(id, fence);
  }

  async taskRecord(id: string, principal: string): Promise<TaskRecord | null> {
    this.#assertOpen();
    if (!storableText(id) || !storableText(principal)) return null;
    const { rows } = await this.#pool.query<TaskRecordRow>(`SELECT ${CONVERSATION_COLUMNS}, last_seq, task_result FROM conversations WHERE id = $1 AND principal = $2 AND ${liveSql('$3')}`, [id, principal, this.#now()]);
    const row = rows[0];
    if (row === undefined) return null;
    return { conversation: fromRow(row), lastSeq: integer(row.last_seq, `conversation ${row.id} last_seq`), result: decodeTaskResult(row.task_result) };
  }

  async append(conversationId: string, type: EntryType, payload: unknown, epoch?: number): Promise<Entry> {
    this.#assertOpen();
    checkEntryType(type);
    const fence = epoch === undefined ? null : checkEpoch(epoch);
    const json = serializePayload(payload, this.#maxPayloadBytes);
    const time = this.#now();
    const { rows } = storableText(conversationId) ? await this.#pool.query<{ seq: string }>(APPEND, [conversationId, time, type, json, fence, this.#origin]) : { rows: [] };
    const row = rows[0];
    if (row === undefined) throw await this.#missedWrite(conversationId, fence);
    // Hand back what a later read will return, not the caller's object (which it may go on mutating).
    return { seq: integer(row.seq, 'entry seq'), conversationId, time, type, payload: JSON.parse(json) };
  }

  async entries(conversationId: string, principal: string, opts: EntriesOptions = {}): Promise<Entry[] | null> {
    this.#assertOpen();
    const afterSeq = checkAfterSeq(opts.afterSeq ?? 0);
    const limit = pageLimit(opts.limit, DEFAULT_ENTRIES_LIMIT, MAX_ENTRIES_LIMIT, 'limit');
    const types = checkEntryTypes(opts.types);
    if (!storableText(conversationId) || !storableText(principal)) return null;
    if (opts.maxBytes !== undefined) return (await this.entriesPage(conversationId, principal, opts))?.entries ?? null;
    // Some types only: one index range per type, merged (postgres-typed-reads.ts).
    const params = [conversationId, principal, afterSeq, limit, this.#now()];
    const { rows } = await this.#pool.query<EntryRow | NoEntryRow>(types === null ? ENTRIES : typedPostgresReads(types).entries, types === null ? [...params, null] : params);
    if (rows.length === 0) return null;
    return rows.filter(hasEntry).map(entryFromRow);
  }

  async entriesPage(conversationId: string, principal: string, opts: EntriesOptions = {}): Promise<EntriesPage | null> {
    this.#assertOpen();
    const afterSeq = checkAfterSeq(opts.afterSeq ?? 0);
    const limit = pageLimit(opts.limit, DEFAULT_ENTRIES_LIMIT, MAX_ENTRIES_LIMIT, 'limit');
    const maxBytes = checkMaxBytes(opts.maxBytes) ?? Number.MAX_SAFE_INTEGER;
    const types = checkEntryTypes(opts.types);
    if (!storableText(conversationId) || !storableText(principal)) return null;
    const params = [conversationId, principal, afterSeq, limit, this.#now(), maxBytes];
    // As entries() does.
    const { rows } = await this.#pool.query<EntryPageRow>(types === null ? ENTRIES_PAGE : typedPostgresReads(types).page, types === null ? [...params, null] : params);
    const first = rows[0];
    if (first === undefined) return null;
    const admitted = rows.filter(hasEntry);
    return {
      entries: admitted.map(entryFromRow), payloadSizes: admitted.map((r) => integer(r.payload_size, `entry ${r.seq} payload_size`)),
      more: integer(first.rows, 'page rows') > integer(first.admitted, 'page admitted'),
    };
  }

  async lastEntry(conversationId: string): Promise<Entry | null> {
    this.#assertOpen();
    if (!storableText(conversationId)) return null;
    const { rows } = await this.#pool.query<EntryRow>(`SELECT ${ENTRY_COLUMNS} FROM entries WHERE conversation_id = $1 ORDER BY seq DESC LIMIT 1`, [conversationId]);
    return rows[0] === undefined ? null : entryFromRow(rows[0]);
  }

  // Task leases, session claims and checkpoints, the node registry: postgres-leases.ts.
  claimTask(id: string, setup: unknown): Promise<TaskLease> { return this.#leases.claimTask(id, setup); }
  renewLease(id: string, epoch: number): Promise<TaskLease> { return this.#leases.renewLease(id, epoch); }
  expiredTasks(limit: number, scope?: TakeoverScope): Promise<ExpiredTask[]> { return this.#leases.expiredTasks(limit, scope); }
  takeOverTask(id: string, epoch: number): Promise<TaskLease | null> { return this.#leases.takeOverTask(id, epoch); }
  cancelRunningTask(id: string, principal: string, entry: unknown): Promise<RunningCancel> { return this.#leases.cancelRunningTask(id, principal, entry); }
  resumeParkedTask(id: string, principal: string, seq: number): Promise<ParkedResume | null> { return this.#leases.resumeParkedTask(id, principal, seq); }
  recordParkedAnswer(id: string, principal: string, seq: number, answer: unknown): Promise<Entry | null> { return this.#leases.recordParkedAnswer(id, principal, seq, answer); }
  ownedTasks(): Promise<number> { return this.#leases.ownedTasks(); }

  async sweepExpiredTasks(limit: number): Promise<number> {
    this.#assertOpen();
    const max = pageLimit(limit, limit, TASK_SWEEP_BATCH, 'limit');
    const deleted = await this.#pool.query(SWEEP_EXPIRED, [this.#now(), max]);
    return deleted.rowCount ?? 0;
  }

  async consumeRequestState(digest: string, expiresAt: number): Promise<boolean> {
    this.#assertOpen();
    return consumePostgres(this.#pool, digest, expiresAt, this.#now());
  }

  claimSession(sessionId: string, principal: string): Promise<{ readonly epoch: number } | null> { return this.#leases.claimSession(sessionId, principal); }
  saveCheckpoint(sessionId: string, epoch: number, bytes: Uint8Array): Promise<void> { return this.#leases.saveCheckpoint(sessionId, epoch, bytes); }
  loadCheckpoint(sessionId: string, principal: string): Promise<SessionCheckpoint | null> { return this.#leases.loadCheckpoint(sessionId, principal); }
  takeOverSession(sessionId: string, principal: string, epoch: number): Promise<{ readonly epoch: number } | null> { return this.#leases.takeOverSession(sessionId, principal, epoch); }
  forgetSession(sessionId: string, epoch: number): Promise<void> { return this.#leases.forgetSession(sessionId, epoch); }
  renewNode(advertiseUrl: string): Promise<void> { return this.#leases.renewNode(advertiseUrl); }
  forgetNode(): Promise<void> { return this.#leases.forgetNode(); }
  nodeOf(owner: string): Promise<ClusterNode | null> { return this.#leases.nodeOf(owner); }
  liveNodes(limit: number): Promise<readonly ClusterNode[]> { return this.#leases.liveNodes(limit); }

  // The session event log and the orphan lookup: postgres-session-events.ts.
  appendSessionEvent(sessionId: string, principal: string, stream: string, data: string, ends = false): Promise<number> { return this.#events.appendSessionEvent(sessionId, principal, stream, data, ends); }
  sessionEventPosition(sessionId: string, principal: string, seq: number): Promise<EventPosition | null> { return this.#events.sessionEventPosition(sessionId, principal, seq); }
  sessionEventsAfter(sessionId: string, principal: string, afterSeq: number, options: { readonly stream?: string; readonly limit?: number } = {}): Promise<SessionEvent[] | null> {
    return this.#events.sessionEventsAfter(sessionId, principal, afterSeq, options);
  }
  unendedRequestStreams(sessionId: string, principal: string): Promise<string[]> { return this.#events.unendedRequestStreams(sessionId, principal); }
  taskAnswers(sessionId: string, principal: string, request: string | number): Promise<boolean> { return this.#events.taskAnswers(sessionId, principal, request); }
  pruneSessionEvents(): Promise<number> { return this.#events.pruneSessionEvents(); }

  /**
   * This node's LISTEN connection on the cluster channels: `sessionEvent` hears `<session id>` and seq
   * of every event appended (by any node), `transcript` the id of every conversation another node's
   * store appended to. `onConnected` runs at every (re)connection. Closed by its own `close()`.
   */
  listen(handlers: {
    readonly sessionEvent: (sessionId: string, seq: number) => void;
    readonly transcript: (conversationId: string) => void;
    readonly taskStatus?: (conversationId: string) => void;
    readonly onConnected: () => void;
    readonly onError: (error: Error) => void;
  }): PostgresListener {
    const channels = new Map<string, (payload: string) => void>([
      [SESSION_EVENTS_CHANNEL, (payload) => {
        const space = payload.lastIndexOf(' ');
        handlers.sessionEvent(payload.slice(0, space), Number(payload.slice(space + 1)));
      }],
      [TRANSCRIPTS_CHANNEL, (payload) => {
        const space = payload.indexOf(' ');
        if (payload.slice(0, space) !== this.#origin) handlers.transcript(payload.slice(space + 1));
      }],
      [TASK_STATUS_CHANNEL, (payload) => {
        const space = payload.indexOf(' ');
        if (payload.slice(0, space) !== this.#origin) handlers.taskStatus?.(payload.slice(space + 1));
      }],
    ]);
    const connection = typeof this.#connection === 'string' ? this.#connection : { ...this.#connection };
    return new PostgresListener({ connection, channels, onConnected: handlers.onConnected, onError: handlers.onError });
  }

  /** Why a write that named a conversation (and maybe an epoch) changed no row: no such conversation, or a stale epoch. */
  async #missedWrite(id: string, epoch: number | null, what = 'the conversation'): Promise<StoreError> {
    const { rows } = storableText(id) ? await this.#pool.query<{ epoch: string }>('SELECT epoch FROM conversations WHERE id = $1', [id]) : { rows: [] };
    const row = rows[0];
    if (row === undefined || epoch === null) return new StoreError('not_found', `no conversation ${id}`);
    return new StoreError('fenced', `${what} of ${id} is at epoch ${row.epoch}, not ${epoch}: another claim superseded this holder, which must stop`);
  }

  /** Waits for the calls in flight, then closes every connection. */
  close(): Promise<void> {
    ended.add(this.#pool);
    this.#closing ??= this.#pool.end();
    return this.#closing;
  }

  /**
   * Conversations left `running` by an owner known to be gone (node-ownership.ts: an earlier run of this
   * node) are marked `interrupted`, with an entry saying so, so they can be seen as such and continued.
   */
  async #interruptOrphans(): Promise<void> {
    const { rows } = await this.#pool.query<{ id: string; owner: string }>("SELECT id, owner FROM conversations WHERE status = 'running'");
    for (const { id, owner } of rows) {
      if (this.#ownership.isAlive(owner)) continue;
      const message = `The server process running this task stopped before the task finished (it was killed or crashed), so the task was interrupted. Continue it with conversation_id ${id}.`;
      await this.#pool.query(INTERRUPT, [id, owner, this.#now(), JSON.stringify({ message }), this.#origin]);
    }
  }

  #assertOpen(): void {
    if (this.#closing !== null) throw new StoreError('closed', 'the conversation store is closed');
  }

  #now(): number {
    // The columns are bigint: an injected clock with fractions must not make a write fail.
    return Math.trunc(this.#clock());
  }

  /** The injected lease clock's reading, or null: the statement reads the database's clock. */
  #leaseNow(): number | null {
    return this.#leaseClock === null ? null : Math.trunc(this.#leaseClock());
  }
}

/**
 * `synchronous_commit = off` makes COMMIT return before the commit record is flushed, so a server crash
 * could take back an entry whose append had resolved — and a reply may already have named it. Refused,
 * as the SQLite store refuses a file without WAL; any other setting (local, on, remote_*) is kept.
 */
async function requireDurableCommits(client: ClientBase, label: string): Promise<void> {
  const { rows } = await client.query<{ setting: string }>("SELECT current_setting('synchronous_commit') AS setting");
  const setting = rows[0]?.setting;
  if (setting === 'off') {
    throw new StoreError('open_failed', `${label}: synchronous_commit is off, so a commit may be lost in a crash after the store reported it; set it to on (or local) for this database or role`);
  }
}

/** The database a connection names, without its password, for messages. */
function describe(connection: string | PoolConfig): string {
  if (typeof connection !== 'string') return `postgres://${connection.host ?? 'localhost'}:${connection.port ?? 5432}/${connection.database ?? ''}`;
  try {
    const url = new URL(connection);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    // Not a URL (a libpq "key=value" string, say): name no part of it, as it may hold the password.
    return 'the PostgreSQL database';
  }
}
