// Test doubles for supervised children: a FakeChild whose incarnations the test ends at will
// (`exit(reason)`), with every start/stop/kill recorded in a shared journal, in order.

import type { ChildHandle, ChildSpec } from '../../src/supervisor/child-spec.ts';
import { type ExitReason, killed, shutdown } from '../../src/supervisor/exit-reason.ts';

/** The order things happened in, across children: `start:a`, `stop:b`, `kill:c`. */
export type Journal = string[];

/** Resolves once every pending promise callback has run (the supervisors use no real timers with FakeClock). */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export class FakeIncarnation implements ChildHandle {
  readonly exited: Promise<ExitReason>;
  readonly #resolve: (reason: ExitReason) => void;
  readonly #child: FakeChild;
  #exitReason: ExitReason | undefined;

  constructor(child: FakeChild) {
    this.#child = child;
    let resolve: (reason: ExitReason) => void = () => undefined;
    this.exited = new Promise((r) => {
      resolve = r;
    });
    this.#resolve = resolve;
  }

  get alive(): boolean {
    return this.#exitReason === undefined;
  }

  get exitReason(): ExitReason | undefined {
    return this.#exitReason;
  }

  stop(): void {
    this.#child.journal.push(`stop:${this.#child.id}`);
    if (!this.#child.ignoreStop) this.exit(shutdown);
  }

  kill(): void {
    this.#child.journal.push(`kill:${this.#child.id}`);
    this.exit(killed);
  }

  exit(reason: ExitReason): void {
    if (this.#exitReason) return;
    this.#exitReason = reason;
    this.#resolve(reason);
  }
}

export class FakeChild {
  readonly id: string;
  readonly journal: Journal;
  readonly incarnations: FakeIncarnation[] = [];
  /** A hanging child: `stop()` is recorded but does nothing. */
  ignoreStop = false;
  /** The next this-many starts throw `start failed: <id>`. */
  failNextStarts = 0;
  /** When set, the next start waits for this promise before returning its handle. */
  gate: Promise<void> | undefined;

  constructor(id: string, journal: Journal = []) {
    this.id = id;
    this.journal = journal;
  }

  /** A ChildSpec starting this child; `extra` sets restart, shutdown, type. */
  spec(extra: Partial<Omit<ChildSpec, 'id' | 'start'>> = {}): ChildSpec {
    return { id: this.id, start: () => this.start(), ...extra };
  }

  async start(): Promise<FakeIncarnation> {
    const gate = this.gate;
    this.gate = undefined;
    if (gate) await gate;
    this.journal.push(`start:${this.id}`);
    if (this.failNextStarts > 0) {
      this.failNextStarts--;
      throw new Error(`start failed: ${this.id}`);
    }
    const incarnation = new FakeIncarnation(this);
    this.incarnations.push(incarnation);
    return incarnation;
  }

  get current(): FakeIncarnation {
    const last = this.incarnations.at(-1);
    if (!last) throw new Error(`FakeChild ${this.id} was never started`);
    return last;
  }

  get starts(): number {
    return this.incarnations.length;
  }

  /** Ends the current incarnation with `reason`, as if the actor returned, crashed or was killed from outside. */
  exit(reason: ExitReason): void {
    this.current.exit(reason);
  }
}

/** Three fake children a, b, c sharing one journal: the usual cast of a strategy test. */
export function abc(): { journal: Journal; a: FakeChild; b: FakeChild; c: FakeChild } {
  const journal: Journal = [];
  return { journal, a: new FakeChild('a', journal), b: new FakeChild('b', journal), c: new FakeChild('c', journal) };
}

/** A promise the test resolves by hand (to hold a start open). */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}
