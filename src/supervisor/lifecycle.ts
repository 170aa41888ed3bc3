// One child's lifecycle as an xstate machine: named states a supervisor moves it through and anyone
// can observe (`whichChildren`). Only lifecycle events go through it, never a child's data messages.

import { type Actor, createActor, setup } from 'xstate';

/**
 * - `starting`: the first start is under way.
 * - `running`: an incarnation is alive.
 * - `restarting`: it exited (or a sibling's exit took it down) and will be started again; a start
 *   that fails here leaves it here until the retry.
 * - `stopping`: it was asked to stop and the supervisor waits for its exit (or kills it).
 * - `stopped`: not running, and the supervisor will not start it by itself (orderly exit of a
 *   transient child, terminated, or its supervisor stopped). `restartChild` may start it again.
 * - `failed`: final; its first start failed, or restarting it exceeded the restart intensity.
 */
export type LifecycleState = 'starting' | 'running' | 'restarting' | 'stopping' | 'stopped' | 'failed';

/**
 * STARTED: a start succeeded. START_FAILED: a start threw or rejected. EXITED: it exited on its
 * own and will not be restarted. RESTART: it is to be started again. STOP: the supervisor asks it to
 * stop. STOPPED: it is no longer running and stays down. GIVE_UP: restart intensity exceeded.
 */
export type LifecycleEvent =
  | { type: 'STARTED' }
  | { type: 'START_FAILED' }
  | { type: 'EXITED' }
  | { type: 'RESTART' }
  | { type: 'STOP' }
  | { type: 'STOPPED' }
  | { type: 'GIVE_UP' };

export const LIFECYCLE_STATES: readonly LifecycleState[] = ['starting', 'running', 'restarting', 'stopping', 'stopped', 'failed'];

export const childLifecycleMachine = setup({
  types: { events: {} as LifecycleEvent },
}).createMachine({
  id: 'childLifecycle',
  initial: 'starting',
  states: {
    starting: {
      on: { STARTED: 'running', START_FAILED: 'failed', STOPPED: 'stopped' },
    },
    running: {
      // STOPPED straight from running is a kill: nothing to wait for.
      on: { EXITED: 'stopped', RESTART: 'restarting', STOP: 'stopping', STOPPED: 'stopped', GIVE_UP: 'failed' },
    },
    restarting: {
      // A failed restart stays here: the supervisor retries it (through the restart intensity).
      on: { STARTED: 'running', START_FAILED: 'restarting', STOPPED: 'stopped', GIVE_UP: 'failed' },
    },
    stopping: {
      on: { STOPPED: 'stopped' },
    },
    stopped: {
      on: { RESTART: 'restarting' },
    },
    failed: { type: 'final' },
  },
});

/** A lifecycle event the current state does not accept: a supervisor defect, reported loudly. */
export class LifecycleTransitionError extends Error {
  override readonly name = 'LifecycleTransitionError';
}

/** One child's lifecycle actor. Transitions are synchronous; an event the state does not accept throws. */
export class ChildLifecycle {
  readonly #childId: string;
  readonly #actor: Actor<typeof childLifecycleMachine>;

  constructor(childId: string) {
    this.#childId = childId;
    this.#actor = createActor(childLifecycleMachine).start();
  }

  get state(): LifecycleState {
    const value = this.#actor.getSnapshot().value;
    if (!isLifecycleState(value)) throw new LifecycleTransitionError(`child "${this.#childId}": unknown lifecycle state ${JSON.stringify(value)}`);
    return value;
  }

  /** Whether `type` is accepted in the current state. */
  can(type: LifecycleEvent['type']): boolean {
    return this.#actor.getSnapshot().can({ type });
  }

  send(type: LifecycleEvent['type']): LifecycleState {
    // xstate ignores an event a state does not handle; for a supervisor that would hide a wrong
    // bookkeeping step, so refuse it instead.
    if (!this.can(type)) throw new LifecycleTransitionError(`child "${this.#childId}": ${type} is not allowed in state ${this.state}`);
    this.#actor.send({ type });
    return this.state;
  }

  /** Releases the actor when the child leaves its supervisor for good. */
  dispose(): void {
    this.#actor.stop();
  }
}

export function isLifecycleState(value: unknown): value is LifecycleState {
  return LIFECYCLE_STATES.some((s) => s === value);
}
