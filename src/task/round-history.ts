// What a run in round trips (task-rounds.ts) carries from one round to the next on this node: the history
// its round loaded, with the entries it appended, kept when it parks. The next round of the conversation
// served here reads only the entries after it (task-history.ts `known`: those before never change), so
// a run served by one node reads its transcript once rather than once per round. A round served by
// another node reads the history whole, as it must: all a round brings is the sealed handle (conversation,
// turn, seq). Kept per store in least-recently-read order, at most TASK_ROUND_HISTORY_CACHE_ENTRIES
// conversations and TASK_ROUND_HISTORY_CACHE_BYTES of payload (parked-input-cache.ts).

import type { AsyncConversationStore } from '../store/async-store.ts';
import type { Entry } from '../store/store.ts';
import { TASK_ROUND_HISTORY_CACHE_BYTES, TASK_ROUND_HISTORY_CACHE_ENTRIES } from '../limits.ts';
import { ParkedInputCache } from './parked-input-cache.ts';
import { lastModelOf, type LoadedHistory } from './task-history.ts';

/**
 * The bytes an entry the round appended counts for, measured as the store measured it at the write (its
 * payload's JSON text as UTF-8): `append` hands back the entry, not the size it recorded. The entries the
 * round loaded come with their recorded sizes (LoadedHistory.payloadSizes); only these are measured here.
 */
const appendedBytes = (e: Entry): number => Buffer.byteLength(JSON.stringify(e.payload), 'utf8');

/** A round's history as it goes: what it loaded, then every entry it appends, in order. */
export class RoundHistory {
  readonly #entries: Entry[];
  /** `#sizes[i]`: the payload bytes `#entries[i]` counts for. */
  readonly #sizes: number[];

  constructor(loaded: LoadedHistory) {
    this.#entries = [...loaded.entries];
    this.#sizes = [...loaded.payloadSizes];
  }

  append(entry: Entry): void {
    this.#entries.push(entry);
    this.#sizes.push(appendedBytes(entry));
  }

  /** As a read of the store would give it now: the file snapshots before the last model turn left out. */
  loaded(): LoadedHistory {
    const lastModel = lastModelOf(this.#entries);
    const kept = (e: Entry, i: number) => i > lastModel || e.type !== 'file_snapshot';
    const entries = this.#entries.filter(kept);
    const payloadSizes = this.#sizes.filter((_, i) => kept(this.#entries[i] as Entry, i));
    return { entries, payloadSizes, bytes: payloadSizes.reduce((n, b) => n + b, 0) };
  }
}

const kept = new WeakMap<AsyncConversationStore, ParkedInputCache<LoadedHistory>>();
const place = (principal: string, conversationId: string): string => `${principal}\n${conversationId}`;

/** The history a round of the principal's conversation kept on `store` at its park, if any. */
export function keptHistory(store: AsyncConversationStore, principal: string, conversationId: string): LoadedHistory | undefined {
  return kept.get(store)?.get(place(principal, conversationId));
}

/** Keeps `history` for the conversation's next round on `store` (one larger than the whole bound is not kept). */
export function keepHistory(store: AsyncConversationStore, principal: string, conversationId: string, history: LoadedHistory): void {
  let cache = kept.get(store);
  if (cache === undefined) kept.set(store, cache = new ParkedInputCache({ entries: TASK_ROUND_HISTORY_CACHE_ENTRIES, bytes: TASK_ROUND_HISTORY_CACHE_BYTES }));
  cache.set(place(principal, conversationId), history, history.bytes);
}

/** The conversation's run ended (or its round failed): nothing kept for it. */
export function forgetHistory(store: AsyncConversationStore, principal: string, conversationId: string): void {
  kept.get(store)?.delete(place(principal, conversationId));
}
