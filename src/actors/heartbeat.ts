// The main thread's watch over one scheduler worker: a ping every interval, and the rule that decides
// the worker is hung. Time comes from the injected Clock, so the rule is tested exactly (test/actors/heartbeat.test.ts).

import type { Clock } from '../time/clock.ts';

export interface HeartbeatLimits {
  /** How often the main thread pings a worker. */
  readonly heartbeatIntervalMs: number;
  /** A worker that has not answered a ping for this long is hung: it is terminated. */
  readonly heartbeatTimeoutMs: number;
}

export interface HeartbeatHooks {
  /** Sends ping number `seq` to the worker. */
  readonly ping: (seq: number) => void;
  /** The worker is hung: a ping has stayed unanswered past the timeout, for `silentForMs`. Called once. */
  readonly hung: (silentForMs: number) => void;
  /**
   * Runs `fn` after the I/O already waiting has been read (default `setImmediate`, which comes after the
   * poll phase): a pong queued behind a busy main thread is read before the worker is called hung.
   */
  readonly afterPendingIo?: (fn: () => void) => void;
}

export class Heartbeat {
  readonly #clock: Clock;
  readonly #limits: HeartbeatLimits;
  readonly #hooks: HeartbeatHooks;
  readonly #timer: unknown;
  #started = false;
  #stopped = false;
  #lastPong = 0;
  /** When the unanswered ping was sent (0 with no ping yet: none outstanding). */
  #lastPing = 0;
  #seq = 0;

  /** Ticks from now on, but pings only once `start()` says the worker is up. */
  constructor(clock: Clock, limits: HeartbeatLimits, hooks: HeartbeatHooks) {
    this.#clock = clock;
    this.#limits = limits;
    this.#hooks = hooks;
    this.#lastPong = clock.now();
    this.#timer = clock.setInterval(() => this.#tick(), limits.heartbeatIntervalMs, { unref: true });
  }

  /** The worker is up (its ready handshake): pings start with the next tick. */
  start(): void {
    this.#started = true;
    this.#lastPong = this.#clock.now();
  }

  /** The worker answered a ping. */
  pong(): void {
    this.#lastPong = this.#clock.now();
  }

  stop(): void {
    this.#stopped = true;
    this.#clock.clearInterval(this.#timer);
  }

  #tick(): void {
    if (!this.#started || this.#stopped) return;
    // Hung means a ping sent long enough ago is still unanswered: a main thread that was itself blocked
    // (and so sent no pings) must not take its own pause for the worker's.
    const outstanding = this.#lastPing > this.#lastPong;
    if (outstanding && this.#clock.now() - this.#lastPing > this.#limits.heartbeatTimeoutMs) {
      (this.#hooks.afterPendingIo ?? setImmediate)(() => {
        if (this.#stopped || this.#lastPong >= this.#lastPing) return;
        this.stop();
        this.#hooks.hung(this.#clock.now() - this.#lastPing);
      });
      return;
    }
    if (outstanding) return;
    this.#lastPing = this.#clock.now();
    this.#hooks.ping(++this.#seq);
  }
}
