// One read-only picture of the running server for the observer page: the supervision tree, the
// scheduler threads with their actors and mailbox depths, the sessions, the tasks, and the call chart.
// Built on demand (a few times a second at most, and only while a page is watching).

import type { CallPoint } from './call-window.ts';
import type { SessionRow } from './observed-sessions.ts';
import type { TaskRow } from './observed-tasks.ts';
import type { TreeNode } from './supervision-model.ts';

/** Actor ids listed per scheduler thread; past this the rest are counted. */
export const MAX_ACTORS_LISTED = 100;
/** Sessions listed in a snapshot (the busiest first); past this the rest are counted. */
export const MAX_SESSIONS_LISTED = 500;
/** The chart of a younger server spans this much (so its first minute is not squeezed into a corner). */
export const MIN_CHART_SECONDS = 60;

/** What the snapshot reads of a scheduler thread (SchedulerThread satisfies it). */
export interface ThreadView {
  readonly index: number;
  readonly isReady: boolean;
  readonly alive: boolean;
  readonly heapUsed: number;
  readonly actors: ReadonlyMap<string, unknown>;
  readonly mailboxes: { readonly deepest: number; readonly busy: readonly (readonly [string, number])[] };
}

export interface WorkerRow {
  readonly index: number;
  readonly state: 'ready' | 'booting' | 'ending';
  readonly heapUsed: number;
  readonly restarts: number;
  readonly actorCount: number;
  /** Actor id and mailbox depth (0 unless the thread reported it non-empty at its last heartbeat). */
  readonly actors: readonly (readonly [string, number])[];
  readonly deepestMailbox: number;
}

export interface ObserverSnapshot {
  readonly time: number;
  readonly uptimeMs: number;
  readonly tree: TreeNode;
  readonly workers: readonly WorkerRow[];
  readonly sessions: readonly SessionRow[];
  /** All open sessions, listed or not. */
  readonly sessionCount: number;
  readonly tasks: readonly TaskRow[];
  readonly calls: readonly CallPoint[];
  readonly metrics: boolean;
}

export function workerRow(t: ThreadView, restarts: number): WorkerRow {
  const depth = new Map(t.mailboxes.busy);
  const listed: [string, number][] = [];
  // The busy ones first: they are the reason to look.
  for (const [id, d] of t.mailboxes.busy) if (t.actors.has(id) && listed.length < MAX_ACTORS_LISTED) listed.push([id, d]);
  for (const id of t.actors.keys()) {
    if (listed.length >= MAX_ACTORS_LISTED) break;
    if (!depth.has(id)) listed.push([id, 0]);
  }
  return {
    index: t.index, state: !t.alive ? 'ending' : t.isReady ? 'ready' : 'booting', heapUsed: t.heapUsed, restarts,
    actorCount: t.actors.size, actors: listed, deepestMailbox: t.mailboxes.deepest,
  };
}
