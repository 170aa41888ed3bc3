// A child as plain data: how to start it, when to restart it and how to stop it. Defaults are merged
// in one place (`resolveChildSpec`) and `validateChildSpec` names the first bad field.

import { describeValue } from './describe-value.ts';
import type { ExitReason } from './exit-reason.ts';

/**
 * What a supervisor holds of a running child. `exited` settles exactly once, when the child is gone
 * (a rejection is read as `crash(cause)`); after `stop()` the child should exit with `shutdown`,
 * after `kill()` with `killed`. Both may be called after the child exited and must then do nothing.
 */
export interface ChildHandle {
  readonly exited: Promise<ExitReason>;
  /** Ask the child to stop gracefully; it should then exit with `shutdown`. */
  stop(): void;
  /** Brutal kill: no cleanup; the child exits with `killed`. It must always lead to an exit. */
  kill(): void;
  /**
   * Optional: tells `watcher` of the exit once, in a microtask after it (or, if the child has exited, in
   * the next one), as a reaction on `exited` would, but with no promise, reaction or closure to keep for
   * the child's whole life. A supervisor uses it when the handle has it (`ActorRef`, supervisors).
   */
  watchExit?(watcher: ExitWatcher): void;
}

/** What `ChildHandle.watchExit` tells: one method on an object the watcher already has. */
export interface ExitWatcher {
  onExit(reason: ExitReason): void;
}

/** `permanent`: always restarted. `transient`: restarted after an abnormal exit (crash, killed). `temporary`: never. */
export type RestartType = 'permanent' | 'transient' | 'temporary';
/** `brutal_kill`: kill at once. A number: stop, then kill after that many ms. `infinity`: stop and wait. */
export type Shutdown = number | 'brutal_kill' | 'infinity';
export type ChildType = 'worker' | 'supervisor';
/** Starts one incarnation of the child. Throwing or rejecting means the child failed to start. */
export type StartFunction = () => ChildHandle | Promise<ChildHandle>;

export interface ChildSpec {
  /** Unique among the supervisor's children; names the child in errors and events. */
  id: string;
  start: StartFunction;
  /** Default `permanent`. */
  restart?: RestartType;
  /** Default 5000 ms for a worker, `infinity` for a supervisor (a subtree needs the time to stop its own children). */
  shutdown?: Shutdown;
  /** Default `worker`. */
  type?: ChildType;
}

/** A child spec with every default filled in. */
export interface ResolvedChildSpec {
  readonly id: string;
  readonly start: StartFunction;
  readonly restart: RestartType;
  readonly shutdown: Shutdown;
  readonly type: ChildType;
}

export const DEFAULT_RESTART: RestartType = 'permanent';
export const DEFAULT_CHILD_TYPE: ChildType = 'worker';
/** A worker gets this long to clean up after `stop()` before it is killed. */
export const DEFAULT_WORKER_SHUTDOWN_MS = 5000;
/** A supervisor waits for its whole subtree, however long its children's own timeouts add up to. */
export const DEFAULT_SUPERVISOR_SHUTDOWN: Shutdown = 'infinity';

export const RESTART_TYPES: readonly RestartType[] = ['permanent', 'transient', 'temporary'];
export const CHILD_TYPES: readonly ChildType[] = ['worker', 'supervisor'];
const SPEC_FIELDS = ['id', 'start', 'restart', 'shutdown', 'type'] as const;

/** The one place defaults are merged. */
export function resolveChildSpec(spec: ChildSpec): ResolvedChildSpec {
  const type = spec.type ?? DEFAULT_CHILD_TYPE;
  return {
    id: spec.id,
    start: spec.start,
    restart: spec.restart ?? DEFAULT_RESTART,
    shutdown: spec.shutdown ?? (type === 'supervisor' ? DEFAULT_SUPERVISOR_SHUTDOWN : DEFAULT_WORKER_SHUTDOWN_MS),
    type,
  };
}

export type ChildSpecValidation = { ok: true; spec: ResolvedChildSpec } | { ok: false; error: string };

/**
 * Checks a child spec that may come from anywhere (config, another module) and resolves its defaults.
 * The error names the child and the first bad field, e.g.
 * `child spec "db": restart must be one of permanent, transient, temporary, got "always"`.
 * Unknown fields are errors too: a misspelt `restrat` would otherwise silently mean `permanent`.
 */
export function validateChildSpec(spec: unknown): ChildSpecValidation {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    return { ok: false, error: `child spec must be an object, got ${describeValue(spec)}` };
  }
  const fields: Record<string, unknown> = { ...spec };
  const { id, start, restart, shutdown, type } = fields;
  if (typeof id !== 'string' || id === '') {
    return { ok: false, error: `child spec: id must be a non-empty string, got ${describeValue(id)}` };
  }
  const bad = (message: string): ChildSpecValidation => ({ ok: false, error: `child spec ${JSON.stringify(id)}: ${message}` });
  const unknown = Object.keys(fields).find((k) => !(SPEC_FIELDS as readonly string[]).includes(k));
  if (unknown !== undefined) return bad(`unknown field ${JSON.stringify(unknown)} (known fields: ${SPEC_FIELDS.join(', ')})`);
  if (!isStartFunction(start)) return bad(`start must be a function returning a ChildHandle, got ${describeValue(start)}`);
  if (restart !== undefined && !isRestartType(restart)) {
    return bad(`restart must be one of ${RESTART_TYPES.join(', ')}, got ${describeValue(restart)}`);
  }
  if (shutdown !== undefined && !isShutdown(shutdown)) {
    return bad(`shutdown must be a non-negative integer of milliseconds, "brutal_kill" or "infinity", got ${describeValue(shutdown)}`);
  }
  if (type !== undefined && !isChildType(type)) return bad(`type must be one of ${CHILD_TYPES.join(', ')}, got ${describeValue(type)}`);
  return {
    ok: true,
    spec: resolveChildSpec({
      id,
      start,
      ...(restart !== undefined && { restart }),
      ...(shutdown !== undefined && { shutdown }),
      ...(type !== undefined && { type }),
    }),
  };
}

export function isRestartType(value: unknown): value is RestartType {
  return RESTART_TYPES.some((r) => r === value);
}

export function isChildType(value: unknown): value is ChildType {
  return CHILD_TYPES.some((t) => t === value);
}

export function isShutdown(value: unknown): value is Shutdown {
  return value === 'brutal_kill' || value === 'infinity' || (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0);
}

/** Only the kind can be checked up front; what it returns is checked when it is called. */
function isStartFunction(value: unknown): value is StartFunction {
  return typeof value === 'function';
}
