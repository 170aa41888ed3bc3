// The scheduler pool: a fixed set of scheduler worker threads (default: thread-count.ts) and
// the placement of actors on them — many actors per thread, never one thread per session. With no
// threads (`threads: 0`, in-thread mode) the actors live on the main thread instead, behind the same API.

import { type Clock, systemClock } from '../time/clock.ts';
import type { ActorRef } from './actor-ref.ts';
import type { ActorThread } from './actor-thread.ts';
import type { Behaviour, BehaviourRef } from './behaviour.ts';
import { MainThreadHost } from './main-thread-host.ts';
import { DEFAULT_THREAD_LIMITS, type InlineCallsHook, SchedulerThread, type ThreadLimits } from './scheduler-thread.ts';
import { defaultThreadCount } from './thread-count.ts';
import type { ThreadEntry } from './thread-entry.ts';
import { SPAWN_WAIT_MS } from '../limits.ts';

export interface SchedulerOptions {
  /** Scheduler worker threads; 0: the actors run on the main thread (one slot, no thread started). */
  readonly threads: number;
  readonly limits: ThreadLimits;
  readonly log: (msg: string, data?: Record<string, unknown>) => void;
  /**
   * The code each thread runs: the entry point that registers the behaviours (see thread-entry.ts). A
   * function is asked on the first thread start only: finding the entry reads the source tree, which an
   * in-thread server (`threads: 0`) never needs.
   */
  readonly entry: ThreadEntry | (() => ThreadEntry);
  /**
   * The behaviours a `module: 'builtin'` ref names, for actors on the main thread (a worker gets its own
   * from its entry point). The application passes the same map its thread entry registers. Default: none.
   */
  readonly behaviours: ReadonlyMap<string, Behaviour>;
  /** Told of the tool calls actors ran inline on their threads, in batches (the metrics count them). */
  readonly onInlineCalls?: InlineCallsHook;
  /** Times the spawn wait, the threads' heartbeats and call timeouts. Default `systemClock`. */
  readonly clock: Clock;
}

export class Scheduler {
  readonly #options: SchedulerOptions;
  #entry: ThreadEntry | null = null;
  readonly #slots: (ActorThread | null)[];
  #waiters: (() => void)[] = [];
  #nextActor = 1;

  constructor(options: Partial<SchedulerOptions> & Pick<SchedulerOptions, 'log' | 'entry'>) {
    this.#options = {
      threads: options.threads ?? defaultThreadCount(),
      limits: options.limits ?? DEFAULT_THREAD_LIMITS,
      log: options.log,
      entry: options.entry,
      behaviours: options.behaviours ?? new Map(),
      onInlineCalls: options.onInlineCalls,
      clock: options.clock ?? systemClock,
    };
    this.#slots = Array.from({ length: this.threadCount }, () => null);
  }

  /** `built` (dist/) or `source` (tsx): where a worker's code comes from (found on first use: it reads the tree). */
  get entryMode(): 'built' | 'source' {
    return this.#threadEntry().mode;
  }

  /** True when the actors run on the main thread (`threads: 0`). */
  get inThread(): boolean {
    return this.#options.threads === 0;
  }

  /** Slots to supervise: one per worker thread, or the one main-thread host. */
  get threadCount(): number {
    return Math.max(1, this.#options.threads);
  }

  /** Starts (or restarts) the thread in one slot; the supervisor calls this as the slot's child start. */
  startThread(slot: number): ActorThread {
    const threadOptions = { clock: this.#options.clock, ...(this.#options.onInlineCalls ? { onInline: this.#options.onInlineCalls } : {}) };
    const thread: ActorThread = this.inThread
      ? new MainThreadHost(slot, this.#options.behaviours, threadOptions)
      : new SchedulerThread(slot, this.#threadEntry(), this.#options.limits, this.#options.log, threadOptions);
    this.#slots[slot] = thread;
    void thread.exited.then(() => {
      if (this.#slots[slot] === thread) this.#slots[slot] = null;
    });
    // A spawn waiting for a thread may place its actor on one still booting (its messages queue until
    // ready), so waiters are woken at the start and again when it is ready.
    this.#wake();
    void thread.ready.then(() => this.#wake());
    return thread;
  }

  /** Places an actor on the live thread with the fewest actors, preferring threads that are ready. */
  async spawn(behaviour: BehaviourRef, args: unknown, prefix = 'actor'): Promise<ActorRef> {
    const clock = this.#options.clock;
    const deadline = clock.now() + SPAWN_WAIT_MS;
    for (;;) {
      const thread = this.#pick();
      if (thread) return thread.spawn(`${prefix}-${this.#nextActor++}`, behaviour, args);
      const left = deadline - clock.now();
      if (left <= 0) throw new Error(`no scheduler thread came up within ${SPAWN_WAIT_MS} ms`);
      // Woken by a thread's start or ready (startThread), else at the deadline.
      await new Promise<void>((resolve) => {
        const timer = clock.setTimeout(resolve, left);
        this.#waiters.push(() => { clock.clearTimeout(timer); resolve(); });
      });
    }
  }

  /** Resolves once every live thread has reported the inline calls it ran before now (a scrape waits on it). */
  async flushInlineCalls(): Promise<void> {
    await Promise.all(this.threads().map((t) => t.flushInline()));
  }

  /** Live threads, for health reports and fault injection. */
  threads(): ActorThread[] {
    return this.#slots.filter((t): t is ActorThread => t !== null);
  }

  #threadEntry(): ThreadEntry {
    const entry = this.#options.entry;
    this.#entry ??= typeof entry === 'function' ? entry() : entry;
    return this.#entry;
  }

  #pick(): ActorThread | null {
    const live = this.threads().filter((t) => t.alive);
    const ready = live.filter((t) => t.isReady);
    const pool = ready.length > 0 ? ready : live;
    let best: ActorThread | null = null;
    for (const t of pool) if (!best || t.actors.size < best.actors.size) best = t;
    return best;
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }
}
