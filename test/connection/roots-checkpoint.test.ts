// The client's root chosen for a session is part of its checkpoint: a restarted connection actor works in
// the same root, and requests held for the roots are left to the owner, not resumed from the checkpoint.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ActorContext } from '../../src/actors/behaviour.ts';
import { decodeCheckpoint } from '../../src/actors/codec.ts';
import { type Checkpoint, connectionBehaviour, type ConnectionMessage, type ConnectionOutput } from '../../src/connection/connection-actor.ts';
import type { Effect } from '../../src/mcp/effects.ts';
import { initialState } from '../../src/mcp/state.ts';

function actor(checkpoint?: ArrayBuffer) {
  const outputs: ConnectionOutput[] = [];
  const ctx: ActorContext = { self: 'test', emit: (msg) => outputs.push(msg as ConnectionOutput), continueWith: () => undefined };
  const config = initialState({ workspace: '/srv/ws', roots: 'follow' }).config;
  let state = connectionBehaviour.init(checkpoint ? { config, checkpoint } : { config }, ctx);
  const handle = (message: ConnectionMessage) => {
    outputs.length = 0;
    state = connectionBehaviour.handle(message, state, ctx, 'cast').state;
    return [...outputs];
  };
  const line = (value: object) => handle({ k: 'line', line: JSON.stringify(value) });
  return { handle, line };
}

const lastCheckpoint = (outputs: ConnectionOutput[]) => outputs.map((o) => o.checkpoint).filter((c) => c !== undefined).at(-1);
const runTools = (outputs: ConnectionOutput[]) => outputs.flatMap((o) => o.effects).filter((e): e is Extract<Effect, { kind: 'runTool' }> => e.kind === 'runTool');
const ls = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'ls', arguments: {} } });

test('a restarted actor resumes in the client root its predecessor chose', () => {
  const a = actor();
  a.line({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: { roots: {} } } });
  a.line({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const held = a.line(ls(1));
  assert.equal(runTools(held), [], 'the call waits for the roots');
  a.line({ jsonrpc: '2.0', id: 'superpi-roots-1', result: { roots: [{ uri: 'file:///home/me/a' }] } });
  const chosen = a.handle({ k: 'result', result: { kind: 'rootsChecked', round: 1, roots: [{ uri: 'file:///home/me/a', path: '/home/me/a' }] } });
  assert.equal(runTools(chosen).map((e) => e.workspace), ['/home/me/a']);
  const checkpoint = lastCheckpoint(chosen);
  assert.ok(checkpoint, 'choosing a root checkpoints the session');
  const saved = decodeCheckpoint<Checkpoint>(checkpoint.slice(0));
  assert.is(saved.root, '/home/me/a');
  assert.not.ok('rootsHeld' in saved, 'held requests are the owner\'s to redeliver');

  const b = actor(checkpoint);
  assert.equal(runTools(b.line(ls(2))).map((e) => [e.requestId, e.workspace]), [[2, '/home/me/a']]);
});

test.run();
