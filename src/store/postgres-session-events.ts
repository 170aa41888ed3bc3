// The session event log on PostgreSQL (session-events.ts): every SSE event a session sends, under a
// per-session seq, bounded by count, bytes and age; and what a node asks of the store to answer a request
// whose node died (OrphanLookup). Part of the PostgreSQL store, on its pool and clock (postgres-store.ts).

import type { Pool } from 'pg';
import { StoreError } from './errors.ts';
import { integer } from './postgres-rows.ts';
import { checkAfterSeq, checkSessionKey, pageLimit, storableText } from './store-checks.ts';
import { type EventPosition, keptEventData, type OrphanLookup, SESSION_EVENTS_CHANNEL, type SessionEvent, type SessionEventStore, STANDALONE_STREAM } from './session-events.ts';
import { SESSION_EVENT_HEADS_KEPT_MS, SESSION_EVENT_MAX_BYTES, SESSION_EVENTS_KEPT, SESSION_EVENTS_MAX_BYTES, SESSION_EVENTS_MAX_AGE_MS, SESSION_EVENTS_PAGE } from '../limits.ts';

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

/** What the log shares with the store it is part of, and its retention (options of `PostgresConversationStore.open`). */
export interface SessionEventLogParts {
  readonly pool: Pool;
  readonly assertOpen: () => void;
  /** Wall-clock milliseconds, whole. */
  readonly now: () => number;
  /** Default `SESSION_EVENTS_KEPT`. */
  readonly sessionEventsKept?: number | undefined;
  /** Default `SESSION_EVENTS_MAX_BYTES`. */
  readonly sessionEventsMaxBytes?: number | undefined;
  /** Default `SESSION_EVENT_MAX_BYTES`. */
  readonly sessionEventMaxBytes?: number | undefined;
}

export class PostgresSessionEventLog implements SessionEventStore, OrphanLookup {
  readonly #pool: Pool;
  readonly #assertOpen: () => void;
  readonly #now: () => number;
  readonly #eventsKept: number;
  readonly #eventsMaxBytes: number;
  readonly #eventMaxBytes: number;

  constructor(parts: SessionEventLogParts) {
    this.#pool = parts.pool;
    this.#assertOpen = parts.assertOpen;
    this.#now = parts.now;
    this.#eventsKept = pageLimit(parts.sessionEventsKept, SESSION_EVENTS_KEPT, Number.MAX_SAFE_INTEGER, 'sessionEventsKept');
    this.#eventsMaxBytes = pageLimit(parts.sessionEventsMaxBytes, SESSION_EVENTS_MAX_BYTES, Number.MAX_SAFE_INTEGER, 'sessionEventsMaxBytes');
    this.#eventMaxBytes = pageLimit(parts.sessionEventMaxBytes, SESSION_EVENT_MAX_BYTES, this.#eventsMaxBytes, 'sessionEventMaxBytes');
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
}
