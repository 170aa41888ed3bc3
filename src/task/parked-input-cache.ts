// What polls of a parked task rebuilt, kept on this node (task-input.ts): a parked place — the caller's
// conversation, parked at seq, as read by one kind of reader — waits for the same input however often a
// client polls it (the transcript up to that seq never changes), so the first poll reads and replays the
// transcript and the next ones read nothing. A Map in least-recently-read order, bounded by
// TASK_PARKED_INPUT_CACHE_ENTRIES places and TASK_PARKED_INPUT_CACHE_BYTES of what they hold. A round trip's
// history kept at its park (round-history.ts) is kept the same way, under bounds of its own.

import { TASK_PARKED_INPUT_CACHE_BYTES, TASK_PARKED_INPUT_CACHE_ENTRIES } from '../limits.ts';

export class ParkedInputCache<T> {
  /** place key → what it waits for and its size (characters); least recently read first. */
  readonly #places = new Map<string, { readonly value: T; readonly cost: number }>();
  #cost = 0;
  readonly #maxEntries: number;
  readonly #maxCost: number;

  /** Bounded by `entries` places and `bytes` of cost: by default, the parked-input bounds. */
  constructor(bounds: { readonly entries: number; readonly bytes: number } = { entries: TASK_PARKED_INPUT_CACHE_ENTRIES, bytes: TASK_PARKED_INPUT_CACHE_BYTES }) {
    this.#maxEntries = bounds.entries;
    this.#maxCost = bounds.bytes;
  }

  /** The input kept for `place`, now the most recently read; undefined when none is. */
  get(place: string): T | undefined {
    const kept = this.#places.get(place);
    if (kept === undefined) return undefined;
    this.#places.delete(place);
    this.#places.set(place, kept);
    return kept.value;
  }

  /** Keeps `value` for `place` (none costing more than the whole bound), dropping the least recently read past the bounds. */
  set(place: string, value: T, cost: number): void {
    if (cost > this.#maxCost) return;
    const old = this.#places.get(place);
    if (old !== undefined) {
      this.#places.delete(place);
      this.#cost -= old.cost;
    }
    this.#places.set(place, { value, cost });
    this.#cost += cost;
    for (const [oldest, kept] of this.#places) {
      if (this.#places.size <= this.#maxEntries && this.#cost <= this.#maxCost) break;
      this.#places.delete(oldest);
      this.#cost -= kept.cost;
    }
  }

  /** Drops what is kept for `place`, if anything. */
  delete(place: string): void {
    const old = this.#places.get(place);
    if (old === undefined) return;
    this.#places.delete(place);
    this.#cost -= old.cost;
  }

  get size(): number {
    return this.#places.size;
  }
}
