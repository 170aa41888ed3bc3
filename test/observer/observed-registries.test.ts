// What the observer keeps of sessions and tasks: the negotiated version the initialize answer names
// (and nothing else of the traffic), and task counts by status that follow every status change.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ObservedSessions } from '../../src/observer/observed-sessions.ts';
import { MAX_FINISHED_TASKS, ObservedTasks } from '../../src/observer/observed-tasks.ts';
import { handleMcpLine } from '../../src/mcp/handle.ts';
import { answer, initializeAnswer, type Outgoing } from '../../src/mcp/outgoing.ts';
import { initialState } from '../../src/mcp/state.ts';
import { type OutletParts, SessionOutlet } from '../../src/server/session-outlet.ts';

/** A session's send as the application makes it (server/session-outlet.ts): the observer reads the version off it. */
function watched(sessions: ObservedSessions, id: string, send: (out: Outgoing) => void): (out: Outgoing) => void {
  const outlet = new SessionOutlet(id, send, sessions, {} as OutletParts);
  return (out) => outlet.send(out);
}

test('a session shows the version its initialize answer negotiated; every line is still sent, unchanged', () => {
  const sessions = new ObservedSessions(() => 1000);
  const sent: string[] = [];
  const send = watched(sessions, 'session-1', (o) => sent.push(o.line));
  sessions.opened('session-1', { transport: 'websocket', principal: { kind: 'token', name: 'alice' }, harness: 'super-pi-code', session: { inFlight: 2, restarts: 0 } });
  const init = initializeAnswer(1, { protocolVersion: '2025-03-26', capabilities: {} }, '2025-03-26');
  send(init);
  send({ line: '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"\\"protocolVersion\\":\\"1999-01-01\\""}]}}', inReplyTo: 2 });
  assert.equal(sent.length, 2);
  assert.is(sent[0], init.line);
  const [row] = sessions.rows();
  assert.equal(row, { id: 'session-1', transport: 'websocket', principalKind: 'token', principal: 'alice', harness: 'super-pi-code', version: '2025-03-26', ageMs: 0, inFlight: 2, restarts: 0 });
  sessions.closed('session-1');
  assert.is(sessions.size, 0);
});

test('a session that never initializes (2026-07-28) shows no version, whatever its answers carry', () => {
  const sessions = new ObservedSessions(() => 1000);
  const send = watched(sessions, 'session-2', () => undefined);
  sessions.opened('session-2', { transport: 'stdio', principal: { kind: 'local' }, harness: 'super-pi-code', session: { inFlight: 0, restarts: 0 } });
  send({ line: '{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"protocolVersion":"2025-06-18"},"resultType":"complete"}}', inReplyTo: 1 });
  send({ line: '{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"x","data":{"protocolVersion":"2025-06-18"}}}', inReplyTo: 2, isError: true, errorCode: -32602 });
  send({ line: '{"jsonrpc":"2.0","method":"notifications/message","params":{"protocolVersion":"2025-06-18"}}' });
  send({ line: '{"jsonrpc":"2.0","id":"\\"result\\":{\\"protocolVersion\\":\\"2025-06-18\\"","result":{}}', inReplyTo: '"result":{"protocolVersion":"2025-06-18"' });
  assert.is(sessions.rows()[0]?.version, null);
  send({ line: '{"jsonrpc":"2.0","id":3,"result":{"protocolVersion":"2025-06-18","capabilities":{}}}', inReplyTo: 3 });
  send(answer(4, { protocolVersion: '2025-06-18', capabilities: {} }));
  assert.is(sessions.rows()[0]?.version, null, 'only an initialize answer names a negotiated version');
  send(initializeAnswer(0, { protocolVersion: '2025-11-25', capabilities: {} }, '2025-11-25'));
  assert.is(sessions.rows()[0]?.version, '2025-11-25');
});

