// The admission of TCP connections to the HTTP and WebSocket port: at most MAX_CONNECTIONS open at once,
// and at most MAX_CONNECTIONS_PER_ADDRESS from one client address (loopback included). Sessions have
// their quotas (session-quota.ts), but a connection that never sends a request opens no session, and each
// costs a descriptor and a socket's buffers: without this a client could hold tens of thousands of idle
// sockets. The gate sits in front of node:http's own connection listener, so a refused socket never gets
// a parser: it is written a bare 503 with Retry-After, its input is read and dropped, and it is closed
// once its client closed or REFUSED_CONNECTION_LINGER_MS passed. Refusals are logged once per
// CONNECTION_REFUSAL_LOG_MS window, not once per connection. Connections already open are never touched.
// A connection from a peer (another node of this node's cluster: src/cluster/peer-addresses.ts) counts
// against the total only: every connection one node opens to another comes from its one address. Peers
// are known by address alone, never by anything a client sends: the gate runs before any request is read.
// A trusted proxy (`--trusted-proxy`: a reverse proxy or TLS terminator that passes on every client's
// connections from its own address) is counted the same way, for the same reason: past it every client is
// that one address. The gate cannot count the clients behind it: it admits a connection at accept, before
// any byte of it is read, so X-Forwarded-For is never read here (nor trusted anywhere for this); limiting
// each client is the proxy's part, which sees their addresses (nginx `limit_conn`).

import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Clock } from '../time/clock.ts';
import { CONNECTION_REFUSAL_LOG_MS, CONNECTION_REFUSED_RETRY_AFTER_SECONDS, MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS, REFUSED_CONNECTION_LINGER_MS } from '../limits.ts';

export interface ConnectionLimits {
  /** Open connections, all addresses together (`--max-connections`). */
  readonly maxConnections: number;
  /** Open connections from one client address (`--max-connections-per-address`). */
  readonly maxPerAddress: number;
  /**
   * Addresses of trusted proxies (`--trusted-proxy`), as `addressOf` gives them: their connections count
   * against `maxConnections` only, as a cluster peer's do. Default: none.
   */
  readonly trustedProxies?: ReadonlySet<string>;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = { maxConnections: MAX_CONNECTIONS, maxPerAddress: MAX_CONNECTIONS_PER_ADDRESS };

/** Why a connection was refused: which limit, with its figure. */
export interface Refusal {
  readonly limit: 'connections' | 'connections per address';
  readonly max: number;
}

/** A log line's worth: the first refusal of a window, or how many more the window refused. */
export type RefusalReport =
  | { readonly kind: 'refused'; readonly address: string; readonly refusal: Refusal }
  | { readonly kind: 'more refused'; readonly count: number; readonly windowMs: number };

/** Counts of open connections, by client address (a Map: keyed by what clients send us). */
export class ConnectionCounts {
  readonly #limits: ConnectionLimits;
  readonly #byAddress = new Map<string, number>();
  #total = 0;
  /** Of `#total`, the connections admitted as a peer's or a trusted proxy's (not in `#byAddress`). */
  #peers = 0;

  constructor(limits: ConnectionLimits) {
    for (const [name, v] of [['maxConnections', limits.maxConnections], ['maxPerAddress', limits.maxPerAddress]] as const) {
      if (!Number.isSafeInteger(v) || v < 1) throw new RangeError(`${name} must be a positive whole number, not ${v}`);
    }
    this.#limits = limits;
  }

  get total(): number {
    return this.#total;
  }

  /** Connections open from `address`. */
  from(address: string): number {
    return this.#byAddress.get(address) ?? 0;
  }

  /** Connections open from peers and trusted proxies (counted in the total, under no address). */
  get fromPeers(): number {
    return this.#peers;
  }

