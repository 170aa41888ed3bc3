// The observer's supervision tree, built from supervisor events: nesting by supervisor name, states,
// restart counts and last exit reasons, and ended children dropped once MAX_ENDED_NODES newer ones ended.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_ENDED_NODES, SupervisionModel, type TreeNode } from '../../src/observer/supervision-model.ts';
import { crash, shutdown } from '../../src/supervisor/index.ts';

const find = (n: TreeNode, id: string): TreeNode | undefined => n.id === id ? n : n.children.map((c) => find(c, id)).find((x) => x !== undefined);

test('children nest under the supervisor their id names; a restart counts and keeps its reason', () => {
  const m = new SupervisionModel();
  m.observe({ type: 'child-started', supervisor: 'root', id: 'sessions' });
  m.observe({ type: 'child-started', supervisor: 'sessions', id: 'session-1' });
  m.observe({ type: 'child-started', supervisor: 'session-1', id: 'connection' });
  m.observe({ type: 'child-exited', supervisor: 'session-1', id: 'connection', reason: crash(new Error('boom')), willRestart: true });
  assert.is(find(m.snapshot(), 'connection')?.state, 'restarting');
  m.observe({ type: 'child-restarted', supervisor: 'session-1', id: 'connection', reason: crash(new Error('boom')), trigger: 'connection' });
  const tree = m.snapshot();
  assert.equal(tree.children.map((c) => c.id), ['sessions']);
  const conn = find(tree, 'connection');
  assert.is(conn?.state, 'running');
  assert.is(conn?.restarts, 1);
  assert.match(conn?.lastExit ?? '', /boom/);
  assert.is(m.restartsOf('session-1', 'connection'), 1);
});

test('a stopped child shows as stopped, then leaves the tree (with its subtree) after MAX_ENDED_NODES later ends', () => {
  const m = new SupervisionModel();
  m.observe({ type: 'child-started', supervisor: 'root', id: 'sessions' });
  m.observe({ type: 'child-started', supervisor: 'sessions', id: 'session-0' });
  m.observe({ type: 'child-started', supervisor: 'session-0', id: 'connection' });
  m.observe({ type: 'child-stopped', supervisor: 'sessions', id: 'session-0', reason: shutdown, timedOut: false });
  assert.is(find(m.snapshot(), 'session-0')?.state, 'stopped');
  for (let i = 1; i <= MAX_ENDED_NODES; i++) {
    m.observe({ type: 'child-started', supervisor: 'sessions', id: `session-${i}` });
    m.observe({ type: 'child-stopped', supervisor: 'sessions', id: `session-${i}`, reason: shutdown, timedOut: false });
  }
  assert.is(find(m.snapshot(), 'session-0'), undefined);
  assert.is(m.restartsOf('session-0', 'connection'), 0, 'its subtree is gone too');
  assert.ok(find(m.snapshot(), `session-${MAX_ENDED_NODES}`));
});

test("a supervisor's one child, then a second and a third (kept in start order), then one ending: each is found and shown", () => {
  const m = new SupervisionModel();
  m.observe({ type: 'child-started', supervisor: 'root', id: 'sup' });
  m.observe({ type: 'child-started', supervisor: 'sup', id: 'a' });
  m.observe({ type: 'child-exited', supervisor: 'sup', id: 'a', reason: crash(new Error('once')), willRestart: true });
  m.observe({ type: 'child-restarted', supervisor: 'sup', id: 'a', reason: crash(new Error('once')), trigger: 'a' });
  m.observe({ type: 'child-started', supervisor: 'sup', id: 'b' });
  m.observe({ type: 'child-started', supervisor: 'sup', id: 'c' });
  assert.equal(find(m.snapshot(), 'sup')?.children.map((c) => c.id), ['a', 'b', 'c']);
  assert.equal([m.restartsOf('sup', 'a'), m.restartsOf('sup', 'b'), m.restartsOf('sup', 'z')], [1, 0, 0]);
  m.observe({ type: 'child-stopped', supervisor: 'sup', id: 'b', reason: shutdown, timedOut: false });
  assert.is(find(m.snapshot(), 'b')?.state, 'stopped');
  const solo = new SupervisionModel();
  solo.observe({ type: 'child-started', supervisor: 'root', id: 'x' });
  solo.observe({ type: 'child-stopped', supervisor: 'root', id: 'x', reason: shutdown, timedOut: false });
  for (let i = 0; i < MAX_ENDED_NODES; i++) solo.observe({ type: 'child-stopped', supervisor: `other-${i}`, id: 'y', reason: shutdown, timedOut: false });
  assert.equal(solo.snapshot().children, [], 'a sole child that ended and aged out is gone');
});

test.run();
