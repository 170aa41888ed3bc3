// Where a Streamable HTTP session lives, for a request that reached a node which does not hold it
// (README, "Running a cluster": a session has one home node at a time). The session's row in the store
// names its home (an owner key) and its fencing epoch; the node registry says whether that home's lease
// is fresh (on the database's clock) and where it is reached:
// - no row, or another principal's: the session does not exist here (404, as on every node);
// - the home's lease is fresh: the request is forwarded there (forward.ts), and if the home cannot be
//   reached, looked at again every HOME_RETRY_MS for as long as its lease said it had left (then 503);
// - the home's lease lapsed, the home left the registry, or it is an earlier run of this node: the session
//   is taken over (epoch + 1, one winner among nodes trying at once) and rehydrated here by the caller.
// A forwarded request (X-SuperPi-Forwarded-By) is never forwarded again: a loop is impossible.
// Where a forwarded session's home is, is remembered for as long as that home's lease was seen to have
// left (its principal key with it): the session's next requests are forwarded without reading the store.
// Safe because a session moves only once its home's lease lapsed, and the home checks the token again.
// It also answers whether a session held here may still be served: while this node's own lease is stale
// it re-validates (renews, then checks the row is still its own) first.

import type { Logger } from '../log/logger.ts';
import type { Principal } from '../mcp/state.ts';
import type { AsyncConversationStore } from '../store/async-store.ts';
import type { Ownership } from '../store/ownership.ts';
import type { Clock } from '../time/clock.ts';
import { type ForwardRequest, type ForwardTarget, type ForwardVia, forwardRequest } from './forward.ts';
import { forwardingRefusal } from './forward-policy.ts';
import type { NodeLease } from './node-lease.ts';
import type { OrphanRequests, SessionOrphanWatch } from './orphan-requests.ts';
import { HOME_CACHE_ENTRIES, HOME_RETRY_MS, MAX_LOCATE_ATTEMPTS } from '../limits.ts';

/** A session this node took over: the caller opens it under the same id, from these checkpoint bytes. */
export interface TakenOver {
  readonly id: string;
  readonly epoch: number;
  readonly bytes: Uint8Array;
}

/** What became of a request for a session not held here. */
export type Located =
  /** No such session for this principal (or it ended): answer 404 as for any unknown id. */
  | { readonly kind: 'missing' }
  /** The home answered it (its reply was streamed to the client). */
  | { readonly kind: 'forwarded' }
  /** This node holds the session now: open it from `session` and serve the request here. */
  | { readonly kind: 'taken-over'; readonly session: TakenOver }
  /** It cannot be served now (its home is alive but unreachable, or it kept moving): 503, retry. */
  | { readonly kind: 'unavailable'; readonly message: string };

/** Is a session held here still this node's to serve? */
export type HeldCheck = 'held' | 'moved' | 'unknown';

/** What streamable-http needs of the cluster (the transport knows no store). */
export interface ClusterSessions {
  /** This node's id, sent as X-SuperPi-Forwarded-By. */
  readonly nodeId: string;
  /** Before serving a session held here: `held` (serve it), `moved` (its local copy is closed; locate it), `unknown` (the store cannot say: 503). */
  confirmHeld(id: string, principal: Principal): Promise<HeldCheck>;
  locate(id: string, principal: Principal, request: ForwardRequest, body: string | null, target: ForwardTarget, forwarded: boolean): Promise<Located>;
  /**
   * After a `taken-over` session is open here (or failed to open): requests for it that reached this node
   * meanwhile were held, and are now served from the local copy. Called once per `taken-over`.
   */
  opened?(id: string): void;
  /**
   * For the streams of a session resumed on this node from the event log: one look-out that ends each
   * `node-died` once its request died with its node (orphan-requests.ts). `principal` is the log's
   * (`eventPrincipal`). Null: nothing to watch.
   */
  watchOrphans?(sessionId: string, principal: string): SessionOrphanWatch | null;
}

/** The principal key a session row is stored under. Anonymous callers share one: their sessions stay apart by the unguessable id. */
export function sessionPrincipalKey(principal: Principal): string {
  switch (principal.kind) {
    case 'local': return 'local';
    case 'token': return `token:${principal.name}`;
    case 'anonymous': return 'anonymous';
  }
}

