// Runs inside a scheduler worker thread: hosts many actors (M:N, as BEAM processes share schedulers),
// one mailbox each, one message at a time each, with a reduction budget per turn for fairness.

import { parentPort } from 'node:worker_threads';
import { type ActorContext, type ActorExit, type Behaviour, type BehaviourRef, crashOf, type Outcome } from './behaviour.ts';
import { flushInlineTally, InlineTally, installInlineTally } from './inline-tally.ts';
import { Mailbox } from './mailbox.ts';
import { type FromWorker, type MailboxDepths, MAX_REPORTED_MAILBOXES, type ToWorker } from './messages.ts';

/** Messages one actor handles per turn before the next actor gets the thread. */
export const REDUCTIONS_PER_TURN = 64;

type Envelope = { kind: 'cast'; msg: unknown } | { kind: 'call'; ref: number; msg: unknown };

interface Cell {
  readonly id: string;
  behaviour: Behaviour | null;
  state: unknown;
  readonly mailbox: Mailbox<Envelope>;
  /** Handed back by the actor itself (`continueWith`): runs before the mailbox, on its next turn. */
  continuation: Envelope | null;
  readonly ctx: ActorContext;
  queued: boolean;
  alive: boolean;
}

const port = parentPort;
if (!port) throw new Error('scheduler-worker.ts runs only inside a worker thread');

const post = (msg: FromWorker, transfer?: ArrayBuffer[]) => port.postMessage(msg, transfer);
const cells = new Map<string, Cell>();
const behaviours = new Map<string, Promise<Behaviour>>();
const runQueue: Cell[] = [];
let draining = false;
/** The behaviours the entry point compiled into this thread (`hostBehaviours`), found by name. */
let builtinBehaviours: ReadonlyMap<string, Behaviour> = new Map();

function loadBehaviour(ref: BehaviourRef): Promise<Behaviour> {
  const key = `${ref.module}#${ref.export}`;
  if (ref.module === 'builtin') {
    const builtin = builtinBehaviours.get(ref.export);
    return builtin ? Promise.resolve(builtin) : Promise.reject(new Error(`no builtin behaviour "${ref.export}"`));
  }
  let loaded = behaviours.get(key);
  if (!loaded) {
    loaded = import(ref.module).then((mod: Record<string, unknown>) => {
      const b = mod[ref.export] as Behaviour | undefined;
      if (!b || typeof b.init !== 'function' || typeof b.handle !== 'function') throw new Error(`${key} is not an actor behaviour`);
      return b;
    });
    behaviours.set(key, loaded);
  }
  return loaded;
}

function spawn(id: string, ref: BehaviourRef, args: unknown): void {
  const cell: Cell = {
    id, behaviour: null, state: undefined, mailbox: new Mailbox(), continuation: null, queued: false, alive: true,
    ctx: {
      self: id,
      emit: (msg, transfer) => post({ t: 'out', id, msg }, transfer),
      continueWith: (msg) => {
        cell.continuation = { kind: 'cast', msg };
      },
    },
  };
  cells.set(id, cell);
  loadBehaviour(ref).then((behaviour) => {
    if (!cell.alive) return;
    cell.behaviour = behaviour;
    try {
      cell.state = behaviour.init(args, cell.ctx);
    } catch (err) {
      exit(cell, crashOf(err), false);
      return;
    }
    post({ t: 'spawned', id });
    if (cell.mailbox.size > 0) schedule(cell);
  }, (err: unknown) => exit(cell, crashOf(err), false));
}

function deliver(id: string, envelope: Envelope): void {
  const cell = cells.get(id);
  if (!cell) {
    // The actor is gone; the main thread learns that from its exit, so a late message is answered there.
    if (envelope.kind === 'call') post({ t: 'reply', ref: envelope.ref, ok: false, error: `actor ${id} is not running` });
    return;
  }
  if (!cell.mailbox.push(envelope)) {
    if (envelope.kind === 'call') post({ t: 'reply', ref: envelope.ref, ok: false, error: `mailbox of actor ${id} is full` });
    else post({ t: 'rejected', id, msg: envelope.msg, why: `mailbox of actor ${id} is full` });
    return;
  }
  if (cell.behaviour) schedule(cell);
}

function schedule(cell: Cell): void {
  if (!cell.queued) {
    cell.queued = true;
    runQueue.push(cell);
  }
  if (!draining) {
    draining = true;
    setImmediate(drain);
  }
}

