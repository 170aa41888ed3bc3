// A line the session parsed rides to its actor with that parse only when the actor runs on the session's
// own thread (stdio); an actor on a worker thread gets the text alone, and no parse is kept for it.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ActorRef } from '../../src/actors/actor-ref.ts';
import type { Scheduler } from '../../src/actors/scheduler.ts';
import { PARSED } from '../../src/connection/parsed-lines.ts';
import type { ConnectionMessage } from '../../src/connection/connection-actor.ts';
import { Session } from '../../src/connection/session.ts';
import { createLogger } from '../../src/log/logger.ts';
import { initialState } from '../../src/mcp/state.ts';

const quiet = createLogger('emergency', { write: () => true });

function sessionOn(sameThread: boolean) {
  const cast: ConnectionMessage[] = [];
  const scheduler = {
    spawn: async () => new ActorRef('a1', { sameThread, cast: (_id, msg) => cast.push(msg as ConnectionMessage), call: () => Promise.reject(new Error('no calls here')), exit: () => undefined }),
  } as unknown as Scheduler;
  const session = new Session({
    id: 's1', scheduler, logger: quiet, send: () => undefined, checkpoint: new ArrayBuffer(0),
    config: initialState({ workspace: '/ws' }).config,
    effects: { workspace: '/ws', logger: quiet, toolTimeoutMs: 1000 },
  });
  return { session, cast };
}

const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}';

test('an actor on the session\'s thread is cast the line with its parse', async () => {
  const { session, cast } = sessionOn(true);
  await session.start();
  session.receiveFrame({ kind: 'line', text: ping });
  const msg = cast[0];
  assert.ok(msg?.k === 'line');
  assert.is(msg.line, ping);
  assert.equal(msg[PARSED], { jsonrpc: '2.0', id: 1, method: 'ping' });
});

test('an actor on another thread is cast the text alone; so is a batch, and a line that is not JSON', async () => {
  const { session, cast } = sessionOn(false);
  await session.start();
  session.receiveFrame({ kind: 'line', text: ping });
  assert.ok(cast[0]?.k === 'line' && cast[0][PARSED] === undefined);
  const local = sessionOn(true);
  await local.session.start();
  local.session.receiveFrame({ kind: 'line', text: `[${ping}]` });
  local.session.receiveFrame({ kind: 'line', text: '{"jsonrpc":' });
  assert.equal(local.cast.map((m) => m.k === 'line' && m[PARSED]), [undefined, undefined]);
});

test.run();
