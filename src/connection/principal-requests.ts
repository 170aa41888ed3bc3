// The requests each principal has in flight on this node, across all its sessions: one count per
// principal key (MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL), so that more sessions buy no more work at once;
// and the characters of its messages not yet handled (MAX_INPUT_CHARS_PER_PRINCIPAL), so that one caller's
// big messages cannot fill the heap of the scheduler thread its sessions share with others.

import { MAX_INPUT_CHARS_PER_PRINCIPAL, MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL } from '../limits.ts';

/** The node's book: requests in flight by principal key; a principal with none has no entry. */
export class PrincipalRequests {
  readonly limit: number;
  readonly inputLimit: number;
  readonly #held = new Map<string, number>();
  /** Characters unhandled by principal key; a principal with none has no entry. */
  readonly #input = new Map<string, number>();

  constructor(limit: number = MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL, inputLimit: number = MAX_INPUT_CHARS_PER_PRINCIPAL) {
    this.limit = limit;
    this.inputLimit = inputLimit;
  }

  /** Characters of `key`'s messages delivered and not yet handled on this node. */
  inputOf(key: string): number {
    return this.#input.get(key) ?? 0;
  }

  /** @internal RequestAccount: `key`'s unhandled characters move by `delta`; the entry goes at zero. */
  moveInput(key: string, delta: number): void {
    const held = (this.#input.get(key) ?? 0) + delta;
    if (held <= 0) this.#input.delete(key);
    else this.#input.set(key, held);
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
  #input = 0;

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

  /**
   * Why a message of `chars` characters may not join the `pending` this session has not handled yet, or
   * null: it is admitted, and counted at once (so the principal's other sessions see it before this one's
   * next settle). Refused when it would take the principal past its input limit; a principal with nothing
   * unhandled is admitted one message of any size, so the limit never refuses every message.
   */
  refusesInput(pending: number, chars: number): string | null {
    this.settleInput(pending);
    const total = this.#book.inputOf(this.#key);
    const limit = this.#book.inputLimit;
    if (total !== 0 && total + chars > limit) {
      return `this principal's messages not yet handled on this node would pass MAX_INPUT_CHARS_PER_PRINCIPAL (${limit} characters); retry once its earlier requests are answered`;
    }
    this.settleInput(pending + chars);
    return null;
  }

  /** The session now has `chars` characters of messages unhandled (0 once it ended or was given up). */
  settleInput(chars: number): void {
    const delta = chars - this.#input;
    if (delta === 0) return;
    this.#input = chars;
    this.#book.moveInput(this.#key, delta);
  }

  /** The session now has `count` requests in flight (0 once it ended). */
  settle(count: number): void {
    const delta = count - this.#held;
    if (delta === 0) return;
    this.#held = count;
    this.#book.move(this.#key, delta);
  }
}
