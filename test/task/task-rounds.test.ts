// The rounds of a harness task whose model is its 2026-07-28 client's (task-rounds.ts), on two stores of
// one SQLite file standing for two nodes, with the real tool runner in a temporary workspace: a round stops
// at the next model turn with the conversation parked (no lease, so no takeover), the next round continues
// on the other node from the transcript alone, a write leaves its before/after snapshots for undo, and a
// retry that is not the conversation's next turn (replayed, overtaken, another turn) is refused with nothing
// written.

import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../../src/log/logger.ts';
import type { TaskRounds } from '../../src/mcp/effects.ts';
import { type AsyncConversationStore, SyncStoreAdapter } from '../../src/store/async-store.ts';
import { databasePath } from '../../src/store/location.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import { systemClock } from '../../src/time/clock.ts';
import { runTool } from '../../src/tools/tool-runner.ts';
import type { TaskContext } from '../../src/task/task-context.ts';
import { type RoundOutcome, runTaskRound } from '../../src/task/task-rounds.ts';
import { fakeOwnership } from '../store/contract.ts';
import { removeHome, tempHome } from '../store/helpers.ts';

const logger = createLogger('error', { write: () => true });
const PRINCIPAL = 'token:alice';
const ARGS = { harness: 'super-pi-code', prompt: 'make notes' };
const said = (text: string) => ({ role: 'assistant', model: 'scripted', stopReason: 'endTurn', content: { type: 'text', text } });

async function ground() {
  const home = await tempHome();
  const ws = path.join(home, 'ws');
  await mkdir(ws);
  const open = (owner: string) => new SyncStoreAdapter(SqliteConversationStore.open(databasePath(home), { ownership: fakeOwnership(owner) }));
  const a = open('node-a');
  const b = open('node-b');
  const round = (store: AsyncConversationStore, resume: TaskRounds['resume'], signal = new AbortController().signal, historyMaxBytes?: number): Promise<RoundOutcome> => {
    const context: TaskContext = {
      store: () => store, principal: PRINCIPAL, local: false, forbidWrites: false, sessionId: 'modern', env: {},
      supervise: async () => { throw new Error('a round is not supervised'); },
    };
    const bound = historyMaxBytes === undefined ? {} : { historyMaxBytes };
    return runTaskRound({ context, workspace: ws, toolTimeoutMs: 5000, executeTool: runTool, logger, clock: systemClock, onProgress: () => undefined, signal, ...bound }, ARGS, 'super-pi-code', resume);
  };
  return { a, b, ws, round, async close() { await a.close(); await b.close(); await removeHome(home); } };
}

const input = (out: RoundOutcome) => {
  if (out.kind !== 'input') throw new Error(`expected a model turn, got ${JSON.stringify(out)}`);
  return out;
};
const typesOf = async (store: AsyncConversationStore, id: string) => ((await store.entries(id, PRINCIPAL)) ?? []).map((e) => e.type);