export interface SessionLocatorOptions {
  readonly store: AsyncConversationStore;
  readonly ownership: Ownership;
  readonly lease: NodeLease;
  readonly nodeId: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The epoch this node holds a session at, if it holds it. */
  readonly heldEpoch: (id: string) => number | undefined;
  /** Closes the local copy of a session another node holds now (its requests in flight answered `session-moved`). */
  readonly closeMoved: (id: string) => Promise<void>;
  /** Answers the requests that died with a session's previous home (PostgreSQL's event log); absent: none are. */
  readonly orphans?: OrphanRequests;
  /** `--cluster-insecure-forwarding`: bearer tokens may go to a home over plain http:// off this machine. */
  readonly insecureForwarding?: boolean;
  /** The address forwards leave from (this node's bound address, when it is one), so peers know them by it. */
  readonly forwardFrom?: string;
}

/** A session's home as last read from the store, while its lease was fresh. */
interface KnownHome {
  /** The principal key the session's row was read for: another principal never uses this entry. */
  readonly key: string;
  readonly url: string;
  /** On this node's clock: when the home's lease, as read, ends. */
  readonly until: number;
}

export class SessionLocator implements ClusterSessions {
  readonly #o: SessionLocatorOptions;
  readonly #via: ForwardVia;
  /** Session id → its home, oldest first (at most HOME_CACHE_ENTRIES). */
  readonly #homes = new Map<string, KnownHome>();
  /**
   * Session id → a takeover by a request to this node, until the caller has opened the session (`opened`).
   * Another request for it meanwhile would read the store's row as this node's and find no local copy yet
   * (a 404 for a live session); it waits for the opening instead.
   */
  readonly #claims = new Map<string, { readonly settled: Promise<void>; readonly settle: () => void }>();

  constructor(options: SessionLocatorOptions) {
    this.#o = options;
    this.#via = options.forwardFrom === undefined ? {} : { localAddress: options.forwardFrom };
  }

  get nodeId(): string {
    return this.#o.nodeId;
  }

  async confirmHeld(id: string, principal: Principal): Promise<HeldCheck> {
    const { lease, store, ownership, heldEpoch, logger } = this.#o;
    if (lease.fresh()) return 'held';
    const epoch = heldEpoch(id);
    if (epoch === undefined) return 'held';
    if (!(await lease.renew())) return 'unknown';
    let owner: string | null;
    let current: number | null;
    try {
      const row = await store.loadCheckpoint(id, sessionPrincipalKey(principal));
      owner = row?.owner ?? null;
      current = row?.epoch ?? null;
    } catch (err) {
      logger.log('warning', 'could not re-validate a session after this node\'s lease went stale', { session: id, error: (err as Error).message });
      return 'unknown';
    }
    if (owner === ownership.self && current === epoch) return 'held';
    logger.log('info', 'this node\'s lease went stale and the session moved meanwhile; closing its copy here', { session: id });
    await this.#o.closeMoved(id);
    return 'moved';
  }

