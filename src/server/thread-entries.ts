// The threads super-pi starts and where each finds its code (see actors/thread-entry.ts for the rule):
// the scheduler workers run server/scheduler-entry.ts, which registers the application's behaviours.

import { bundlesAreFresh, type EntryMode, type ThreadEntry, threadEntry } from '../actors/thread-entry.ts';
import { GIT_STATUS_CODE } from '../tools/git-status-thread.ts';
import { TOOL_POOL_CODE } from '../tools/tool-pool-entry.ts';

export const SCHEDULER_CODE = { bundle: 'scheduler-worker', source: 'src/server/scheduler-entry.ts', boot: 'src/actors/worker-boot.mjs' } as const;

export function schedulerEntry(mode: EntryMode = 'auto'): ThreadEntry {
  return threadEntry(SCHEDULER_CODE, mode);
}

/** Whether every bundle a server starts from is at least as new as every file in src/ (read now). */
export function distIsFresh(): boolean {
  return bundlesAreFresh([SCHEDULER_CODE.bundle, TOOL_POOL_CODE.bundle, GIT_STATUS_CODE.bundle, 'super-pi.cjs', 'super-pi-start.cjs']);
}
