// A session whose actor is down holds what arrives for the next one, up to MAX_BUFFERED_MESSAGES; a request
// past that is answered server busy at once, never left without an answer (it was never sent to an actor, so
// no actor's queue holds it).

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ActorRef } from '../../src/actors/actor-ref.ts';
import type { Scheduler } from '../../src/actors/scheduler.ts';
import { Session } from '../../src/connection/session.ts';
import { MAX_BUFFERED_MESSAGES } from '../../src/limits.ts';
import { createLogger } from '../../src/log/logger.ts';
import type { Outgoing } from '../../src/mcp/outgoing.ts';
import { initialState } from '../../src/mcp/state.ts';

const quiet = createLogger('emergency', { write: () => true });
const call = (id: string) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'read', arguments: { path: 'a' } } });

test('past MAX_BUFFERED_MESSAGES while the actor is down, a request is answered -32011 at once and is no longer in flight', async () => {
  const refs: ActorRef[] = [];
  const answered = new Map<string, Outgoing>();
  const scheduler = {
    spawn: async () => {
      const ref = new ActorRef(`a${refs.length + 1}`, { cast: () => undefined, call: () => Promise.reject(new Error('no calls here')), exit: () => undefined });
      refs.push(ref);
      return ref;
    },
  } as unknown as Scheduler;
  const session = new Session({
    id: 's', scheduler, logger: quiet, checkpoint: new ArrayBuffer(0),
    send: (out) => { if (out.inReplyTo !== undefined) answered.set(String(out.inReplyTo), out); },
    config: initialState({ workspace: '/ws' }).config,
    effects: { workspace: '/ws', logger: quiet, toolTimeoutMs: 1000 },
  });
  await session.start();
  (refs[0] as ActorRef).settle({ kind: 'crash', cause: { name: 'Error', message: 'boom' } });
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
