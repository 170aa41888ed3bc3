// Runs inside a scheduler worker thread: hosts many actors (M:N, as BEAM processes share schedulers)
// through actor-cells.ts, answers the heartbeat, and takes the fault injection only a thread can suffer.

import { parentPort } from 'node:worker_threads';
import { ActorCells } from './actor-cells.ts';
import { builtinBehaviours } from './builtin-behaviours.ts';
import type { FromWorker, ToWorker } from './messages.ts';

const port = parentPort;
if (!port) throw new Error('scheduler-worker.ts runs only inside a worker thread');

const cells = new ActorCells((msg: FromWorker, transfer?: ArrayBuffer[]) => port.postMessage(msg, transfer), builtinBehaviours);

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
    case 'ping': return port.postMessage({ t: 'pong', seq: m.seq, actors: cells.size, heapUsed: process.memoryUsage().heapUsed, mailboxes: cells.mailboxDepths() } satisfies FromWorker);
    case 'sabotage': return sabotage(m.how);
    default: return cells.receive(m);
  }
});

port.postMessage({ t: 'ready' } satisfies FromWorker);

export default null;
