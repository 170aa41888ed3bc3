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

/**
 * What an actor's owner is told: its emitted messages, the ones its full mailbox refused, and its exit.
 * Methods of one object rather than a closure each: a server has one owner per session, for as long as
 * the session lives, and three closures with their contexts, the exit's promise reaction and the
 * promise `then` makes cost ~0.4 KB of it.
 */
export interface ActorOwner {
  actorMessage(msg: unknown, actor: ActorRef): void;
  actorRefused(msg: unknown, why: string, actor: ActorRef): void;
  actorExited(reason: ActorExit, actor: ActorRef): void;
}

/** Told of an exit without a promise of its own (a supervisor's watch: `ChildHandle.watchExit`). */
export interface ExitWatcher {
  onExit(reason: ActorExit): void;
}

export class ActorRef {
  readonly id: string;
  readonly #host: ActorHost;
  /** Made when first asked for (`exited`): an actor watched only by its owner and its supervisor never needs it. */
  #exited: Promise<ActorExit> | null = null;
  #resolveExit: ((reason: ActorExit) => void) | null = null;
  /** Made when first asked for, while the actor is not up; the shared resolved promise once it is. */
  #ready: Promise<void> | null = null;
  /** Dropped once called: an actor that is up holds no resolver. */
  #resolveReady: (() => void) | null = null;
  #up = false;
  #exit: ActorExit | null = null;
  #owner: ActorOwner | null = null;
  #onMessage: ((msg: unknown) => void) | null = null;
  #onRejected: ((msg: unknown, why: string) => void) | null = null;
  /** Told of the exit after the owner, in the order they asked: one watcher, or several. */
  #watchers: ExitWatcher | ExitWatcher[] | null = null;
  /** Set when a linked actor's abnormal exit brought this one down: its exit carries that cause. */
  #linkCause: ActorExit | null = null;

  constructor(id: string, host: ActorHost) {
    this.id = id;
    this.#host = host;
  }

  /** Settles once, with the actor's exit. */
  get exited(): Promise<ActorExit> {
    if (this.#exited === null) {
      const exit = this.#exit;
      this.#exited = exit !== null ? Promise.resolve(exit) : new Promise((resolve) => (this.#resolveExit = resolve));
    }
    return this.#exited;
  }

  /** Resolves when the actor has run its `init` on its thread (never, if it exits first). */
  get ready(): Promise<void> {
    if (this.#up) return READY;
    return (this.#ready ??= new Promise((resolve) => (this.#resolveReady = resolve)));
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

  /**
   * The actor's owner: its messages, refusals and exit go to `owner` (told of the exit before any
   * watcher, in a microtask, as a reaction on `exited` registered first would be).
   */
  own(owner: ActorOwner): void {
    this.#owner = owner;
    // Already gone (between its spawn and this call): the owner hears it all the same, as a late reaction would.
    const exit = this.#exit;
    if (exit !== null) queueMicrotask(() => owner.actorExited(exit, this));
  }

  /**
   * Tells `watcher` of the exit once, in a microtask after it (at once in one if it has exited), after the
   * owner and earlier watchers: what `exited.then` does, without a promise, a reaction and a closure.
   */
  watchExit(watcher: ExitWatcher): void {
    const exit = this.#exit;
    if (exit !== null) {
      queueMicrotask(() => watcher.onExit(exit));
      return;
    }
    const w = this.#watchers;
    this.#watchers = w === null ? watcher : Array.isArray(w) ? [...w, watcher] : [w, watcher];
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
    // Queued before the promise's reactions: the owner and the watchers learn of the exit first, as
    // reactions registered at the spawn did.
    if (this.#owner !== null || this.#watchers !== null) queueMicrotask(() => this.#tellExit(final));
    this.#resolveExit?.(final);
    this.#resolveExit = null;
  }

  /** Each on its own, as separate reactions were: one that throws does not keep the exit from the others. */
  #tellExit(reason: ActorExit): void {
    const owner = this.#owner;
    const w = this.#watchers;
    this.#watchers = null;
    const told: ((reason: ActorExit) => void)[] = owner === null ? [] : [(r) => owner.actorExited(r, this)];
    for (const watcher of w === null ? [] : Array.isArray(w) ? w : [w]) told.push((r) => watcher.onExit(r));
    for (const tell of told) {
      try {
        tell(reason);
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }

  /** Called by the host: the actor's `init` has run. */
  started(): void {
    this.#up = true;
    this.#resolveReady?.();
    this.#resolveReady = null;
    this.#ready = null;
  }

  deliver(msg: unknown): void {
    if (this.#owner !== null) this.#owner.actorMessage(msg, this);
    else this.#onMessage?.(msg);
  }

  reject(msg: unknown, why: string): void {
    if (this.#owner !== null) this.#owner.actorRefused(msg, why, this);
    else this.#onRejected?.(msg, why);
  }
}

const READY: Promise<void> = Promise.resolve();
