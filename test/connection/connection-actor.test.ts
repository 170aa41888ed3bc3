// The connection actor driven by hand: a long batch is handled in slices with a yield between them,
// what the actor checkpoints stays encodable whatever the client sent, and a read it runs inline is
// counted in its thread's tally rather than sent along with its reply.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ActorContext } from '../../src/actors/behaviour.ts';
import { decodeCheckpoint, encodeCheckpoint } from '../../src/actors/codec.ts';
import { connectionBehaviour, type ConnectionMessage, type ConnectionOutput } from '../../src/connection/connection-actor.ts';
import { lineMessage, PARSED } from '../../src/connection/parsed-lines.ts';
import { BATCH_SLICE_LENGTH } from '../../src/limits.ts';
import { flushInlineTally, InlineTally, type InlineSeries, installInlineTally } from '../../src/actors/inline-tally.ts';
import { DEFAULT_HARNESS } from '../../src/harness/ids.ts';
import { initialState } from '../../src/mcp/state.ts';

function actor(workspace = '/ws') {
  const outputs: ConnectionOutput[] = [];
  const continued: ConnectionMessage[] = [];
  const ctx: ActorContext = {
    self: 'test',
    emit: (msg) => outputs.push(msg as ConnectionOutput),
    continueWith: (msg) => continued.push(msg as ConnectionMessage),
  };
  let state = connectionBehaviour.init({ config: { ...initialState({ workspace }).config } }, ctx);
  /** Handles one message: what it emitted, and the message it handed back to itself (if any). */
  const handle = (message: ConnectionMessage) => {
    outputs.length = 0;
    continued.length = 0;
    state = connectionBehaviour.handle(message, state, ctx, 'cast').state;
    return { outputs: [...outputs], continued: continued[0] };
  };
  const line = (text: string) => handle({ k: 'line', line: text });
  return { handle, line };
}

const init = (capabilities: string) =>
  `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":${capabilities}}}`;

