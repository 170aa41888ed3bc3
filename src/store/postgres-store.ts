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
import { StoreError } from './errors.ts';
import { decodeListCursor, encodeListCursor, type ListPosition } from './list-cursor.ts';
import type { ClusterNode } from './cluster-nodes.ts';
import { decodeNodeOwner, nodeOwnership } from './node-ownership.ts';
import type { Ownership } from './ownership.ts';
import { migratePostgres, POSTGRES_MIGRATIONS, type PostgresMigration } from './postgres-migrations.ts';
import {
  checkAfterSeq,
  checkCheckpoint,
  checkEntryType,
  checkEpoch,
  checkMaxPayloadBytes,
  checkNewConversation,
  checkSessionKey,
  checkStatus,
  known,
  pageLimit,
  serializePayload,
  storableText,
} from './store-checks.ts';
import { checkLeaseMs, type ExpiredTask, type SessionCheckpoint, type TaskLease } from './task-lease.ts';
import { PostgresListener } from './postgres-listener.ts';
import { guarded } from '../log/guarded.ts';
import { type EventPosition, keptEventData, type OrphanLookup, SESSION_EVENTS_CHANNEL, type SessionEvent, type SessionEventStore, STANDALONE_STREAM, TRANSCRIPTS_CHANNEL } from './session-events.ts';
import { MAX_EXPIRED_TASKS, SESSION_EVENT_HEADS_KEPT_MS, SESSION_EVENT_MAX_BYTES, SESSION_EVENTS_KEPT, SESSION_EVENTS_MAX_BYTES, SESSION_EVENTS_MAX_AGE_MS, SESSION_EVENTS_PAGE, TASK_LEASE_MS } from '../limits.ts';
import {
  CONVERSATION_STATUSES,
  type Conversation,
  type ConversationIds,
  type ConversationPage,
  type ConversationStatus,
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

/** The most connections one store holds open: concurrent calls beyond it queue in the pool. */
export const DEFAULT_POOL_SIZE = 10;
/** How long opening a connection may take before the call that needed it fails. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

export interface PostgresStoreOptions {
  /** Default `DEFAULT_POOL_SIZE`. */
  readonly poolSize?: number;
  /** Default `DEFAULT_CONNECT_TIMEOUT_MS`. */
  readonly connectTimeoutMs?: number;
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

/** The conversation's row of the ENTRIES join when it has no entry after `afterSeq`. */
type NoEntryRow = { [K in keyof EntryRow]: null };

function hasEntry(row: EntryRow | NoEntryRow): row is EntryRow {
  return row.seq !== null;
}

// The database's clock in milliseconds. `now()` is the transaction's start, so one statement sets and
// compares lease times against a single instant (every lease statement here is its own transaction).
const DATABASE_NOW_MS = '(extract(epoch from now()) * 1000)::bigint';

/** The lease clock of a statement: parameter `$n` when the store has an injected `leaseClock`, else (null) the database's. */
const leaseNow = (n: number) => `coalesce($${n}::bigint, ${DATABASE_NOW_MS})`;

const CONVERSATION_COLUMNS = 'id, principal, session_id, harness, status, title, created_at, updated_at';
const ENTRY_COLUMNS = 'seq, conversation_id, time, type, payload';
const NEWEST_FIRST = 'ORDER BY updated_at DESC, id DESC';

interface ConversationRow {
  id: string;
  principal: string;
  session_id: string;
  harness: string;
  status: string;
  title: string | null;
  created_at: string;
  updated_at: string;
}

interface EntryRow {
  seq: string;
  conversation_id: string;
  time: string;
  type: string;
  payload: string;
}

// Bumps the conversation's counter and inserts the entry under it in one statement, so one transaction:
// the UPDATE takes the conversation's row lock, and a concurrent append (any pool, any node) waits for it
// and then bumps the committed counter. The fence ($5, when not null) is compared on the row as locked:
// a takeover committed meanwhile is seen (READ COMMITTED re-reads the row it waited for), and the stale
// writer's UPDATE matches nothing. No row (no such conversation, or fenced): nothing is inserted.
// Its NOTIFY (TRANSCRIPTS_CHANNEL, `<origin> <conversation>`) is sent at commit: every node's listener
// hears of the entry, and this store's own origin ($6) tells its node to ignore what it announced itself.
const APPEND = `
  WITH bumped AS (
    UPDATE conversations SET last_seq = last_seq + 1, updated_at = greatest(updated_at, $2)
    WHERE id = $1 AND ($5::bigint IS NULL OR epoch = $5) RETURNING id, last_seq
  ), added AS (
    INSERT INTO entries (conversation_id, seq, time, type, payload) SELECT id, last_seq, $2, $3, $4 FROM bumped RETURNING conversation_id, seq
  )
  SELECT seq, pg_notify('${TRANSCRIPTS_CHANNEL}', $6 || ' ' || conversation_id) FROM added`;

// The same, only while the conversation is still `running` under the owner found gone: if another store
// resumed or interrupted it in the meantime, the row no longer matches and nothing is written.
const INTERRUPT = `
  WITH hit AS (
    UPDATE conversations SET status = 'interrupted', epoch = epoch + 1, last_seq = last_seq + 1, updated_at = greatest(updated_at, $3)
    WHERE id = $1 AND status = 'running' AND owner = $2 RETURNING id, last_seq
  )
  INSERT INTO entries (conversation_id, seq, time, type, payload) SELECT id, last_seq, $3, 'interrupted', $4 FROM hit RETURNING seq`;

// One statement, so the ownership check and the rows come from one snapshot: the conversation joined to
// its entries after `afterSeq`. No row: not there (or not the principal's). One row with a null seq:
// there, with no entries after `afterSeq`.
const ENTRIES = `
  SELECT e.seq, e.conversation_id, e.time, e.type, e.payload
  FROM conversations c LEFT JOIN entries e ON e.conversation_id = c.id AND e.seq > $3
  WHERE c.id = $1 AND c.principal = $2
  ORDER BY e.seq LIMIT $4`;

// An unfenced status change supersedes whoever held the lease, so the epoch moves on; a fenced one ($5)
// happens only while its epoch is current.
const SET_STATUS = `
  UPDATE conversations SET status = $1, owner = $2, updated_at = greatest(updated_at, $3), epoch = CASE WHEN $5::bigint IS NULL THEN epoch + 1 ELSE epoch END
  WHERE id = $4 AND ($5::bigint IS NULL OR epoch = $5)`;

// Lease statements take the lease clock's reading ($n, null: the database's) and the term ($m), so the
// expiry is computed where it is compared: on one clock for every node.
const INSERT_CONVERSATION = `
  INSERT INTO conversations (${CONVERSATION_COLUMNS}, owner, lease_expires) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, ${leaseNow(10)} + $11)`;

const CLAIM_TASK = `
  UPDATE conversations SET status = 'running', owner = $1, epoch = epoch + 1, lease_expires = ${leaseNow(2)} + $6, task_setup = $3, updated_at = greatest(updated_at, $4)
  WHERE id = $5 RETURNING epoch, lease_expires`;

const RENEW_LEASE = `UPDATE conversations SET lease_expires = ${leaseNow(1)} + $4 WHERE id = $2 AND epoch = $3 AND status = 'running' RETURNING epoch, lease_expires`;

const EXPIRED_TASKS = `
  SELECT id, principal, harness, epoch, task_setup FROM conversations
  WHERE status = 'running' AND lease_expires < ${leaseNow(1)} AND owner <> $2 ORDER BY lease_expires, id LIMIT $3`;

// The one-winner claim: the row lock makes concurrent takers take turns, and the second one re-reads the
// row the first committed: its epoch moved on and its lease is current, so it matches nothing. A holder
// does not take over its own task (it renews the lease instead of fencing itself).
const TAKE_OVER = `
  UPDATE conversations SET owner = $1, epoch = epoch + 1, lease_expires = ${leaseNow(5)} + $2
  WHERE id = $3 AND status = 'running' AND epoch = $4 AND lease_expires < ${leaseNow(5)} AND owner <> $1 RETURNING epoch, lease_expires`;

// A new session starts at epoch 1; a known one of the same principal moves to the next epoch, and
// another principal's matches the conflict but not the WHERE: no row, as for a session not there.
const CLAIM_SESSION = `
  INSERT INTO session_checkpoints (session_id, principal, owner, epoch, bytes, updated_at) VALUES ($1, $2, $3, 1, ''::bytea, $4)
  ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner, epoch = session_checkpoints.epoch + 1,
    updated_at = greatest(session_checkpoints.updated_at, excluded.updated_at)
  WHERE session_checkpoints.principal = excluded.principal RETURNING epoch`;

// Taken over only at the epoch seen, for the same principal: the row lock makes concurrent takers take
// turns, and the second re-reads the committed row, whose epoch moved on: it matches nothing.
const TAKE_OVER_SESSION = `
  UPDATE session_checkpoints SET owner = $1, epoch = epoch + 1, updated_at = greatest(updated_at, $2)
  WHERE session_id = $3 AND principal = $4 AND epoch = $5 RETURNING epoch`;

// The node lease is on the DATABASE's clock (now()), in both the write and the read: nodes whose clocks
// disagree still agree on whose lease lapsed.
const RENEW_NODE = `
  INSERT INTO cluster_nodes (owner, node_id, advertise_url, lease_expires) VALUES ($1, $2, $3, now() + make_interval(secs => $4::double precision / 1000))
  ON CONFLICT (owner) DO UPDATE SET node_id = excluded.node_id, advertise_url = excluded.advertise_url, lease_expires = excluded.lease_expires`;

const NODE_OF = `
  SELECT owner, node_id, advertise_url, lease_expires > now() AS fresh,
    greatest(0, ceil(extract(epoch FROM (lease_expires - now())) * 1000))::bigint AS remaining
  FROM cluster_nodes WHERE owner = $1`;

// The session's counter row is created by its first event and bumped by each next one, in the statement
// that inserts the event: the row lock makes appenders on every node take turns (READ COMMITTED re-reads
// the row it waited for), so seqs are unique per session and gap-free in commit order. Another
// principal's session matches the conflict but not the WHERE: no row, nothing inserted. The session's
// events more than SESSION_EVENTS_KEPT behind are deleted in the same statement, and so are its oldest
// events while the rest, with the new one ($8 bytes), would pass SESSION_EVENTS_MAX_BYTES ($9): the newest
// first, summed until the budget is passed (octet_length reads a stored value's size without fetching it).
// The NOTIFY is sent at commit.
const APPEND_SESSION_EVENT = `
  WITH head AS (
    INSERT INTO session_event_heads AS h (session_id, principal, last_seq, updated_at) VALUES ($1, $2, 1, $3)
    ON CONFLICT (session_id) DO UPDATE SET last_seq = h.last_seq + 1, updated_at = greatest(h.updated_at, excluded.updated_at)
    WHERE h.principal = excluded.principal RETURNING session_id, last_seq
  ), added AS (
    INSERT INTO session_events (session_id, seq, stream, data, ends, created_at) SELECT session_id, last_seq, $4, $5, $6, $3 FROM head RETURNING session_id, seq
  ), pruned AS (
    DELETE FROM session_events d USING head WHERE d.session_id = head.session_id AND d.seq <= head.last_seq - $7
  ), trimmed AS (
    DELETE FROM session_events d USING head WHERE d.session_id = head.session_id AND d.seq <= (
      SELECT t.seq FROM (
        SELECT e.seq, sum(octet_length(e.data)) OVER (ORDER BY e.seq DESC) AS tail
        FROM session_events e WHERE e.session_id = head.session_id AND e.seq > head.last_seq - $7 ORDER BY e.seq DESC
      ) t WHERE t.tail > $9::bigint - $8::bigint ORDER BY t.seq DESC LIMIT 1)
  )
  SELECT seq, pg_notify('${SESSION_EVENTS_CHANNEL}', session_id || ' ' || seq) FROM added`;

// One snapshot: the session's head (principal checked), the event at $3 if still kept.
const SESSION_EVENT_POSITION = `
  SELECT h.last_seq, e.stream, e.ends FROM session_event_heads h LEFT JOIN session_events e ON e.session_id = h.session_id AND e.seq = $3
  WHERE h.session_id = $1 AND h.principal = $2`;

// As ENTRIES: no row, no such session (or not the principal's); one row with a null seq, no event after $3.
const SESSION_EVENTS_AFTER = `
  SELECT e.seq, e.stream, e.data, e.ends FROM session_event_heads h
  LEFT JOIN session_events e ON e.session_id = h.session_id AND e.seq > $3 AND ($5::text IS NULL OR e.stream = $5)
  WHERE h.session_id = $1 AND h.principal = $2 ORDER BY e.seq LIMIT $4`;

// A stream has ended when any of its kept events ends it (pruning deletes oldest first, so an ending
// event never goes while earlier events of its stream stay).
const UNENDED_REQUEST_STREAMS = `
  SELECT e.stream FROM session_event_heads h JOIN session_events e ON e.session_id = h.session_id
  WHERE h.session_id = $1 AND h.principal = $2 AND e.stream <> $3
  GROUP BY e.stream HAVING NOT bool_or(e.ends) ORDER BY min(e.seq)`;

// The setup a claimer keeps is JSON text (only super-pi writes it); a request id compares as JSON, so
// the number 1 and the string "1" stay two requests.
const TASK_ANSWERS = `
  SELECT 1 FROM conversations WHERE status = 'running' AND task_setup IS NOT NULL
    AND task_setup::jsonb -> 'answers' ->> 'session' = $1 AND task_setup::jsonb -> 'answers' ->> 'principal' = $2
    AND task_setup::jsonb -> 'answers' -> 'request' = $3::jsonb
  LIMIT 1`;

const PRUNE_SESSION_EVENTS = `
  WITH gone AS (DELETE FROM session_events WHERE created_at < $1 RETURNING 1),
  heads AS (DELETE FROM session_event_heads WHERE updated_at < $2)
  SELECT count(*) AS n FROM gone`;

interface LeaseRow {
  epoch: string;
  lease_expires: string;
}

export class PostgresConversationStore implements AsyncConversationStore, SessionEventStore, OrphanLookup {
  readonly #pool: Pool;
  readonly #maxPayloadBytes: number;
  readonly #clock: () => number;
  readonly #ownership: Ownership;
  readonly #leaseMs: number;
  readonly #eventsKept: number;
  readonly #eventsMaxBytes: number;
  readonly #eventMaxBytes: number;
  /** The database, for the node's LISTEN connection (`listen`). */
  readonly #connection: string | PoolConfig;
  /** Tags this store's transcript NOTIFYs, so its own node can tell them from other nodes'. */
  readonly #origin = randomUUID();
  readonly #leaseClock: (() => number) | null;
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
    checkLeaseMs(options.leaseMs ?? TASK_LEASE_MS);
    const label = describe(connection);
    const { default: pg } = await import('pg');
    const config: PoolConfig = typeof connection === 'string' ? { connectionString: connection } : { ...connection };
    const pool = new pg.Pool({ ...config, max: poolSize, connectionTimeoutMillis: connectTimeoutMs });
    const onIdleError = options.onIdleError ?? ((error: Error) => process.stderr.write(`super-pi: ${label}: an idle database connection failed: ${error.message}\n`));
    // `pool.end()` resolves once its connections are told to close, not once they have: a server
    // shutting down meanwhile fails them, which after close is expected and reported to nobody.
    const report = { log: (_level: 'error', message: string, data: Record<string, unknown>) => process.stderr.write(`super-pi: ${label}: ${message}: ${JSON.stringify(data.error)}\n`) };
    pool.on('error', guarded(report, 'idle connection error', (error: Error) => {
      if (!ended.has(pool)) onIdleError(error);
    }));
    try {
      const client = await pool.connect().catch((cause: unknown) => {
        throw new StoreError('open_failed', `${label}: cannot connect: ${String(cause)}`, { cause });
      });
      try {
        await requireDurableCommits(client, label);
        await migratePostgres(client, label, options.migrations ?? POSTGRES_MIGRATIONS);
      } finally {
        client.release();
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
    this.#eventsKept = pageLimit(options.sessionEventsKept, SESSION_EVENTS_KEPT, Number.MAX_SAFE_INTEGER, 'sessionEventsKept');
    this.#eventsMaxBytes = pageLimit(options.sessionEventsMaxBytes, SESSION_EVENTS_MAX_BYTES, Number.MAX_SAFE_INTEGER, 'sessionEventsMaxBytes');
    this.#eventMaxBytes = pageLimit(options.sessionEventMaxBytes, SESSION_EVENT_MAX_BYTES, this.#eventsMaxBytes, 'sessionEventMaxBytes');
    this.#leaseClock = options.leaseClock ?? null;
  }

  async createConversation(input: NewConversation): Promise<Conversation> {
    this.#assertOpen();
    checkNewConversation(input);
    for (const [field, value] of [['principal', input.principal], ['sessionId', input.sessionId], ['harness', input.harness], ['title', input.title ?? '']] as const) {
      if (!storableText(value)) throw new StoreError('invalid_argument', `${field} must not hold a NUL character or a lone surrogate`);
    }
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
    // Held by its creator for one lease term: a claim follows at once, and no other node may take over
    // a conversation between its creation and that claim.
    await this.#pool.query(
      INSERT_CONVERSATION,
      [conversation.id, conversation.principal, conversation.sessionId, conversation.harness, conversation.status, conversation.title, now, now, this.#ownership.self, this.#leaseNow(), this.#leaseMs],
    );
    return conversation;
  }

  async getConversation(id: string, principal: string): Promise<Conversation | null> {
    this.#assertOpen();
    if (!storableText(id) || !storableText(principal)) return null;
    const { rows } = await this.#pool.query<ConversationRow>(`SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE id = $1 AND principal = $2`, [id, principal]);
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

  async setStatus(id: string, status: ConversationStatus, epoch?: number): Promise<void> {
    this.#assertOpen();
    checkStatus(status);
    const fence = epoch === undefined ? null : checkEpoch(epoch);
    const result = storableText(id) ? await this.#pool.query(SET_STATUS, [status, this.#ownership.self, this.#now(), id, fence]) : null;
    if (result === null || result.rowCount === 0) throw await this.#missedWrite(id, fence);
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
    if (!storableText(conversationId) || !storableText(principal)) return null;
    const { rows } = await this.#pool.query<EntryRow | NoEntryRow>(ENTRIES, [conversationId, principal, afterSeq, limit]);
    if (rows.length === 0) return null;
    return rows.filter(hasEntry).map(entryFromRow);
  }

  async lastEntry(conversationId: string): Promise<Entry | null> {
    this.#assertOpen();
    if (!storableText(conversationId)) return null;
    const { rows } = await this.#pool.query<EntryRow>(`SELECT ${ENTRY_COLUMNS} FROM entries WHERE conversation_id = $1 ORDER BY seq DESC LIMIT 1`, [conversationId]);
    return rows[0] === undefined ? null : entryFromRow(rows[0]);
  }

  async claimTask(id: string, setup: unknown): Promise<TaskLease> {
    this.#assertOpen();
    const json = serializePayload(setup, this.#maxPayloadBytes);
    const now = this.#now();
    const { rows } = storableText(id) ? await this.#pool.query<LeaseRow>(CLAIM_TASK, [this.#ownership.self, this.#leaseNow(), json, now, id, this.#leaseMs]) : { rows: [] };
    if (rows[0] === undefined) throw new StoreError('not_found', `no conversation ${id}`);
    return leaseFromRow(id, rows[0]);
  }

  async renewLease(id: string, epoch: number): Promise<TaskLease> {
    this.#assertOpen();
    checkEpoch(epoch);
    const { rows } = storableText(id) ? await this.#pool.query<LeaseRow>(RENEW_LEASE, [this.#leaseNow(), id, epoch, this.#leaseMs]) : { rows: [] };
    if (rows[0] === undefined) throw await this.#missedWrite(id, epoch, 'its lease');
    return leaseFromRow(id, rows[0]);
  }

  async expiredTasks(limit: number): Promise<ExpiredTask[]> {
    this.#assertOpen();
    const max = pageLimit(limit, limit, MAX_EXPIRED_TASKS, 'limit');
    const { rows } = await this.#pool.query<{ id: string; principal: string; harness: string; epoch: string; task_setup: string | null }>(EXPIRED_TASKS, [this.#leaseNow(), this.#ownership.self, max]);
    return rows.map((r) => ({
      conversationId: r.id, principal: r.principal, harness: r.harness, epoch: integer(r.epoch, `conversation ${r.id} epoch`),
      setup: r.task_setup === null ? null : JSON.parse(r.task_setup),
    }));
  }

  async takeOverTask(id: string, epoch: number): Promise<TaskLease | null> {
    this.#assertOpen();
    checkEpoch(epoch);
    if (!storableText(id)) return null;
    const { rows } = await this.#pool.query<LeaseRow>(TAKE_OVER, [this.#ownership.self, this.#leaseMs, id, epoch, this.#leaseNow()]);
    return rows[0] === undefined ? null : leaseFromRow(id, rows[0]);
  }

  async ownedTasks(): Promise<number> {
    this.#assertOpen();
    const { rows } = await this.#pool.query<{ n: string }>("SELECT count(*) AS n FROM conversations WHERE status = 'running' AND owner = $1", [this.#ownership.self]);
    return integer(rows[0]?.n, 'running conversation count');
  }

  async claimSession(sessionId: string, principal: string): Promise<{ readonly epoch: number } | null> {
    this.#assertOpen();
    checkSessionKey(sessionId, principal);
    const { rows } = await this.#pool.query<{ epoch: string }>(CLAIM_SESSION, [sessionId, principal, this.#ownership.self, this.#now()]);
    return rows[0] === undefined ? null : { epoch: integer(rows[0].epoch, `session ${sessionId} epoch`) };
  }

  async saveCheckpoint(sessionId: string, epoch: number, bytes: Uint8Array): Promise<void> {
    this.#assertOpen();
    checkCheckpoint(bytes);
    checkEpoch(epoch);
    const stored = storableText(sessionId)
      ? await this.#pool.query(
        'UPDATE session_checkpoints SET bytes = $1, updated_at = greatest(updated_at, $2) WHERE session_id = $3 AND epoch = $4',
        [Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), this.#now(), sessionId, epoch],
      )
      : null;
    if (stored !== null && stored.rowCount !== 0) return;
    const known = stored === null ? { rows: [] } : await this.#pool.query('SELECT 1 FROM session_checkpoints WHERE session_id = $1', [sessionId]);
    if (known.rows.length === 0) throw new StoreError('not_found', `no session ${sessionId}`);
    throw new StoreError('fenced', `session ${sessionId} was claimed again since epoch ${epoch}; this holder must stop`);
  }

  async loadCheckpoint(sessionId: string, principal: string): Promise<SessionCheckpoint | null> {
    this.#assertOpen();
    if (!storableText(sessionId) || !storableText(principal)) return null;
    const { rows } = await this.#pool.query<{ session_id: string; owner: string; epoch: string; bytes: Buffer; updated_at: string }>(
      'SELECT session_id, owner, epoch, bytes, updated_at FROM session_checkpoints WHERE session_id = $1 AND principal = $2',
      [sessionId, principal],
    );
    const row = rows[0];
    if (row === undefined) return null;
    return {
      sessionId: row.session_id, owner: row.owner, epoch: integer(row.epoch, `session ${sessionId} epoch`),
      bytes: new Uint8Array(row.bytes), updatedAt: integer(row.updated_at, `session ${sessionId} updated_at`),
    };
  }

  async takeOverSession(sessionId: string, principal: string, epoch: number): Promise<{ readonly epoch: number } | null> {
    this.#assertOpen();
    checkSessionKey(sessionId, principal);
    const { rows } = await this.#pool.query<{ epoch: string }>(TAKE_OVER_SESSION, [this.#ownership.self, this.#now(), sessionId, principal, checkEpoch(epoch)]);
    return rows[0] === undefined ? null : { epoch: integer(rows[0].epoch, `session ${sessionId} epoch`) };
  }

  async forgetSession(sessionId: string, epoch: number): Promise<void> {
    this.#assertOpen();
    checkEpoch(epoch);
    if (!storableText(sessionId)) return;
    await this.#pool.query('DELETE FROM session_checkpoints WHERE session_id = $1 AND epoch = $2', [sessionId, epoch]);
  }

  async renewNode(advertiseUrl: string): Promise<void> {
    this.#assertOpen();
    const self = this.#ownership.self;
    if (!storableText(advertiseUrl)) throw new StoreError('invalid_argument', 'an advertise URL must not hold a NUL character or a lone surrogate');
    await this.#pool.query(RENEW_NODE, [self, decodeNodeOwner(self)?.node ?? self, advertiseUrl, this.#leaseMs]);
  }

  async forgetNode(): Promise<void> {
    this.#assertOpen();
    await this.#pool.query('DELETE FROM cluster_nodes WHERE owner = $1', [this.#ownership.self]);
  }

  async nodeOf(owner: string): Promise<ClusterNode | null> {
    this.#assertOpen();
    if (!storableText(owner)) return null;
    const { rows } = await this.#pool.query<{ owner: string; node_id: string; advertise_url: string; fresh: boolean; remaining: string }>(NODE_OF, [owner]);
    const row = rows[0];
    if (row === undefined) return null;
    return { owner: row.owner, node: row.node_id, advertiseUrl: row.advertise_url, fresh: row.fresh, remainingMs: integer(row.remaining, `node ${owner} lease`) };
  }

  async appendSessionEvent(sessionId: string, principal: string, stream: string, data: string, ends = false): Promise<number> {
    this.#assertOpen();
    checkSessionKey(sessionId, principal);
    if (!storableText(stream) || !storableText(data)) throw new StoreError('invalid_argument', 'an event\'s stream and data must not hold a NUL character or a lone surrogate');
    const size = Buffer.byteLength(data);
    const kept = keptEventData(data, size, this.#eventMaxBytes);
    const bytes = kept === data ? size : Buffer.byteLength(kept);
    const { rows } = await this.#pool.query<{ seq: string }>(APPEND_SESSION_EVENT, [sessionId, principal, this.#now(), stream, kept, ends, this.#eventsKept, bytes, this.#eventsMaxBytes]);
    if (rows[0] === undefined) throw new StoreError('not_found', `no session ${sessionId}`);
    return integer(rows[0].seq, `session ${sessionId} event seq`);
  }

  async sessionEventPosition(sessionId: string, principal: string, seq: number): Promise<EventPosition | null> {
    this.#assertOpen();
    checkAfterSeq(seq);
    if (!storableText(sessionId) || !storableText(principal)) return null;
    const { rows } = await this.#pool.query<{ last_seq: string; stream: string | null; ends: boolean | null }>(SESSION_EVENT_POSITION, [sessionId, principal, seq]);
    const row = rows[0];
    if (row === undefined) return null;
    if (row.stream !== null) return { kind: 'kept', stream: row.stream, ends: row.ends === true };
    const last = integer(row.last_seq, `session ${sessionId} last seq`);
    return seq > last ? { kind: 'ahead', last } : { kind: 'expired', last };
  }

  async sessionEventsAfter(sessionId: string, principal: string, afterSeq: number, options: { readonly stream?: string; readonly limit?: number } = {}): Promise<SessionEvent[] | null> {
    this.#assertOpen();
    checkAfterSeq(afterSeq);
    const limit = pageLimit(options.limit, SESSION_EVENTS_PAGE, SESSION_EVENTS_KEPT, 'limit');
    if (!storableText(sessionId) || !storableText(principal) || (options.stream !== undefined && !storableText(options.stream))) return null;
    const { rows } = await this.#pool.query<{ seq: string | null; stream: string; data: string; ends: boolean }>(
      SESSION_EVENTS_AFTER, [sessionId, principal, afterSeq, limit, options.stream ?? null],
    );
    if (rows.length === 0) return null;
    return rows.flatMap((r) => (r.seq === null ? [] : [{ seq: integer(r.seq, `session ${sessionId} event seq`), stream: r.stream, data: r.data, ends: r.ends }]));
  }

  async unendedRequestStreams(sessionId: string, principal: string): Promise<string[]> {
    this.#assertOpen();
    if (!storableText(sessionId) || !storableText(principal)) return [];
    const { rows } = await this.#pool.query<{ stream: string }>(UNENDED_REQUEST_STREAMS, [sessionId, principal, STANDALONE_STREAM]);
    return rows.map((r) => r.stream);
  }

  async taskAnswers(sessionId: string, principal: string, request: string | number): Promise<boolean> {
    this.#assertOpen();
    if (!storableText(sessionId) || !storableText(principal) || (typeof request === 'string' && !storableText(request))) return false;
    const { rows } = await this.#pool.query(TASK_ANSWERS, [sessionId, principal, JSON.stringify(request)]);
    return rows.length > 0;
  }

  async pruneSessionEvents(): Promise<number> {
    this.#assertOpen();
    const now = this.#now();
    const { rows } = await this.#pool.query<{ n: string }>(PRUNE_SESSION_EVENTS, [now - SESSION_EVENTS_MAX_AGE_MS, now - SESSION_EVENT_HEADS_KEPT_MS]);
    return integer(rows[0]?.n, 'pruned session events');
  }

  /**
   * This node's LISTEN connection on the cluster channels: `sessionEvent` hears `<session id>` and seq
   * of every event appended (by any node), `transcript` the id of every conversation another node's
   * store appended to. `onConnected` runs at every (re)connection. Closed by its own `close()`.
   */
  listen(handlers: {
    readonly sessionEvent: (sessionId: string, seq: number) => void;
    readonly transcript: (conversationId: string) => void;
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
      await this.#pool.query(INTERRUPT, [id, owner, this.#now(), JSON.stringify({ message })]);
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

/** A bigint column (the driver gives it as a string) as a number: any value the store writes is a safe integer. */
function integer(value: string | undefined, what: string): number {
  const n = Number(value);
  if (value === undefined || !/^-?\d+$/.test(value) || !Number.isSafeInteger(n)) throw new StoreError('corrupt', `${what} is "${String(value)}", which no super-pi writes`);
  return n;
}

function leaseFromRow(conversationId: string, row: LeaseRow): TaskLease {
  return { conversationId, epoch: integer(row.epoch, `conversation ${conversationId} epoch`), expiresAt: integer(row.lease_expires, `conversation ${conversationId} lease`) };
}

function fromRow(row: ConversationRow): Conversation {
  return {
    id: row.id, principal: row.principal, sessionId: row.session_id, harness: row.harness,
    status: known(CONVERSATION_STATUSES, row.status, `conversation ${row.id} status`),
    createdAt: integer(row.created_at, `conversation ${row.id} created_at`),
    updatedAt: integer(row.updated_at, `conversation ${row.id} updated_at`),
    title: row.title,
  };
}

function entryFromRow(row: EntryRow): Entry {
  return {
    seq: integer(row.seq, 'entry seq'), conversationId: row.conversation_id, time: integer(row.time, `entry ${row.seq} time`),
    type: known(ENTRY_TYPES, row.type, `entry ${row.seq} type`),
    payload: JSON.parse(row.payload),
  };
}
