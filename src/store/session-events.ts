// The session event log's contract (issue 14): on a PostgreSQL store every SSE event a session sends is
// appended to `session_events` before it is written, under a per-session seq that is the SSE event id —
// unique per session across nodes (the counter row is bumped in the insert's own statement) — and a
// NOTIFY in the same transaction wakes every node's listener, so a client resuming a stream with
// Last-Event-ID is served from the log on whichever node its GET lands. The SQLite store keeps
// today's in-memory log (transports/sse-stream.ts): one node needs no more.

/** The NOTIFY channel of appended session events; the payload is `<session id> <seq>`. */
export const SESSION_EVENTS_CHANNEL = 'superpi_session_events';
/** The NOTIFY channel of appended transcript entries; the payload is `<origin> <conversation id>`. */
export const TRANSCRIPTS_CHANNEL = 'superpi_transcripts';
/** The NOTIFY channel of conversation status changes (`setStatus`); the payload is `<origin> <conversation id>`. */
export const TASK_STATUS_CHANNEL = 'superpi_task_status';

/** The name of a session's standalone (GET) stream in the log; a POST's stream is named by its first request. */
export const STANDALONE_STREAM = 'standalone';

/** The stream of the POST that carries the request with this id key (`idKey`): its answer goes there. */
export function requestStream(requestKey: string): string {
  return `request:${requestKey}`;
}

/**
 * Whose session log it is, as the store keeps it: anonymous callers are one principal (the session id,
 * a random UUID only its client knows, keeps them apart), as the session registry treats them.
 */
export function eventPrincipal(principal: { readonly kind: 'local' } | { readonly kind: 'token'; readonly name: string } | { readonly kind: 'anonymous' }): string {
  switch (principal.kind) {
    case 'local': return 'local';
    case 'token': return `token:${principal.name}`;
    case 'anonymous': return 'anonymous';
  }
}

/**
 * What a session's log keeps of an event of `bytes` bytes: the event itself, or past `maxBytes` a small
 * notice in its place (the event still goes out live). A valid JSON-RPC notification, so a client that
 * resumes past it reads why the event is missing; on a request's stream it still ends that stream.
 */
export function keptEventData(data: string, bytes: number, maxBytes: number): string {
  if (bytes <= maxBytes) return data;
  return JSON.stringify({
    jsonrpc: '2.0', method: 'notifications/message',
    params: { level: 'warning', logger: 'super-pi', data: `an event of ${bytes} bytes was sent live but is too large to replay (the session log keeps events of up to ${maxBytes} bytes); if it answered a request, send the request again` },
  });
}

/** One SSE event as kept. */
export interface SessionEvent {
  /** The SSE event id. */
  readonly seq: number;
  readonly stream: string;
  /** The event's data: one JSON-RPC message, or '' for a stream's priming event. */
  readonly data: string;
  /** Nothing follows on this stream (the last answer of a POST). */
  readonly ends: boolean;
}

/** Where an event id stands in a session's log. */
export type EventPosition =
  /** Kept: the stream it is on, and whether it ended that stream (nothing follows it there). */
  | { readonly kind: 'kept'; readonly stream: string; readonly ends: boolean }
  /** Issued once, but pruned by retention (or it named another session's event): its stream cannot be known. */
  | { readonly kind: 'expired'; readonly last: number }
  /** Never issued in this session (past its last seq). */
  | { readonly kind: 'ahead'; readonly last: number };

/** The log, as a PostgreSQL store offers it. Another principal's session reads as one that does not exist. */
export interface SessionEventStore {
  /**
   * Appends one event (committed, with its NOTIFY, before it resolves) and prunes the session's oldest past
   * SESSION_EVENTS_KEPT events or SESSION_EVENTS_MAX_BYTES bytes; an event past SESSION_EVENT_MAX_BYTES is
   * kept as `keptEventData`'s notice. Resolves to its seq.
   */
  appendSessionEvent(sessionId: string, principal: string, stream: string, data: string, ends?: boolean): Promise<number>;
  /** Where `seq` stands, or null when the session has no log, or is another principal's. */
  sessionEventPosition(sessionId: string, principal: string, seq: number): Promise<EventPosition | null>;
  /** Up to `limit` events after `afterSeq` in seq order (of `stream` only, when given), or null as above. */
  sessionEventsAfter(sessionId: string, principal: string, afterSeq: number, options?: { readonly stream?: string; readonly limit?: number }): Promise<SessionEvent[] | null>;
  /** Deletes events older than SESSION_EVENTS_MAX_AGE_MS (and long-idle counters); resolves to the events deleted. */
  pruneSessionEvents(): Promise<number>;
}

/**
 * What a node needs of the store to answer a request whose node died (PostgreSQL; the SQLite store has
 * no event log and one node): which request streams of a session never got their ending event, and
 * whether a running task will still answer one (it is then answered by the node that takes it over).
 */
export interface OrphanLookup {
  /** The session's request streams (never STANDALONE_STREAM) with events but no ending event, oldest first; [] for another principal's session or one with no log. */
  unendedRequestStreams(sessionId: string, principal: string): Promise<string[]>;
  /** Whether a running task's stored setup says it answers `request` of this session (`answers` in task-takeover.ts). */
  taskAnswers(sessionId: string, principal: string, request: string | number): Promise<boolean>;
}
