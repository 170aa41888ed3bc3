// The addresses this node's peers connect from: the hosts of the advertise URLs of the live nodes in the
// node registry (store/cluster-nodes.ts), resolved to IP addresses. The connection gate counts a
// connection from one of them against the total cap only, never against the per-address cap: every
// connection a node opens to another (forwarded requests and GET streams) comes from its one address, and
// a busy cluster must not cut itself off. The set is read when the node joins and again every lease term /
// LEASE_RENEWALS_PER_TERM (a node that joins is known to the others within that), on this node's clock;
// names are resolved then (off the main thread, by the system resolver), never per connection. A node
// forwards from the address it is bound to (forward.ts), which is the one its default advertise URL names.
// Only addresses are trusted, never a header: the gate runs before any request is read.

import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Logger } from '../log/logger.ts';
import type { AsyncConversationStore } from '../store/async-store.ts';
import type { Clock } from '../time/clock.ts';
import { LEASE_RENEWALS_PER_TERM, MAX_PEER_ADDRESSES, MAX_PEER_NODES } from '../limits.ts';

/** A host name's addresses (the system resolver, as a connection to it would use). */
export type Resolve = (host: string) => Promise<readonly string[]>;

const systemResolve: Resolve = async (host) => (await lookup(host, { all: true })).map((a) => a.address);

export interface PeerAddressOptions {
  readonly store: Pick<AsyncConversationStore, 'liveNodes'>;
  /** This node's owner key: its own entry is not a peer. */
  readonly self: string;
  readonly leaseMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Where each new set goes (the connection gate). */
  readonly publish: (addresses: ReadonlySet<string>) => void;
  readonly resolve?: Resolve;
}

export class PeerAddresses {
  readonly #o: PeerAddressOptions;
  #timer: unknown = undefined;
  #refreshing: Promise<void> | null = null;
  #stopped = false;

  constructor(options: PeerAddressOptions) {
    this.#o = options;
  }

  /** Reads the set now, then on every renewal period. */
  async start(): Promise<void> {
    await this.refresh();
    if (this.#stopped) return;
    const { clock, leaseMs } = this.#o;
    this.#timer = clock.setInterval(() => void this.refresh(), Math.max(1, Math.floor(leaseMs / LEASE_RENEWALS_PER_TERM)), { unref: true });
  }

  /** One read of the registry and resolution of its hosts (one at a time); a store that fails keeps the last set. */
  refresh(): Promise<void> {
    this.#refreshing ??= this.#refreshOnce().finally(() => { this.#refreshing = null; });
    return this.#refreshing;
  }

  async #refreshOnce(): Promise<void> {
    const { store, self, logger } = this.#o;
    let urls: string[];
    try {
      urls = (await store.liveNodes(MAX_PEER_NODES)).filter((n) => n.owner !== self).map((n) => n.advertiseUrl);
    } catch (err) {
      logger.log('warning', 'the cluster\'s node registry could not be read; peers keep the addresses known before', { error: (err as Error).message });
      return;
    }
    const addresses = await peerAddresses(urls, this.#o.resolve ?? systemResolve, (host, error) => {
      logger.log('warning', 'a peer node\'s advertise URL could not be resolved; its connections count against the per-address cap', { host, error });
    });
    if (!this.#stopped) this.#o.publish(addresses);
  }

  /** No more refreshes; the last set stays with the gate (a stopping node closes its server anyway). */
  stop(): void {
    this.#stopped = true;
    this.#o.clock.clearInterval(this.#timer);
  }
}

/**
 * The IP addresses of `urls`' hosts, at most MAX_PEER_ADDRESSES: an IP literal is itself (IPv4-mapped IPv6
 * as its IPv4, as the gate counts it), a name its resolved addresses; a name that fails to resolve adds none.
 */
export async function peerAddresses(urls: readonly string[], resolve: Resolve, unresolved: (host: string, error: string) => void): Promise<ReadonlySet<string>> {
  const hosts = new Set<string>();
  for (const url of urls) {
    if (!URL.canParse(url)) continue;
    hosts.add(new URL(url).hostname.replace(/^\[(.*)\]$/, '$1'));
  }
  const out = new Set<string>();
  const add = (address: string) => {
    if (out.size < MAX_PEER_ADDRESSES) out.add(address.startsWith('::ffff:') && address.includes('.') ? address.slice('::ffff:'.length) : address);
  };
  await Promise.all([...hosts].map(async (host) => {
    if (isIP(host) !== 0) return add(host);
    try {
      for (const address of await resolve(host)) add(address);
    } catch (err) {
      unresolved(host, (err as Error).message);
    }
  }));
  return out;
}
