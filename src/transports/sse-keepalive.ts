// Keep-alive of idle SSE streams: a stream on which nothing was written for the interval
// (SSE_KEEPALIVE_MS, `--sse-keepalive`) gets a comment line, which every SSE parser ignores, so a proxy or
// load balancer that closes idle connections (commonly after 60 s) leaves a quiet listen stream, GET
// stream or long tool call open. One timer sweeps all of a server's streams, a quarter interval apart,
// and only while there is one: a write only notes the sweep count (no timer to reset), so thousands of
// idle streams cost one timer and a Set, not thousands of timers re-armed on every event. A stream whose
// socket buffer is full is skipped: its own bytes are still waiting to leave, a comment would only add
// to them.

import { type Clock, systemClock } from '../time/clock.ts';
import type { OutputBudget } from './output-budget.ts';
import { MAX_OUTPUT_BACKLOG_BYTES, SSE_KEEPALIVE_MS } from '../limits.ts';

/** Sweeps per interval: a stream gets its comment at most a quarter interval past the interval. */
const SWEEPS_PER_INTERVAL = 4;

/** The comment written on an idle stream: no event, no id, nothing kept for replay. */
export const KEEPALIVE_COMMENT = ': keep-alive\n\n';

/** What the sweep asks of a stream. */
export interface IdleStream {
  /** The sweep count at the stream's last write (`KeepAlive.sweeps` then). */
  readonly lastWrite: number;
  /** Nothing was written for the interval: write the comment, unless the socket is full. */
  keepAlive(): void;
}

/** How much a stream's client may leave unread, and who hears of a stream ended for it. */
export interface StreamBacklog {
  /** Bytes written to a stream and not yet taken by its client, past which the stream is ended (MAX_OUTPUT_BACKLOG_BYTES). */
  readonly maxBytes: number;
  /** A stream was ended past `maxBytes`, with `bytes` unread. */
  readonly onOverflow?: (bytes: number) => void;
  /** The node's budget over every connection's unread output: a write notes its reply's connection there. */
  readonly budget?: OutputBudget;
}

export class KeepAlive {
  /** How long a stream may stay silent before it gets a comment, in ms. */
  readonly intervalMs: number;
  /** The bound on what the streams of this server may leave unread (every stream is written through here). */
  readonly backlog: StreamBacklog;
  readonly #clock: Clock;
  readonly #sweepMs: number;
  readonly #streams = new Set<IdleStream>();
  #sweeps = 0;
  #timer: unknown = null;

  constructor(intervalMs: number = SSE_KEEPALIVE_MS, clock: Clock = systemClock, backlog: StreamBacklog = { maxBytes: MAX_OUTPUT_BACKLOG_BYTES }) {
    if (!Number.isFinite(intervalMs) || intervalMs < 1) throw new RangeError(`the SSE keep-alive interval must be at least 1 ms, not ${intervalMs}`);
    if (!Number.isFinite(backlog.maxBytes) || backlog.maxBytes < 1) throw new RangeError(`the SSE output backlog must be at least 1 byte, not ${backlog.maxBytes}`);
    this.intervalMs = intervalMs;
    this.backlog = backlog;
    this.#clock = clock;
    this.#sweepMs = Math.max(1, intervalMs / SWEEPS_PER_INTERVAL);
  }

  /** Sweeps so far: a stream notes it at each write. */
  get sweeps(): number {
    return this.#sweeps;
  }

  /**
   * The sweep count a write at a sweep counts as: one less than now, so a stream left idle after its
   * comment gets the next exactly one interval later (a write between two sweeps waits up to a quarter more).
   */
  get sweptAt(): number {
    return this.#sweeps - 1;
  }

  /** Streams watched (the timer runs while there is one). */
  get size(): number {
    return this.#streams.size;
  }

  add(stream: IdleStream): void {
    this.#streams.add(stream);
    // Unref'd: open streams never keep the process alive by themselves.
    this.#timer ??= this.#clock.setInterval(() => this.#sweep(), this.#sweepMs, { unref: true });
  }

  delete(stream: IdleStream): void {
    if (!this.#streams.delete(stream) || this.#streams.size > 0 || this.#timer === null) return;
    this.#clock.clearInterval(this.#timer);
    this.#timer = null;
  }

  #sweep(): void {
    const now = ++this.#sweeps;
    // A write noted at sweep count c happened after sweep c began: more than SWEEPS_PER_INTERVAL sweeps
    // later, a whole interval has passed.
    for (const s of this.#streams) {
      if (now - s.lastWrite <= SWEEPS_PER_INTERVAL) continue;
      try {
        s.keepAlive();
      } catch {
        // A stream that cannot be written is not swept again; the others are (a throw here would end the process).
        this.delete(s);
      }
    }
  }
}

let shared: KeepAlive | null = null;

/** The process's keep-alive at SSE_KEEPALIVE_MS on the system clock, for streams made without one. */
export function defaultKeepAlive(): KeepAlive {
  return (shared ??= new KeepAlive());
}
