// One Server-Sent Events stream: unique event ids per session, keep-alive comments so idle streams
// survive proxies (sse-keepalive.ts: one sweep for all streams, the one place they are written), and a bounded replay buffer for a client that reconnects with Last-Event-ID. Where
// the ids come from is an `EventIds`: this process's counter (one node, SQLite), or a PostgreSQL store's
// session event log, where each event is appended before it is written (its seq is its id) so a client
// may resume the stream on any node (issue 14).

import type { ReplyTarget } from './web-reply.ts';
import { defaultKeepAlive, type IdleStream, KEEPALIVE_COMMENT, type KeepAlive } from './sse-keepalive.ts';
import { keptEventData, type SessionEventStore } from '../store/session-events.ts';
import { SESSION_EVENT_MAX_BYTES, SESSION_EVENTS_MAX_BYTES, SSE_REPLAY_EVENTS } from '../limits.ts';

/** How a session's SSE events get their ids, in the order they are emitted. */
export interface EventIds {
  /** Are events kept in the store (and POST streams primed, so a client can resume them anywhere)? */
  readonly durable: boolean;
  /**
   * Gives the event on `stream` its id (on a store: appends it first, committed) and then calls `write`
   * with it; writes happen in emit order. `ends`: nothing follows on this stream. A null id: the store
   * failed, and the event is written without one (live, but not resumable).
   */
  emit(stream: string, data: string, ends: boolean, write: (id: string | null) => void): void;
  /** Runs `f` once every event emitted so far has been written. */
  afterWrites(f: () => void): void;
}

/** Ids from this process's counter: at once, in order, nothing kept but the GET stream's replay buffer. */
export class MemoryEventIds implements EventIds {
  readonly durable = false;
  readonly #log: EventLog;

  constructor(log: EventLog) {
    this.#log = log;
  }

  emit(_stream: string, _data: string, _ends: boolean, write: (id: string | null) => void): void {
    write(this.#log.nextId());
  }

  afterWrites(f: () => void): void {
    f();
  }
}

/**
 * Ids from the store's session event log: each event is appended (one after the other, so the log's
 * order is the emit order) before it is written. Created with the session's first event.
 */
export class StoredEventIds implements EventIds {
  readonly durable = true;
  readonly #store: SessionEventStore;
  readonly #sessionId: string;
  readonly #principal: string;
  readonly #onError: (error: Error) => void;
  #last: Promise<void> = Promise.resolve();

  constructor(store: SessionEventStore, sessionId: string, principal: string, onError: (error: Error) => void) {
    this.#store = store;
    this.#sessionId = sessionId;
    this.#principal = principal;
    this.#onError = onError;
  }

  emit(stream: string, data: string, ends: boolean, write: (id: string | null) => void): void {
    this.#last = this.#last.then(() => this.#store.appendSessionEvent(this.#sessionId, this.#principal, stream, data, ends)).then(
      (seq) => write(String(seq)),
      (err: unknown) => {
        this.#onError(err as Error);
        write(null);
      },
    ).catch((err: unknown) => this.#onError(err as Error));
  }

  afterWrites(f: () => void): void {
    this.#last = this.#last.then(f).catch((err: unknown) => this.#onError(err as Error));
  }
}


/** The bounds of a replay buffer (tests pass small ones). */
export interface ReplayLimits {
  readonly events: number;
  readonly bytes: number;
  readonly eventBytes: number;
}

const REPLAY_LIMITS: ReplayLimits = { events: SSE_REPLAY_EVENTS, bytes: SESSION_EVENTS_MAX_BYTES, eventBytes: SESSION_EVENT_MAX_BYTES };

/** Per-session event ids and the replay buffer of the session's standalone (GET) stream. */
export class EventLog implements EventIds {
  readonly #limits: ReplayLimits;
  #next = 1;
  /** Created with the first event to remember: most sessions never send one on their GET stream. */
  #buffer: { id: string; data: string; bytes: number }[] | null = null;
  #bytes = 0;

  constructor(limits: ReplayLimits = REPLAY_LIMITS) {
    this.#limits = limits;
  }