test("the core's initialize answer names the version it negotiated, whatever its id, and the observer shows it", () => {
  for (const [id, asked, negotiated] of [[7, '2025-06-18', '2025-06-18'], [0, '2024-11-05', '2024-11-05'], ['init', '1999-01-01', '2025-11-25'], ['a"b\\c', '2025-03-26', '2025-03-26']] as const) {
    const sessions = new ObservedSessions(() => 1000);
    const send = watched(sessions, 's', () => undefined);
    sessions.opened('s', { transport: 'stdio', principal: { kind: 'local' }, harness: 'super-pi-code', session: { inFlight: 0, restarts: 0 } });
    const fresh = initialState({ workspace: '/ws' });
    const ping = handleMcpLine(JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' }), fresh);
    for (const out of ping.replies) send(out);
    assert.is(sessions.rows()[0]?.version, null, `a ping before initialize names no version (id ${JSON.stringify(id)})`);
    const step = handleMcpLine(JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: asked, capabilities: {}, clientInfo: { name: 't', version: '1' } } }), fresh);
    assert.is(step.replies.length, 1);
    assert.is(step.replies[0]?.negotiated, negotiated);
    assert.is((JSON.parse(step.replies[0]?.line ?? '') as { result: { protocolVersion: string } }).result.protocolVersion, negotiated, 'the field and the line agree');
    for (const out of step.replies) send(out);
    assert.is(sessions.rows()[0]?.version, negotiated, `id ${JSON.stringify(id)}`);
  }
});

test('task counts by status follow status changes; turns and tool calls count model and tool_call entries', () => {
  const tasks = new ObservedTasks(() => 0);
  tasks.started({ id: 'task-1', conversationId: 'c1', session: 'session-1', principal: { kind: 'anonymous' }, ownerKey: 'anonymous:session-1', harness: 'super-pi-code' });
  tasks.started({ id: 'task-2', conversationId: 'c2', session: 'session-1', principal: { kind: 'anonymous' }, ownerKey: 'anonymous:session-1', harness: 'super-pi-code' });
  tasks.appended('c1', 'model');
  tasks.appended('c1', 'tool_call');
  tasks.appended('c1', 'tool_result');
  tasks.appended('c1', 'model');
  tasks.appended('unknown', 'model');
  tasks.statusSet('c1', 'completed');
  tasks.statusSet('c2', 'interrupted');
  assert.equal([...tasks.counts()].filter(([, n]) => n > 0).sort(), [['completed', 1], ['interrupted', 1]]);
  const row = tasks.rows(() => 0).find((r) => r.id === 'task-1');
  assert.is(row?.turns, 2);
  assert.is(row?.toolCalls, 1);
});

test('finished tasks past MAX_FINISHED_TASKS leave the list (oldest first); running ones stay; the counts keep them all', () => {
  const tasks = new ObservedTasks(() => 0);
  tasks.started({ id: 'task-0', conversationId: 'c0', session: 's', principal: { kind: 'local' }, ownerKey: 'local', harness: 'super-pi-code' });
  for (let i = 1; i <= MAX_FINISHED_TASKS + 5; i++) {
    tasks.started({ id: `task-${i}`, conversationId: `c${i}`, session: 's', principal: { kind: 'local' }, ownerKey: 'local', harness: 'super-pi-code' });
    tasks.statusSet(`c${i}`, 'completed');
  }
  tasks.started({ id: 'task-last', conversationId: 'clast', session: 's', principal: { kind: 'local' }, ownerKey: 'local', harness: 'super-pi-code' });
  const ids = tasks.rows(() => 0).map((r) => r.id);
  assert.ok(ids.includes('task-0'), 'running: kept');
  assert.not.ok(ids.includes('task-1'), 'the oldest finished one is gone');
  assert.is(ids.filter((id) => id !== 'task-0' && id !== 'task-last').length, MAX_FINISHED_TASKS);
  assert.is(tasks.counts().get('completed'), MAX_FINISHED_TASKS + 5);
});

test.run();
