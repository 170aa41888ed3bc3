// The retention sweep (docs/tasks-extension.md#retention): on a node started with `--task-ttl`, a timer
// deletes the expired Tasks-extension tasks (store/retention.ts) from the store, a bounded batch at a
// time. The store decides what has expired and deletes each task in a write that checks it again, so
// several nodes (or processes on one SQLite file) sweeping at once are safe; this only paces the work.
// Without `--task-ttl` none is made: nothing is ever swept.

import type { Logger } from '../log/logger.ts';
import type { AsyncConversationStore } from '../store/async-store.ts';
import { type Clock, systemClock } from '../time/clock.ts';
import { TASK_SWEEP_BATCH, TASK_SWEEP_BATCHES_PER_PASS, TASK_SWEEP_INTERVAL_MS, TASK_SWEEP_MIN_INTERVAL_MS } from '../limits.ts';

export interface RetentionSweepDeps {
  /** The store, or null while it does not exist (SQLite opened on first use): then there is nothing to sweep. */
  readonly store: () => AsyncConversationStore | null;
  /** The node's retention (`--task-ttl`): passes run every retention, within TASK_SWEEP_MIN_INTERVAL_MS..TASK_SWEEP_INTERVAL_MS. */
  readonly ttlMs: number;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** Default TASK_SWEEP_BATCH. */
  readonly batch?: number;
  /** Default TASK_SWEEP_BATCHES_PER_PASS. */
  readonly batchesPerPass?: number;
}

/** How often a node with this retention sweeps: a task is gone at most about one interval after it expired. */
export function sweepIntervalMs(ttlMs: number): number {
  return Math.min(TASK_SWEEP_INTERVAL_MS, Math.max(TASK_SWEEP_MIN_INTERVAL_MS, ttlMs));
}

export class RetentionSweep {
  readonly #deps: RetentionSweepDeps;
  readonly #clock: Clock;
  #timer: unknown = null;
  #pass: Promise<number> | null = null;
  #stopped = false;

  constructor(deps: RetentionSweepDeps) {
    this.#deps = deps;
    this.#clock = deps.clock ?? systemClock;
  }

  /** Passes from now on (the timer never keeps the process alive). */
  start(): void {
    if (this.#timer !== null || this.#stopped) return;
    this.#timer = this.#clock.setInterval(() => void this.pass(), sweepIntervalMs(this.#deps.ttlMs), { unref: true });
  }

  /** No pass from now on; waits for the one under way. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#clock.clearInterval(this.#timer);
    this.#timer = null;
    await this.#pass;
  }

  /**
   * One pass: batches of expired tasks deleted until a batch finds fewer than it may take, or the pass has
   * run its batches (the rest wait for the next pass). A pass under way is not started twice. Resolves to
   * how many tasks it deleted; never rejects (a failure is logged, and the next pass tries again).
   */
  pass(): Promise<number> {
    this.#pass ??= this.#sweep()
      .catch((err: unknown) => {
        this.#deps.logger.log('warning', 'sweeping expired tasks failed; trying again at the next pass', { error: (err as Error).message });
        return 0;
      })
      .finally(() => (this.#pass = null));
    return this.#pass;
  }

  async #sweep(): Promise<number> {
    const store = this.#deps.store();
    if (store === null) return 0;
    const batch = this.#deps.batch ?? TASK_SWEEP_BATCH;
    const batches = this.#deps.batchesPerPass ?? TASK_SWEEP_BATCHES_PER_PASS;
    let deleted = 0;
    for (let i = 0; i < batches && !this.#stopped; i++) {
      const n = await store.sweepExpiredTasks(batch);
      deleted += n;
      if (n < batch) break;
    }
    if (deleted > 0) this.#deps.logger.log('debug', 'deleted expired tasks', { tasks: deleted });
    return deleted;
  }
}