  nextId(): string {
    return String(this.#next++);
  }

  /** This process's ids (what MemoryEventIds gives), so a session needs no second object for them. */
  get durable(): false {
    return false;
  }

  emit(_stream: string, _data: string, _ends: boolean, write: (id: string | null) => void): void {
    write(this.nextId());
  }

  afterWrites(f: () => void): void {
    f();
  }

  /** Bytes of the events kept for replay (at most `limits.bytes`). */
  get bytes(): number {
    return this.#bytes;
  }

  /** Keeps an event for replay: the oldest go while more than the count or the bytes are kept. */
  remember(id: string, data: string): void {
    const buffer = (this.#buffer ??= []);
    const size = Buffer.byteLength(data);
    const kept = keptEventData(data, size, this.#limits.eventBytes);
    const bytes = kept === data ? size : Buffer.byteLength(kept);
    buffer.push({ id, data: kept, bytes });
    this.#bytes += bytes;
    while (buffer.length > this.#limits.events || (this.#bytes > this.#limits.bytes && buffer.length > 1)) {
      this.#bytes -= (buffer.shift() as { bytes: number }).bytes;
    }
  }

  /** Events after `lastEventId`, or null when that id is no longer (or never was) in the buffer. */
  after(lastEventId: string): { id: string; data: string }[] | null {
    const buffer = this.#buffer ?? [];
    const i = buffer.findIndex((e) => e.id === lastEventId);
    return i === -1 ? null : buffer.slice(i + 1);
  }
}

/** One SSE reply; every byte of it is written here, so a write is seen by the keep-alive. */
export class SseStream implements IdleStream {
  readonly #res: ReplyTarget;
  readonly #keepAlive: KeepAlive;
  #open = true;
  #lastWrite: number;
  #onClose: (() => void)[] | null = null;

  /** `keepAlive`: the sweep that writes comments while the stream is idle (default: the process's, SSE_KEEPALIVE_MS). */
  constructor(res: ReplyTarget, headers: Record<string, string> = {}, keepAlive: KeepAlive = defaultKeepAlive()) {
    this.#res = res;
    this.#keepAlive = keepAlive;
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache, no-transform', Connection: 'keep-alive', ...headers });
    res.flushHeaders();
    this.#lastWrite = keepAlive.sweeps;
    keepAlive.add(this);
    res.on('close', () => this.#closed());
    // A client gone before the stream began has sent its 'close' already: the stream is closed at once.
    if (res.destroyed) this.#closed();
  }

  get open(): boolean {
    return this.#open;
  }

  /** The keep-alive's sweep count at the last write (headers included). */
  get lastWrite(): number {
    return this.#lastWrite;
  }

  /** One event; `id` null: an event that cannot be resumed from (written without an id). */
  send(id: string | null, data: string): void {
    this.#write(`${id === null ? '' : `id: ${id}\n`}event: message\ndata: ${data}\n\n`);
  }

  /** Nothing written for the interval: a comment, unless the socket's buffer is full (its bytes still leave). */
  keepAlive(): void {
    if (!this.#open || this.#res.writableNeedDrain) return;
    this.#res.write(KEEPALIVE_COMMENT);
    this.#lastWrite = this.#keepAlive.sweptAt;
  }

  end(): void {
    if (!this.#open) return;
    this.#closed();
    this.#res.end();
  }

  #write(chunk: string): void {
    if (!this.#open) return;
    this.#lastWrite = this.#keepAlive.sweeps;
    this.#res.write(chunk);
    this.#keepAlive.backlog.budget?.noteConnection(this.#res.socket);
    // A client that reads nothing while events keep coming would grow this reply's buffer without end
    // (node:http queues every write): past the backlog limit the stream is ended, its unread bytes dropped,
    // as a WebSocket is closed 1008 and a stdio host treated as gone. A resumable stream's client may come
    // back with Last-Event-ID.
    const queued = this.#res.writableLength;
    if (queued > this.#keepAlive.backlog.maxBytes) this.#overflow(queued);
  }

  #overflow(queued: number): void {
    this.drop();
    this.#keepAlive.backlog.onOverflow?.(queued);
  }

  /** Ends the stream at once, its unsent bytes dropped (its client left too much unread, or a newer stream took its place). */
  drop(): void {
    if (!this.#open) return;
    this.#closed();
    this.#res.destroy();
  }

  /** Runs `f` once the stream closes (ended here, or the client went); at once if it has. */
  onClose(f: () => void): void {
    if (!this.#open) return f();
    (this.#onClose ??= []).push(f);
  }

  #closed(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#keepAlive.delete(this);
    const callbacks = this.#onClose ?? [];
    this.#onClose = null;
    for (const f of callbacks) f();
  }
}
