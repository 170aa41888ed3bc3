// Where harness tasks run on this node: each under a supervisor of its own below the tree's `tasks`
// (transient: restarted after a crash, from the durable transcript), watched by the observer, and waited
// for at stop so their last writes reach the store before it closes.

import { type ChildSpec, describeExit, isAbnormal, Supervisor } from '../supervisor/index.ts';
import type { Principal } from '../mcp/state.ts';
import type { TaskRun } from '../task/task-run.ts';
import type { ServerObserver } from '../observer/server-observer.ts';
import type { Clock } from '../time/clock.ts';
import { SESSION_SHUTDOWN_MS } from '../limits.ts';
import type { ApplicationTree } from './application-tree.ts';

export class TaskSupervision {
  #nextTask = 1;
  /** Tasks not answered yet: stopping waits for their last writes before closing the store. */
  readonly #runs = new Set<TaskRun>();
  readonly #tree: ApplicationTree;
  readonly #observer: ServerObserver;
  readonly #clock: Clock;
  /** A task's run settled (its status is written, or it lost the task): whoever listens to its status is told. */
  readonly #settled: (conversationId: string) => void;

  constructor(options: { readonly tree: ApplicationTree; readonly observer: ServerObserver; readonly clock: Clock; readonly settled?: (conversationId: string) => void }) {
    this.#tree = options.tree;
    this.#observer = options.observer;
    this.#clock = options.clock;
    this.#settled = options.settled ?? (() => undefined);
  }

  /**
   * Starts a task's actor under its own supervisor. The supervisor is removed once the task has
   * answered; if it gives up, the task is answered as interrupted.
   */
  async supervise(run: TaskRun, sessionId: string, principal: Principal, ownerKey: string): Promise<void> {
    const tasks = this.#tree.tasks;
    if (!tasks) throw new Error('the application is not running');
    const id = `task-${this.#nextTask++}`;
    this.#observed(run, id, sessionId, principal, ownerKey);
    this.#runs.add(run);
    void run.outcome.then(() => {
      this.#runs.delete(run);
      this.#settled(run.conversationId);
    });
    const child: ChildSpec = { id: 'task', start: () => run.start(), restart: 'transient', shutdown: SESSION_SHUTDOWN_MS };
    const handle = await tasks.startChild(id, () => Supervisor.start(
      { strategy: 'one_for_one', ...this.#tree.intensity('task'), name: id },
      [child],
      this.#tree.supervisorOptions(),
    ));
    void handle.exited.then((reason) => {
      if (isAbnormal(reason)) run.gaveUp(`its actor kept failing (${describeExit(reason)})`);
    });
    void run.outcome.then(() => tasks.terminateChild(id).catch(() => {
      // Already gone (it gave up, or the tree is stopping).
    }));
  }

  /** A task stopped with the tree records that it was interrupted: waits for those writes, at most `graceMs`. */
  async settle(graceMs: number): Promise<void> {
    const runs = [...this.#runs].map((r) => r.outcome);
    if (runs.length === 0) return;
    let timer: unknown;
    await Promise.race([Promise.all(runs), new Promise<void>((r) => { timer = this.#clock.setTimeout(r, graceMs); })]);
    this.#clock.clearTimeout(timer);
  }

  /** The observer learns of a task, and counts its harness_task call when it is answered. */
  #observed(run: TaskRun, id: string, sessionId: string, principal: Principal, ownerKey: string): void {
    const started = performance.now();
    const harness = run.harness;
    this.#observer.taskStarted({ id, conversationId: run.conversationId, session: sessionId, principal, ownerKey, harness });
    void run.outcome.then((outcome) => {
      this.#observer.taskEnded(id);
      this.#observer.callFinished('harness_task', harness, outcome, started);
    });
  }
}