function drain(): void {
  const turns = runQueue.length;
  for (let i = 0; i < turns; i++) {
    const cell = runQueue.shift() as Cell;
    cell.queued = false;
    for (let r = 0; r < REDUCTIONS_PER_TURN && cell.alive; r++) {
      const envelope = cell.continuation ?? cell.mailbox.shift();
      if (!envelope) break;
      cell.continuation = null;
      run(cell, envelope);
      // The actor asked to yield: its turn ends here, and the thread goes round the event loop first.
      if (cell.continuation) break;
    }
    if (cell.alive && (cell.mailbox.size > 0 || cell.continuation)) {
      cell.queued = true;
      runQueue.push(cell);
    }
  }
  // Yield to the event loop between turns so heartbeats and new messages get through.
  if (runQueue.length > 0) setImmediate(drain);
  else draining = false;
}

function run(cell: Cell, envelope: Envelope): void {
  const behaviour = cell.behaviour as Behaviour;
  let outcome: Outcome<unknown>;
  try {
    outcome = behaviour.handle(envelope.msg, cell.state, cell.ctx, envelope.kind);
  } catch (err) {
    if (envelope.kind === 'call') post({ t: 'reply', ref: envelope.ref, ok: false, error: `actor ${cell.id} crashed: ${(err as Error).message}` });
    exit(cell, crashOf(err), true);
    return;
  }
  cell.state = outcome.state;
  if (envelope.kind === 'call') {
    if (outcome.kind === 'reply' || (outcome.kind === 'stop' && 'reply' in outcome)) {
      post({ t: 'reply', ref: envelope.ref, ok: true, value: outcome.kind === 'reply' ? outcome.reply : outcome.reply });
    } else {
      post({ t: 'reply', ref: envelope.ref, ok: false, error: `actor ${cell.id} did not reply to a call` });
    }
  }
  if (outcome.kind === 'stop') exit(cell, outcome.reason, true);
}

function exit(cell: Cell, reason: ActorExit, runTerminate: boolean): void {
  if (!cell.alive) return;
  cell.alive = false;
  cells.delete(cell.id);
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
  post({ t: 'exited', id: cell.id, reason });
}

function sabotage(how: 'hang' | 'oom' | 'throw'): void {
  if (how === 'hang') {
    for (;;) {
      // Spin forever: only the heartbeat can tell, and only terminate() can end it.
    }
  }
  if (how === 'oom') {
    const hoard: number[][] = [];
    for (;;) hoard.push(new Array(1_000_000).fill(hoard.length));
  }
  setTimeout(() => {
    throw new Error('sabotage: uncaught exception in a scheduler worker');
  }, 0);
}

port.on('message', (m: ToWorker) => {
  switch (m.t) {
    case 'spawn': return spawn(m.id, m.behaviour, m.args);
    case 'cast': return deliver(m.id, { kind: 'cast', msg: m.msg });
    case 'call': return deliver(m.id, { kind: 'call', ref: m.ref, msg: m.msg });
    case 'exit': {
      const cell = cells.get(m.id);
      if (cell) exit(cell, m.how === 'kill' ? { kind: 'killed' } : { kind: 'shutdown' }, m.how === 'shutdown');
      return;
    }
    case 'ping': return post({ t: 'pong', seq: m.seq, actors: cells.size, heapUsed: process.memoryUsage().heapUsed, mailboxes: mailboxDepths() });
    case 'flush':
      flushInlineTally();
      return post({ t: 'flushed', seq: m.seq });
    case 'sabotage': return sabotage(m.how);
  }
});

installInlineTally(new InlineTally((series) => post({ t: 'inline', series })));

/** After this long a freshly booted thread runs its entry point's warm-up (off a cold start's critical path). */
const WARM_UP_DELAY_MS = 300;

export interface HostOptions {
  /** Work worth doing once per thread before the first message needs it (the application's: compiling validators). */
  readonly warmUp?: () => void;
}

/**
 * Called once by the thread's entry point (the application's, as an OTP application names its callback
 * modules): the behaviours a BehaviourRef `module: 'builtin'` finds by name, then the ready handshake.
 * A Map: a name that happens to be an Object.prototype member (`constructor`) must find nothing.
 */
export function hostBehaviours(builtins: ReadonlyMap<string, Behaviour>, options: HostOptions = {}): void {
  builtinBehaviours = builtins;
  post({ t: 'ready' });
  const warmUp = options.warmUp;
  if (warmUp) setTimeout(warmUp, WARM_UP_DELAY_MS).unref();
}

/** Rides on the heartbeat: one pass over the cells, four times a second. */
function mailboxDepths(): MailboxDepths {
  let deepest = 0;
  const busy: [string, number][] = [];
  for (const cell of cells.values()) {
    const depth = cell.mailbox.size;
    if (depth === 0) continue;
    if (depth > deepest) deepest = depth;
    busy.push([cell.id, depth]);
  }
  busy.sort((a, b) => b[1] - a[1]);
  return { deepest, busy: busy.slice(0, MAX_REPORTED_MAILBOXES) };
}
