// What a node says of itself in a cluster (for /health): its id, which store backend it runs on and
// whether that store answers now, and how many running tasks it holds. Reachability is one cheap query
// (the count of this node's running tasks) bounded by a short timeout, so a health check never hangs
// on a database that stopped answering; its error text is the driver's, which never holds the password
// (the store's URL is not part of it).

import type { AsyncConversationStore } from '../store/async-store.ts';
import { HEALTH_STORE_TIMEOUT_MS } from '../limits.ts';

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