test('a batch longer than BATCH_SLICE_LENGTH is handled a slice per turn, the rest handed back to the actor', () => {
  const a = actor();
  a.line(init('{}'));
  const n = BATCH_SLICE_LENGTH * 2 + 7;
  let step = a.line(JSON.stringify(Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' }))));
  const ids: unknown[] = [];
  const perTurn: number[] = [];
  for (;;) {
    const replies = step.outputs.flatMap((o) => o.replies);
    perTurn.push(replies.length);
    ids.push(...replies.map((r) => (JSON.parse(r.line) as { id: unknown }).id));
    if (!step.continued) break;
    assert.is(step.continued.k, 'batch');
    step = a.handle(step.continued);
  }
  assert.equal(perTurn, [BATCH_SLICE_LENGTH, BATCH_SLICE_LENGTH, 7]);
  assert.equal(ids, Array.from({ length: n }, (_, i) => i));
});

test('an initialize nesting 5,000 levels is refused without a crash; the next initialize checkpoints', () => {
  const a = actor();
  const deep = `${'{"x":'.repeat(4999)}{}${'}'.repeat(4999)}`;
  const refused = a.line(init(deep));
  const reply = JSON.parse(refused.outputs[0]?.replies[0]?.line as string) as { error: { code: number; message: string } };
  assert.is(reply.error.code, -32602);
  assert.match(reply.error.message, 'MAX_JSON_DEPTH');
  const accepted = a.line(init('{"sampling":{}}'));
  const checkpoint = accepted.outputs[0]?.checkpoint;
  assert.ok(checkpoint, 'the session identity changed, so the actor checkpoints it');
  assert.equal(decodeCheckpoint<{ clientCapabilities: unknown }>(checkpoint).clientCapabilities, { sampling: {} });
});

test('a subscription (and an unsubscribe) checkpoints the session: a node that rehydrates it keeps its subscriptions', () => {
  const a = actor();
  a.line(init('{}'));
  const uri = 'superpi://conversation/c1/transcript';
  const asked = a.line('{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"superpi://conversation/c1/transcript"}}');
  const watch = asked.outputs[0]?.effects[0];
  assert.is(watch?.kind, 'watchTranscript');
  const found = a.handle({ k: 'result', result: { kind: 'transcriptFound', ticket: (watch as { ticket: number }).ticket, found: true } });
  const subscribed = found.outputs[0]?.checkpoint;
  assert.ok(subscribed, 'subscribed: checkpointed');
  assert.equal(decodeCheckpoint<{ subscriptions: string[] }>(subscribed).subscriptions, [uri]);
  const dropped = a.line(`{"jsonrpc":"2.0","id":2,"method":"resources/unsubscribe","params":{"uri":"${uri}"}}`).outputs[0]?.checkpoint;
  assert.ok(dropped, 'unsubscribed: checkpointed');
  assert.equal(decodeCheckpoint<{ subscriptions: string[] }>(dropped).subscriptions, []);
});

test('a read run inline is counted in the thread\'s tally; the output to the owner carries only replies, effects and the handled count', async () => {
  const ws = await mkdtemp(path.join(os.tmpdir(), 'superpi-inline-'));
  const reports: InlineSeries[][] = [];
  installInlineTally(new InlineTally((s) => reports.push(s)));
  try {
    await writeFile(path.join(ws, 'a.txt'), 'alpha\n');
    const a = actor(ws);
    a.line(init('{}'));
    a.line('{"jsonrpc":"2.0","method":"notifications/initialized"}');
    const step = a.line('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt"}}}');
    const out = step.outputs[0] as ConnectionOutput;
    assert.equal(Object.keys(out).sort(), ['effects', 'handled', 'replies'], 'no per-call data crosses to the main thread with the reply');
    assert.is(out.effects.length, 0, 'the read ran here, not on the owner');
    assert.match(out.replies[0]?.line ?? '', 'alpha');
    assert.is(reports.length, 0, 'one call is not reported on its own');
    flushInlineTally();
    assert.equal(reports.map((r) => r.map((s) => [s.tool, s.harness, s.ok, s.error, s.latenciesMs.length])), [[['read', DEFAULT_HARNESS, 1, 0, 1]]]);
  } finally {
    installInlineTally(null);
    await rm(ws, { recursive: true, force: true });
  }
});


test('a checkpoint leaves the config out: a restart resumes with the config it is handed; an older checkpoint with a config resumes with that one', () => {
  const ctx: ActorContext = { self: 'test', emit: () => undefined, continueWith: () => undefined };
  const outputs: ConnectionOutput[] = [];
  const first = connectionBehaviour.init({ config: initialState({ workspace: '/ws-a' }).config }, { ...ctx, emit: (m) => outputs.push(m as ConnectionOutput) });
  connectionBehaviour.handle({ k: 'line', line: init('{"roots":{}}') }, first, { ...ctx, emit: (m) => outputs.push(m as ConnectionOutput) }, 'cast');
  const checkpoint = outputs[0]?.checkpoint;
  assert.ok(checkpoint);
  const saved = decodeCheckpoint<Record<string, unknown>>(checkpoint.slice(0));
  assert.not.ok('config' in saved, 'no config in the checkpoint');
  assert.equal(saved.clientCapabilities, { roots: {} });
  const restarted = connectionBehaviour.init({ config: initialState({ workspace: '/ws-b' }).config, checkpoint }, ctx) as { session: { config: { workspace: string }; phase: string; clientCapabilities: unknown } };
  assert.equal([restarted.session.config.workspace, restarted.session.phase, restarted.session.clientCapabilities], ['/ws-b', 'ready', { roots: {} }]);
  const older = encodeCheckpoint({ ...saved, config: initialState({ workspace: '/ws-old' }).config });
  const resumedOld = connectionBehaviour.init({ config: initialState({ workspace: '/ws-b' }).config, checkpoint: older }, ctx) as { session: { config: { workspace: string; roots: string } } };
  assert.equal([resumedOld.session.config.workspace, resumedOld.session.config.roots], ['/ws-old', 'ignore']);
});

test('actors of one thread handed equal configs share one copy; a different config gets its own', () => {
  const ctx: ActorContext = { self: 'test', emit: () => undefined, continueWith: () => undefined };
  const configOf = (workspace: string) => (connectionBehaviour.init({ config: initialState({ workspace }).config }, ctx) as { session: { config: unknown } }).session.config;
  const a = configOf('/ws-same');
  assert.is(configOf('/ws-same'), a);
  const other = configOf('/ws-other');
  assert.is.not(other, a);
  assert.equal((other as { workspace: string }).workspace, '/ws-other');
});


test('a line the session parsed on this thread is read from that parse, not parsed again; a copy (another thread) is parsed from its text', () => {
  const a = actor();
  const text = '{"jsonrpc":"2.0","id":7,"method":"ping"}';
  const message = lineMessage(text, { batch: false, messages: [], values: [JSON.parse(text)] });
  assert.equal(message[PARSED], { jsonrpc: '2.0', id: 7, method: 'ping' });
  // A message carrying another parse than its text's: the reply (id 8) proves the actor read the parse.
  const here = a.handle({ k: 'line', line: text, [PARSED]: { jsonrpc: '2.0', id: 8, method: 'ping' } }).outputs.flatMap((o) => o.replies);
  assert.equal(here.map((r) => r.inReplyTo), [8]);
  // What a worker thread receives: structured clone leaves the symbol-keyed parse behind.
  const copy = structuredClone(message);
  assert.is(copy[PARSED], undefined);
  assert.equal(a.handle(copy).outputs.flatMap((o) => o.replies).map((r) => r.inReplyTo), [7]);
  // A batch, or a line that is not JSON, carries no parse: the actor reads the text.
  assert.is(lineMessage('[{"jsonrpc":"2.0","id":9,"method":"ping"}]', { batch: true, messages: [], values: [{}] })[PARSED], undefined);
  assert.is(lineMessage('not json', null)[PARSED], undefined);
});

test.run();
