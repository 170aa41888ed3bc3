// Who holds what on PostgreSQL: task leases (task-lease.ts), session claims with their checkpoints, and
// the node registry (cluster-nodes.ts), each fenced by an epoch or a lease term on one clock. Part of
// the PostgreSQL store, on its pool and clocks (postgres-store.ts).

import type { Pool } from 'pg';
import type { ClusterNode } from './cluster-nodes.ts';
import { StoreError } from './errors.ts';
import { liveSql } from './retention.ts';
import { decodeNodeOwner } from './node-ownership.ts';
import type { Ownership } from './ownership.ts';
import { integer, leaseNow, payloadSize } from './postgres-rows.ts';
import { TRANSCRIPTS_CHANNEL } from './session-events.ts';
import { checkCheckpoint, checkEpoch, checkSessionKey, pageLimit, serializePayload, storableText } from './store-checks.ts';
import type { Entry } from './store.ts';
import { belowPrefix, type ExpiredTask, type ParkedResume, type RunningCancel, type SessionCheckpoint, type TakeoverScope, type TaskLease } from './task-lease.ts';
import { MAX_EXPIRED_TASKS } from '../limits.ts';

// Lease statements take the lease clock's reading ($n, null: the database's) and the term ($m), so the
// expiry is computed where it is compared: on one clock for every node.
const CLAIM_TASK = `
  UPDATE conversations SET status = 'running', task_result = NULL, owner = $1, epoch = epoch + 1, lease_expires = ${leaseNow(2)} + $6, task_setup = $3, updated_at = greatest(updated_at, $4)
  WHERE id = $5 RETURNING epoch, lease_expires`;

const RENEW_LEASE = `UPDATE conversations SET lease_expires = ${leaseNow(1)} + $4 WHERE id = $2 AND epoch = $3 AND status = 'running' RETURNING epoch, lease_expires`;

// With a scope ($4 true; task-lease.ts TakeoverScope): only tasks the pass can act on — lapsed at least
// the patience $5 ago, recording no directory, or recording $6 (or one below it: prefix $7) — so tasks it
// leaves to a node serving their directory never fill its page.
const RECORDED = "nullif(CASE WHEN jsonb_typeof(task_setup::jsonb -> 'workspace') = 'string' THEN task_setup::jsonb ->> 'workspace' END, '')";
const EXPIRED_TASKS = `
  SELECT id, principal, harness, epoch, task_setup, ${leaseNow(1)} - lease_expires AS lapsed_ms FROM conversations
  WHERE status = 'running' AND lease_expires < ${leaseNow(1)} AND owner <> $2
    AND (NOT $4::boolean OR lease_expires <= ${leaseNow(1)} - $5::bigint OR ${RECORDED} IS NULL OR ${RECORDED} = $6::text OR starts_with(${RECORDED}, $7::text))
  ORDER BY lease_expires, id LIMIT $3`;

// The one-winner claim: the row lock makes concurrent takers take turns, and the second one re-reads the
// row the first committed: its epoch moved on and its lease is current, so it matches nothing. A holder
// does not take over its own task (it renews the lease instead of fencing itself).
const TAKE_OVER = `
  UPDATE conversations SET owner = $1, epoch = epoch + 1, lease_expires = ${leaseNow(5)} + $2
  WHERE id = $3 AND status = 'running' AND epoch = $4 AND lease_expires < ${leaseNow(5)} AND owner <> $1 RETURNING epoch, lease_expires`;

// Cancelled only while the principal's and still running (or parked for input), in one statement: the UPDATE takes the row lock
// (a concurrent append or status change waits for it, and READ COMMITTED re-reads the row this waited
// for, so a run that finished first matches nothing). The epoch moves on, fencing the holder; the entry
// goes under the bumped counter, and its NOTIFY tells every node's listener, as an append's does.
const CANCEL_RUNNING = `
  WITH hit AS (
    UPDATE conversations SET status = 'cancelled', task_result = NULL, owner = $1, epoch = epoch + 1, last_seq = last_seq + 1, updated_at = greatest(updated_at, $2)
    WHERE id = $3 AND principal = $4 AND status IN ('running', 'input_required') RETURNING id, last_seq
  ), added AS (
    INSERT INTO entries (conversation_id, seq, time, type, payload, payload_size) SELECT id, last_seq, $2, 'error', $5, ${payloadSize(5)} FROM hit RETURNING conversation_id, seq
  )
  SELECT seq, pg_notify('${TRANSCRIPTS_CHANNEL}', $6 || ' ' || conversation_id) FROM added`;

