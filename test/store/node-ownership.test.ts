// Owners by node (node-ownership.ts), for stores shared by several machines: the only owner a node
// knows to be gone is an earlier run of itself; other nodes, and keys of other kinds, count as alive.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeNodeOwner, encodeNodeOwner, nodeOwnership, processIncarnation } from '../../src/store/node-ownership.ts';
import { encodeOwner } from '../../src/store/ownership.ts';

test('a node owner key round-trips; anything else is not a node owner', () => {
  const id = { node: 'web-1:"quoted"', incarnation: 'abc' };
  assert.equal(decodeNodeOwner(encodeNodeOwner(id)), id);
  for (const bad of ['', 'node:v1:', 'node:v1:{', 'node:v1:["a"]', 'node:v1:["","x"]', 'node:v1:["a",""]', 'node:v1:["a",1]', encodeOwner({ host: 'h', pid: 1, start: '' })]) {
    assert.is(decodeNodeOwner(bad), null, bad);
  }
});

test('liveness: an earlier run of this node and no owner are gone; this run, other nodes and other keys are alive', () => {
  const me = nodeOwnership('web-1', 'run-2');
  assert.ok(me.isAlive(me.self), 'itself');
  assert.not.ok(me.isAlive(encodeNodeOwner({ node: 'web-1', incarnation: 'run-1' })), 'this node before it restarted');
  assert.not.ok(me.isAlive(''), 'no owner recorded');
  assert.ok(me.isAlive(encodeNodeOwner({ node: 'web-2', incarnation: 'run-1' })), 'another node cannot be judged from here');
  assert.ok(me.isAlive(encodeOwner({ host: 'web-1', pid: 1, start: '' })), 'a process owner key');
  assert.ok(me.isAlive('lease:v1:x'), 'a key of an unknown kind');
  assert.ok(me.isAlive('node:v1:garbage'), 'a damaged node key');
});

test('every store of one process is one owner: the incarnation is per process unless given', () => {
  const one = nodeOwnership('web-1');
  const two = nodeOwnership('web-1');
  assert.is(one.self, two.self);
  assert.ok(two.isAlive(one.self));
  assert.is(decodeNodeOwner(one.self)?.incarnation, processIncarnation());
  assert.throws(() => nodeOwnership(''), /non-empty/);
});

test.run();
