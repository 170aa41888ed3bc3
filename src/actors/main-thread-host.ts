// In-thread mode: actors hosted on the main thread behind the same ActorRef and mailbox API as on a
// scheduler worker, for a server with one session (stdio), which then boots no thread at all. The run
// loop is the worker's (actor-cells.ts): a crash of a behaviour is the actor's exit, and its supervisor
// restarts it. What a thread alone can survive — a hang, running out of memory — is not offered here.

import { getHeapStatistics } from 'node:v8';
import { type Clock, systemClock } from '../time/clock.ts';
import { ActorCells } from './actor-cells.ts';
import { type ActorHost, ActorRef } from './actor-ref.ts';
import type { ActorThread } from './actor-thread.ts';
import type { ActorExit, Behaviour, BehaviourRef } from './behaviour.ts';
import { InlineTally, installInlineTally, uninstallInlineTally } from './inline-tally.ts';
import type { FromWorker, MailboxDepths } from './messages.ts';
import { type SchedulerThreadOptions, WORKER_KILLED } from './scheduler-thread.ts';

export class MainThreadHost implements ActorThread {
  readonly index: number;
  readonly exited: Promise<ActorExit>;
  readonly ready: Promise<void> = Promise.resolve();
  readonly actors = new Map<string, ActorRef>();
  readonly #cells: ActorCells;
  readonly #calls = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: unknown }>();
  readonly #clock: Clock;
  #nextRef = 1;
  #ending: ActorExit | null = null;
  #settleExit!: (reason: ActorExit) => void;
  /**
   * What the actors sent, handed to their owners after the current turn (a microtask), never from inside
   * a handler: as from a worker, an owner never runs in the middle of its actor's callback.
   */
  #outbox: FromWorker[] = [];
  /**
   * The main thread's tally of inline tool calls (as a worker installs one at boot): its batches go
   * straight to the hook, no thread to cross, so a flush is immediate.
   */
  readonly #tally: InlineTally;

