// What a supervisor reports about its children, for the server to log and count (restarts, give-ups).
// Notifications only: a supervisor never waits on them.

import type { Clock } from './clock.ts';
import type { ExitReason } from './exit-reason.ts';

export type SupervisorEvent =
  /** An incarnation started (first start or restart). */
  | { type: 'child-started'; supervisor: string; id: string }
  /** An incarnation exited on its own; `willRestart` is the restart-type decision. */
  | { type: 'child-exited'; supervisor: string; id: string; reason: ExitReason; willRestart: boolean }
  /** A child was started again after `trigger`'s exit (`reason`); under one_for_all / rest_for_one `trigger` may be a sibling. */
  | { type: 'child-restarted'; supervisor: string; id: string; reason: ExitReason; trigger: string }
  /** A start threw, rejected or returned no ChildHandle. */
  | { type: 'child-start-failed'; supervisor: string; id: string; cause: unknown }
  /** The supervisor stopped a child; `timedOut`: it ignored `stop()` and was killed after its shutdown time. */
  | { type: 'child-stopped'; supervisor: string; id: string; reason: ExitReason; timedOut: boolean }
  /** A restart was refused: the supervisor now stops its children and exits with a RestartIntensityError. */
  | { type: 'intensity-exceeded'; supervisor: string; id: string; restarts: number; maxRestarts: number; periodMs: number; reason: ExitReason }
  /** The supervisor itself exited (its parent, if any, sees the same reason). */
  | { type: 'supervisor-exited'; supervisor: string; reason: ExitReason };

export interface SupervisorOptions {
  /** Default `realClock`. Pass a FakeClock in tests. */
  clock?: Clock;
  /**
   * Called synchronously for every event; keep it quick. A throw does not disturb supervision: it is
   * reported with `process.emitWarning` (type `SupervisorWarning`) and ignored.
   */
  onEvent?: (event: SupervisorEvent) => void;
}