// Only while the principal's, still parked for input and ending at the seq the answer was asked at: the
// row lock makes two answers at once take turns, and the second re-reads the row the first committed
// (running now): it matches nothing. The setup of the first claim stays and comes back; the counts the
// park kept in task_result go (a running row holds no result).
const RESUME_PARKED = `
  UPDATE conversations SET status = 'running', task_result = NULL, owner = $1, epoch = epoch + 1, lease_expires = ${leaseNow(2)} + $3, updated_at = greatest(updated_at, $4)
  WHERE id = $5 AND principal = $6 AND status = 'input_required' AND last_seq = $7 RETURNING epoch, lease_expires, task_setup`;

// The same check, for an answer recorded while other questions of the park wait: the counter moves on
// (a second answer at the same seq waits for the row lock, re-reads it and matches nothing) and updated_at
// with it, as an append moves it; the status and epoch stay. Its NOTIFY tells other nodes' listeners, as an
// append's does.
const RECORD_PARKED_ANSWER = `
  WITH bumped AS (
    UPDATE conversations SET last_seq = last_seq + 1, updated_at = greatest(updated_at, $4)
    WHERE id = $1 AND principal = $2 AND status = 'input_required' AND last_seq = $3 RETURNING id, last_seq
  ), added AS (
    INSERT INTO entries (conversation_id, seq, time, type, payload, payload_size) SELECT id, last_seq, $4, 'person_answer', $5, ${payloadSize(5)} FROM bumped RETURNING conversation_id, seq
  )
  SELECT seq, pg_notify('${TRANSCRIPTS_CHANNEL}', $6 || ' ' || conversation_id) FROM added`;

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

const LIVE_NODES = `
  SELECT owner, node_id, advertise_url, greatest(0, ceil(extract(epoch FROM (lease_expires - now())) * 1000))::bigint AS remaining
  FROM cluster_nodes WHERE lease_expires > now() ORDER BY owner LIMIT $1`;

interface LeaseRow {
  epoch: string;
  lease_expires: string;
}

/** What the leases share with the store they are part of. */
export interface LeaseParts {
  readonly pool: Pool;
  readonly ownership: Ownership;
  readonly leaseMs: number;
  readonly maxPayloadBytes: number;
  /** The store's NOTIFY origin: its own node ignores what it announced itself. */
  readonly origin: string;
  readonly assertOpen: () => void;
  /** Wall-clock milliseconds, whole. */
  readonly now: () => number;
  /** The injected lease clock's reading, or null: the statement reads the database's clock. */
  readonly leaseNow: () => number | null;
  /** Why a write that named a conversation (and maybe an epoch) changed no row. */
  readonly missedWrite: (id: string, epoch: number | null, what?: string) => Promise<StoreError>;
}

export class PostgresLeases {
  readonly #pool: Pool;
  readonly #ownership: Ownership;
  readonly #leaseMs: number;
  readonly #maxPayloadBytes: number;
  readonly #origin: string;
  readonly #assertOpen: () => void;
  readonly #now: () => number;
  readonly #leaseNow: () => number | null;
  readonly #missedWrite: LeaseParts['missedWrite'];

