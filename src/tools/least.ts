// The k least items of a stream, by a comparator, in memory for k of them whatever the stream's length:
// what a listing keeps of a directory of millions of names when it shows only its first k in order.

/**
 * A bound on what the kept items weigh together (the bytes of their lines in an answer, say): an item is
 * dropped once the lesser items kept weigh more than `max` without it, as it could only come past them.
 */
export interface LeastBudget<T> {
  /** At most the item's true weight (a lower bound keeps the answer exact). */
  readonly weight: (item: T) => number;
  readonly max: number;
}

/** Keeps the `keep` least items offered (a max-heap of them), within a budget if given; `sorted()` gives them in order. */
export class LeastItems<T> {
  readonly #keep: number;
  readonly #compare: (a: T, b: T) => number;
  readonly #budget: LeastBudget<T> | undefined;
  /** What the kept items weigh (with a budget). */
  #weight = 0;
  /** A max-heap: the greatest kept item first, so a newcomer is weighed against it alone. */
  readonly #heap: T[] = [];
  #offered = 0;

  constructor(keep: number, compare: (a: T, b: T) => number, budget?: LeastBudget<T>) {
    if (!Number.isInteger(keep) || keep < 0) throw new RangeError(`keep must be a whole number (got ${keep})`);
    this.#keep = keep;
    this.#compare = compare;
    this.#budget = budget;
  }

  /** Items offered so far, kept or not. */
  get offered(): number {
    return this.#offered;
  }

  offer(item: T): void {
    this.#offered++;
    const heap = this.#heap;
    const budget = this.#budget;
    if (heap.length < this.#keep) {
      heap.push(item);
      this.#siftUp(heap.length - 1);
    } else if (heap.length > 0 && this.#compare(item, heap[0] as T) < 0) {
      if (budget) this.#weight -= budget.weight(heap[0] as T);
      heap[0] = item;
      this.#siftDown(0);
    } else {
      return;
    }
    if (!budget) return;
    this.#weight += budget.weight(item);
    // The greatest kept item comes after all the others: once they alone pass the budget, it cannot be shown.
    while (heap.length > 1 && this.#weight - budget.weight(heap[0] as T) > budget.max) {
      this.#weight -= budget.weight(heap[0] as T);
      const last = heap.pop() as T;
      heap[0] = last;
      this.#siftDown(0);
    }
  }

  /** The kept items, least first. */
  sorted(): T[] {
    return [...this.#heap].sort(this.#compare);
  }

  #siftUp(at: number): void {
    const heap = this.#heap;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (this.#compare(heap[at] as T, heap[parent] as T) <= 0) return;
      [heap[at], heap[parent]] = [heap[parent] as T, heap[at] as T];
      at = parent;
    }
  }

  #siftDown(at: number): void {
    const heap = this.#heap;
    for (;;) {
      const left = 2 * at + 1;
      const right = left + 1;
      let greatest = at;
      if (left < heap.length && this.#compare(heap[left] as T, heap[greatest] as T) > 0) greatest = left;
      if (right < heap.length && this.#compare(heap[right] as T, heap[greatest] as T) > 0) greatest = right;
      if (greatest === at) return;
      [heap[at], heap[greatest]] = [heap[greatest] as T, heap[at] as T];
      at = greatest;
    }
  }
}
