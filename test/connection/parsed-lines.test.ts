// A line the session parsed rides to its actor with that parse only when the actor runs on the session's
// own thread (stdio); an actor on a worker thread gets the text alone, and no parse is kept for it.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PARSED } from '../../src/connection/parsed-lines.ts';
import { stubSession } from './stub-session.ts';

function sessionOn(sameThread: boolean) {
  const { session, actors } = stubSession({ sameThread, checkpoint: true });
  return { session, cast: () => actors[0]?.casts ?? [] };
}

const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}';

test('an actor on the session\'s thread is cast the line with its parse', async () => {
  const { session, cast } = sessionOn(true);
  await session.start();
  session.receiveFrame({ kind: 'line', text: ping });
  const msg = cast()[0];
  assert.ok(msg?.k === 'line');
  assert.is(msg.line, ping);
  assert.equal(msg[PARSED], { jsonrpc: '2.0', id: 1, method: 'ping' });
});

test('an actor on another thread is cast the text alone; so is a batch, and a line that is not JSON', async () => {
  const { session, cast } = sessionOn(false);
  await session.start();
  session.receiveFrame({ kind: 'line', text: ping });
  const msg = cast()[0];
  assert.ok(msg?.k === 'line' && msg[PARSED] === undefined);
  const local = sessionOn(true);
  await local.session.start();
  local.session.receiveFrame({ kind: 'line', text: `[${ping}]` });
  local.session.receiveFrame({ kind: 'line', text: '{"jsonrpc":' });
  assert.equal(local.cast().map((m) => m.k === 'line' && m[PARSED]), [undefined, undefined]);
});

test.run();
