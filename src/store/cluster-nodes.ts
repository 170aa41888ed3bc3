// The node registry of a cluster (several super-pi on one PostgreSQL store): each node's owner key
// (node-ownership.ts), its id, the URL other nodes reach it at, and a lease its heartbeat renews. A
// session's home is an owner key; this says whether that owner is alive (its lease is current) and where
// to forward a request for it. The lease is judged by the DATABASE's clock (PostgreSQL `now()`), so
// nodes whose own clocks disagree still agree on whose lease lapsed. The embedded SQLite store (one
// node) keeps the same table on its own clock.

/** One node as the registry has it. */
export interface ClusterNode {
  /** The node's owner key: what `session_checkpoints.owner` and `conversations.owner` name. */
  readonly owner: string;
  /** The operator's id of the node (`--node-id`). */
  readonly node: string;
  /** Where other nodes reach it (`--advertise-url`). */
  readonly advertiseUrl: string;
  /** Its lease is current (by the store's clock): the node renewed it within one term. */
  readonly fresh: boolean;
  /** Milliseconds until its lease lapses by the store's clock; 0 once it has. */
  readonly remainingMs: number;
}
