// A bounded FIFO mailbox: one message out at a time, a named limit, O(1) push and shift.
import { DEFAULT_MAILBOX_LIMIT } from '../limits.ts';

export class Mailbox<T> {
  readonly #limit: number;
  #items: (T | undefined)[] = [];
  #head = 0;

  constructor(limit: number = DEFAULT_MAILBOX_LIMIT) {
    this.#limit = limit;
  }

  get size(): number {
    return this.#items.length - this.#head;
  }

  /** False when full: the caller refuses the message rather than growing without bound. */
  push(item: T): boolean {
    if (this.size >= this.#limit) return false;
    this.#items.push(item);
    return true;
  }

  shift(): T | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head++] = undefined;
    // Drained: the array lets go of its room (an idle actor would otherwise keep 17 empty slots).
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
      return item;
    }
    // Compact once the consumed prefix dominates, so the array does not grow forever.
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }

  clear(): void {
    this.#items = [];
    this.#head = 0;
  }
}
