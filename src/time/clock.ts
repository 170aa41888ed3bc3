// Time, injected. Everything that waits — restart windows, shutdown timeouts, the scheduler heartbeat,
// the spawn wait, tool deadlines, task wall time — reads the time and arms its timers through a Clock,
// so a test drives them exactly with FakeClock (fake-clock.ts) instead of sleeping. Imports nothing.

/** What a timer may ask of the event loop. */
export interface TimerOptions {
  /** The timer alone does not keep the process alive (Node's `unref`). Default false. */
  readonly unref?: boolean;
}

export interface Clock {
  /** Milliseconds on a monotonic scale; only differences between two readings mean anything. */
  now(): number;
  /** Runs `fn` once after `ms` milliseconds; returns a handle for `clearTimeout`. */
  setTimeout(fn: () => void, ms: number, options?: TimerOptions): unknown;
  /** Cancels a timer armed by this clock's `setTimeout`; unknown, spent or undefined handles are ignored. */
  clearTimeout(handle: unknown): void;
  /** Runs `fn` every `ms` milliseconds, the next run `ms` after the last one began; returns a handle for `clearInterval`. */
  setInterval(fn: () => void, ms: number, options?: TimerOptions): unknown;
  /** Cancels an interval armed by this clock's `setInterval`; unknown or undefined handles are ignored. */
  clearInterval(handle: unknown): void;
}

type NodeTimer = ReturnType<typeof setTimeout>;

/**
 * The process clock: `process.hrtime()` (monotonic, so a wall-clock jump can neither empty nor flood a
 * restart window, nor fire a deadline early; one scale for every thread of the process) and Node's
 * timers. Not the global `performance`: touching it loads perf_hooks, about 1.5 ms of a cold start.
 */
export const systemClock: Clock = {
  now: () => {
    const [seconds, nanoseconds] = process.hrtime();
    return seconds * 1000 + nanoseconds / 1e6;
  },
  setTimeout: (fn, ms, options) => {
    const timer = setTimeout(fn, ms);
    if (options?.unref === true) timer.unref();
    return timer;
  },
  // A handle can only have come from this clock's setTimeout; Node's clearTimeout ignores anything else.
  clearTimeout: (handle) => clearTimeout(handle as NodeTimer | undefined),
  setInterval: (fn, ms, options) => {
    const timer = setInterval(fn, ms);
    if (options?.unref === true) timer.unref();
    return timer;
  },
  clearInterval: (handle) => clearInterval(handle as NodeTimer | undefined),
};
