// The waits of the Tasks-extension tasks parked on this node (detached-tasks.ts): for each, the timer that
// ends it unanswered after TASK_INPUT_WAIT_MS, and whose principal it is, so that a principal's parked tasks
// are counted (MAX_PARKED_TASKS_PER_PRINCIPAL). Maps by task id and by principal; a principal with none has
// no entry.

import type { Clock } from '../time/clock.ts';

interface Wait {
  readonly principal: string;
  readonly clock: Clock;
  readonly timer: unknown;
}

export class ParkedWaits {
  /** task (conversation) id → its wait. */
  readonly #byTask = new Map<string, Wait>();
  /** principal → how many of the waits are its. */
  readonly #perPrincipal = new Map<string, number>();

  /** The task waits here from now on (a wait it had here is ended first). */
  set(taskId: string, principal: string, clock: Clock, timer: unknown): void {
    this.end(taskId);
    this.#byTask.set(taskId, { principal, clock, timer });
    this.#perPrincipal.set(principal, (this.#perPrincipal.get(principal) ?? 0) + 1);
  }

  /** The task no longer waits here: its timer is cleared (none: nothing to do). */
  end(taskId: string): void {
    const wait = this.#byTask.get(taskId);
    if (wait === undefined) return;
    wait.clock.clearTimeout(wait.timer);
    this.#forget(taskId, wait);
  }

  /** The task's timer fired: it is forgotten (its timer is spent). */
  fired(taskId: string): void {
    const wait = this.#byTask.get(taskId);
    if (wait !== undefined) this.#forget(taskId, wait);
  }

  /** How many tasks of `principal` wait here. */
  count(principal: string): number {
    return this.#perPrincipal.get(principal) ?? 0;
  }

  /** The ids of the tasks of `principal` waiting here. */
  of(principal: string): string[] {
    const ids: string[] = [];
    for (const [taskId, wait] of this.#byTask) if (wait.principal === principal) ids.push(taskId);
    return ids;
  }

  #forget(taskId: string, wait: Wait): void {
    this.#byTask.delete(taskId);
    const left = (this.#perPrincipal.get(wait.principal) ?? 1) - 1;
    if (left > 0) this.#perPrincipal.set(wait.principal, left);
    else this.#perPrincipal.delete(wait.principal);
  }
}
