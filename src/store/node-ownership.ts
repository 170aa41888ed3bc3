// Ownership of running conversations when the store is shared by several machines (PostgreSQL). A pid
// means nothing on another machine, so the owner is a node: an id the operator gives each super-pi
// (unique among the live processes) plus an incarnation, random per process: every store a process opens
// shares it, as a process's stores share one `processOwnership` key. Whether another node is alive is
// not judged from here: that is what task leases are for (task-lease.ts) — its holder renews the lease,
// a lapsed lease may be taken over by any node, and the fencing epoch refuses the old holder's writes.
// What remains here is the one owner a node knows at once to be gone without waiting for a lease: an
// earlier incarnation of itself (the node restarted), whose running conversations a store marks
// interrupted when it opens, as a single node always has.

import { randomUUID } from 'node:crypto';
import type { Ownership } from './ownership.ts';

const PREFIX = 'node:v1:';

/** The parts of a node owner key. */
export interface NodeIdentity {
  /** The operator's name for the node: unique among the nodes running at one time. */
  readonly node: string;
  /** Random per process: tells this run of the node from an earlier one. */
  readonly incarnation: string;
}

export function encodeNodeOwner(id: NodeIdentity): string {
  return `${PREFIX}${JSON.stringify([id.node, id.incarnation])}`;
}

/** The identity in an owner key, or null when it is not a node owner key. */
export function decodeNodeOwner(owner: string): NodeIdentity | null {
  if (!owner.startsWith(PREFIX)) return null;
  let value: unknown;
  try {
    value = JSON.parse(owner.slice(PREFIX.length));
  } catch {
    // A damaged key: nothing can be said about its node.
    return null;
  }
  if (!Array.isArray(value) || value.length !== 2) return null;
  const [node, incarnation] = value as unknown[];
  if (typeof node !== 'string' || node === '' || typeof incarnation !== 'string' || incarnation === '') return null;
  return { node, incarnation };
}

let incarnation: string | null = null;
/**
 * This process's incarnation: one per process, so two stores opened here do not take each other for a
 * dead run. Made on first use, not when this module loads (every start does, for `--node-id`), as
 * loading node:crypto costs a start ~5-10 ms before its first reply.
 */
export function processIncarnation(): string {
  return (incarnation ??= randomUUID());
}

/**
 * Ownership by node. `isAlive` is false for an earlier incarnation of this node and for '' (no owner
 * recorded); every other owner — another node, a process key, a key of an unknown kind — counts as
 * alive, because marking a live task interrupted would let two nodes run it.
 */
export function nodeOwnership(node: string, incarnation: string = processIncarnation()): Ownership {
  if (node === '' || incarnation === '') throw new TypeError('a node owner needs a non-empty node id and incarnation');
  const self = encodeNodeOwner({ node, incarnation });
  return {
    self,
    isAlive(owner) {
      if (owner === self) return true;
      if (owner === '') return false;
      const id = decodeNodeOwner(owner);
      return id === null || id.node !== node;
    },
  };
}

/** The longest `--node-id`: it is stored with every conversation this node runs, and shown in logs. */
export const MAX_NODE_ID_LENGTH = 200;

/** An operator's node id, or the reason it cannot be one (empty, too long, or holding control characters). */
export function checkNodeId(id: string): string | null {
  if (id === '') return 'a node id must not be empty';
  if (id.length > MAX_NODE_ID_LENGTH) return `a node id has at most ${MAX_NODE_ID_LENGTH} characters`;
  // Control characters would let a node id forge lines in logs.
  if (/\p{Cc}/u.test(id)) return 'a node id must not hold control characters';
  return null;
}
