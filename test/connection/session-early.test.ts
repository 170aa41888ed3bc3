// A session whose first connection actor is still booting (a cold start) answers initialize and ping
// itself — the same pure core, the same lines sent on to the actor — and drops the actor's own replies
// to them later. Anything else waits for the actor. The actor here is a real ActorRef on a recording
// host, so the test sees exactly what crosses to the thread.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ActorRef } from '../../src/actors/actor-ref.ts';
import type { ConnectionMessage, ConnectionOutput } from '../../src/connection/connection-actor.ts';
import type { Scheduler } from '../../src/actors/scheduler.ts';
import { answer } from '../../src/mcp/outgoing.ts';
import { initialState } from '../../src/mcp/state.ts';
import { createLogger } from '../../src/log/logger.ts';
import { Session } from '../../src/connection/session.ts';

const quiet = createLogger('emergency', { write: () => true });
const line = (id: number | null, method: string, params: object = {}) => JSON.stringify(id === null ? { jsonrpc: '2.0', method, params } : { jsonrpc: '2.0', id, method, params });
const init = line(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } });
const reply = (id: number, result: object = {}) => answer(id, result);

function harness() {
  const casts: ConnectionMessage[][] = [];
  const refs: ActorRef[] = [];
  const scheduler = {
    spawn: async () => {
      const seen: ConnectionMessage[] = [];
      casts.push(seen);
      const ref = new ActorRef(`a${refs.length + 1}`, {
        cast: (_id, msg) => seen.push(msg as ConnectionMessage),
        call: () => Promise.reject(new Error('no calls here')),
        exit: () => undefined,
      });
      refs.push(ref);
      return ref;
    },
  } as unknown as Scheduler;
  const sent: string[] = [];
  const session = new Session({
    id: 's1', scheduler, logger: quiet, send: (o) => sent.push(o.line),
    config: initialState({ workspace: '/ws' }).config,
    effects: { workspace: '/ws', logger: quiet, toolTimeoutMs: 1000 },
  });
  return { session, sent, casts, refs };
}

const ids = (lines: string[]) => lines.map((l) => (JSON.parse(l) as { id?: unknown }).id);
const frame = (text: string) => ({ kind: 'line' as const, text });

const early = suite('session: answers while its first actor boots');

early('initialize and ping are answered at once, and still sent to the actor', async () => {
  const { session, sent, casts } = harness();
  await session.start();
  session.receiveFrame(frame(init));
  session.receiveFrame(frame(line(null, 'notifications/initialized')));
  session.receiveFrame(frame(line(2, 'ping')));
  assert.equal(ids(sent), [1, 2]);
  const result = (JSON.parse(sent[0] as string) as { result: { protocolVersion: string; serverInfo: { name: string } } }).result;
  assert.is(result.protocolVersion, '2025-06-18');
  assert.is(result.serverInfo.name, 'super-pi');
  assert.is(casts[0]?.length, 3, 'the actor gets every line, to reach the same state');
});

early('anything else waits for the actor, and so does everything after it; the actor\'s replies to early requests are dropped', async () => {
  const { session, sent, refs } = harness();
  await session.start();
  session.receiveFrame(frame(init));
  session.receiveFrame(frame(line(2, 'tools/list')));
  session.receiveFrame(frame(line(3, 'ping')));
  assert.equal(ids(sent), [1], 'tools/list is not answered here, and the ping after it waits its turn');
  const out: ConnectionOutput = { replies: [reply(1, { protocolVersion: '2025-06-18' }), reply(2, { tools: [] }), reply(3)], effects: [], handled: 3 };
  (refs[0] as ActorRef).deliver(out);
  assert.equal(ids(sent), [1, 2, 3], 'the actor\'s initialize reply is not sent twice');
  assert.is(session.inFlight, 0);
});

early('an id answered early twice (the first answer came before the second request): each actor reply is dropped once, a later request with that id is answered', async () => {
  const { session, sent, refs } = harness();
  await session.start();
  session.receiveFrame(frame(init));
  session.receiveFrame(frame(line(5, 'ping')));
  session.receiveFrame(frame(line(5, 'ping')));
  session.receiveFrame(frame(line(5, 'tools/list')));
  assert.equal(ids(sent), [1, 5, 5]);
  (refs[0] as ActorRef).deliver({ replies: [reply(1), reply(5), reply(5), reply(5, { tools: [] })], effects: [], handled: 4 } satisfies ConnectionOutput);
  assert.equal(ids(sent), [1, 5, 5, 5], 'the two pings once each, then the tools/list');
  assert.match(sent[3] ?? '', /"tools"/);
  assert.is(session.inFlight, 0);
});

early('once the actor is up, nothing is answered early', async () => {
  const { session, sent, refs } = harness();
  await session.start();
  (refs[0] as ActorRef).started();
  await Promise.resolve();
  session.receiveFrame(frame(init));
  assert.equal(sent, []);
});

early('an actor that dies before confirming an early answer: its successor is sent the line first', async () => {
  const { session, sent, casts, refs } = harness();
  await session.start();
  session.receiveFrame(frame(init));
  (refs[0] as ActorRef).settle({ kind: 'killed' });
  await Promise.resolve();
  session.receiveFrame(frame(line(2, 'tools/list')));
  await session.start();
  const toSecond = (casts[1] ?? []).map((m) => (m.k === 'line' ? (JSON.parse(m.line) as { method: string }).method : m.k));
  assert.equal(toSecond, ['initialize', 'tools/list']);
  assert.equal(ids(sent), [1], 'no -32010 for a request already answered');
  (refs[1] as ActorRef).deliver({ replies: [reply(1), reply(2, { tools: [] })], effects: [], handled: 2 } satisfies ConnectionOutput);
  assert.equal(ids(sent), [1, 2]);
});

early.run();
