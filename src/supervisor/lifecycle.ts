// One child's lifecycle as an xstate machine: named states a supervisor moves it through and anyone
// can observe (`whichChildren`). Only lifecycle events go through it, never a child's data messages.
// The machine is defined once and shared; each child holds only its current state's name, and every
// move is xstate's pure `transition` of the machine (memoised per state and event: the machine has no
// context, so the answer depends on nothing else). A full actor per child cost ~3.7 KB of heap, and a
// server has two per session (the session's supervisor and its connection).

import { initialTransition, type SnapshotFrom, setup, transition } from 'xstate';

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

/** One child's lifecycle. Transitions are synchronous; an event the state does not accept throws. */
export class ChildLifecycle {
  readonly #childId: string;
  #state: LifecycleState = INITIAL_STATE;

  constructor(childId: string) {
    this.#childId = childId;
  }

  get state(): LifecycleState {
    return this.#state;
  }

  /** Whether `type` is accepted in the current state. */
  can(type: LifecycleEvent['type']): boolean {
    return movesFrom(this.#state, type) !== null;
  }

  send(type: LifecycleEvent['type']): LifecycleState {
    // xstate ignores an event a state does not handle; for a supervisor that would hide a wrong
    // bookkeeping step, so refuse it instead.
    const next = movesFrom(this.#state, type);
    if (next === null) throw new LifecycleTransitionError(`child "${this.#childId}": ${type} is not allowed in state ${this.#state}`);
    this.#state = next;
    return next;
  }

  /** Kept for callers that release a child's lifecycle; a state name holds nothing to release. */
  dispose(): void {}
}

type LifecycleSnapshot = SnapshotFrom<typeof childLifecycleMachine>;

const INITIAL_STATE = stateOf(initialTransition(childLifecycleMachine)[0].value);

/** `state` + event → the next state (null: not accepted), asked of the machine once per pair. */
const moves = new Map<string, LifecycleState | null>();

function movesFrom(state: LifecycleState, type: LifecycleEvent['type']): LifecycleState | null {
  const key = `${state} ${type}`;
  let next = moves.get(key);
  if (next === undefined) {
    const snapshot: LifecycleSnapshot = childLifecycleMachine.resolveState({ value: state });
    next = snapshot.can({ type }) ? stateOf(transition(childLifecycleMachine, snapshot, { type })[0].value) : null;
    moves.set(key, next);
  }
  return next;
}

function stateOf(value: unknown): LifecycleState {
  if (!isLifecycleState(value)) throw new LifecycleTransitionError(`unknown lifecycle state ${JSON.stringify(value)}`);
  return value;
}

export function isLifecycleState(value: unknown): value is LifecycleState {
  return LIFECYCLE_STATES.some((s) => s === value);
}
