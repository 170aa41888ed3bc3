// The top of the tree. When an exit escalates all the way up (the root itself gave up or crashed),
// nothing above can restart anything: the root reports it once, in words, and the server exits.

import type { ChildSpec } from './child-spec.ts';
import { describeExit, type ExitReason, isAbnormal } from './exit-reason.ts';
import { Supervisor } from './supervisor.ts';
import type { SupervisorOptions } from './supervisor-events.ts';
import type { SupervisorFlags } from './supervisor-flags.ts';

export const DEFAULT_ROOT_NAME = 'root';

export interface RootOptions extends SupervisorOptions {
  /**
   * Called once when the root exits abnormally (crash or killed), with a message meant for the
   * operator, e.g. `super-pi gave up: the root supervisor "root" exited (crash: RestartIntensityError:
   * supervisor "root" gave up: child "sessions" crashed, …); not restarting it`. The server prints it
   * and exits. A `stop()` (exit `shutdown`) does not call it.
   */
  onGiveUp(message: string, reason: ExitReason): void;
}

/**
 * Starts the root supervisor (name "root" unless `flags.name` is given). Rejects as
 * `Supervisor.start` does when a child cannot start; `onGiveUp` is for exits after a successful start.
 */
export async function startRoot(flags: SupervisorFlags, children: readonly ChildSpec[], options: RootOptions): Promise<Supervisor> {
  const { onGiveUp, ...supervisorOptions } = options;
  const root = await Supervisor.start({ name: DEFAULT_ROOT_NAME, ...flags }, children, supervisorOptions);
  void root.exited.then((reason) => {
    if (isAbnormal(reason)) onGiveUp(giveUpMessage(root.name, reason), reason);
  });
  return root;
}

export function giveUpMessage(rootName: string, reason: ExitReason): string {
  return `super-pi gave up: the root supervisor "${rootName}" exited (${describeExit(reason)}); not restarting it`;
}
