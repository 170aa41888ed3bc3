// What a session notes as in flight agrees with what the core answers, for lines of batches: a batch the
// core refuses whole (one error, id null: a session whose version has no batches, an uninitialized one)
// leaves none of its requests in flight — their ids are free again, nothing is answered for them later
// (no -32010 when the session ends), and the principal's count falls back — and a batch element nested
// past any stack (JSON.parse reads it; JSON.stringify overflowed on it) neither throws out of the session
// nor is answered otherwise than the core answers it. The actor here runs the real pure core on its lines.

import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ActorRef } from '../../src/actors/actor-ref.ts';
import type { Scheduler } from '../../src/actors/scheduler.ts';
import type { ConnectionMessage } from '../../src/connection/connection-actor.ts';
import { Session } from '../../src/connection/session.ts';
import { createLogger } from '../../src/log/logger.ts';
import { messageText } from '../../src/mcp/frame.ts';
import { handleMcpLine, handleParsedMessage } from '../../src/mcp/handle.ts';
import type { Outgoing } from '../../src/mcp/outgoing.ts';
import { type ConnectionState, initialState } from '../../src/mcp/state.ts';
import { MAX_JSON_DEPTH } from '../../src/limits.ts';

const SEED = 20_261_208;
const quiet = createLogger('emergency', { write: () => true });
const frame = (text: string) => ({ kind: 'line' as const, text });
const INITIALIZE = (version: string) => JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 't', version: '1' } } });

/** A session whose actor runs the pure core on each line it is cast, answering in a microtask as a scheduler would. */
async function coreSession() {
  const sent: Outgoing[] = [];
  let state: ConnectionState = initialState({ workspace: '/ws' });
  let handled = 0;
  let ref: ActorRef | null = null;
  const scheduler = {
    spawn: async () => {
      ref = new ActorRef('a1', {
        cast: (_id: string, msg: unknown) => {
          const m = msg as ConnectionMessage;
          if (m.k !== 'line') return;
          const step = handleMcpLine(m.line, state);
          state = step.state;
          handled++;
          const out = { replies: step.replies, effects: step.effects.filter((e) => e.kind === 'log'), handled };
          queueMicrotask(() => ref?.deliver(out));
        },
        call: () => Promise.reject(new Error('no calls here')),
        exit: () => undefined,
      });
      return ref;
    },
  } as unknown as Scheduler;
  const session = new Session({
    id: 's1', scheduler, logger: quiet, send: (out) => sent.push(out), checkpoint: new ArrayBuffer(0),
    config: initialState({ workspace: '/ws' }).config, effects: { workspace: '/ws', logger: quiet, toolTimeoutMs: 1000 },
  });
  await session.start();
  const settle = async () => {
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  };
  return { session, sent, settle };
}

const anyId = fc.oneof(fc.integer({ min: -2, max: 5 }), fc.constantFrom('a', 'b', '__proto__', 'toString', ''));
const element = fc.oneof(
  anyId.map((id) => ({ jsonrpc: '2.0', id, method: 'ping' })),
  anyId.map((id) => ({ jsonrpc: '2.0', id, method: 'tools/list' })),
  anyId.map((id) => ({ jsonrpc: '2.0', id })),
  fc.constant({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } }),
);

test('a batch the core refuses whole leaves none of its requests in flight: their ids are free, and nothing more is answered for them', async () => {
  await fc.assert(fc.asyncProperty(fc.constantFrom(null, '2025-06-18', '2025-11-25'), fc.array(element, { minLength: 1, maxLength: 6 }), anyId, async (version, batch, reused) => {
    const { session, sent, settle } = await coreSession();
    if (version !== null) session.receiveFrame(frame(INITIALIZE(version)));
    await settle();
    sent.length = 0;
    session.receiveFrame(frame(JSON.stringify(batch)));
    await settle();
    assert.is(session.inFlight, 0, `left in flight after ${JSON.stringify(batch)}`);
    // An id the refused batch used is free: a request with it is answered as any other.
    sent.length = 0;
    session.receiveFrame(frame(JSON.stringify({ jsonrpc: '2.0', id: reused, method: 'ping' })));
    await settle();
    const answers = sent.filter((o) => o.inReplyTo !== undefined && typeof o.inReplyTo === typeof reused && o.inReplyTo === reused);
    assert.equal(answers.map((o) => o.line), [JSON.stringify({ jsonrpc: '2.0', id: reused, result: {} })], `ping ${JSON.stringify(reused)} after ${JSON.stringify(batch)}`);
    session.answerInFlight('the test ended');
    assert.equal(sent.filter((o) => o.line.includes('-32010')).map((o) => o.line), [], 'nothing was left to abort');
    await session.close();
  }), { seed: SEED, numRuns: 200 });
});

/** Text nesting `levels` arrays: JSON.parse reads it, JSON.stringify of its value overflows the stack. */
const deepText = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

test('a batch element nested thousands of levels deep neither throws out of the session nor stays in flight', async () => {
  const { session, sent, settle } = await coreSession();
  session.receiveFrame(frame(INITIALIZE('2025-03-26')));
  await settle();
  sent.length = 0;
  session.receiveFrame(frame(`[{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":${deepText(20_000)}}},{"jsonrpc":"2.0","id":2,"method":"ping"}]`));
  await settle();
  assert.equal(sent.map((o) => [o.inReplyTo, o.errorCode ?? 'result']), [[1, -32602], [2, 'result']]);
  assert.is(session.inFlight, 0);
  await session.close();
});

test('a message\'s text (messageText) is answered by the core exactly as the message itself, however deep it nests', () => {
  const nested = (levels: number, inner: unknown): unknown => JSON.parse(`${'{"a":['.repeat(levels)}${JSON.stringify(inner)}${']}'.repeat(levels)}`);
  const anyMessage = fc.record({
    jsonrpc: fc.constantFrom('2.0', '1.0'), id: fc.oneof(anyId, fc.constant(null), fc.constant({})), method: fc.constantFrom('ping', 'tools/list', 'initialize', 'notifications/progress', '__proto__'),
    params: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.integer({ min: MAX_JSON_DEPTH - 3, max: 6000 }).map((n) => nested(n, 1))),
    result: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.integer({ min: MAX_JSON_DEPTH - 3, max: 6000 }).map((n) => nested(n, 1))),
    __proto__: fc.jsonValue({ maxDepth: 1 }),
  }, { requiredKeys: [] });
  const anyValue = fc.oneof(anyMessage, fc.integer({ min: 1, max: 6000 }).map((n) => nested(n, 0)), fc.jsonValue({ maxDepth: 2 }));
  fc.assert(fc.property(fc.constantFrom('fresh', '2025-03-26'), anyValue, (phase, value) => {
    let state = initialState({ workspace: '/ws' });
    if (phase !== 'fresh') state = handleMcpLine(INITIALIZE(phase), state).state;
    const direct = handleParsedMessage(value, state).replies.map((r) => r.line);
    const viaText = handleParsedMessage(JSON.parse(messageText(value)), state).replies.map((r) => r.line);
    assert.equal(viaText, direct);
  }), { seed: SEED, numRuns: 1000 });
});

test.run();