  constructor(index: number, builtins: ReadonlyMap<string, Behaviour>, options: SchedulerThreadOptions = {}) {
    this.index = index;
    this.#clock = options.clock ?? systemClock;
    const onInline = options.onInline;
    this.exited = new Promise((resolve) => (this.#settleExit = resolve));
    // What an actor emitted is handed on as soon as it has handled the message (not after the whole turn):
    // on stdio the replies of a turn of 64 calls then leave in batches while the rest are handled
    // (STDIO_REPLIES_PER_WRITE), so the host works on them meanwhile instead of the two taking turns.
    this.#cells = new ActorCells((msg) => this.#post(msg), builtins, { handled: this.#handOn });
    this.#tally = new InlineTally((series) => onInline?.(series));
    installInlineTally(this.#tally);
  }

  get isReady(): boolean {
    return this.#ending === null;
  }

  get alive(): boolean {
    return this.#ending === null;
  }

  get heapUsed(): number {
    return getHeapStatistics().used_heap_size;
  }

  get mailboxes(): MailboxDepths {
    return this.#cells.mailboxDepths();
  }

  /** One host for all of this thread's actor handles (not three closures per actor). */
  readonly #host: ActorHost = {
    sameThread: true,
    cast: (actor, msg) => {
      if (this.#alive()) this.#cells.receive({ t: 'cast', id: actor, msg });
    },
    call: (actor, msg, timeoutMs) => this.#call(actor, msg, timeoutMs),
    exit: (actor, how) => {
      if (this.#alive()) this.#cells.receive({ t: 'exit', id: actor, how });
    },
  };

  spawn(id: string, behaviour: BehaviourRef, args: unknown): ActorRef {
    const ref = new ActorRef(id, this.#host);
    this.actors.set(id, ref);
    if (this.#alive()) this.#cells.receive({ t: 'spawn', id, behaviour, args });
    return ref;
  }

  flushInline(): Promise<void> {
    this.#tally.flush();
    return Promise.resolve();
  }

  /** Only `throw` can be survived on the main thread: it is the crash of the host and of every actor on it. */
  sabotage(how: 'hang' | 'oom' | 'throw'): void {
    if (how !== 'throw') throw new Error(`sabotage "${how}" needs a scheduler worker thread; actors on the main thread cannot survive it`);
    this.#end({ kind: 'crash', cause: { name: 'Error', message: `scheduler ${this.index} (main thread) crashed: sabotage` } });
  }

  /** As a worker's stop: the actors exit `shutdown` without their `terminate`. */
  stop(): void {
    this.#end({ kind: 'shutdown' });
  }

  /** As a killed worker: the actors are dropped, each exits as a crash named WORKER_KILLED. */
  kill(): void {
    this.#end({ kind: 'killed' });
  }

  #alive(): boolean {
    return this.#ending === null;
  }

  #end(reason: ActorExit): void {
    if (this.#ending !== null) return;
    this.#ending = reason;
    // The calls that ran before the end are still counted; a newer host installs its own tally.
    this.#tally.flush();
    uninstallInlineTally(this.#tally);
    this.#cells.abandon();
    this.#outbox = [];
    for (const [ref, call] of this.#calls) {
      this.#clock.clearTimeout(call.timer);
      call.reject(new Error(`scheduler ${this.index} (main thread) stopped during a call`));
      this.#calls.delete(ref);
    }
    const cause: ActorExit = reason.kind === 'crash' ? reason : { kind: 'crash', cause: { name: reason.kind === 'killed' ? WORKER_KILLED : 'WorkerExit', message: `scheduler ${this.index} (main thread) stopped (${reason.kind})` } };
    for (const ref of this.actors.values()) ref.settle(reason.kind === 'shutdown' ? reason : cause);
    this.actors.clear();
    this.#settleExit(reason);
  }

  #call(id: string, msg: unknown, timeoutMs: number): Promise<unknown> {
    if (!this.#alive()) return Promise.reject(new Error(`scheduler ${this.index} (main thread) has stopped`));
    const ref = this.#nextRef++;
    return new Promise((resolve, reject) => {
      const timer = this.#clock.setTimeout(() => {
        this.#calls.delete(ref);
        reject(new Error(`call to actor ${id} timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      this.#calls.set(ref, { resolve, reject, timer });
      this.#cells.receive({ t: 'call', id, ref, msg });
    });
  }

  #post(msg: FromWorker): void {
    this.#outbox.push(msg);
    if (this.#outbox.length === 1) queueMicrotask(this.#flush);
  }

  /**
   * After each handled message, inside the actors' turn: what it emitted goes on now. A receiver that
   * throws is reported as the microtask flush's would be (uncaught), not into the turn it interrupts.
   */
  readonly #handOn = (): void => {
    if (this.#outbox.length === 0) return;
    try {
      this.#flush();
    } catch (error) {
      queueMicrotask(() => {
        throw error;
      });
    }
  };

  readonly #flush = (): void => {
    const out = this.#outbox;
    this.#outbox = [];
    for (const m of out) {
      if (this.#ending !== null) return;
      this.#receive(m);
    }
  };

  #receive(m: FromWorker): void {
    switch (m.t) {
      case 'out': return this.actors.get(m.id)?.deliver(m.msg);
      case 'spawned': return this.actors.get(m.id)?.started();
      case 'reply': {
        const pending = this.#calls.get(m.ref);
        if (!pending) return;
        this.#calls.delete(m.ref);
        this.#clock.clearTimeout(pending.timer);
        if (m.ok) pending.resolve(m.value);
        else pending.reject(new Error(m.error));
        return;
      }
      case 'exited': {
        const ref = this.actors.get(m.id);
        this.actors.delete(m.id);
        ref?.settle(m.reason);
        return;
      }
      case 'rejected': return this.actors.get(m.id)?.reject(m.msg, m.why);
      case 'ready':
      case 'pong':
      case 'inline':
      case 'flushed':
        return;
    }
  }
}
