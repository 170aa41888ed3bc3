// A session whose first connection actor is still booting (a cold start) answers initialize and ping
// itself — the same pure core, the same lines sent on to the actor — and drops the actor's own replies
// to them later. Anything else waits for the actor. The actor here is a real ActorRef on a recording
// host, so the test sees exactly what crosses to the thread.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ConnectionOutput } from '../../src/connection/connection-actor.ts';
import { answer } from '../../src/mcp/outgoing.ts';
import { stubSession } from './stub-session.ts';

const line = (id: number | null, method: string, params: object = {}) => JSON.stringify(id === null ? { jsonrpc: '2.0', method, params } : { jsonrpc: '2.0', id, method, params });
const init = line(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } });
const reply = (id: number, result: object = {}) => answer(id, result);

const harness = () => stubSession();

const ids = (lines: string[]) => lines.map((l) => (JSON.parse(l) as { id?: unknown }).id);
const frame = (text: string) => ({ kind: 'line' as const, text });

const early = suite('session: answers while its first actor boots');

early('initialize and ping are answered at once, and still sent to the actor', async () => {
  const { session, sent, actors } = harness();
  await session.start();
  session.receiveFrame(frame(init));
  session.receiveFrame(frame(line(null, 'notifications/initialized')));
  session.receiveFrame(frame(line(2, 'ping')));
  assert.equal(ids(sent), [1, 2]);
  const result = (JSON.parse(sent[0] as string) as { result: { protocolVersion: string; serverInfo: { name: string } } }).result;
  assert.is(result.protocolVersion, '2025-06-18');
  assert.is(result.serverInfo.name, 'super-pi');
  assert.is(actors[0]?.casts.length, 3, 'the actor gets every line, to reach the same state');
});

early('anything else waits for the actor, and so does everything after it; the actor\'s replies to early requests are dropped', async () => {
  const { session, sent, actor } = harness();
  await session.start();
  session.receiveFrame(frame(init));
  session.receiveFrame(frame(line(2, 'tools/list')));
  session.receiveFrame(frame(line(3, 'ping')));
  assert.equal(ids(sent), [1], 'tools/list is not answered here, and the ping after it waits its turn');
  const out: ConnectionOutput = { replies: [reply(1, { protocolVersion: '2025-06-18' }), reply(2, { tools: [] }), reply(3)], effects: [], handled: 3 };
  actor(0).deliver(out);
  assert.equal(ids(sent), [1, 2, 3], 'the actor\'s initialize reply is not sent twice');
  assert.is(session.inFlight, 0);
});

early('an id answered early twice (the first answer came before the second request): each actor reply is dropped once, a later request with that id is answered', async () => {
  const { session, sent, actor } = harness();
  await session.start();
  session.receiveFrame(frame(init));
  session.receiveFrame(frame(line(5, 'ping')));
  session.receiveFrame(frame(line(5, 'ping')));
  session.receiveFrame(frame(line(5, 'tools/list')));
  assert.equal(ids(sent), [1, 5, 5]);
  actor(0).deliver({ replies: [reply(1), reply(5), reply(5), reply(5, { tools: [] })], effects: [], handled: 4 } satisfies ConnectionOutput);
  assert.equal(ids(sent), [1, 5, 5, 5], 'the two pings once each, then the tools/list');
  assert.match(sent[3] ?? '', /"tools"/);
  assert.is(session.inFlight, 0);
});

early('once the actor is up, nothing is answered early', async () => {
  const { session, sent, actor } = harness();
  await session.start();
  actor(0).started();
  await Promise.resolve();
  session.receiveFrame(frame(init));
  assert.equal(sent, []);
});

early('an actor that dies before confirming an early answer: its successor is sent the line first', async () => {
  const { session, sent, actors, actor } = harness();
  await session.start();
  session.receiveFrame(frame(init));
  actor(0).settle({ kind: 'killed' });
  await Promise.resolve();
  session.receiveFrame(frame(line(2, 'tools/list')));
  await session.start();
  const toSecond = (actors[1]?.casts ?? []).map((m) => (m.k === 'line' ? (JSON.parse(m.line) as { method: string }).method : m.k));
  assert.equal(toSecond, ['initialize', 'tools/list']);
  assert.equal(ids(sent), [1], 'no -32010 for a request already answered');
  actor(1).deliver({ replies: [reply(1), reply(2, { tools: [] })], effects: [], handled: 2 } satisfies ConnectionOutput);
  assert.equal(ids(sent), [1, 2]);
});

early.run();
