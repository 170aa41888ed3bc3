// A run in round trips (task-rounds.ts) carries its history from one round to the next on the node that
// served it (round-history.ts): the next round there reads only the entries appended after the park, not
// the transcript again; what it carries is exactly what a whole read gives; and a round on another node,
// or after another node ran the conversation meanwhile, reads it whole and goes on the same.

import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../../src/log/logger.ts';
import type { TaskRounds } from '../../src/mcp/effects.ts';
import { type AsyncConversationStore, SyncStoreAdapter } from '../../src/store/async-store.ts';
import { databasePath } from '../../src/store/location.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import type { Entry } from '../../src/store/store.ts';
import { systemClock } from '../../src/time/clock.ts';
import { runTool } from '../../src/tools/tool-runner.ts';
import type { TaskContext } from '../../src/task/task-context.ts';
import { keptHistory, RoundHistory } from '../../src/task/round-history.ts';
import { taskHistory } from '../../src/task/task-history.ts';
import { type RoundOutcome, runTaskRound } from '../../src/task/task-rounds.ts';
import { fakeOwnership } from '../store/contract.ts';
import { removeHome, tempHome } from '../store/helpers.ts';
import { spiedReads } from './fixtures/conversation.ts';

const logger = createLogger('error', { write: () => true });
const PRINCIPAL = 'token:alice';
const ARGS = { harness: 'super-pi-code', prompt: 'make notes' };
const said = (text: string) => ({ role: 'assistant', model: 'scripted', stopReason: 'endTurn', content: { type: 'text', text } });
const WRITE = '<tool_call>{"name": "write", "arguments": {"path": "notes.md", "content": "round trip\\n"}}</tool_call>';

async function ground() {
  const home = await tempHome();
  const ws = path.join(home, 'ws');
  await mkdir(ws);
  const open = (owner: string) => spiedReads(new SyncStoreAdapter(SqliteConversationStore.open(databasePath(home), { ownership: fakeOwnership(owner) })));
  const a = open('node-a');
  const b = open('node-b');
  const round = (store: AsyncConversationStore, resume: TaskRounds['resume']): Promise<RoundOutcome> => {
    const context: TaskContext = {
      store: () => store, principal: PRINCIPAL, local: false, forbidWrites: false, sessionId: 'modern', env: {},
      supervise: async () => { throw new Error('a round is not supervised'); },
    };
    return runTaskRound({ context, workspace: ws, toolTimeoutMs: 5000, executeTool: runTool, logger, clock: systemClock, onProgress: () => undefined, signal: new AbortController().signal }, ARGS, 'super-pi-code', resume);
  };
  return { a, b, ws, round, async close() { await a.store.close(); await b.store.close(); await removeHome(home); } };
}

const input = (out: RoundOutcome) => {
  if (out.kind !== 'input') throw new Error(`expected a model turn, got ${JSON.stringify(out)}`);
  return out;
};

test('the next round on the same node reads only what was appended after the park; what it carries is what a whole read gives', async () => {
  const g = await ground();
  try {
    const first = input(await g.round(g.a.store, null));
    const id = first.conversationId;
    const second = input(await g.round(g.a.store, { conversationId: id, turn: 1, seq: first.seq, answer: said(WRITE) }));
    assert.equal(g.a.read.map((e) => e.seq).filter((seq) => seq <= first.seq && seq > 1), [], 'nothing up to the first park was read again (but the prompt, at the first round)');
    assert.is(await readFile(path.join(g.ws, 'notes.md'), 'utf8'), 'round trip\n');
    // What the second round kept (its write's snapshots are after its last model turn) is the whole read.
    const whole = await taskHistory(g.b.store, id, PRINCIPAL);
    assert.equal(keptHistory(g.a.store, PRINCIPAL, id), whole);
    assert.ok(whole !== null && 'entries' in whole && whole.entries.some((e) => e.type === 'file_snapshot'));

    g.a.read.length = 0;
    const third = input(await g.round(g.a.store, { conversationId: id, turn: 2, seq: second.seq, answer: said('<tool_call>{"name": "ls", "arguments": {"path": "."}}</tool_call>') }));
    assert.equal(g.a.read, [], 'nothing at all was read again: no entry followed the park');
    // The model turn the third round appended leaves the earlier write's snapshots out, as a whole read does.
    const kept = keptHistory(g.a.store, PRINCIPAL, id);
    assert.equal(kept, await taskHistory(g.b.store, id, PRINCIPAL));
    assert.not.ok(kept?.entries.some((e) => e.type === 'file_snapshot'));

    const last = await g.round(g.a.store, { conversationId: id, turn: 3, seq: third.seq, answer: said('Done.') });
    assert.is(last.kind, 'done');
    assert.is(keptHistory(g.a.store, PRINCIPAL, id), undefined, 'a finished run keeps nothing');
  } finally {
    await g.close();
  }
});

