import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeCheckpoint, encodeCheckpoint } from '../../src/actors/codec.ts';
import { rehydrate, storedVersion } from '../../src/cluster/rehydrate.ts';
import type { Checkpoint } from '../../src/connection/connection-actor.ts';
import { initialState } from '../../src/mcp/state.ts';

const home = initialState({ workspace: '/srv/home-node', principal: { kind: 'token', name: 'alice' } });
const stored: Checkpoint = {
  ...(({ pending: _pending, ...rest }) => rest)(home),
  phase: 'ready',
  protocolVersion: '2025-06-18',
  logLevel: 'info',
  subscriptions: ['superpi://conversation/c1/transcript'],
  conversations: ['c1'],
  tasks: [[7, { kind: 'tool', requestId: 3, tool: 'harness_task' }]],
};
const here = initialState({ workspace: '/srv/this-node', principal: { kind: 'token', name: 'alice' } }).config;

test("a stored checkpoint resumes with this node's configuration and without the home's task tickets; version and subscriptions kept", () => {
  const r = rehydrate(new Uint8Array(encodeCheckpoint(stored)), here);
  const resumed = decodeCheckpoint<Checkpoint>(r.checkpoint);
  assert.is(resumed.config?.workspace, '/srv/this-node');
  assert.equal(resumed.tasks, [], "the task is the home's (or a task takeover's): its answer comes by the session events, not this core");
  assert.equal([resumed.phase, resumed.protocolVersion, resumed.logLevel, resumed.subscriptions, resumed.conversations], ['ready', '2025-06-18', 'info', ['superpi://conversation/c1/transcript'], ['c1']]);
  assert.equal([r.version, r.subscriptions], ['2025-06-18', ['superpi://conversation/c1/transcript']]);
  assert.is(storedVersion(new Uint8Array(encodeCheckpoint(stored))), '2025-06-18');
});

test("the home's chosen client root is kept only where this node's roots policy accepts it", () => {
  const withRoot = (root: string): Uint8Array => new Uint8Array(encodeCheckpoint({ ...stored, root }));
  const narrowHere = (workspace: string) => initialState({ workspace, principal: { kind: 'token', name: 'alice' }, roots: 'narrow' }).config;
  const rootAfter = (root: string, config: typeof here) => decodeCheckpoint<Checkpoint>(rehydrate(withRoot(root), config).checkpoint).root;
  assert.is(rootAfter('/srv/home-node/pkg', narrowHere('/srv/home-node')), '/srv/home-node/pkg');
  assert.is(rootAfter('/srv/home-node/pkg', narrowHere('/srv/this-node')), null, 'outside this node\'s workspace');
  assert.is(rootAfter('/srv/home-node/pkg', here), null, 'this node was given --workspace (roots ignored)');
});

test.run();
