// The supervision layer's errors: one class with stable codes for answers to API calls, and the
// RestartIntensityError a supervisor exits with when it gives up. Both keep their `cause`.

import type { ExitReason } from './exit-reason.ts';

/**
 * - `invalid_flags`, `invalid_spec`: the data was refused (the message names the first bad field).
 * - `duplicate_id`: two children in one start list share an id.
 * - `already_started` / `already_present`: `startChild` with an id that is running / known but not running.
 * - `not_found`: no child with that id.
 * - `running` / `restarting`: the operation needs the child stopped (`restartChild`, `deleteChild`).
 * - `start_failed`: the child's `start` threw, rejected or did not return a ChildHandle (`cause` has why).
 * - `not_running`: the supervisor is stopping or has exited.
 * - `max_children`: a DynamicSupervisor is at its `maxChildren`.
 */
export type SupervisorErrorCode =
  | 'invalid_flags'
  | 'invalid_spec'
  | 'duplicate_id'
  | 'already_started'
  | 'already_present'
  | 'not_found'
  | 'running'
  | 'restarting'
  | 'start_failed'
  | 'not_running'
  | 'max_children';

export class SupervisorError extends Error {
  override readonly name = 'SupervisorError';
  readonly code: SupervisorErrorCode;

  constructor(code: SupervisorErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

export interface RestartIntensityDetails {
  readonly supervisor: string;
  /** The child whose restart was refused. */
  readonly childId: string;
  /** Restarts already inside the period when this one was refused. */
  readonly restarts: number;
  readonly maxRestarts: number;
  readonly periodMs: number;
  /** The exit that asked for the refused restart. */
  readonly lastExit: ExitReason;
}

/**
 * The cause inside the `crash` a supervisor exits with when a restart would exceed its restart
 * intensity: its parent sees an abnormal exit and applies its own policy (escalation).
 */
export class RestartIntensityError extends Error {
  override readonly name = 'RestartIntensityError';
  readonly details: RestartIntensityDetails;

  constructor(details: RestartIntensityDetails) {
    const { supervisor, childId, restarts, maxRestarts, periodMs, lastExit } = details;
    // A crash's own message comes through `cause` (describeExit follows it), so it is not repeated here.
    super(
      `supervisor "${supervisor}" gave up: child "${childId}" ${EXITED_HOW[lastExit.kind]}, and restarting it would make ` +
        `${plural(restarts + 1, 'restart')} within ${periodMs} ms, more than the ${maxRestarts} its restart intensity allows`,
      lastExit.kind === 'crash' ? { cause: lastExit.cause } : undefined,
    );
    this.details = details;
  }
}

const EXITED_HOW: Record<ExitReason['kind'], string> = {
  normal: 'exited normally',
  shutdown: 'shut down',
  killed: 'was killed',
  crash: 'crashed',
};

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
