// The requests each principal has in flight on this node, across all its sessions: one count per
// principal key (MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL), so that more sessions buy no more work at once.

import { MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL } from '../limits.ts';

/** The node's book: requests in flight by principal key; a principal with none has no entry. */
export class PrincipalRequests {
  readonly limit: number;
  readonly #held = new Map<string, number>();

  constructor(limit: number = MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL) {
    this.limit = limit;
  }

  /** One session's part of `key`'s count: the session settles it to what it holds after every change. */
  account(key: string): RequestAccount {
    return new RequestAccount(this, key);
  }

  /** Requests `key` has in flight on this node. */
  heldBy(key: string): number {
    return this.#held.get(key) ?? 0;
  }

  /** Principals with a request in flight (entries of the book). */
  get principals(): number {
    return this.#held.size;
  }

  /** @internal RequestAccount: `key`'s count moves by `delta`; the entry goes at zero. */
  move(key: string, delta: number): void {
    const held = (this.#held.get(key) ?? 0) + delta;
    if (held <= 0) this.#held.delete(key);
    else this.#held.set(key, held);
  }
}

/**
 * What one session holds of its principal's count. `acquire` takes a place for a new request (refused
 * past the limit); `settle` sets the session's part to the requests it really has in flight, after every
 * change (answer, cancel, refusal, crash, give-up, close: 0), so no path that forgets a release can make
 * the count drift.
 */
export class RequestAccount {
  readonly #book: PrincipalRequests;
  readonly #key: string;
  #held = 0;

  constructor(book: PrincipalRequests, key: string) {
    this.#book = book;
    this.#key = key;
  }

  get held(): number {
    return this.#held;
  }

  get limit(): number {
    return this.#book.limit;
  }

  /** Takes one place for a new request; false (nothing taken) when the principal already holds the limit. */
  acquire(): boolean {
    if (this.#book.heldBy(this.#key) >= this.#book.limit) return false;
    this.#held++;
    this.#book.move(this.#key, 1);
    return true;
  }

  /** The session now has `count` requests in flight (0 once it ended). */
  settle(count: number): void {
    const delta = count - this.#held;
    if (delta === 0) return;
    this.#held = count;
    this.#book.move(this.#key, delta);
  }
}
