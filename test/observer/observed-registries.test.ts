// What the observer keeps of sessions and tasks: the negotiated version read off the initialize answer
// (and nothing else of the traffic), and task counts by status that follow every status change.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ObservedSessions } from '../../src/observer/observed-sessions.ts';
import { MAX_FINISHED_TASKS, ObservedTasks } from '../../src/observer/observed-tasks.ts';
import { answer, type Outgoing } from '../../src/mcp/outgoing.ts';
import { type OutletParts, SessionOutlet } from '../../src/server/session-outlet.ts';

/** A session's send as the application makes it (server/session-outlet.ts): the observer reads the version off it. */
function watched(sessions: ObservedSessions, id: string, send: (out: Outgoing) => void): (out: Outgoing) => void {
  const outlet = new SessionOutlet(id, send, sessions, {} as OutletParts);
  return (out) => outlet.send(out);
}

test('a session shows the version its initialize answer carried; every line is still sent, unchanged', () => {
  const sessions = new ObservedSessions(() => 1000);
  const sent: string[] = [];
  const send = watched(sessions, 'session-1', (o) => sent.push(o.line));
  sessions.opened('session-1', { transport: 'websocket', principal: { kind: 'token', name: 'alice' }, harness: 'super-pi-code', session: { inFlight: 2, restarts: 0 } });
  const init = '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-03-26","capabilities":{}}}';
  send({ line: init, inReplyTo: 1 });
  send({ line: '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"\\"protocolVersion\\":\\"1999-01-01\\""}]}}', inReplyTo: 2 });
  assert.equal(sent.length, 2);
  assert.is(sent[0], init);
  const [row] = sessions.rows();
  assert.equal(row, { id: 'session-1', transport: 'websocket', principalKind: 'token', principal: 'alice', harness: 'super-pi-code', version: '2025-03-26', ageMs: 0, inFlight: 2, restarts: 0 });
  sessions.closed('session-1');
  assert.is(sessions.size, 0);
});

test('a session that never initializes (2026-07-28) shows no version, whatever its answers carry past the start of their result', () => {
  const sessions = new ObservedSessions(() => 1000);
  const send = watched(sessions, 'session-2', () => undefined);
  sessions.opened('session-2', { transport: 'stdio', principal: { kind: 'local' }, harness: 'super-pi-code', session: { inFlight: 0, restarts: 0 } });
  send({ line: '{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"protocolVersion":"2025-06-18"},"resultType":"complete"}}', inReplyTo: 1 });
  send({ line: '{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"x","data":{"protocolVersion":"2025-06-18"}}}', inReplyTo: 2, isError: true, errorCode: -32602 });
  send({ line: '{"jsonrpc":"2.0","method":"notifications/message","params":{"protocolVersion":"2025-06-18"}}' });
  send({ line: '{"jsonrpc":"2.0","id":"\\"result\\":{\\"protocolVersion\\":\\"2025-06-18\\"","result":{}}', inReplyTo: '"result":{"protocolVersion":"2025-06-18"' });
  assert.is(sessions.rows()[0]?.version, null);
  send({ line: '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{}}}', inReplyTo: 0 });
  assert.is(sessions.rows()[0]?.version, '2025-11-25');
});

test('the version is read off an initialize answer as the core writes it, whatever its id', () => {
  for (const id of [7, 0, -1, 'init', 'a"b\\c', '\u00e9\u2028']) {
    const sessions = new ObservedSessions(() => 1000);
    const send = watched(sessions, 's', () => undefined);
    sessions.opened('s', { transport: 'stdio', principal: { kind: 'local' }, harness: 'super-pi-code', session: { inFlight: 0, restarts: 0 } });
    send(answer(id, { content: [{ type: 'text', text: '{"protocolVersion":"2025-06-18"}' }] }));
    assert.is(sessions.rows()[0]?.version, null, `a tool result named no version (id ${JSON.stringify(id)})`);
    send(answer(id, { protocolVersion: '2025-11-25', capabilities: {} }));
    assert.is(sessions.rows()[0]?.version, '2025-11-25', `id ${JSON.stringify(id)}`);
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
