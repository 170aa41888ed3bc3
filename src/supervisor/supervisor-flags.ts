// Supervisor flags as data: the restart strategy, the restart intensity and a name, with defaults
// merged in one place and validators that name the first bad field.

import { CHILD_TYPES, type ChildType, isChildType, isRestartType, isShutdown, RESTART_TYPES, type RestartType, type Shutdown } from './child-spec.ts';
import { describeValue } from './describe-value.ts';
import { DEFAULT_MAX_RESTARTS, DEFAULT_PERIOD_MS } from './restart-intensity.ts';

/**
 * Which children a restart takes along (OTP's strategies):
 * - `one_for_one`: only the child that exited.
 * - `one_for_all`: every child: the others are stopped (reverse start order), then all start in order.
 * - `rest_for_one`: the child and those started after it: those are stopped (reverse order), then all start in order.
 */
export type Strategy = 'one_for_one' | 'one_for_all' | 'rest_for_one';
export const STRATEGIES: readonly Strategy[] = ['one_for_one', 'one_for_all', 'rest_for_one'];

export interface SupervisorFlags {
  strategy: Strategy;
  /** Restarts allowed within `periodMs` before the supervisor gives up. Default DEFAULT_MAX_RESTARTS (3). */
  maxRestarts?: number;
  /** Default DEFAULT_PERIOD_MS (5000). */
  periodMs?: number;
  /** Names the supervisor in errors, events and the give-up message. Default `"supervisor"`. */
  name?: string;
}

export interface ResolvedSupervisorFlags {
  readonly strategy: Strategy;
  readonly maxRestarts: number;
  readonly periodMs: number;
  readonly name: string;
}

/** The kind of child a DynamicSupervisor starts: every child gets these, with the ChildSpec defaults. */
export interface DynamicChildTemplate {
  restart?: RestartType;
  shutdown?: Shutdown;
  type?: ChildType;
}

export interface DynamicSupervisorFlags {
  /** Default `"dynamic supervisor"`. */
  name?: string;
  /** Default DEFAULT_MAX_RESTARTS (3). */
  maxRestarts?: number;
  /** Default DEFAULT_PERIOD_MS (5000). */
  periodMs?: number;
  /** Children (running, restarting or being started) at once. Default DEFAULT_MAX_CHILDREN (100 000). */
  maxChildren?: number;
  /** Default `{}`: permanent workers with a 5000 ms shutdown. */
  child?: DynamicChildTemplate;
}

export interface ResolvedDynamicSupervisorFlags {
  readonly name: string;
  readonly maxRestarts: number;
  readonly periodMs: number;
  readonly maxChildren: number;
  readonly child: Readonly<DynamicChildTemplate>;
}

export const DEFAULT_SUPERVISOR_NAME = 'supervisor';
export const DEFAULT_DYNAMIC_SUPERVISOR_NAME = 'dynamic supervisor';
/**
 * A bound on one dynamic supervisor's children (sessions, tasks), so a flood of connections meets a
 * clear error instead of exhausting memory. The supervisor's own bookkeeping per child is small (a
 * lifecycle is a state name since lifecycle.ts shares one machine); what a child costs is mostly its
 * own state (a session's actor and checkpoint): lower it where memory is tight.
 */
export const DEFAULT_MAX_CHILDREN = 100_000;

type Validation<T> = { ok: true; flags: T } | { ok: false; error: string };

export function validateSupervisorFlags(flags: unknown): Validation<ResolvedSupervisorFlags> {
  if (!isRecord(flags)) return { ok: false, error: `supervisor flags must be an object, got ${describeValue(flags)}` };
  const common = validateCommon(flags, 'supervisor', ['strategy', 'maxRestarts', 'periodMs', 'name'], DEFAULT_SUPERVISOR_NAME);
  if (!common.ok) return common;
  const { strategy } = flags;
  if (!isStrategy(strategy)) {
    return { ok: false, error: `${common.where}: strategy must be one of ${STRATEGIES.join(', ')}, got ${describeValue(strategy)}` };
  }
  return { ok: true, flags: { strategy, maxRestarts: common.maxRestarts, periodMs: common.periodMs, name: common.name } };
}

