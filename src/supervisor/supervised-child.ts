// One supervised child: its resolved spec, its lifecycle (the name of its state in the shared xstate
// machine, see lifecycle.ts) and the handle of its current incarnation, plus the call that starts an
// incarnation. Supervisors decide; this holds the facts.

import type { ChildHandle, ExitWatcher, ResolvedChildSpec } from './child-spec.ts';
import { describeValue } from './describe-value.ts';
import { crash, type ExitReason } from './exit-reason.ts';
import { ChildLifecycle } from './lifecycle.ts';

/** Who hears of an incarnation's exit: its supervisor. */
export interface IncarnationOwner {
  incarnationExited(child: SupervisedChild, incarnation: Incarnation, reason: ExitReason): void;
}

/**
 * One start of a child. Identity matters: an exit is acted on only if it is the child's current incarnation.
 * It is also the watch on its handle's exit (`ChildHandle.watchExit`): a supervisor watches every child for
 * its whole life, and one object is what that costs, not a promise reaction, a promise and two closures.
 */
export class Incarnation implements ExitWatcher {
  readonly handle: ChildHandle;
  readonly #child: SupervisedChild;
  readonly #owner: IncarnationOwner;

  constructor(handle: ChildHandle, child: SupervisedChild, owner: IncarnationOwner) {
    this.handle = handle;
    this.#child = child;
    this.#owner = owner;
    if (handle.watchExit !== undefined) {
      handle.watchExit(this);
    } else {
      // A handle without watchExit: its promise, a rejection read as a crash (as exitOf does).
      void handle.exited.then((reason) => this.onExit(reason), (cause: unknown) => this.onExit(crash(cause)));
    }
  }

  onExit(reason: ExitReason): void {
    this.#owner.incarnationExited(this.#child, this, reason);
  }
}

/** The start a temporary child keeps after its one start: never called (a temporary child is not restarted). */
function startedOnce(): never {
  throw new Error('a temporary child is started once; its start is not kept');
}

export type StartOutcome = { ok: true; handle: ChildHandle } | { ok: false; cause: unknown };

/**
 * The child is its own lifecycle (a state name, lifecycle.ts): one object per child, not two, since a
 * server has two children per session (the session's supervisor and its connection).
 */
export class SupervisedChild extends ChildLifecycle {
  #spec: ResolvedChildSpec;
  #current: Incarnation | undefined;
  #retired = false;

  constructor(spec: ResolvedChildSpec) {
    super(spec.id);
    this.#spec = spec;
  }

  get spec(): ResolvedChildSpec {
    return this.#spec;
  }

  get lifecycle(): ChildLifecycle {
    return this;
  }

  get id(): string {
    return this.spec.id;
  }

  /** The live incarnation, or undefined while the child is not running. */
  get current(): Incarnation | undefined {
    return this.#current;
  }

  /** True once the child left its supervisor (deleted, temporary and gone, or removed from a dynamic supervisor). */
  get retired(): boolean {
    return this.#retired;
  }

  /** The new incarnation, watched from now on: its exit goes to `owner`. */
  attach(handle: ChildHandle, owner: IncarnationOwner): Incarnation {
    // A temporary child is never started again, so, as OTP's supervisor does, its start is not kept, nor
    // what the start holds (a session's supervisor: the session's whole wiring).
    if (this.#spec.restart === 'temporary' && this.#spec.start !== startedOnce) this.#spec = { ...this.#spec, start: startedOnce };
    this.#current = new Incarnation(handle, this, owner);
    return this.#current;
  }

  detach(): void {
    this.#current = undefined;
  }

  isCurrent(incarnation: Incarnation): boolean {
    return this.#current === incarnation;
  }

  retire(): void {
    this.#retired = true;
    this.dispose();
  }
}

/** Calls the spec's `start`; a throw, a rejection or something that is not a ChildHandle is a failed start. */
export async function callStart(spec: ResolvedChildSpec): Promise<StartOutcome> {
  let value: unknown;
  try {
    value = await spec.start();
  } catch (cause) {
    return { ok: false, cause };
  }
  if (!isChildHandle(value)) {
    return { ok: false, cause: new TypeError(`child "${spec.id}": start must return a ChildHandle (exited, stop, kill), got ${describeValue(value)}`) };
  }
  return { ok: true, handle: value };
}

function isChildHandle(value: unknown): value is ChildHandle {
  return (
    typeof value === 'object' &&
    value !== null &&
    'exited' in value &&
    // A handle that can be watched makes its `exited` only when asked: not read here, so not made.
    (('watchExit' in value && typeof value.watchExit === 'function') || value.exited instanceof Promise) &&
    'stop' in value &&
    typeof value.stop === 'function' &&
    'kill' in value &&
    typeof value.kill === 'function'
  );
}