test('a round after another node ran the conversation meanwhile reads it whole, and goes on from where that node left it', async () => {
  const g = await ground();
  try {
    const first = input(await g.round(g.a.store, null));
    const id = first.conversationId;
    // Node b takes turn 1 (a write); node a still keeps its history from the first park.
    const second = input(await g.round(g.b.store, { conversationId: id, turn: 1, seq: first.seq, answer: said(WRITE) }));
    assert.ok(keptHistory(g.a.store, PRINCIPAL, id) !== undefined);
    g.a.read.length = 0;
    const third = input(await g.round(g.a.store, { conversationId: id, turn: 2, seq: second.seq, answer: said('<tool_call>{"name": "ls", "arguments": {"path": "."}}</tool_call>') }));
    assert.is(third.turn, 3);
    assert.ok(g.a.read.some((e) => e.seq === 2), 'the model turn node b appended was read');
    assert.equal(keptHistory(g.a.store, PRINCIPAL, id), await taskHistory(g.b.store, id, PRINCIPAL));
    const types = ((await g.b.store.entries(id, PRINCIPAL)) ?? []).map((e) => e.type);
    assert.equal(types, ['user', 'model', 'tool_call', 'file_snapshot', 'file_snapshot', 'tool_result', 'model', 'tool_call', 'tool_result']);
  } finally {
    await g.close();
  }
});

test('a round history leaves out the snapshots before its last model turn, and counts their bytes out', () => {
  const entry = (seq: number, type: Entry['type'], payload: unknown): Entry => ({ seq, conversationId: 'c', time: 0, type, payload });
  const bytes = (e: Entry) => Buffer.byteLength(JSON.stringify(e.payload));
  const start = [entry(1, 'user', { text: 'u' }), entry(2, 'model', { text: '' }), entry(3, 'file_snapshot', { before: 'x'.repeat(50) })];
  const history = new RoundHistory({ entries: start, payloadSizes: start.map(bytes), bytes: start.reduce((n, e) => n + bytes(e), 0) });
  assert.equal(history.loaded().entries.map((e) => e.seq), [1, 2, 3], 'a snapshot after the last model turn stays');
  const model = entry(4, 'model', { text: 'next' });
  history.append(model);
  const loaded = history.loaded();
  assert.equal(loaded.entries.map((e) => e.seq), [1, 2, 4]);
  assert.is(loaded.bytes, bytes(start[0] as Entry) + bytes(start[1] as Entry) + bytes(model));
  assert.equal(loaded.payloadSizes, [bytes(start[0] as Entry), bytes(start[1] as Entry), bytes(model)]);
});

test('a round history counts a loaded entry by the size the store recorded, and measures only the entries it appends', () => {
  const entry = (seq: number, type: Entry['type'], payload: unknown): Entry => ({ seq, conversationId: 'c', time: 0, type, payload });
  // Sizes no serialisation gives: the loaded entries' bytes must come from them, not from their payloads.
  const history = new RoundHistory({ entries: [entry(1, 'user', 'u'), entry(2, 'model', 'm'), entry(3, 'file_snapshot', 's')], payloadSizes: [1000, 2000, 4000], bytes: 7000 });
  assert.equal(history.loaded(), { entries: [entry(1, 'user', 'u'), entry(2, 'model', 'm'), entry(3, 'file_snapshot', 's')], payloadSizes: [1000, 2000, 4000], bytes: 7000 });
  history.append(entry(4, 'model', 'é'));
  const loaded = history.loaded();
  assert.equal(loaded.payloadSizes, [1000, 2000, 4], 'the snapshot before the new model turn is out; the appended entry is its UTF-8 JSON bytes');
  assert.is(loaded.bytes, 3004);
});

test.run();
