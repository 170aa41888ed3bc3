// What a SQLite store does at open with a task left running by a process known dead (ownership.ts): the
// process opening it judges whether it continues the task itself, leaves it to another process that may
// (one of the task's workspace, or with a server model), or nobody can; a task left is still interrupted
// once it waited past the patience (ORPHAN_TASK_PATIENCE_MS), so its status never says running forever.

import { StoreError } from './errors.ts';

/**
 * The opener's judgement of one orphan: `continue` (its takeover continues it: the lease is released for
 * its first pass), `leave` (another process may continue it), `interrupt` (nobody can: no setup kept, no
 * workspace recorded).
 */
export type OrphanVerdict = 'continue' | 'leave' | 'interrupt';

/** What the store does with the orphan: `leave` stands only while the task's lease lapsed less than `patienceMs` ago. */
export function orphanAction(verdict: OrphanVerdict, lapsedMs: number, patienceMs: number): 'release' | 'leave' | 'interrupt' {
  if (verdict === 'continue') return 'release';
  if (verdict === 'leave' && lapsedMs < patienceMs) return 'leave';
  return 'interrupt';
}

/** The `interrupted` entry's message: why, and how to go on; `waitedMs` when it was left for another process that never came. */
export function orphanMessage(conversationId: string, waitedMs: number | null): string {
  const waited = waitedMs === null ? '' : `, and no process that could continue it took it over within ${Math.round(waitedMs / 1000)} s of its lease lapsing`;
  return `The server process running this task stopped before the task finished (it was killed or crashed)${waited}, so the task was interrupted. Continue it with conversation_id ${conversationId}.`;
}

/** A patience as a store option: a whole number of milliseconds, 0 (interrupt at once) or more. */
export function checkPatienceMs(patienceMs: number): number {
  if (!Number.isSafeInteger(patienceMs) || patienceMs < 0) throw new StoreError('invalid_argument', `an orphan's patience is a whole number of milliseconds, not ${patienceMs}`);
  return patienceMs;
}
