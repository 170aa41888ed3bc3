// Leases on running conversations (harness tasks) and on sessions, for several nodes sharing one store:
// the node that runs a task holds its lease and renews it by heartbeat; a fencing epoch, bumped at every
// claim and takeover, is checked by the database in the same transaction as each write, so a node that
// lost a task (it was paused, cut off or slow, and another node took over) can no longer write into it.
// Lease times are the store's clock: on PostgreSQL the database's (postgres-store.ts), the one clock all
// nodes sharing it agree on, so the nodes' own clocks need not agree; on SQLite (one machine) the store's
// `now`. Whatever the clock, the fence keeps every write to one holder.

import { StoreError } from './errors.ts';
import { LEASE_RENEWALS_PER_TERM } from '../limits.ts';


/** The hold of one store's owner on a running conversation. */
export interface TaskLease {
  readonly conversationId: string;
  /** The fencing epoch: every write of this holder names it, and is refused once another claim bumped it. */
  readonly epoch: number;
  /** Store-clock milliseconds after which another node may take the task over, unless renewed. */
  readonly expiresAt: number;
}

/** A running conversation whose lease lapsed: its holder stopped renewing (it died, or cannot reach the store). */
export interface ExpiredTask {
  readonly conversationId: string;
  /** The owner key of its principal, as `getConversation` takes it. */
  readonly principal: string;
  readonly harness: string;
  /** The epoch seen: a takeover names it, so of several nodes taking over at once exactly one wins. */
  readonly epoch: number;
  /** What the claimer kept for whoever continues the task (`claimTask`'s `setup`), or null when none was kept. */
  readonly setup: unknown;
  /**
   * How long ago its lease lapsed, in milliseconds of the store's clock (negative for a task a SQLite store
   * found at open under a dead owner before its lease ran out: it lapses in that many).
   */
  readonly lapsedMs: number;
}

/**
 * Which lapsed tasks a takeover pass asks for (`expiredTasks`): those it may continue (recorded under its
 * workspace), those nobody can (no workspace recorded, no setup), and those past its patience whatever
 * their workspace; the rest are left to a process of theirs and never use the pass's budget. Decided by
 * the setup's `workspace` string alone: the pass checks every task it gets again, on disk.
 */
export interface TakeoverScope {
  /** The directory the pass continues tasks in (null: none, e.g. no server model here). */
  readonly workspace: string | null;
  /** Tasks recorded in a directory below `workspace` too (a node that follows its clients' roots inside it). */
  readonly below: boolean;
  /** Tasks whose lease lapsed at least this long ago come whatever their workspace. */
  readonly patienceMs: number;
}

/** The prefix a directory below `workspace` starts with (`workspace` itself ends with one only when it is `/`). */
export function belowPrefix(workspace: string): string {
  return workspace.endsWith('/') ? workspace : `${workspace}/`;
}

/** A parked task taken up again (`resumeParkedTask`): the new lease, and the setup its first claim kept (null when none was). */
export interface ParkedResume {
  readonly lease: TaskLease;
  readonly setup: unknown;
}

/** A session's stored state, as `loadCheckpoint` gives it to its principal. */
export interface SessionCheckpoint {
  readonly sessionId: string;
  /** The owner key of the node holding the session. */
  readonly owner: string;
  readonly epoch: number;
  /** The last checkpoint saved; empty when the session was claimed and nothing saved yet. */
  readonly bytes: Uint8Array;
  readonly updatedAt: number;
}

/** A lease term as a store option: a whole number of milliseconds, long enough to be renewed. */
export function checkLeaseMs(leaseMs: number): number {
  if (!Number.isSafeInteger(leaseMs) || leaseMs < LEASE_RENEWALS_PER_TERM) throw new StoreError('invalid_argument', `a lease lasts a whole number of milliseconds, at least ${LEASE_RENEWALS_PER_TERM}, not ${leaseMs}`);
  return leaseMs;
}

/**
 * What `cancelRunningTask` did: `cancelled` (the entry appended, the status set, the epoch moved on so
 * the holder's next write or renewal is fenced), `not-running` (the caller's, but it stopped running
 * first: nothing written), `not-found` (no such conversation, or another principal's).
 */
export type RunningCancel = 'cancelled' | 'not-running' | 'not-found';
