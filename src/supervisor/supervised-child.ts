// One supervised child: its resolved spec, its lifecycle (the name of its state in the shared xstate
// machine, see lifecycle.ts) and the handle of its current incarnation, plus the call that starts an
// incarnation. Supervisors decide; this holds the facts.

import type { ChildHandle, ResolvedChildSpec } from './child-spec.ts';
import { describeValue } from './describe-value.ts';
import { ChildLifecycle } from './lifecycle.ts';

/** One start of a child. Identity matters: an exit is acted on only if it is the child's current incarnation. */
export interface Incarnation {
  readonly handle: ChildHandle;
}

export type StartOutcome = { ok: true; handle: ChildHandle } | { ok: false; cause: unknown };

export class SupervisedChild {
  readonly spec: ResolvedChildSpec;
  readonly lifecycle: ChildLifecycle;
  #current: Incarnation | undefined;
  #retired = false;

  constructor(spec: ResolvedChildSpec) {
    this.spec = spec;
    this.lifecycle = new ChildLifecycle(spec.id);
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

  attach(handle: ChildHandle): Incarnation {
    this.#current = { handle };
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
    this.lifecycle.dispose();
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
    value.exited instanceof Promise &&
    'stop' in value &&
    typeof value.stop === 'function' &&
    'kill' in value &&
    typeof value.kill === 'function'
  );
}
