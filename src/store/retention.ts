// Retention of Tasks-extension tasks (docs/tasks-extension.md#retention): a task created while the
// operator set a retention (`--task-ttl`) keeps it (`ttl_ms`) with its conversation; once the task is over
// (a terminal status) and `ttl_ms` has passed since its last update, it has expired. One SQL condition
// says so for both stores, in their principal-taking reads (an expired task reads as a missing one, on
// every node) and in their sweep (which deletes it and, by cascade, its entries). A task still running or
// parked for input never expires; a conversation without `ttl_ms` (every one that is not such a task)
// never does.

import { StoreError } from './errors.ts';
import type { ConversationStatus } from './store.ts';

/** The statuses a task is over in: only these expire. */
export const ENDED_STATUSES: readonly ConversationStatus[] = ['completed', 'failed', 'cancelled', 'interrupted'];

const ENDED_SQL = ENDED_STATUSES.map((s) => `'${s}'`).join(', ');

/**
 * SQL true for an expired task at `now` (a placeholder: `@now`, `$3`), on the columns of `table` (an
 * alias, or '' for the bare names). Written the same way in the sweep's index (migrations), so both
 * SQLite and PostgreSQL can walk it.
 */
export function expiredSql(now: string, table = ''): string {
  const c = table === '' ? '' : `${table}.`;
  return `(${c}ttl_ms IS NOT NULL AND ${c}status IN (${ENDED_SQL}) AND ${c}updated_at + ${c}ttl_ms <= ${now})`;
}

/** The same condition negated, for the reads: a row that is not an expired task. */
export function liveSql(now: string, table = ''): string {
  return `NOT ${expiredSql(now, table)}`;
}

/**
 * The `ttlMs` a task shows (SEP-2663: "time-to-live duration from creation"): its retention counted from
 * its last update, expressed from its creation, so `createdAt + ttlMs` is the instant it may go (for a
 * task still working, the earliest). Null: the task has no retention.
 */
export function shownTtlMs(task: { readonly createdAt: number; readonly updatedAt: number; readonly ttlMs?: number }): number | null {
  if (task.ttlMs === undefined) return null;
  return task.ttlMs + Math.max(0, task.updatedAt - task.createdAt);
}

/** A retention a new conversation may carry: a positive whole number of milliseconds, or none. */
export function checkTtlMs(ttlMs: number | null | undefined): number | null {
  if (ttlMs === undefined || ttlMs === null) return null;
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0) throw new StoreError('invalid_argument', `ttlMs must be a positive whole number of milliseconds, not ${String(ttlMs)}`);
  return ttlMs;
}