  /**
   * Counts a connection from `address` in, or says which limit it would pass (nothing is counted then). A
   * `peer`'s connection (a cluster peer's or a trusted proxy's) is counted in the total only; its release
   * must say `peer` too.
   */
  admit(address: string, peer = false): Refusal | null {
    if (this.#total >= this.#limits.maxConnections) return { limit: 'connections', max: this.#limits.maxConnections };
    if (peer) {
      this.#peers++;
      this.#total++;
      return null;
    }
    const n = this.from(address);
    if (n >= this.#limits.maxPerAddress) return { limit: 'connections per address', max: this.#limits.maxPerAddress };
    this.#byAddress.set(address, n + 1);
    this.#total++;
    return null;
  }

  /** An admitted connection from `address` closed (`peer`: as it was admitted). */
  release(address: string, peer = false): void {
    if (peer) {
      if (this.#peers <= 0) return;
      this.#peers--;
      this.#total--;
      return;
    }
    const n = this.from(address);
    if (n <= 0) return;
    if (n === 1) this.#byAddress.delete(address);
    else this.#byAddress.set(address, n - 1);
    this.#total--;
  }
}

/**
 * One line per window: the first refusal at once, then (if any) how many more the window refused, at its
 * end. A quiet window ends the burst; the next refusal starts a new one and is logged at once.
 */
export class RefusalLog {
  readonly #clock: Clock;
  readonly #report: (report: RefusalReport) => void;
  readonly #windowMs: number;
  #timer: unknown = null;
  #more = 0;

  constructor(clock: Clock, report: (report: RefusalReport) => void, windowMs: number = CONNECTION_REFUSAL_LOG_MS) {
    this.#clock = clock;
    this.#report = report;
    this.#windowMs = windowMs;
  }

  refused(address: string, refusal: Refusal): void {
    if (this.#timer !== null) return void this.#more++;
    this.#report({ kind: 'refused', address, refusal });
    this.#arm();
  }

  stop(): void {
    if (this.#timer !== null) this.#clock.clearTimeout(this.#timer);
    this.#timer = null;
  }

  #arm(): void {
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = null;
      if (this.#more === 0) return;
      const count = this.#more;
      this.#more = 0;
      this.#report({ kind: 'more refused', count, windowMs: this.#windowMs });
      this.#arm();
    }, this.#windowMs, { unref: true });
  }
}

/** The client address a connection is counted under: an IPv4-mapped IPv6 address is its IPv4 one. */
export function addressOf(socket: Socket): string {
  const a = socket.remoteAddress ?? 'unknown';
  return a.startsWith('::ffff:') && a.includes('.') ? a.slice('::ffff:'.length) : a;
}

/** What keeps a listener's failure from ending the process (log/guarded.ts). */
export type Guard = (listener: (socket: Socket) => void) => (socket: Socket) => void;

/** The gate in front of a server: its counts, the peers it knows, and what stops its log's timer. */
export interface ConnectionGate {
  readonly counts: ConnectionCounts;
  /** From now on connections from these addresses are a peer's (connections already open stay as counted). */
  trustPeers(addresses: ReadonlySet<string>): void;
  stop(): void;
}

/**
 * Puts the gate in front of `server`'s connection listeners (node:http's own among them): an admitted
 * connection reaches them and is counted until it closes; a refused one never does.
 */
export function gateConnections(server: Server, limits: ConnectionLimits, clock: Clock, report: (report: RefusalReport) => void, guard: Guard = (listener) => listener): ConnectionGate {
  const counts = new ConnectionCounts(limits);
  const log = new RefusalLog(clock, report);
  const proxies = limits.trustedProxies ?? new Set<string>();
  let peers: ReadonlySet<string> = new Set();
  const listeners = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  server.on('connection', guard((socket: Socket) => {
    const address = addressOf(socket);
    const peer = proxies.has(address) || peers.has(address);
    const refusal = counts.admit(address, peer);
    if (refusal !== null) {
      log.refused(address, refusal);
      return refuse(socket, clock);
    }
    socket.once('close', () => counts.release(address, peer));
    for (const listener of listeners) listener.call(server, socket);
  }));
  return { counts, trustPeers: (addresses) => void (peers = addresses), stop: () => log.stop() };
}

const REFUSED_BODY = 'too many connections; try again later\n';
const REFUSED_REPLY = `HTTP/1.1 503 Service Unavailable\r\nRetry-After: ${CONNECTION_REFUSED_RETRY_AFTER_SECONDS}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${REFUSED_BODY.length}\r\n\r\n${REFUSED_BODY}`;

/**
 * The cheapest answer that still says why: a 503 written at once (before any request is read), the input
 * read and dropped so the close is a clean one, and the socket destroyed when its client closed or after
 * REFUSED_CONNECTION_LINGER_MS.
 */
function refuse(socket: Socket, clock: Clock): void {
  socket.on('error', () => {});
  socket.on('data', () => {});
  const linger = clock.setTimeout(() => socket.destroy(), REFUSED_CONNECTION_LINGER_MS, { unref: true });
  socket.once('close', () => clock.clearTimeout(linger));
  socket.end(REFUSED_REPLY);
}
