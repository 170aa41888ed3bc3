// A session whose actor is down holds what arrives for the next one, up to MAX_BUFFERED_MESSAGES; a request
// past that is answered server busy at once, never left without an answer (it was never sent to an actor, so
// no actor's queue holds it).

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_BUFFERED_MESSAGES } from '../../src/limits.ts';
import { stubSession } from './stub-session.ts';

const call = (id: string) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'read', arguments: { path: 'a' } } });

test('past MAX_BUFFERED_MESSAGES while the actor is down, a request is answered -32011 at once and is no longer in flight', async () => {
  const { session, actor, answered } = stubSession({ id: 's', checkpoint: true });
  await session.start();
  actor(0).settle({ kind: 'crash', cause: { name: 'Error', message: 'boom' } });
  await Promise.resolve();
  // The actor is down and not restarted: everything that comes is held for the next one, up to the limit.
  for (let i = 0; i < MAX_BUFFERED_MESSAGES; i++) session.receiveFrame({ kind: 'line', text: call(`b${i}`) });
  assert.is(answered.size, 0, 'the held requests wait for the next actor');
  session.receiveFrame({ kind: 'line', text: call('over') });
  const over = answered.get('over');
  assert.ok(over !== undefined, 'the request past the buffer is answered, not left waiting');
  const reply = JSON.parse(over.line) as { id: string; error?: { code: number; message: string } };
  assert.is(reply.id, 'over');
  assert.is(reply.error?.code, -32011);
  assert.match(reply.error?.message ?? '', 'buffer is full');
  // It is no longer in flight: a cancel of it changes nothing, and the session closes with the held ones only.
  await session.close();
});

test.run();