export function validateDynamicSupervisorFlags(flags: unknown): Validation<ResolvedDynamicSupervisorFlags> {
  if (!isRecord(flags)) return { ok: false, error: `dynamic supervisor flags must be an object, got ${describeValue(flags)}` };
  const common = validateCommon(flags, 'dynamic supervisor', ['name', 'maxRestarts', 'periodMs', 'maxChildren', 'child'], DEFAULT_DYNAMIC_SUPERVISOR_NAME);
  if (!common.ok) return common;
  const bad = (message: string): Validation<ResolvedDynamicSupervisorFlags> => ({ ok: false, error: `${common.where}: ${message}` });
  const { maxChildren = DEFAULT_MAX_CHILDREN, child = {} } = flags;
  if (!isPositiveInteger(maxChildren)) return bad(`maxChildren must be a positive integer, got ${describeValue(maxChildren)}`);
  if (!isRecord(child)) return bad(`child must be an object of restart, shutdown and type, got ${describeValue(child)}`);
  const unknown = Object.keys(child).find((k) => !['restart', 'shutdown', 'type'].includes(k));
  if (unknown !== undefined) return bad(`unknown field child.${unknown} (known: restart, shutdown, type)`);
  const { restart, shutdown, type } = child;
  if (restart !== undefined && !isRestartType(restart)) return bad(`child.restart must be one of ${RESTART_TYPES.join(', ')}, got ${describeValue(restart)}`);
  if (shutdown !== undefined && !isShutdown(shutdown)) {
    return bad(`child.shutdown must be a non-negative integer of milliseconds, "brutal_kill" or "infinity", got ${describeValue(shutdown)}`);
  }
  if (type !== undefined && !isChildType(type)) return bad(`child.type must be one of ${CHILD_TYPES.join(', ')}, got ${describeValue(type)}`);
  const template: DynamicChildTemplate = {
    ...(restart !== undefined && { restart }),
    ...(shutdown !== undefined && { shutdown }),
    ...(type !== undefined && { type }),
  };
  return { ok: true, flags: { name: common.name, maxRestarts: common.maxRestarts, periodMs: common.periodMs, maxChildren, child: template } };
}

type Common = { ok: true; where: string; name: string; maxRestarts: number; periodMs: number } | { ok: false; error: string };

/** The fields both kinds share: name, maxRestarts, periodMs, and no unknown field. */
function validateCommon(flags: Record<string, unknown>, kind: string, known: readonly string[], defaultName: string): Common {
  const { name = defaultName, maxRestarts = DEFAULT_MAX_RESTARTS, periodMs = DEFAULT_PERIOD_MS } = flags;
  if (typeof name !== 'string' || name === '') return { ok: false, error: `${kind} flags: name must be a non-empty string, got ${describeValue(name)}` };
  const where = `${kind} "${name}" flags`;
  const unknown = Object.keys(flags).find((k) => !known.includes(k));
  if (unknown !== undefined) return { ok: false, error: `${where}: unknown field ${JSON.stringify(unknown)} (known fields: ${known.join(', ')})` };
  if (!(typeof maxRestarts === 'number' && Number.isSafeInteger(maxRestarts) && maxRestarts >= 0)) {
    return { ok: false, error: `${where}: maxRestarts must be a non-negative integer, got ${describeValue(maxRestarts)}` };
  }
  if (!isPositiveInteger(periodMs)) return { ok: false, error: `${where}: periodMs must be a positive integer of milliseconds, got ${describeValue(periodMs)}` };
  return { ok: true, where, name, maxRestarts, periodMs };
}

export function isStrategy(value: unknown): value is Strategy {
  return STRATEGIES.some((s) => s === value);
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
