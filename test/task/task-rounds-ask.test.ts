// The person asked from inside a 2026-07-28 harness task (task-rounds.ts), on two stores of one SQLite file
// standing for two nodes, with the real tool runner in a temporary workspace: a round reaching a call under
// `ask` parks the conversation before the call's tool_call entry, the retry carrying the person's answer runs
// the call (yes) or records a refusal the model reads (no) and the task goes on, on either node; a retry
// that is not the conversation's question (replayed, another turn, a model turn's place) is refused with
// nothing written. The same with the server's model taking the turns; the local user is never asked.

import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../../src/log/logger.ts';
import type { TaskRounds } from '../../src/mcp/effects.ts';
import type { ModelProvider, ModelRequest, ModelTurn } from '../../src/model/types.ts';
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
const ARGS = { harness: 'super-pi-code', prompt: 'make a file with bash' };
const said = (text: string) => ({ role: 'assistant', model: 'scripted', stopReason: 'endTurn', content: { type: 'text', text } });
const BASH = '<tool_call>{"name": "bash", "arguments": {"command": "echo asked > out.txt"}}</tool_call>';
const YES = { allowed: true, refusal: '' };
const NO = { allowed: false, refusal: 'the person answered "decline"' };

interface Options { readonly local?: boolean; readonly canAsk?: boolean; readonly model?: ModelProvider }

async function ground() {
  const home = await tempHome();
  const ws = path.join(home, 'ws');
  await mkdir(ws);
  const open = (owner: string) => new SyncStoreAdapter(SqliteConversationStore.open(databasePath(home), { ownership: fakeOwnership(owner) }));
  const a = open('node-a');
  const b = open('node-b');
  const round = (store: AsyncConversationStore, resume: TaskRounds['resume'], options: Options = {}): Promise<RoundOutcome> => {
    const context: TaskContext = {
      store: () => store, principal: PRINCIPAL, local: options.local ?? false, forbidWrites: false, sessionId: 'modern', env: {},
      supervise: async () => { throw new Error('a round is not supervised'); },
    };
    return runTaskRound({
      context, workspace: ws, toolTimeoutMs: 10_000, executeTool: runTool, logger, clock: systemClock, onProgress: () => undefined,
      signal: new AbortController().signal, canAsk: options.canAsk ?? true, ...(options.model ? { model: options.model } : {}),
    }, ARGS, 'super-pi-code', resume);
  };
  return { a, b, ws, round, async close() { await a.close(); await b.close(); await removeHome(home); } };
}

function outcome<K extends RoundOutcome['kind']>(out: RoundOutcome, kind: K): Extract<RoundOutcome, { kind: K }> {
  if (out.kind !== kind) throw new Error(`expected ${kind}, got ${JSON.stringify(out)}`);
  return out as Extract<RoundOutcome, { kind: K }>;
}
const typesOf = async (store: AsyncConversationStore, id: string) => ((await store.entries(id, PRINCIPAL)) ?? []).map((e) => e.type);
const lastText = (params: { messages: { content: unknown }[] }) => JSON.stringify(params.messages.at(-1)?.content);

/** A server model that answers from a script and keeps what it was asked. */
function scripted(turns: ModelTurn[]): ModelProvider & { asked: ModelRequest[] } {
  const asked: ModelRequest[] = [];
  return {
    name: 'scripted', asked,
    complete: async (req) => {
      asked.push(req);
      const next = turns.shift();
      if (!next) throw new Error('the script has no more turns');
      return next;
    },
  };
}

