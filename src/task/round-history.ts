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
import { bytesOf, lastModelOf, type LoadedHistory } from './task-history.ts';

/** A round's history as it goes: what it loaded, then every entry it appends, in order. */
export class RoundHistory {
  readonly #entries: Entry[];
  #bytes: number;

  constructor(loaded: LoadedHistory) {
    this.#entries = [...loaded.entries];
    this.#bytes = loaded.bytes;
  }

  append(entry: Entry): void {
    this.#entries.push(entry);
    this.#bytes += bytesOf(entry);
  }

  /** As a read of the store would give it now: the file snapshots before the last model turn left out. */
  loaded(): LoadedHistory {
    const lastModel = lastModelOf(this.#entries);
    let bytes = this.#bytes;
    const entries = this.#entries.filter((e, i) => {
      if (i > lastModel || e.type !== 'file_snapshot') return true;
      bytes -= bytesOf(e);
      return false;
    });
    return { entries, bytes };
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
