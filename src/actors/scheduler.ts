// The scheduler pool: a fixed set of scheduler worker threads (default: thread-count.ts) and
// the placement of actors on them — many actors per thread, never one thread per session.

import type { ActorRef } from './actor-ref.ts';
import type { BehaviourRef } from './behaviour.ts';
import { DEFAULT_THREAD_LIMITS, type InlineCallsHook, SchedulerThread, type ThreadLimits } from './scheduler-thread.ts';
import { defaultThreadCount } from './thread-count.ts';
import type { ThreadEntry } from './thread-entry.ts';

/** How long a spawn waits for a scheduler thread when every one is down (being restarted). */
export const SPAWN_WAIT_MS = 10_000;

export interface SchedulerOptions {
  readonly threads: number;
  readonly limits: ThreadLimits;
  readonly log: (msg: string, data?: Record<string, unknown>) => void;
  /** The code each thread runs: the entry point that registers the behaviours (see thread-entry.ts). */
  readonly entry: ThreadEntry;
  /** Told of the tool calls actors ran inline on their threads, in batches (the metrics count them). */
  readonly onInlineCalls?: InlineCallsHook;
}

export class Scheduler {
  readonly #options: SchedulerOptions;
  readonly #slots: (SchedulerThread | null)[];
  #waiters: (() => void)[] = [];
  #nextActor = 1;

  constructor(options: Partial<SchedulerOptions> & Pick<SchedulerOptions, 'log' | 'entry'>) {
    this.#options = { threads: options.threads ?? defaultThreadCount(), limits: options.limits ?? DEFAULT_THREAD_LIMITS, log: options.log, entry: options.entry, onInlineCalls: options.onInlineCalls };
    this.#slots = Array.from({ length: this.#options.threads }, () => null);
  }

  /** `built` (dist/) or `source` (tsx). */
  get entryMode(): 'built' | 'source' {
    return this.#options.entry.mode;
  }

  get threadCount(): number {
    return this.#options.threads;
  }

  /** Starts (or restarts) the thread in one slot; the supervisor calls this as the slot's child start. */
  startThread(slot: number): SchedulerThread {
    const thread = new SchedulerThread(slot, this.#options.entry, this.#options.limits, this.#options.log, this.#options.onInlineCalls);
    this.#slots[slot] = thread;
    void thread.exited.then(() => {
      if (this.#slots[slot] === thread) this.#slots[slot] = null;
    });
    void thread.ready.then(() => this.#wake());
    return thread;
  }

  /** Places an actor on the live thread with the fewest actors, preferring threads that are ready. */
  async spawn(behaviour: BehaviourRef, args: unknown, prefix = 'actor'): Promise<ActorRef> {
    const deadline = Date.now() + SPAWN_WAIT_MS;
    for (;;) {
      const thread = this.#pick();
      if (thread) return thread.spawn(`${prefix}-${this.#nextActor++}`, behaviour, args);
      if (Date.now() > deadline) throw new Error(`no scheduler thread came up within ${SPAWN_WAIT_MS} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50);
        this.#waiters.push(() => { clearTimeout(timer); resolve(); });
      });
    }
  }

  /** Resolves once every live thread has reported the inline calls it ran before now (a scrape waits on it). */
  async flushInlineCalls(): Promise<void> {
    await Promise.all(this.threads().map((t) => t.flushInline()));
  }

  /** Live threads, for health reports and fault injection. */
  threads(): SchedulerThread[] {
    return this.#slots.filter((t): t is SchedulerThread => t !== null);
  }

  #pick(): SchedulerThread | null {
    const live = this.threads().filter((t) => t.alive);
    const ready = live.filter((t) => t.isReady);
    const pool = ready.length > 0 ? ready : live;
    let best: SchedulerThread | null = null;
    for (const t of pool) if (!best || t.actors.size < best.actors.size) best = t;
    return best;
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }
}
