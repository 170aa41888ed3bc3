// The main thread's handle on one actor living on a scheduler worker: cast, call with a timeout,
// stop/kill, and `exited` — which makes an actor a supervisable child, like a monitored process.

import type { ActorExit } from './behaviour.ts';
import { DEFAULT_CALL_TIMEOUT_MS } from '../limits.ts';

/** A `call` not answered within its timeout; the actor may still handle the message later. */
export class CallTimeoutError extends Error {
  override readonly name = 'CallTimeoutError';
}
export class ActorExitedError extends Error {
  override readonly name = 'ActorExitedError';
}

/** The transport an ActorRef uses; implemented by the worker that hosts it. */
export interface ActorHost {
  cast(id: string, msg: unknown): void;
  call(id: string, msg: unknown, timeoutMs: number): Promise<unknown>;
  exit(id: string, how: 'shutdown' | 'kill'): void;
  /** True when the actors run on the caller's own thread (cast messages are handed over, not copied). */
  readonly sameThread?: boolean;
}

export class ActorRef {
  readonly id: string;
  readonly exited: Promise<ActorExit>;
  /** Resolves when the actor has run its `init` on its thread (never, if it exits first). */
  readonly ready: Promise<void>;
  readonly #host: ActorHost;
  #resolveExit!: (reason: ActorExit) => void;
  /** Dropped once called: an actor that is up holds no resolver. */
  #resolveReady: (() => void) | null = null;
  #exit: ActorExit | null = null;
  #onMessage: ((msg: unknown) => void) | null = null;
  #onRejected: ((msg: unknown, why: string) => void) | null = null;
  /** Set when a linked actor's abnormal exit brought this one down: its exit carries that cause. */
  #linkCause: ActorExit | null = null;

  constructor(id: string, host: ActorHost) {
    this.id = id;
    this.#host = host;
    this.exited = new Promise((resolve) => (this.#resolveExit = resolve));
    this.ready = new Promise((resolve) => (this.#resolveReady = resolve));
  }

  get alive(): boolean {
    return this.#exit === null;
  }

  /**
   * Does the actor run on this thread? Then a cast message reaches it as the very object (a value the
   * owner computed may ride along); else it is a structured clone.
   */
  get sameThread(): boolean {
    return this.#host.sameThread === true;
  }

  /** Where the actor's emitted messages go (one receiver: the actor's owner). */
  onMessage(receiver: (msg: unknown) => void): void {
    this.#onMessage = receiver;
  }

  /** Messages its full mailbox refused. */
  onRejected(receiver: (msg: unknown, why: string) => void): void {
    this.#onRejected = receiver;
  }

  cast(msg: unknown): void {
    if (this.#exit === null) this.#host.cast(this.id, msg);
  }

  call(msg: unknown, timeoutMs: number = DEFAULT_CALL_TIMEOUT_MS): Promise<unknown> {
    if (this.#exit !== null) return Promise.reject(new ActorExitedError(`actor ${this.id} has exited`));
    return Promise.race([
      this.#host.call(this.id, msg, timeoutMs),
      this.exited.then((reason) => { throw new ActorExitedError(`actor ${this.id} exited (${reason.kind}) during a call`); }),
    ]);
  }

  /** Ask to stop: the behaviour's terminate runs, then it exits `shutdown`. */
  stop(): void {
    if (this.#exit === null) this.#host.exit(this.id, 'shutdown');
  }

  /** brutal_kill: dropped at once, exits `killed`. */
  kill(): void {
    if (this.#exit === null) this.#host.exit(this.id, 'kill');
  }

  /**
   * Links two actors, as OTP's link/1: when either exits abnormally (crash or killed), the other is
   * brought down too, and its exit is a crash naming the linked actor. A normal or shutdown exit does
   * not propagate. Links are bidirectional; linking to an actor that has already exited abnormally
   * brings this one down at once.
   */
  link(other: ActorRef): void {
    const propagate = (from: ActorRef, to: ActorRef) => {
      void from.exited.then((reason) => {
        if (reason.kind === 'crash' || reason.kind === 'killed') to.#downBecause(from.id, reason);
      });
    };
    propagate(this, other);
    propagate(other, this);
  }

  #downBecause(linked: string, reason: ActorExit): void {
    if (this.#exit !== null || this.#linkCause !== null) return;
    const why = reason.kind === 'crash' ? reason.cause.message : 'killed';
    this.#linkCause = { kind: 'crash', cause: { name: 'LinkedExit', message: `linked actor ${linked} exited: ${why}` } };
    this.#host.exit(this.id, 'kill');
  }

  /** Called by the host: the one and only exit of this actor. */
  settle(reason: ActorExit): void {
    if (this.#exit !== null) return;
    const final = reason.kind === 'killed' && this.#linkCause !== null ? this.#linkCause : reason;
    this.#exit = final;
    this.#resolveExit(final);
  }

  /** Called by the host: the actor's `init` has run. */
  started(): void {
    this.#resolveReady?.();
    this.#resolveReady = null;
  }

  deliver(msg: unknown): void {
    this.#onMessage?.(msg);
  }

  reject(msg: unknown, why: string): void {
    this.#onRejected?.(msg, why);
  }
}
