// This node's part in a cluster sharing a PostgreSQL store: its lease in the node registry, the HTTP
// sessions it holds in the store (claimed or taken over, their checkpoints saved, their rows removed when
// they end), and the locator that forwards a request for a session held elsewhere, takes it over, or
// answers the requests that died with their node (orphans). The application wires it in `joinCluster`.

import type { ConnectionConfig } from '../mcp/state.ts';
import type { Logger } from '../log/logger.ts';
import type { AsyncConversationStore } from '../store/async-store.ts';
import type { Ownership } from '../store/ownership.ts';
import type { Clock } from '../time/clock.ts';
import type { OpenOptions } from '../transports/session-host.ts';
import { CheckpointSaver } from './checkpoint-saver.ts';
import { forwardingRefusal } from './forward-policy.ts';
import { NodeLease } from './node-lease.ts';
import { OrphanRequests, type OrphanStore } from './orphan-requests.ts';
import { PeerAddresses } from './peer-addresses.ts';
import { rehydrate } from './rehydrate.ts';
import { type ClusterSessions, SessionLocator, sessionPrincipalKey } from './session-locator.ts';

export interface MembershipOptions {
  readonly store: AsyncConversationStore;
  readonly ownership: Ownership;
  /** The PostgreSQL store as requests that died with their node are answered from it, or null. */
  readonly orphanStore: OrphanStore | null;
  /** This node's name among those sharing the store. */
  readonly nodeId: string;
  /** The term of this node's lease in the node registry. */
  readonly leaseMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Another node holds the session now: close the local copy (its requests in flight answered `session-moved`). */
  readonly closeMoved: (id: string) => Promise<void>;
  /** The node is stopping cleanly: sessions that end keep their rows, for other nodes to take over. */
  readonly handingOff: () => boolean;
}

/** How this node forwards to its peers, and hears of them. */
export interface ClusterForwarding {
  /** `--cluster-insecure-forwarding`: bearer tokens may go to a home over plain http:// off this machine. */
  readonly insecure?: boolean;
  /** The address forwards leave from: this node's bound address when it is one (advertise-url.ts). */
  readonly from?: string;
  /** Where the addresses of the live peer nodes go, when they change (the connection gate). */
  readonly peers?: (addresses: ReadonlySet<string>) => void;
}

/** A session held in the store: the id it is registered under, its checkpoint saver, and what a takeover resumes from. */
export interface HeldSession {
  readonly registryId: string;
  readonly saver: CheckpointSaver;
  readonly resumed: ReturnType<typeof rehydrate> | null;
}

export class ClusterMembership {
  readonly #store: AsyncConversationStore;
  readonly #options: MembershipOptions;
  readonly #lease: NodeLease;
  readonly #locator: SessionLocator;
  readonly #peers: PeerAddresses | null;
  /** HTTP sessions held in the shared store, by registry id: each one's checkpoint saver (and epoch). */
  readonly #held = new Map<string, CheckpointSaver>();

  /**
   * Registers this node in the node registry, reachable at `advertiseUrl` (its lease renewed from now
   * on); from then on HTTP sessions are held in the store and a request for a session held elsewhere is
   * forwarded or taken over.
   */
  static async join(options: MembershipOptions, advertiseUrl: string, forwarding: ClusterForwarding): Promise<ClusterMembership> {
    const { store, clock, logger } = options;
    const lease = new NodeLease({ store, advertiseUrl, leaseMs: options.leaseMs, clock, logger });
    await lease.start();
    const publish = forwarding.peers;
    const peers = publish === undefined ? null : new PeerAddresses({ store, self: options.ownership.self, leaseMs: options.leaseMs, clock, logger, publish });
    await peers?.start();
    const membership = new ClusterMembership(options, lease, peers, forwarding);
    logger.log('info', 'joined the cluster', { advertiseUrl });
    // Other nodes (as this one) refuse to forward a bearer token to a plain http:// URL off their machine.
    const refusal = forwardingRefusal(advertiseUrl, true, forwarding.insecure === true);
    if (refusal !== null) logger.log('warning', 'requests with a bearer token for sessions held here will not be forwarded from other nodes', { why: refusal });
    return membership;
  }

  private constructor(options: MembershipOptions, lease: NodeLease, peers: PeerAddresses | null, forwarding: ClusterForwarding) {
    const { store, ownership, clock, logger } = options;
    this.#store = store;
    this.#options = options;
    this.#lease = lease;
    this.#peers = peers;
    this.#locator = new SessionLocator({
      store, ownership, lease, nodeId: options.nodeId, clock, logger,
      heldEpoch: (id) => this.#held.get(id)?.epoch,
      closeMoved: (id) => options.closeMoved(id),
      ...(options.orphanStore === null ? {} : { orphans: new OrphanRequests({ store: options.orphanStore, clock, logger }) }),
      insecureForwarding: forwarding.insecure === true,
      ...(forwarding.from === undefined ? {} : { forwardFrom: forwarding.from }),
    });
  }

  /** The cluster's view of sessions. */
  get locator(): ClusterSessions {
    return this.#locator;
  }

  /** HTTP sessions this node holds in the shared store. */
  get heldCount(): number {
    return this.#held.size;
  }

  /** The checkpoint savers of the sessions held now (a stop waits for their last saves). */
  savers(): CheckpointSaver[] {
    return [...this.#held.values()];
  }

  /**
   * An HTTP session held in the store: claimed now (before its initialize is answered, so any node finds
   * it), or taken over from another node (`options.resume`). `claimFailed` runs when the claim throws.
   */
  async hold(options: Pick<OpenOptions, 'principal' | 'resume'>, registryId: string, config: ConnectionConfig, claimFailed: () => void): Promise<HeldSession> {
    const store = this.#store;
    let resumed: ReturnType<typeof rehydrate> | null = null;
    const sessionId = options.resume?.id ?? registryId;
    let epoch: number;
    if (options.resume) {
      epoch = options.resume.epoch;
      resumed = rehydrate(options.resume.bytes, config);
    } else {
      const claim = await store.claimSession(sessionId, sessionPrincipalKey(options.principal)).catch((err: unknown) => {
        // A slot taken here is given back (one the transport reserved, the transport gives back).
        claimFailed();
        throw err;
      });
      if (claim === null) throw new Error(`session id ${sessionId} is already another principal's`);
      epoch = claim.epoch;
    }
    registryId = sessionId;
    const saver = new CheckpointSaver({ store, sessionId, epoch, logger: this.#options.logger, onFenced: () => void this.#options.closeMoved(sessionId) });
    return { registryId, saver, resumed };
  }

  /** The session is registered under `id`: its saver's epoch answers the locator's checks. */
  held(id: string, saver: CheckpointSaver): void {
    this.#held.set(id, saver);
  }

  /** A stored session left this node: its row goes too (DELETE, idle) — unless it moved, or this node is handing its sessions over. */
  forget(id: string, saver: CheckpointSaver): void {
    this.#held.delete(id);
    const store = this.#store;
    if (this.#options.handingOff() || saver.fenced) return;
    void saver.settled().then(() => store.forgetSession(id, saver.epoch)).catch((err: unknown) => {
      this.#options.logger.log('warning', 'an ended session\'s row could not be removed from the store', { session: id, error: (err as Error).message });
    });
  }

  /** Out of the node registry (the other nodes take this node's sessions over at once), then the last checkpoint saves. */
  async stop(savers: readonly CheckpointSaver[]): Promise<void> {
    this.#peers?.stop();
    await this.#lease.stop();
    await Promise.all(savers.map((s) => s.settled()));
  }
}