  constructor(parts: LeaseParts) {
    this.#pool = parts.pool;
    this.#ownership = parts.ownership;
    this.#leaseMs = parts.leaseMs;
    this.#maxPayloadBytes = parts.maxPayloadBytes;
    this.#origin = parts.origin;
    this.#assertOpen = parts.assertOpen;
    this.#now = parts.now;
    this.#leaseNow = parts.leaseNow;
    this.#missedWrite = parts.missedWrite;
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

  async expiredTasks(limit: number, scope?: TakeoverScope): Promise<ExpiredTask[]> {
    this.#assertOpen();
    const max = pageLimit(limit, limit, MAX_EXPIRED_TASKS, 'limit');
    const below = scope?.below && scope.workspace !== null ? belowPrefix(scope.workspace) : null;
    const { rows } = await this.#pool.query<{ id: string; principal: string; harness: string; epoch: string; task_setup: string | null; lapsed_ms: string }>(
      EXPIRED_TASKS, [this.#leaseNow(), this.#ownership.self, max, scope !== undefined, scope?.patienceMs ?? 0, scope?.workspace ?? null, below],
    );
    return rows.map((r) => ({
      conversationId: r.id, principal: r.principal, harness: r.harness, epoch: integer(r.epoch, `conversation ${r.id} epoch`),
      setup: r.task_setup === null ? null : JSON.parse(r.task_setup), lapsedMs: integer(r.lapsed_ms, `conversation ${r.id} lapse`),
    }));
  }

  async takeOverTask(id: string, epoch: number): Promise<TaskLease | null> {
    this.#assertOpen();
    checkEpoch(epoch);
    if (!storableText(id)) return null;
    const { rows } = await this.#pool.query<LeaseRow>(TAKE_OVER, [this.#ownership.self, this.#leaseMs, id, epoch, this.#leaseNow()]);
    return rows[0] === undefined ? null : leaseFromRow(id, rows[0]);
  }

  async cancelRunningTask(id: string, principal: string, entry: unknown): Promise<RunningCancel> {
    this.#assertOpen();
    const json = serializePayload(entry, this.#maxPayloadBytes);
    if (!storableText(id) || !storableText(principal)) return 'not-found';
    const { rows } = await this.#pool.query(CANCEL_RUNNING, [this.#ownership.self, this.#now(), id, principal, json, this.#origin]);
    if (rows.length > 0) return 'cancelled';
    // An expired task (retention.ts) is not found, as a missing one.
    const found = await this.#pool.query(`SELECT 1 FROM conversations WHERE id = $1 AND principal = $2 AND ${liveSql('$3')}`, [id, principal, this.#now()]);
    return found.rows.length === 0 ? 'not-found' : 'not-running';
  }

  async resumeParkedTask(id: string, principal: string, seq: number): Promise<ParkedResume | null> {
    this.#assertOpen();
    if (!storableText(id) || !storableText(principal) || !Number.isSafeInteger(seq) || seq < 1) return null;
    const { rows } = await this.#pool.query<LeaseRow & { task_setup: string | null }>(RESUME_PARKED, [this.#ownership.self, this.#leaseNow(), this.#leaseMs, this.#now(), id, principal, seq]);
    const row = rows[0];
    return row === undefined ? null : { lease: leaseFromRow(id, row), setup: row.task_setup === null ? null : JSON.parse(row.task_setup) };
  }

  async recordParkedAnswer(id: string, principal: string, seq: number, answer: unknown): Promise<Entry | null> {
    this.#assertOpen();
    const json = serializePayload(answer, this.#maxPayloadBytes);
    if (!storableText(id) || !storableText(principal) || !Number.isSafeInteger(seq) || seq < 1) return null;
    const time = this.#now();
    const { rows } = await this.#pool.query<{ seq: string }>(RECORD_PARKED_ANSWER, [id, principal, seq, time, json, this.#origin]);
    const row = rows[0];
    return row === undefined ? null : { seq: integer(row.seq, 'entry seq'), conversationId: id, time, type: 'person_answer', payload: JSON.parse(json) };
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

  async liveNodes(limit: number): Promise<readonly ClusterNode[]> {
    this.#assertOpen();
    if (!Number.isSafeInteger(limit) || limit < 1) throw new StoreError('invalid_argument', `a node list's limit is a positive whole number, not ${limit}`);
    const { rows } = await this.#pool.query<{ owner: string; node_id: string; advertise_url: string; remaining: string }>(LIVE_NODES, [limit]);
    return rows.map((row) => ({ owner: row.owner, node: row.node_id, advertiseUrl: row.advertise_url, fresh: true, remainingMs: integer(row.remaining, `node ${row.owner} lease`) }));
  }
}

function leaseFromRow(conversationId: string, row: LeaseRow): TaskLease {
  return { conversationId, epoch: integer(row.epoch, `conversation ${conversationId} epoch`), expiresAt: integer(row.lease_expires, `conversation ${conversationId} lease`) };
}
