// What a node says of itself in a cluster (for /health): its id, which store backend it runs on and
// whether that store answers now, and how many running tasks it holds. Reachability is one cheap query
// (the count of this node's running tasks) bounded by a short timeout, so a health check never hangs
// on a database that stopped answering; its error text is the driver's, which never holds the password
// (the store's URL is not part of it).
//
// On a shared store the node keeps its last probe (`StoreWatch`, one every STORE_PROBE_INTERVAL_MS, and
// one for each /health): while the store cannot be reached, the node refuses new sessions with a 503 and
// a Retry-After, so a load balancer's next try lands on a node that can record the session's work; its
// open sessions go on (what they do without the store still works).

import type { Logger } from '../log/logger.ts';
import type { AsyncConversationStore } from '../store/async-store.ts';
import type { Clock } from '../time/clock.ts';
import type { Refusal } from '../transports/session-quota.ts';
import { HEALTH_STORE_TIMEOUT_MS, STORE_PROBE_INTERVAL_MS } from '../limits.ts';

export type StoreReachability =
  | { readonly reachable: true }
  /** `error`: why (the driver's message, or the timeout). */
  | { readonly reachable: false; readonly error: string };

export interface NodeHealth {
  /** `--node-id` (or its default) on a shared store; null on the embedded SQLite store. */
  readonly node: string | null;
  readonly backend: 'sqlite' | 'postgres';
  readonly store: StoreReachability;
  /** Running tasks this node holds the lease of; null when the store did not answer (or is not opened yet: 0). */
  readonly tasks: number | null;
}

export interface NodeHealthInput {
  readonly node: string | null;
  readonly backend: 'sqlite' | 'postgres';
  /** The store, or null when it is not opened yet (SQLite opens on first use): nothing to probe. */
  readonly store: Pick<AsyncConversationStore, 'ownedTasks'> | null;
  /** Default `HEALTH_STORE_TIMEOUT_MS`. */
  readonly timeoutMs?: number;
}

/** Probes the store once (at most `timeoutMs`) and reports. Never rejects. */
export async function nodeHealth(input: NodeHealthInput): Promise<NodeHealth> {
  const { node, backend, store } = input;
  if (store === null) return { node, backend, store: { reachable: true }, tasks: 0 };
  const timeoutMs = input.timeoutMs ?? HEALTH_STORE_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the store did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    const tasks = await Promise.race([store.ownedTasks(), late]);
    return { node, backend, store: { reachable: true }, tasks };
  } catch (err) {
    return { node, backend, store: { reachable: false, error: (err as Error).message }, tasks: null };
  } finally {
    clearTimeout(timer);
  }
}

/** A node's health as /health shows it: the last probe, and whether new sessions are accepted because of it. */
export interface NodeStatus extends NodeHealth {
  /** False while the last probe found the store unreachable: new HTTP and WebSocket sessions are refused (503). */
  readonly acceptingSessions: boolean;
}

export interface StoreWatchOptions {
  /** One probe (`nodeHealth`); never rejects. */
  readonly probe: () => Promise<NodeHealth>;
  readonly clock: Clock;
  /** Default `STORE_PROBE_INTERVAL_MS`. */
  readonly intervalMs?: number;
  /** Told when the store is lost and when it answers again. */
  readonly logger: Logger;
}

/** The body of the refusal: no driver text (it names the database's host), which /health gives known callers. */
export const STORE_LOST_MESSAGE = 'Service Unavailable: the conversation store cannot be reached, so this node accepts no new sessions until it answers again; retry later (another node may take the session)';

/** Keeps a node's last store probe, probing periodically, and answers whether a new session may open. */
export class StoreWatch {
  readonly #options: StoreWatchOptions;
  readonly #intervalMs: number;
  #last: NodeHealth | null = null;
  #probing: Promise<NodeStatus> | null = null;
  #timer: unknown = undefined;
  #stopped = false;

  constructor(options: StoreWatchOptions) {
    this.#options = options;
    this.#intervalMs = options.intervalMs ?? STORE_PROBE_INTERVAL_MS;
  }

  /** Probes every interval from now on (a probe still running is not doubled). */
  start(): void {
    if (this.#timer !== undefined || this.#stopped) return;
    this.#timer = this.#options.clock.setInterval(() => void this.probe(), this.#intervalMs, { unref: true });
  }

  /** No more probes are started or kept: a probe under way as the node closes its store would read as a lost store. */
  stop(): void {
    this.#stopped = true;
    this.#options.clock.clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Until the first probe: the store answered when the node opened it. */
  get acceptingSessions(): boolean {
    return this.#last === null || this.#last.store.reachable;
  }

  /** Probes now (or joins the probe under way), keeps the result, and reports it. */
  probe(): Promise<NodeStatus> {
    this.#probing ??= this.#options.probe().then((health) => {
      this.#record(health);
      return { ...health, acceptingSessions: this.acceptingSessions };
    }).finally(() => {
      this.#probing = null;
    });
    return this.#probing;
  }

  /** Why a new session may not open now, or null when it may. */
  refusal(): Refusal | null {
    if (this.acceptingSessions) return null;
    return { status: 503, message: STORE_LOST_MESSAGE, headers: { 'Retry-After': String(Math.ceil(this.#intervalMs / 1000)) } };
  }

  #record(health: NodeHealth): void {
    if (this.#stopped) return;
    const was = this.acceptingSessions;
    this.#last = health;
    const now = this.acceptingSessions;
    if (was && !health.store.reachable) {
      this.#options.logger.log('error', 'the conversation store cannot be reached; refusing new sessions until it answers', { error: health.store.error });
    } else if (!was && now) {
      this.#options.logger.log('info', 'the conversation store answers again; accepting new sessions');
    }
  }
}
