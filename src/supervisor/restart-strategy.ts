// The two pure decisions behind every restart: does this exit call for one (restart type × exit
// reason), and which children does it take along (strategy). The supervisor carries them out.

import type { RestartType } from './child-spec.ts';
import { type ExitReason, isAbnormal } from './exit-reason.ts';
import type { Strategy } from './supervisor-flags.ts';

/** `permanent`: always. `transient`: only after an abnormal exit (crash or killed). `temporary`: never. */
export function shouldRestart(restart: RestartType, reason: ExitReason): boolean {
  switch (restart) {
    case 'permanent':
      return true;
    case 'transient':
      return isAbnormal(reason);
    case 'temporary':
      return false;
  }
}

/**
 * The ids a restart of `trigger` takes along, in start order (`order` is the start order):
 * one_for_one → [trigger]; one_for_all → all; rest_for_one → trigger and every id after it.
 * The supervisor stops the others (in reverse) before starting the scope (in order).
 */
export function restartScope(strategy: Strategy, order: readonly string[], trigger: string): string[] {
  const at = order.indexOf(trigger);
  if (at < 0) throw new RangeError(`restartScope: "${trigger}" is not among the children`);
  switch (strategy) {
    case 'one_for_one':
      return [trigger];
    case 'one_for_all':
      return [...order];
    case 'rest_for_one':
      return order.slice(at);
  }
}