test('a call under ask parks before its tool_call; a yes from another node runs it and the task goes on to its answer', async () => {
  const g = await ground();
  try {
    const turn1 = outcome(await g.round(g.a, null), 'input');
    const ask = outcome(await g.round(g.b, { conversationId: turn1.conversationId, turn: 1, seq: turn1.seq, answer: said(BASH) }), 'ask');
    const id = ask.conversationId;
    assert.is(ask.turn, 1);
    assert.match(ask.message, /super-pi-code task wants to run the command: echo asked > out\.txt/);
    assert.equal(await typesOf(g.a, id), ['user', 'model'], 'no call begun: a resumed core queues it again');
    assert.is((await g.a.getConversation(id, PRINCIPAL))?.status, 'interrupted', 'parked: no lease held while the person decides');
    assert.equal(await g.b.expiredTasks(10), [], 'so no node takes it over');

    const turn2 = outcome(await g.round(g.a, { conversationId: id, turn: 1, seq: ask.seq, person: YES }), 'input');
    assert.is(await readFile(path.join(g.ws, 'out.txt'), 'utf8'), 'asked\n');
    assert.equal(await typesOf(g.a, id), ['user', 'model', 'tool_call', 'tool_result']);
    assert.is(turn2.turn, 2);

    const done = outcome(await g.round(g.b, { conversationId: id, turn: 2, seq: turn2.seq, answer: said('Made out.txt.') }), 'done');
    assert.is(done.outcome.text, 'Made out.txt.');
    assert.is((await g.a.getConversation(id, PRINCIPAL))?.status, 'completed');
  } finally {
    await g.close();
  }
});

