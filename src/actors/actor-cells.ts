// The actors of one scheduler — a worker thread, or the main thread in-thread mode — and their run loop:
// one mailbox each, one message at a time each, a reduction budget per turn for fairness. It speaks the
// cross-thread protocol (messages.ts) on both sides, so the worker and the in-thread host share every rule.

import { type ActorContext, type ActorExit, type Behaviour, type BehaviourRef, crashOf, type Outcome } from './behaviour.ts';
import { Mailbox } from './mailbox.ts';
import { type FromWorker, type MailboxDepths, MAX_REPORTED_MAILBOXES, type ToWorker } from './messages.ts';
import { REDUCTIONS_PER_TURN } from '../limits.ts';

type Envelope = { kind: 'cast'; msg: unknown } | { kind: 'call'; ref: number; msg: unknown };

/**
 * One actor: its behaviour, state and mailbox. It is its own `ActorContext` (methods, not closures per
 * actor), so an idle actor holds no closure, nor the arguments it was spawned with.
 */
class Cell implements ActorContext {
  readonly id: string;
  behaviour: Behaviour | null = null;
  state: unknown = undefined;
  readonly mailbox = new Mailbox<Envelope>();
  /** Handed back by the actor itself (`continueWith`): runs before the mailbox, on its next turn. */
  continuation: Envelope | null = null;
  queued = false;
  alive = true;
  readonly #out: PostOut;

  constructor(id: string, out: PostOut) {
    this.id = id;
    this.#out = out;
  }

  get self(): string {
    return this.id;
  }

  get ctx(): ActorContext {
    return this;
  }

  emit(msg: unknown, transfer?: ArrayBuffer[]): void {
    this.#out({ t: 'out', id: this.id, msg }, transfer);
  }

  continueWith(msg: unknown): void {
    this.continuation = { kind: 'cast', msg };
  }
}

/** Every message the actors send out of their scheduler; `transfer` is meaningful across threads only. */
export type PostOut = (msg: FromWorker, transfer?: ArrayBuffer[]) => void;

export class ActorCells {
  readonly #post: PostOut;
  /** Behaviours compiled in, found by name (`module: 'builtin'`). */
  readonly #builtins: ReadonlyMap<string, Behaviour>;
  readonly #cells = new Map<string, Cell>();
  readonly #loaded = new Map<string, Promise<Behaviour>>();
  readonly #runQueue: Cell[] = [];
  #draining = false;
  /** Set by `abandon`: nothing runs or is posted any more (the scheduler is gone). */
  #abandoned = false;

  /** Told after each message an actor handled (`ActorCells` options): a host may hand its output on at once. */
  readonly #handled: (() => void) | undefined;

  constructor(post: PostOut, builtins: ReadonlyMap<string, Behaviour>, options: { readonly handled?: () => void } = {}) {
    this.#post = post;
    this.#builtins = builtins;
    this.#handled = options.handled;
  }

  get size(): number {
    return this.#cells.size;
  }

  /** One message from the owner side (`sabotage`, `ping`, `flush` and `several` are the host's own business). */
  receive(m: Exclude<ToWorker, { t: 'ping' } | { t: 'sabotage' } | { t: 'flush' } | { t: 'several' }>): void {
    if (this.#abandoned) return;
    switch (m.t) {
      case 'spawn': return this.#spawn(m.id, m.behaviour, m.args);
      case 'cast': return this.#deliver(m.id, { kind: 'cast', msg: m.msg });
      case 'call': return this.#deliver(m.id, { kind: 'call', ref: m.ref, msg: m.msg });
      case 'exit': {
        const cell = this.#cells.get(m.id);
        if (cell) this.#exit(cell, m.how === 'kill' ? { kind: 'killed' } : { kind: 'shutdown' }, m.how === 'shutdown');
        return;
      }
    }
  }

  /**
   * The scheduler died under its actors (a killed thread): they are dropped without their `terminate`,
   * nothing of theirs runs or is posted again. The owner settles their exits itself, as for a dead worker.
   */
  abandon(): void {
    this.#abandoned = true;
    for (const cell of this.#cells.values()) {
      cell.alive = false;
      cell.mailbox.clear();
      cell.continuation = null;
    }
    this.#cells.clear();
    this.#runQueue.length = 0;
  }

  /** The deepest mailbox and the non-empty ones (deepest first, at most MAX_REPORTED_MAILBOXES). */
  mailboxDepths(): MailboxDepths {
    let deepest = 0;
    const busy: [string, number][] = [];
    for (const cell of this.#cells.values()) {
      const depth = cell.mailbox.size;
      if (depth === 0) continue;
      if (depth > deepest) deepest = depth;
      busy.push([cell.id, depth]);
    }
    busy.sort((a, b) => b[1] - a[1]);
    return { deepest, busy: busy.slice(0, MAX_REPORTED_MAILBOXES) };
  }

  #send(msg: FromWorker, transfer?: ArrayBuffer[]): void {
    if (!this.#abandoned) this.#post(msg, transfer);
  }

  /** `#send` for the cells (one function for all of them). */
  readonly #sendOut: PostOut = (msg, transfer) => this.#send(msg, transfer);

  #load(ref: BehaviourRef): Promise<Behaviour> {
    const key = `${ref.module}#${ref.export}`;
    if (ref.module === 'builtin') {
      const builtin = this.#builtins.get(ref.export);
      return builtin ? Promise.resolve(builtin) : Promise.reject(new Error(`no builtin behaviour "${ref.export}"`));
    }
    let loaded = this.#loaded.get(key);
    if (!loaded) {
      loaded = import(ref.module).then((mod: Record<string, unknown>) => {
        const b = mod[ref.export] as Behaviour | undefined;
        if (!b || typeof b.init !== 'function' || typeof b.handle !== 'function') throw new Error(`${key} is not an actor behaviour`);
        return b;
      });
      this.#loaded.set(key, loaded);
    }
    return loaded;
  }

