// This node's entry in the node registry (store/cluster-nodes.ts): registered when the HTTP server is
// listening (so the advertise URL names a bound port), renewed every third of a lease term by a
// heartbeat, and removed on a clean stop, so the other nodes take this node's sessions over at once
// instead of waiting for the lease to lapse. The lease the store judges is on the database's clock; what
// this node knows of its own lease is the local time its last renewal was SENT (a renewal that is slow
// to commit only makes the node think its lease ends earlier than it does, never later).

import type { Logger } from '../log/logger.ts';
import type { AsyncConversationStore } from '../store/async-store.ts';
import type { Clock } from '../time/clock.ts';
import { LEASE_RENEWALS_PER_TERM } from '../limits.ts';

export interface NodeLeaseOptions {
  readonly store: AsyncConversationStore;
  readonly advertiseUrl: string;
  /** The lease term (the store's: `--task-lease`). */
  readonly leaseMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
}

export class NodeLease {
  readonly #options: NodeLeaseOptions;
  #heartbeat: unknown = undefined;
  /** Local time until which this node's lease is known to be current; 0: never registered. */
  #freshUntil = 0;
  #renewing: Promise<boolean> | null = null;
  #stopped = false;

  constructor(options: NodeLeaseOptions) {
    this.#options = options;
  }

  get advertiseUrl(): string {
    return this.#options.advertiseUrl;
  }

  /** Registers the node (rejects when the store cannot be reached: a node nobody can find must not serve), then renews on a heartbeat. */
  async start(): Promise<void> {
    if (!(await this.renew())) throw new Error('this node could not register in the cluster\'s node registry (the store did not answer)');
    const { clock, leaseMs } = this.#options;
    this.#heartbeat = clock.setInterval(() => void this.renew(), Math.max(1, Math.floor(leaseMs / LEASE_RENEWALS_PER_TERM)), { unref: true });
  }

  /** Is this node's own lease current (by what it knows locally)? A node serves the sessions it holds only while it is. */
  fresh(): boolean {
    return !this.#stopped && this.#options.clock.now() < this.#freshUntil;
  }

  /**
   * Renews the lease now (one renewal at a time); true once the lease is fresh. A caller during a renewal
   * waits for it, and if that one was sent too long ago to make the lease fresh now, sends another.
   */
  async renew(): Promise<boolean> {
    if (this.#stopped) return false;
    if (this.#renewing !== null && (await this.#renewing) && this.fresh()) return true;
    this.#renewing ??= this.#renewOnce().finally(() => { this.#renewing = null; });
    return (await this.#renewing) && this.fresh();
  }

  async #renewOnce(): Promise<boolean> {
    const { clock, store, leaseMs, logger } = this.#options;
    const sent = clock.now();
    try {
      await store.renewNode(this.#options.advertiseUrl);
    } catch (err) {
      logger.log('warning', 'this node\'s lease in the node registry could not be renewed; trying again at the next heartbeat', { error: (err as Error).message });
      return false;
    }
    if (!this.#stopped) this.#freshUntil = Math.max(this.#freshUntil, sent + leaseMs);
    return true;
  }

  /** A clean stop: no more renewals, and the node leaves the registry, so its sessions are taken over at once. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#options.clock.clearInterval(this.#heartbeat);
    await this.#renewing;
    try {
      await this.#options.store.forgetNode();
    } catch (err) {
      this.#options.logger.log('warning', 'this node could not leave the node registry; the others take its sessions over once its lease lapses', { error: (err as Error).message });
    }
  }
}