test('round trips ask the calls under ask of one model turn one question per round trip, in the turn\'s order (no person_answer entries)', async () => {
  const g = await ground();
  try {
    const two = '<tool_call>{"name": "bash", "arguments": {"command": "echo one > one.txt"}}</tool_call><tool_call>{"name": "bash", "arguments": {"command": "echo two > two.txt"}}</tool_call>';
    const turn1 = outcome(await g.round(g.a, null), 'input');
    const first = outcome(await g.round(g.b, { conversationId: turn1.conversationId, turn: 1, seq: turn1.seq, answer: said(two) }), 'ask');
    assert.match(first.message, /echo one > one\.txt/);
    const second = outcome(await g.round(g.a, { conversationId: first.conversationId, turn: 1, seq: first.seq, person: YES }), 'ask');
    assert.match(second.message, /echo two > two\.txt/, 'the second call is asked after the first ran');
    assert.is(await readFile(path.join(g.ws, 'one.txt'), 'utf8'), 'one\n');
    const turn2 = outcome(await g.round(g.b, { conversationId: first.conversationId, turn: 1, seq: second.seq, person: NO }), 'input');
    assert.match(lastText(turn2.params), /Not run: bash needs the person's confirmation/);
    assert.is(existsSync(path.join(g.ws, 'two.txt')), false);
    assert.equal(await typesOf(g.a, first.conversationId), ['user', 'model', 'tool_call', 'tool_result', 'tool_call', 'tool_result']);
  } finally {
    await g.close();
  }
});

test('a no is recorded as the call\'s refusal, which the model reads at its next turn; nothing runs', async () => {
  const g = await ground();
  try {
    const turn1 = outcome(await g.round(g.a, null), 'input');
    const ask = outcome(await g.round(g.b, { conversationId: turn1.conversationId, turn: 1, seq: turn1.seq, answer: said(BASH) }), 'ask');
    const turn2 = outcome(await g.round(g.a, { conversationId: ask.conversationId, turn: 1, seq: ask.seq, person: NO }), 'input');
    assert.match(lastText(turn2.params), /Not run: bash needs the person's confirmation and the person answered \\"decline\\"/);
    const entries = (await g.a.entries(ask.conversationId, PRINCIPAL)) ?? [];
    assert.equal(entries.map((e) => e.type), ['user', 'model', 'tool_call', 'tool_result']);
    assert.is((entries.at(-1)?.payload as { isError?: unknown } | undefined)?.isError, true);
    assert.is(existsSync(path.join(g.ws, 'out.txt')), false, 'the command never ran');
  } finally {
    await g.close();
  }
});

test('a retry that is not the conversation\'s question is refused and writes nothing', async () => {
  const g = await ground();
  try {
    const turn1 = outcome(await g.round(g.a, null), 'input');
    const ask = outcome(await g.round(g.b, { conversationId: turn1.conversationId, turn: 1, seq: turn1.seq, answer: said(BASH) }), 'ask');
    const id = ask.conversationId;
    const wrongTurn = outcome(await g.round(g.b, { conversationId: id, turn: 2, seq: ask.seq, person: YES }), 'stale');
    assert.match(wrongTurn.message, /does not wait for the person's answer at turn 2/);
    const asModel = outcome(await g.round(g.b, { conversationId: id, turn: 1, seq: ask.seq, answer: said('hi') }), 'stale');
    assert.match(asModel.message, /does not wait for model turn 1/);
    assert.equal(await typesOf(g.a, id), ['user', 'model'], 'nothing written by the refused retries');
    assert.is((await g.a.getConversation(id, PRINCIPAL))?.status, 'interrupted', 'still waiting for the right answer');

    outcome(await g.round(g.a, { conversationId: id, turn: 1, seq: ask.seq, person: YES }), 'input');
    const replayed = outcome(await g.round(g.b, { conversationId: id, turn: 1, seq: ask.seq, person: YES }), 'stale');
    assert.match(replayed.message, /already answered/);
    assert.equal(await typesOf(g.a, id), ['user', 'model', 'tool_call', 'tool_result'], 'the replay ran nothing more');
    // A model turn's answer put in the question's place (the conversation is at turn 2 now).
    const turnAsQuestion = outcome(await g.round(g.b, { conversationId: id, turn: 2, seq: (await g.a.lastEntry(id))!.seq, person: YES }), 'stale');
    assert.match(turnAsQuestion.message, /does not wait for the person's answer at turn 2/);
  } finally {
    await g.close();
  }
});

test('a client that cannot be asked gets the call refused with a tool error the model reads, as before', async () => {
  const g = await ground();
  try {
    const turn1 = outcome(await g.round(g.a, null, { canAsk: false }), 'input');
    assert.not.match(turn1.params.systemPrompt ?? '', /## bash/, 'a call it would be refused is not offered');
    const turn2 = outcome(await g.round(g.b, { conversationId: turn1.conversationId, turn: 1, seq: turn1.seq, answer: said(BASH) }, { canAsk: false }), 'input');
    assert.match(lastText(turn2.params), /cannot be asked/);
  } finally {
    await g.close();
  }
});

test('with the server\'s model: the round runs the turns itself, parks at the question, and the yes resumes it to the end', async () => {
  const g = await ground();
  try {
    const model = scripted([
      { text: '', toolCalls: [{ id: 'call_1', name: 'bash', arguments: { command: 'echo asked > out.txt' } }], stopReason: 'tool_calls' },
      { text: 'Made out.txt.', toolCalls: [], stopReason: 'end' },
    ]);
    const ask = outcome(await g.round(g.a, null, { model }), 'ask');
    assert.is(model.asked.length, 1);
    assert.ok(model.asked[0]!.tools.some((t) => t.name === 'bash'), 'bash is offered: the person can be asked');
    const done = outcome(await g.round(g.b, { conversationId: ask.conversationId, turn: 1, seq: ask.seq, person: YES }, { model }), 'done');
    assert.is(done.outcome.text, 'Made out.txt.');
    assert.is(await readFile(path.join(g.ws, 'out.txt'), 'utf8'), 'asked\n');
    assert.match(JSON.stringify(model.asked[1]!.messages.at(-1)), /tool/);
    assert.equal(await typesOf(g.a, ask.conversationId), ['user', 'model', 'tool_call', 'tool_result', 'model', 'final']);
  } finally {
    await g.close();
  }
});

test('the local user is never asked from inside a task, even by a client that could be asked', async () => {
  const g = await ground();
  try {
    const model = scripted([
      { text: '', toolCalls: [{ id: 'call_1', name: 'bash', arguments: { command: 'echo local > out.txt' } }], stopReason: 'tool_calls' },
      { text: 'Done.', toolCalls: [], stopReason: 'end' },
    ]);
    const done = outcome(await g.round(g.a, null, { model, local: true }), 'done');
    assert.is(done.outcome.text, 'Done.');
    assert.is(await readFile(path.join(g.ws, 'out.txt'), 'utf8'), 'local\n');
  } finally {
    await g.close();
  }
});

test.run();