  #spawn(id: string, ref: BehaviourRef, args: unknown): void {
    const cell = new Cell(id, this.#sendOut);
    this.#cells.set(id, cell);
    this.#load(ref).then((behaviour) => {
      if (!cell.alive) return;
      cell.behaviour = behaviour;
      try {
        cell.state = behaviour.init(args, cell.ctx);
      } catch (err) {
        this.#exit(cell, crashOf(err), false);
        return;
      }
      this.#send({ t: 'spawned', id });
      if (cell.mailbox.size > 0) this.#schedule(cell);
    }, (err: unknown) => this.#exit(cell, crashOf(err), false));
  }

  #deliver(id: string, envelope: Envelope): void {
    const cell = this.#cells.get(id);
    if (!cell) {
      // The actor is gone; the owner learns that from its exit, so a late message is answered there.
      if (envelope.kind === 'call') this.#send({ t: 'reply', ref: envelope.ref, ok: false, error: `actor ${id} is not running` });
      return;
    }
    if (!cell.mailbox.push(envelope)) {
      if (envelope.kind === 'call') this.#send({ t: 'reply', ref: envelope.ref, ok: false, error: `mailbox of actor ${id} is full` });
      else this.#send({ t: 'rejected', id, msg: envelope.msg, why: `mailbox of actor ${id} is full` });
      return;
    }
    if (cell.behaviour) this.#schedule(cell);
  }

  #schedule(cell: Cell): void {
    if (!cell.queued) {
      cell.queued = true;
      this.#runQueue.push(cell);
    }
    if (!this.#draining) {
      this.#draining = true;
      setImmediate(this.#drain);
    }
  }

  readonly #drain = (): void => {
    const queue = this.#runQueue;
    const turns = queue.length;
    for (let i = 0; i < turns && queue.length > 0; i++) {
      const cell = queue.shift() as Cell;
      cell.queued = false;
      for (let r = 0; r < REDUCTIONS_PER_TURN && cell.alive; r++) {
        const envelope = cell.continuation ?? cell.mailbox.shift();
        if (!envelope) break;
        cell.continuation = null;
        this.#run(cell, envelope);
        this.#handled?.();
        // The actor asked to yield: its turn ends here, and the thread goes round the event loop first.
        if (cell.continuation) break;
      }
      if (cell.alive && (cell.mailbox.size > 0 || cell.continuation)) {
        cell.queued = true;
        queue.push(cell);
      }
    }
    // Yield to the event loop between turns so heartbeats, I/O and new messages get through.
    if (queue.length > 0) setImmediate(this.#drain);
    else this.#draining = false;
  };

  #run(cell: Cell, envelope: Envelope): void {
    const behaviour = cell.behaviour as Behaviour;
    let outcome: Outcome<unknown>;
    try {
      outcome = behaviour.handle(envelope.msg, cell.state, cell.ctx, envelope.kind);
    } catch (err) {
      if (envelope.kind === 'call') this.#send({ t: 'reply', ref: envelope.ref, ok: false, error: `actor ${cell.id} crashed: ${(err as Error).message}` });
      this.#exit(cell, crashOf(err), true);
      return;
    }
    cell.state = outcome.state;
    if (envelope.kind === 'call') {
      if (outcome.kind === 'reply' || (outcome.kind === 'stop' && 'reply' in outcome)) {
        this.#send({ t: 'reply', ref: envelope.ref, ok: true, value: outcome.kind === 'reply' ? outcome.reply : outcome.reply });
      } else {
        this.#send({ t: 'reply', ref: envelope.ref, ok: false, error: `actor ${cell.id} did not reply to a call` });
      }
    }
    if (outcome.kind === 'stop') this.#exit(cell, outcome.reason, true);
  }

  #exit(cell: Cell, reason: ActorExit, runTerminate: boolean): void {
    if (!cell.alive) return;
    cell.alive = false;
    this.#cells.delete(cell.id);
    if (runTerminate && cell.behaviour?.terminate) {
      try {
        cell.behaviour.terminate(reason, cell.state, cell.ctx);
      } catch (err) {
        // A terminate that throws does not change why the actor stopped; the cause is reported with it.
        reason = reason.kind === 'crash' ? reason : crashOf(err);
      }
    }
    cell.mailbox.clear();
    cell.continuation = null;
    this.#send({ t: 'exited', id: cell.id, reason });
  }
}
