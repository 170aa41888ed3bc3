// Time, injected. Supervisors read the time (restart windows) and arm timers (shutdown timeouts)
// only through a Clock, so tests drive both exactly with FakeClock instead of waiting.

export interface Clock {
  /** Milliseconds on a monotonic scale; only differences between two readings mean anything. */
  now(): number;
  /** Runs `fn` once after `ms` milliseconds; returns a handle for `clearTimeout`. */
  setTimeout(fn: () => void, ms: number): unknown;
  /** Cancels a timer armed by this clock's `setTimeout`; unknown or spent handles are ignored. */
  clearTimeout(handle: unknown): void;
}

/**
 * The process clock: `performance.now()` (monotonic, so a wall-clock jump cannot empty or flood a
 * restart window) and Node's timers.
 */
export const realClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  // The handle can only have come from `setTimeout` above; Node's clearTimeout ignores anything else.
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

interface FakeTimer {
  readonly id: number;
  readonly due: number;
  readonly fn: () => void;
}

/**
 * A clock that moves only when told to. `advance(ms)` runs every timer that falls due within the
 * step, earliest first (ties in the order they were armed), with `now()` reading each timer's due
 * time while it runs; timers armed by a running timer run too if they fall due within the step.
 * It does not flush promise callbacks: a test that awaits work triggered by a timer flushes after.
 */
export class FakeClock implements Clock {
  #now: number;
  #nextId = 1;
  #timers: FakeTimer[] = [];

  constructor(startMs = 0) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): number {
    const id = this.#nextId++;
    this.#timers.push({ id, due: this.#now + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#timers = this.#timers.filter((t) => t.id !== handle);
  }

  /** Timers armed and not yet run or cleared. */
  get pendingTimers(): number {
    return this.#timers.length;
  }

  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`FakeClock.advance: ms must be a non-negative number, got ${ms}`);
    const target = this.#now + ms;
    for (let next = this.#nextDue(target); next; next = this.#nextDue(target)) {
      this.#timers = this.#timers.filter((t) => t !== next);
      this.#now = next.due;
      next.fn();
    }
    this.#now = target;
  }

  #nextDue(target: number): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const t of this.#timers) {
      if (t.due > target) continue;
      if (!best || t.due < best.due || (t.due === best.due && t.id < best.id)) best = t;
    }
    return best;
  }
}
