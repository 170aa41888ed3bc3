// A session counts the client's input it holds unhandled (its lines sent to the actor and not reported
// handled, or held for the next actor), so a transport that can stop reading (WebSocket) weighs it against
// its budget. The actor here is a real ActorRef on a recording host, so the test decides what is handled.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ActorRef } from '../../src/actors/actor-ref.ts';
import type { Scheduler } from '../../src/actors/scheduler.ts';
import type { ConnectionOutput } from '../../src/connection/connection-actor.ts';
import { Session } from '../../src/connection/session.ts';
import { createLogger } from '../../src/log/logger.ts';
import { initialState } from '../../src/mcp/state.ts';

const quiet = createLogger('emergency', { write: () => true });
const frame = (text: string) => ({ kind: 'line' as const, text });
const note = (pad: string) => JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1, pad } });
const handled = (n: number): ConnectionOutput => ({ replies: [], effects: [], handled: n });

function harness() {
  const refs: ActorRef[] = [];
  const scheduler = {
    spawn: async () => {
      const ref = new ActorRef(`a${refs.length + 1}`, { cast: () => undefined, call: () => Promise.reject(new Error('no calls here')), exit: () => undefined });
      refs.push(ref);
      return ref;
    },
  } as unknown as Scheduler;
  const session = new Session({
    id: 's1', scheduler, logger: quiet, send: () => undefined, checkpoint: new ArrayBuffer(0),
    config: initialState({ workspace: '/ws' }).config,
    effects: { workspace: '/ws', logger: quiet, toolTimeoutMs: 1000 },
  });
  return { session, refs };
}

test('the characters of lines sent and not yet handled are counted, and go as the actor reports them handled', async () => {
  const { session, refs } = harness();
  await session.start();
  const a = note('a'.repeat(1000));
  const b = note('b'.repeat(2000));
  session.receiveFrame(frame(a));
  session.receiveFrame(frame(b));
  assert.is(session.pendingInput, a.length + b.length);
  let below = false;
  void session.whenInputBelow(b.length).then(() => (below = true));
  (refs[0] as ActorRef).deliver(handled(1));
  await Promise.resolve();
  assert.is(session.pendingInput, b.length);
  assert.ok(below, 'a transport waiting for the input to fall to its budget is told');
  (refs[0] as ActorRef).deliver(handled(2));
  assert.is(session.pendingInput, 0);
});

test('after the actor dies, what is counted is what the next actor is given (a request answered for the crash is not); handled by it, nothing is left', async () => {
  const { session, refs } = harness();
  await session.start();
  // Under way when the actor dies, and not safe to run again: answered, never redelivered.
  const a = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'bash', arguments: { command: `echo ${'a'.repeat(1000)}` } } });
  const b = note('b'.repeat(2000));
  session.receiveFrame(frame(a));
  session.receiveFrame(frame(b));
  assert.is(session.pendingInput, a.length + b.length);
  (refs[0] as ActorRef).settle({ kind: 'killed' });
  await Promise.resolve();
  assert.is(session.pendingInput, b.length, 'only the line the next actor gets is held');
  const c = note('c');
  session.receiveFrame(frame(c));
  assert.is(session.pendingInput, b.length + c.length, 'a line arriving meanwhile is held and counted');
  await session.start();
  (refs[1] as ActorRef).deliver(handled(2));
  assert.is(session.pendingInput, 0);
});

test('a session that ends lets a waiting transport go, with nothing counted', async () => {
  const { session } = harness();
  await session.start();
  session.receiveFrame(frame(note('x'.repeat(100))));
  const waited = session.whenInputBelow(0);
  await session.close();
  await waited;
  assert.is(session.pendingInput, 0);
});

test.run();