  async locate(id: string, principal: Principal, request: ForwardRequest, body: string | null, target: ForwardTarget, forwarded: boolean): Promise<Located> {
    const { store, ownership, clock } = this.#o;
    const key = sessionPrincipalKey(principal);
    if (await this.#awaitClaim(id)) return { kind: 'missing' };
    const known = forwarded ? undefined : this.#homes.get(id);
    if (known !== undefined) {
      if (known.key === key && clock.now() < known.until) {
        const refused = this.#refusal(known.url, request);
        if (refused !== null) return refused;
        const outcome = await forwardRequest(known.url, request, body, target, this.#o.nodeId, this.#o.logger, this.#via);
        if (outcome.kind === 'done' || target.destroyed) return { kind: 'forwarded' };
      }
      // Another principal, a lease that may have lapsed since, or a home that cannot be reached: the store says.
      this.#homes.delete(id);
    }
    let waitUntil: number | null = null;
    for (let attempt = 0; attempt < MAX_LOCATE_ATTEMPTS;) {
      const row = await store.loadCheckpoint(id, key);
      // Ended, never there, another principal's — or ended here (this incarnation holds no copy of it).
      if (row === null) return { kind: 'missing' };
      if (row.owner === ownership.self) {
        // Taken over by another request to this node since this one started: served once it is open.
        await this.#awaitClaim(id);
        return { kind: 'missing' };
      }
      const earlierRunOfThisNode = !ownership.isAlive(row.owner);
      const home = earlierRunOfThisNode ? null : await store.nodeOf(row.owner);
      if (home !== null && home.fresh) {
        if (forwarded) return { kind: 'unavailable', message: 'the session moved while this request was being forwarded to it; retry' };
        const until = clock.now() + home.remainingMs;
        const refused = this.#refusal(home.advertiseUrl, request);
        if (refused !== null) return refused;
        const outcome = await forwardRequest(home.advertiseUrl, request, body, target, this.#o.nodeId, this.#o.logger, this.#via);
        if (outcome.kind === 'done') {
          this.#remember(id, { key, url: home.advertiseUrl, until });
          return { kind: 'forwarded' };
        }
        if (target.destroyed) return { kind: 'forwarded' };
        // Its lease says it is alive, but it cannot be reached: wait (bounded by that lease) for it to come
        // back or for its lease to lapse; a home that keeps renewing but stays unreachable is a 503.
        waitUntil ??= clock.now() + home.remainingMs + HOME_RETRY_MS;
        if (clock.now() >= waitUntil) return { kind: 'unavailable', message: `the session's home node ${home.node} cannot be reached (${outcome.reason}); retry` };
        this.#o.logger.log('info', 'a session\'s home cannot be reached while its lease is fresh; waiting', { session: id, home: home.node, reason: outcome.reason });
        await new Promise<void>((resolve) => clock.setTimeout(resolve, HOME_RETRY_MS));
        continue;
      }
      attempt++;
      // A session whose initialize never got its checkpoint saved cannot be resumed: the client starts anew.
      if (row.bytes.byteLength === 0) return { kind: 'missing' };
      // Checked and set with no await between: one takeover at a time per session on this node.
      const other = this.#claims.get(id);
      if (other !== undefined) {
        await other.settled;
        return { kind: 'missing' };
      }
      let settle = (): void => undefined;
      const settled = new Promise<void>((resolve) => (settle = resolve));
      this.#claims.set(id, { settled, settle });
      let taken: Awaited<ReturnType<AsyncConversationStore['takeOverSession']>>;
      try {
        taken = await store.takeOverSession(id, key, row.epoch);
      } catch (err) {
        this.opened(id);
        throw err;
      }
      if (taken === null) {
        this.opened(id);
        continue;
      }
      this.#o.logger.log('info', 'took a session over', { session: id, from: home?.node ?? row.owner, epoch: taken.epoch });
      await this.#endOrphans(id, key);
      return { kind: 'taken-over', session: { id, epoch: taken.epoch, bytes: row.bytes } };
    }
    return { kind: 'unavailable', message: 'the session kept moving between nodes; retry' };
  }

  opened(id: string): void {
    const claim = this.#claims.get(id);
    this.#claims.delete(id);
    claim?.settle();
  }

  /** Waits for a takeover of `id` by another request to this node to be opened; true if there was one. */
  async #awaitClaim(id: string): Promise<boolean> {
    const claim = this.#claims.get(id);
    if (claim === undefined) return false;
    await claim.settled;
    return true;
  }

  /** A forward that would put the caller's token on the wire in clear (forward-policy.ts): answered 503 with why, and logged. */
  #refusal(url: string, request: ForwardRequest): Located | null {
    const why = forwardingRefusal(url, request.header('authorization') !== undefined, this.#o.insecureForwarding === true);
    if (why === null) return null;
    this.#o.logger.log('error', 'a request was not forwarded: its bearer token would cross the network in clear', { home: url, why });
    return { kind: 'unavailable', message: why };
  }

  watchOrphans(sessionId: string, principal: string): SessionOrphanWatch | null {
    return this.#o.orphans?.watchSession(sessionId, principal) ?? null;
  }

  /**
   * Before the session is served here: its requests that died with the old home are answered, so a client
   * resuming their streams is not left waiting. A failure is logged, not fatal: the resumed streams' own
   * look-outs cannot help once this node holds the session, so the log says which session it was.
   */
  async #endOrphans(id: string, key: string): Promise<void> {
    try {
      await this.#o.orphans?.endOrphans(id, key);
    } catch (err) {
      this.#o.logger.log('warning', 'could not answer the requests that died with a session\'s previous home; clients resuming them keep waiting', { session: id, error: (err as Error).message });
    }
  }

  #remember(id: string, home: KnownHome): void {
    this.#homes.delete(id);
    this.#homes.set(id, home);
    if (this.#homes.size > HOME_CACHE_ENTRIES) this.#homes.delete(this.#homes.keys().next().value as string);
  }
}
