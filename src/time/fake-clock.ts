// A clock that moves only when told to, for tests of everything that waits (and for library users'
// tests of their own): exact, no sleeps.

import type { Clock } from './clock.ts';

interface FakeTimer {
  readonly id: number;
  due: number;
  readonly fn: () => void;
  /** Set for an interval: its period. */
  readonly every?: number;
}

/**
 * `advance(ms)` runs every timer that falls due within the step, earliest first (ties in the order they
 * were armed), with `now()` reading each timer's due time while it runs; timers armed by a running timer
 * run too if they fall due within the step, and an interval runs as often as it falls due. `stall(ms)`
 * moves the time without running anything, as a blocked event loop does: the timers it overran run,
 * late and once each, on the next `advance`. Neither flushes promise callbacks: a test that awaits work
 * triggered by a timer flushes after.
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
    return this.#arm(fn, ms, undefined);
  }

  clearTimeout(handle: unknown): void {
    this.#timers = this.#timers.filter((t) => t.id !== handle);
  }

  setInterval(fn: () => void, ms: number): number {
    // Node runs an interval of 0 every 1 ms; so does this (an advance would never end otherwise).
    return this.#arm(fn, ms, Math.max(1, ms));
  }

  clearInterval(handle: unknown): void {
    this.clearTimeout(handle);
  }

  /** Timers and intervals armed and not yet run (a timer) or cleared. */
  get pendingTimers(): number {
    return this.#timers.length;
  }

  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`FakeClock.advance: ms must be a non-negative number, got ${ms}`);
    const target = this.#now + ms;
    for (let next = this.#nextDue(target); next; next = this.#nextDue(target)) {
      // A timer overrun by a stall runs late, at the time it finally runs.
      this.#now = Math.max(this.#now, next.due);
      if (next.every === undefined) this.#timers = this.#timers.filter((t) => t !== next);
      else next.due = this.#now + next.every;
      next.fn();
    }
    this.#now = target;
  }

  /** The time moves by `ms` and nothing runs (a blocked thread); what fell due runs on the next `advance`. */
  stall(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`FakeClock.stall: ms must be a non-negative number, got ${ms}`);
    this.#now += ms;
  }

  #arm(fn: () => void, ms: number, every: number | undefined): number {
    const id = this.#nextId++;
    this.#timers.push({ id, due: this.#now + Math.max(0, ms), fn, ...(every === undefined ? {} : { every }) });
    return id;
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
