// Fair admission to the tool pool: which waiting pooled call gets the next free thread. A principal runs
// at most `perPrincipal` calls at once — by default one thread fewer than the pool has, so whatever one
// principal submits, another finds a thread free — and the rest wait in one FIFO per session, served
// round-robin across principals and, within a principal, across its sessions. Pure bookkeeping: no
// threads, no timers; the pool asks before it runs a call and releases the slot when the call ends.
import { TOOL_POOL_MAX_WAITING_PER_SESSION } from '../limits.ts';

/** Who a pooled call is for. All anonymous callers are one principal here, so that opening sessions buys no share. */
export interface PoolCaller {
  readonly principal: string;
  readonly session: string;
}

/**
 * Pooled calls one principal may run at once on a pool of `threads` threads: all but one (at least
 * one), so a second principal always has a thread when the pool has two or more.
 */
export function defaultPrincipalShare(threads: number): number {
  return Math.max(1, threads - 1);
}

/** Frees the slot a call held; calling it again does nothing. */
export type Release = () => void;

/** A call refused because its session already has TOOL_POOL_MAX_WAITING_PER_SESSION calls waiting. */
export class PoolQueueFull extends Error {
  override readonly name = 'PoolQueueFull';
}

export interface FairShareOptions {
  /** Calls that may run at once in all: the pool's threads. */
  readonly slots: number;
  /** Calls one principal may run at once (default `defaultPrincipalShare(slots)`). */
  readonly perPrincipal?: number;
  /** Calls one session may have waiting (default TOOL_POOL_MAX_WAITING_PER_SESSION). */
  readonly maxWaitingPerSession?: number;
}

interface Waiter {
  readonly caller: PoolCaller;
  readonly grant: (release: Release) => void;
  readonly refuse: (reason: unknown) => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: () => void;
}

export class FairShare {
  readonly #slots: number;
  readonly #perPrincipal: number;
  readonly #maxWaiting: number;
  #running = 0;
  readonly #runningBy = new Map<string, number>();
  /** principal → session → FIFO. Map order is the round-robin order: whoever is served moves to the back. */
  readonly #waiting = new Map<string, Map<string, Waiter[]>>();

  constructor(options: FairShareOptions) {
    if (!Number.isSafeInteger(options.slots) || options.slots < 1) throw new RangeError(`slots must be a whole number of at least 1, not ${options.slots}`);
    this.#slots = options.slots;
    this.#perPrincipal = options.perPrincipal ?? defaultPrincipalShare(options.slots);
    if (!Number.isSafeInteger(this.#perPrincipal) || this.#perPrincipal < 1) throw new RangeError(`perPrincipal must be a whole number of at least 1, not ${this.#perPrincipal}`);
    this.#maxWaiting = options.maxWaitingPerSession ?? TOOL_POOL_MAX_WAITING_PER_SESSION;
  }

  get perPrincipal(): number {
    return this.#perPrincipal;
  }

  /** Calls running now, in all. */
  get running(): number {
    return this.#running;
  }

  /** Calls waiting now, in all. */
  get waiting(): number {
    let n = 0;
    for (const sessions of this.#waiting.values()) for (const queue of sessions.values()) n += queue.length;
    return n;
  }

  /**
   * Resolves with a release function when the caller may run one call; rejects with the signal's
   * reason if it aborts first (the call then never ran), or with PoolQueueFull at once.
   */
  acquire(caller: PoolCaller, signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const sessions = this.#waiting.get(caller.principal) ?? new Map<string, Waiter[]>();
    const queue = sessions.get(caller.session) ?? [];
    if (queue.length >= this.#maxWaiting) {
      return Promise.reject(new PoolQueueFull(`${queue.length} tool calls of this session are already waiting for a tool thread (limit ${this.#maxWaiting}); wait for some to finish`));
    }
    return new Promise<Release>((grant, refuse) => {
      const waiter: Waiter = { caller, grant, refuse, signal, onAbort: () => this.#withdraw(waiter) };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      queue.push(waiter);
      sessions.set(caller.session, queue);
      this.#waiting.set(caller.principal, sessions);
      this.#dispatch();
    });
  }

  #dispatch(): void {
    while (this.#running < this.#slots) {
      const next = this.#next();
      if (next === null) return;
      this.#start(next);
    }
  }

  /** Takes the next waiter in round-robin order whose principal is under its share, or null. */
  #next(): Waiter | null {
    for (const [principal, sessions] of this.#waiting) {
      if ((this.#runningBy.get(principal) ?? 0) >= this.#perPrincipal) continue;
      // Empty queues and principals without sessions are removed as they empty, so the first is non-empty.
      const [session, queue] = sessions.entries().next().value as [string, Waiter[]];
      const waiter = queue.shift() as Waiter;
      // Served: this session goes behind its principal's other sessions, the principal behind the others.
      sessions.delete(session);
      if (queue.length > 0) sessions.set(session, queue);
      this.#waiting.delete(principal);
      if (sessions.size > 0) this.#waiting.set(principal, sessions);
      return waiter;
    }
    return null;
  }

  #start(waiter: Waiter): void {
    waiter.signal?.removeEventListener('abort', waiter.onAbort);
    const { principal } = waiter.caller;
    this.#running++;
    this.#runningBy.set(principal, (this.#runningBy.get(principal) ?? 0) + 1);
    let released = false;
    waiter.grant(() => {
      if (released) return;
      released = true;
      this.#running--;
      const left = (this.#runningBy.get(principal) ?? 1) - 1;
      if (left === 0) this.#runningBy.delete(principal);
      else this.#runningBy.set(principal, left);
      this.#dispatch();
    });
  }

  #withdraw(waiter: Waiter): void {
    const { principal, session } = waiter.caller;
    const sessions = this.#waiting.get(principal);
    const queue = sessions?.get(session);
    const at = queue?.indexOf(waiter) ?? -1;
    if (sessions === undefined || queue === undefined || at < 0) return;
    queue.splice(at, 1);
    if (queue.length === 0) sessions.delete(session);
    if (sessions.size === 0) this.#waiting.delete(principal);
    waiter.refuse(waiter.signal?.reason);
  }
}
