// A bounded FIFO mailbox: one message out at a time, a named limit, O(1) push and shift.
import { DEFAULT_MAILBOX_LIMIT } from '../limits.ts';

export class Mailbox<T> {
  readonly #limit: number;
  /** Null while empty: an idle actor's mailbox holds no array. */
  #items: (T | undefined)[] | null = null;
  #head = 0;

  constructor(limit: number = DEFAULT_MAILBOX_LIMIT) {
    this.#limit = limit;
  }

  get size(): number {
    return (this.#items?.length ?? 0) - this.#head;
  }

  /** False when full: the caller refuses the message rather than growing without bound. */
  push(item: T): boolean {
    if (this.size >= this.#limit) return false;
    (this.#items ??= []).push(item);
    return true;
  }

  shift(): T | undefined {
    const items = this.#items;
    if (items === null || this.#head >= items.length) return undefined;
    const item = items[this.#head];
    items[this.#head++] = undefined;
    // Drained: the array goes (an idle actor would otherwise keep it, with 17 empty slots).
    if (this.#head === items.length) {
      this.#items = null;
      this.#head = 0;
      return item;
    }
    // Compact once the consumed prefix dominates, so the array does not grow forever.
    if (this.#head > 1024 && this.#head * 2 > items.length) {
      this.#items = items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }

  clear(): void {
    this.#items = null;
    this.#head = 0;
  }
}
