// Runs inside a scheduler worker thread: hosts many actors (M:N, as BEAM processes share schedulers)
// through actor-cells.ts, answers the heartbeat, and takes the fault injection only a thread can suffer.
// Generic: the thread's entry point (the application's) registers the behaviours with `hostBehaviours`.

import { parentPort } from 'node:worker_threads';
import { ActorCells } from './actor-cells.ts';
import type { Behaviour } from './behaviour.ts';
import { flushInlineTally, InlineTally, installInlineTally } from './inline-tally.ts';
import type { FromWorker, ToWorker } from './messages.ts';

const port = parentPort;
if (!port) throw new Error('scheduler-worker.ts runs only inside a worker thread');

const post = (msg: FromWorker, transfer?: ArrayBuffer[]) => port.postMessage(msg, transfer);
/** Set by `hostBehaviours`: the owner sends nothing before the `ready` it posts. */
let cells: ActorCells | null = null;

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

function receive(m: ToWorker): void {
  switch (m.t) {
    case 'ping': return post({ t: 'pong', seq: m.seq, actors: cells?.size ?? 0, heapUsed: process.memoryUsage().heapUsed, mailboxes: cells?.mailboxDepths() ?? { deepest: 0, busy: [] } });
    case 'flush':
      flushInlineTally();
      return post({ t: 'flushed', seq: m.seq });
    case 'sabotage': return sabotage(m.how);
    case 'several':
      for (const one of m.messages) receive(one);
      return;
    default:
      if (!cells) throw new Error(`scheduler worker got "${m.t}" before its entry point registered its behaviours`);
      return cells.receive(m);
  }
}

port.on('message', receive);

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
  cells = new ActorCells(post, builtins);
  post({ t: 'ready' });
  const warmUp = options.warmUp;
  if (warmUp) setTimeout(warmUp, WARM_UP_DELAY_MS).unref();
}