test('a first round parks at turn 1; the next continues on another node, writes with snapshots, and ends at the answer', async () => {
  const g = await ground();
  try {
    const first = input(await g.round(g.a, null));
    assert.is(first.turn, 1);
    assert.match(first.params.systemPrompt ?? '', /## write/);
    assert.is((await g.a.getConversation(first.conversationId, PRINCIPAL))?.status, 'interrupted', 'parked: no lease held while the client thinks');
    assert.equal(await g.b.expiredTasks(10), [], 'so no node takes it over to run it without a model');
    assert.equal(await typesOf(g.a, first.conversationId), ['user']);

    const write = '<tool_call>{"name": "write", "arguments": {"path": "notes.md", "content": "round trip\\n"}}</tool_call>';
    const second = input(await g.round(g.b, { conversationId: first.conversationId, turn: 1, seq: first.seq, answer: said(write) }));
    assert.is(second.turn, 2);
    assert.is(await readFile(path.join(g.ws, 'notes.md'), 'utf8'), 'round trip\n');
    assert.equal(await typesOf(g.b, first.conversationId), ['user', 'model', 'tool_call', 'file_snapshot', 'file_snapshot', 'tool_result']);
    const snapshots = ((await g.b.entries(first.conversationId, PRINCIPAL)) ?? []).filter((e) => e.type === 'file_snapshot').map((e) => e.payload);
    assert.equal(snapshots, [{ id: 'sampled-1', path: 'notes.md', before: null, stage: 'before' }, { id: 'sampled-1', path: 'notes.md', before: null, after: 'round trip\n' }]);

    const last = await g.round(g.a, { conversationId: first.conversationId, turn: 2, seq: second.seq, answer: said('Wrote notes.md.') });
    assert.is(last.kind, 'done');
    if (last.kind !== 'done') return;
    assert.is(last.outcome.text, 'Wrote notes.md.');
    assert.equal(last.outcome.structured, { conversation_id: first.conversationId, harness: 'super-pi-code', status: 'completed', turns: 2, tool_calls: 1, answer: 'Wrote notes.md.' });
    assert.is((await g.a.getConversation(first.conversationId, PRINCIPAL))?.status, 'completed');
  } finally {
    await g.close();
  }
});

test('a retry that is not the conversation\'s next turn is refused and writes nothing', async () => {
  const g = await ground();
  try {
    const first = input(await g.round(g.a, null));
    const id = first.conversationId;
    const wrongTurn = await g.round(g.b, { conversationId: id, turn: 2, seq: first.seq, answer: said('hi') });
    assert.is(wrongTurn.kind, 'stale');
    assert.match(wrongTurn.kind === 'stale' ? wrongTurn.message : '', /does not wait for model turn 2/);
    assert.is((await g.a.getConversation(id, PRINCIPAL))?.status, 'interrupted', 'put back as it was, for the right retry');

    // Another request is continuing the turn (it holds the lease): this one is a replay.
    await g.a.claimTask(id, {});
    const overtaken = await g.round(g.b, { conversationId: id, turn: 1, seq: first.seq, answer: said('hi') });
    assert.match(overtaken.kind === 'stale' ? overtaken.message : '', /being continued by another request/);
    await g.a.setStatus(id, 'interrupted');

    const moved = await g.round(g.b, { conversationId: id, turn: 1, seq: first.seq + 1, answer: said('hi') });
    assert.match(moved.kind === 'stale' ? moved.message : '', /already answered/);
    const missing = await g.round(g.b, { conversationId: 'no-such-conversation', turn: 1, seq: 1, answer: said('hi') });
    assert.match(missing.kind === 'stale' ? missing.message : '', /not found/);
    assert.equal(await typesOf(g.a, id), ['user'], 'no refused retry wrote anything');

    const right = await g.round(g.b, { conversationId: id, turn: 1, seq: first.seq, answer: said('hi') });
    assert.is(right.kind, 'done');
    assert.equal(await typesOf(g.a, id), ['user', 'model', 'final']);
  } finally {
    await g.close();
  }
});

test('a cancelled round ends the task cancelled; an answer without text fails it, saying why', async () => {
  const g = await ground();
  try {
    const first = input(await g.round(g.a, null));
    const cancelled = new AbortController();
    cancelled.abort(new Error('user'));
    const out = await g.round(g.b, { conversationId: first.conversationId, turn: 1, seq: first.seq, answer: said('<tool_call>{"name": "ls", "arguments": {"path": "."}}</tool_call>') }, cancelled.signal);
    assert.is(out.kind, 'done');
    assert.is((await g.a.getConversation(first.conversationId, PRINCIPAL))?.status, 'cancelled');

    const other = input(await g.round(g.a, null));
    const noText = await g.round(g.b, { conversationId: other.conversationId, turn: 1, seq: other.seq, answer: { role: 'assistant', model: 'x', content: { type: 'image', data: 'AAAA', mimeType: 'image/png' } } });
    assert.is(noText.kind, 'done');
    assert.match(noText.kind === 'done' ? noText.outcome.text : '', /image content/);
    assert.is((await g.a.getConversation(other.conversationId, PRINCIPAL))?.status, 'failed');
  } finally {
    await g.close();
  }
});

test('a round whose history is past its bound ends the task failed, naming TASK_HISTORY_MAX_BYTES, the model\'s answer unused', async () => {
  const g = await ground();
  try {
    const first = input(await g.round(g.a, null));
    const next = await g.round(g.b, { conversationId: first.conversationId, turn: 1, seq: first.seq, answer: said('an answer') }, undefined, 10);
    assert.is(next.kind, 'done');
    if (next.kind !== 'done') return;
    assert.ok(next.outcome.isError);
    assert.match(next.outcome.text, /TASK_HISTORY_MAX_BYTES \(10 bytes\).*Start a new conversation/);
    assert.is((await g.a.getConversation(first.conversationId, PRINCIPAL))?.status, 'failed');
    assert.equal(await typesOf(g.a, first.conversationId), ['user', 'error'], 'the answer was not recorded; why the task ended was');
  } finally {
    await g.close();
  }
});

test.run();
