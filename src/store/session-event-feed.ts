// A node's side of the session event log (issue 14): the store's calls, plus wake-ups. One per node on a
// PostgreSQL store: it owns the node's LISTEN connection (postgres-listener.ts), wakes the streams
// waiting on a session when any node appends one of its events (and all of them when the connection
// comes back, as notifications may have been missed meanwhile), hands other nodes' transcript appends
// to whoever delivers resource updates and their status changes to whoever tells task status
// listeners, and sweeps events past their age.

import type { SessionEventStore } from './session-events.ts';
import { SESSION_EVENTS_SWEEP_MS } from '../limits.ts';

/** A wait for the next event of one session; `cancel` when no longer waiting (it is then forgotten). */
export interface EventWait {
  readonly woken: Promise<void>;
  cancel(): void;
}

/** A LISTEN connection as the feed holds it (postgres-listener.ts). */
export interface Listening {
  readonly ready: Promise<void>;
  close(): Promise<void>;
}

/** What the feed needs of the store: the log, and a LISTEN connection. */
export interface FeedStore extends SessionEventStore {
  listen(handlers: {
    readonly sessionEvent: (sessionId: string, seq: number) => void;
    readonly transcript: (conversationId: string) => void;
    readonly taskStatus?: (conversationId: string) => void;
    readonly onConnected: () => void;
    readonly onError: (error: Error) => void;
  }): Listening;
}

export interface FeedOptions {
  /** Another node appended to this conversation's transcript. */
  readonly transcriptChanged: (conversationId: string) => void;
  /** Another node set this conversation's status (task-status-watch.ts). */
  readonly taskStatusChanged?: (conversationId: string) => void;
  /** Listening again after the connection was lost: what was announced meanwhile was missed. */
  readonly relistened?: () => void;
  /** The LISTEN connection failed (it is retried), or a sweep did. */
  readonly onError: (what: string, error: Error) => void;
}

export class SessionEventFeed {
  readonly store: SessionEventStore;
  readonly #listener: Listening;
  /** Session id → the wake-ups of streams waiting on it. */
  readonly #waiting = new Map<string, Set<() => void>>();
  readonly #sweep: NodeJS.Timeout;
  #closed = false;

  constructor(store: FeedStore, options: FeedOptions) {
    this.store = store;
    this.#listener = store.listen({
      sessionEvent: (sessionId) => this.#wake(this.#waiting.get(sessionId)),
      transcript: options.transcriptChanged,
      ...(options.taskStatusChanged === undefined ? {} : { taskStatus: options.taskStatusChanged }),
      onConnected: () => {
        for (const wakes of this.#waiting.values()) this.#wake(wakes);
        options.relistened?.();
      },
      onError: (error) => options.onError('the LISTEN connection to the store failed; connecting again', error),
    });
    this.#sweep = setInterval(() => {
      if (this.#closed) return;
      this.store.pruneSessionEvents().catch((err: unknown) => options.onError('pruning old session events failed; trying again at the next sweep', err as Error));
    }, SESSION_EVENTS_SWEEP_MS);
    this.#sweep.unref();
  }

  /** Resolves once the node listens (the first time): a stream waiting before that could miss a wake-up. */
  get ready(): Promise<void> {
    return this.#listener.ready;
  }

  /** Waits for the next event any node appends to `sessionId`. Register before reading the log, so nothing appended in between is missed. */
  wait(sessionId: string): EventWait {
    let wake!: () => void;
    const woken = new Promise<void>((r) => (wake = r));
    let wakes = this.#waiting.get(sessionId);
    if (!wakes) this.#waiting.set(sessionId, (wakes = new Set()));
    const set = wakes;
    const entry = () => wake();
    set.add(entry);
    return {
      woken,
      cancel: () => {
        set.delete(entry);
        if (set.size === 0 && this.#waiting.get(sessionId) === set) this.#waiting.delete(sessionId);
        wake();
      },
    };
  }

  /** Streams waiting now (tests check that a stream that ended forgot its wait). */
  get waiting(): number {
    let n = 0;
    for (const set of this.#waiting.values()) n += set.size;
    return n;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#sweep);
    for (const wakes of this.#waiting.values()) this.#wake(wakes);
    await this.#listener.close();
  }

  #wake(wakes: Set<() => void> | undefined): void {
    for (const w of wakes ?? []) w();
  }
}
