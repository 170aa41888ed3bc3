// Inline effects: the connection actor reads small files itself and emits only the final reply; larger
// files, other tools and refusals it cannot phrase go to the owner as before; cancellation stays a no-op.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ActorContext } from '../../src/actors/behaviour.ts';
import { connectionBehaviour, type ConnectionMessage, type ConnectionOutput } from '../../src/connection/connection-actor.ts';
import { INLINE_READ_BYTES, runInline, settleInline } from '../../src/connection/inline-effects.ts';
import type { Effect } from '../../src/mcp/effects.ts';
import { handleMcpLine } from '../../src/mcp/handle.ts';
import { initialState } from '../../src/mcp/state.ts';
import { readTool } from '../../src/tools/read.ts';
import { sandboxPerTest } from '../tools/sandbox.ts';

const box = sandboxPerTest(test);

/** The connection behaviour driven by hand: every output it emits, collected. */
function actor(workspace: string) {
  const outputs: ConnectionOutput[] = [];
  const ctx: ActorContext = {
    self: 'test',
    emit: (msg) => outputs.push(msg as ConnectionOutput),
    continueWith: () => { throw new Error('these tests send no batches'); },
  };
  let state = connectionBehaviour.init({ config: { ...initialState({ workspace }).config } }, ctx);
  const send = (msg: object): ConnectionOutput[] => {
    outputs.length = 0;
    const message: ConnectionMessage = { k: 'line', line: JSON.stringify(msg) };
    const outcome = connectionBehaviour.handle(message, state, ctx, 'cast');
    state = outcome.state;
    return [...outputs];
  };
  send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return { send, pending: () => state.session.pending.size };
}

const call = (id: number, name: string, args: object) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
const textOf = (line: string) => (JSON.parse(line) as { result: { content: { text: string }[]; isError?: boolean } }).result;

test('a small read is answered by the actor itself: one output, the reply, no effect', async () => {
  await writeFile(path.join(box.ws, 'a.txt'), 'alpha\nbeta\n');
  const a = actor(box.ws);
  const out = a.send(call(1, 'read', { path: 'a.txt' }));
  assert.is(out.length, 1);
  assert.equal(out[0]?.effects, []);
  assert.is(out[0]?.replies.length, 1);
  assert.is(textOf(out[0]?.replies[0]?.line as string).content[0]?.text, 'alpha\nbeta\n');
  assert.is(a.pending(), 0);
});

test('a refused read (outside the workspace, missing, a directory) is answered inline as a tool error', async () => {
  await mkdir(path.join(box.ws, 'dir'));
  await symlink(box.outside, path.join(box.ws, 'door'));
  const a = actor(box.ws);
  for (const [p, message] of [
    ['../outside/x', /is outside the workspace/],
    ['door/x', /symbolic link that leads outside/],
    ['nope.txt', /^File not found: nope.txt$/],
    ['dir', /is a directory/],
  ] as const) {
    const out = a.send(call(1, 'read', { path: p }));
    assert.equal(out[0]?.effects, []);
    const result = textOf(out[0]?.replies[0]?.line as string);
    assert.is(result.isError, true);
    assert.match(result.content[0]?.text as string, message);
  }
});

test('a file over the inline bound goes to the owner as a runTool effect', async () => {
  await writeFile(path.join(box.ws, 'big.txt'), 'x\n'.repeat(INLINE_READ_BYTES / 2 + 1));
  const a = actor(box.ws);
  const out = a.send(call(1, 'read', { path: 'big.txt' }));
  assert.equal(out[0]?.replies, []);
  assert.equal(out[0]?.effects.map((e) => e.kind === 'runTool' && e.tool), ['read']);
  assert.is(a.pending(), 1);
});

test('other tools still go to the owner', async () => {
  const a = actor(box.ws);
  const out = a.send(call(1, 'ls', { path: '.' }));
  assert.equal(out[0]?.effects.map((e) => e.kind === 'runTool' && e.tool), ['ls']);
});

test('a cancel after an inline read finds nothing in flight and sends nothing', async () => {
  await writeFile(path.join(box.ws, 'a.txt'), 'a\n');
  const a = actor(box.ws);
  a.send(call(7, 'read', { path: 'a.txt' }));
  const out = a.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } });
  // The actor still reports the message handled (its owner's redelivery counts on it), with nothing else.
  assert.equal(out.map((o) => ({ replies: o.replies, effects: o.effects })), [{ replies: [], effects: [] }]);
});

test('inline and owner reads give the same text for windows, truncation and refusals', async () => {
  await writeFile(path.join(box.ws, 'lines.txt'), Array.from({ length: 2500 }, (_, i) => `line ${i + 1}`).join('\n'));
  await writeFile(path.join(box.ws, 'bom.txt'), '\uFEFFfirst\r\nsecond');
  await writeFile(path.join(box.ws, 'bin.dat'), Buffer.from([1, 2, 0, 3]));
  await writeFile(path.join(box.ws, 'long.txt'), 'y'.repeat(60 * 1024));
  const cases = [
    { path: 'lines.txt' }, { path: 'lines.txt', offset: 2400 }, { path: 'lines.txt', offset: 10, limit: 5 },
    { path: 'lines.txt', offset: 9999 }, { path: 'bom.txt' }, { path: 'bin.dat' }, { path: 'long.txt' }, { path: 'lines.txt', limit: 0 },
  ];
  for (const args of cases) {
    const effect: Effect = { kind: 'runTool', ticket: 1, requestId: 1, tool: 'read', args, harness: 'super-pi-code', client: { sampling: false, elicitation: false } };
    const inline = runInline(effect, box.ws);
    assert.ok(inline && inline.kind === 'toolDone', `inline result for ${JSON.stringify(args)}`);
    const owner = await readTool(args, box.ctx).then((o) => ({ text: o.text, isError: o.isError }), (err: Error) => ({ text: err.message, isError: true }));
    assert.equal({ text: inline.outcome.text, isError: inline.outcome.isError }, owner, JSON.stringify(args));
  }
});

test('settleInline keeps the owner effects in order and adds the inline replies after the step replies', () => {
  const state = initialState({ workspace: box.ws });
  const log: Effect = { kind: 'log', level: 'debug', message: 'm' };
  const step = settleInline({ state, replies: [{ line: 'r' }], effects: [log] }, box.ws);
  assert.equal(step, { state, replies: [{ line: 'r' }], effects: [log] });
  const parsed = handleMcpLine('{', state);
  assert.equal(settleInline(parsed, box.ws), parsed);
});

test.run();
