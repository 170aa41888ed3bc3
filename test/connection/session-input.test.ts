// A session counts the client's input it holds unhandled (its lines sent to the actor and not reported
// handled, or held for the next actor), so a transport that can stop reading (WebSocket) weighs it against
// its budget. The actor here is a real ActorRef on a recording host, so the test decides what is handled.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ConnectionOutput } from '../../src/connection/connection-actor.ts';
import { stubSession } from './stub-session.ts';

const frame = (text: string) => ({ kind: 'line' as const, text });
const note = (pad: string) => JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1, pad } });
const handled = (n: number): ConnectionOutput => ({ replies: [], effects: [], handled: n });

const harness = () => stubSession({ checkpoint: true });

test('the characters of lines sent and not yet handled are counted, and go as the actor reports them handled', async () => {
  const { session, actor } = harness();
  await session.start();
  const a = note('a'.repeat(1000));
  const b = note('b'.repeat(2000));
  session.receiveFrame(frame(a));
  session.receiveFrame(frame(b));
  assert.is(session.pendingInput, a.length + b.length);
  let below = false;
  void session.whenInputBelow(b.length).then(() => (below = true));
  actor(0).deliver(handled(1));
  await Promise.resolve();
  assert.is(session.pendingInput, b.length);
  assert.ok(below, 'a transport waiting for the input to fall to its budget is told');
  actor(0).deliver(handled(2));
  assert.is(session.pendingInput, 0);
});

test('after the actor dies, what is counted is what the next actor is given (a request answered for the crash is not); handled by it, nothing is left', async () => {
  const { session, actor } = harness();
  await session.start();
  // Under way when the actor dies, and not safe to run again: answered, never redelivered.
  const a = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'bash', arguments: { command: `echo ${'a'.repeat(1000)}` } } });
  const b = note('b'.repeat(2000));
  session.receiveFrame(frame(a));
  session.receiveFrame(frame(b));
  assert.is(session.pendingInput, a.length + b.length);
  actor(0).settle({ kind: 'killed' });
  await Promise.resolve();
  assert.is(session.pendingInput, b.length, 'only the line the next actor gets is held');
  const c = note('c');
  session.receiveFrame(frame(c));
  assert.is(session.pendingInput, b.length + c.length, 'a line arriving meanwhile is held and counted');
  await session.start();
  actor(1).deliver(handled(2));
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
