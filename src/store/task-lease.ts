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
