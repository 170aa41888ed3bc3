// What one model turn may make a task do is bounded: the calls it asks for are the model's text (here a
// client's sampling answer, which the client writes as it likes), and each would be run, recorded and its
// result kept for every later turn. A turn past MAX_TOOL_CALLS_PER_TURN runs none of them and fails the task,
// naming the limit; a turn of exactly that many runs them all. A call's arguments nested past MAX_JSON_DEPTH
// are not run (the model reads why), so the turn can be recorded. Real SQLite store, real tool runner, the
// client's model answering through the Tasks extension (detached-tasks.ts).

import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Scheduler } from '../../src/actors/scheduler.ts';
import { createLogger } from '../../src/log/logger.ts';
import type { Effect, EffectResult } from '../../src/mcp/effects.ts';
import { type AsyncConversationStore, SyncStoreAdapter } from '../../src/store/async-store.ts';
import { databasePath } from '../../src/store/location.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import { systemClock } from '../../src/time/clock.ts';
import { runTool } from '../../src/tools/tool-runner.ts';
import { DetachedTasks, type DetachedStartDeps } from '../../src/task/detached-tasks.ts';
import type { TaskContext } from '../../src/task/task-context.ts';
import { parkedInput } from '../../src/task/task-input.ts';
import { MAX_RESULT_CHARS, MAX_TOOL_CALLS_PER_TURN, TASK_HISTORY_MAX_BYTES } from '../../src/limits.ts';
import { resumeTask, stepTask, type TaskAction, type TaskStep } from '../../src/task/task-core.ts';
import { pollUntil } from '../hang-guard.ts';
import { fakeOwnership } from '../store/contract.ts';
import { removeHome, tempHome } from '../store/helpers.ts';

const logger = createLogger('error', { write: () => true });
const PRINCIPAL = 'token:alice';
const READER = { local: false, forbidWrites: false, canConfirm: false };
const sampled = (text: string) => ({ role: 'assistant', model: 'client', stopReason: 'endTurn', content: { type: 'text', text } });
const reads = (n: number) => Array.from({ length: n }, () => '<tool_call>{"name": "read", "arguments": {"path": "big.txt"}}</tool_call>').join('\n');

async function runTurn(answer: string): Promise<{ status: string | undefined; message: string; reads: number; results: string[] }> {
  const home = await tempHome();
  const ws = path.join(home, 'ws');
  await mkdir(ws);
  await writeFile(path.join(ws, 'big.txt'), 'x'.repeat(40_000));
  const store: AsyncConversationStore = new SyncStoreAdapter(SqliteConversationStore.open(databasePath(home), { ownership: fakeOwnership('node-a') }));
  try {
    const task: TaskContext = { store: () => store, principal: PRINCIPAL, local: false, forbidWrites: false, sessionId: 'modern', env: {}, supervise: async () => { throw new Error('not supervised'); } };
    const deps: DetachedStartDeps = { workspace: ws, toolTimeoutMs: 10_000, executeTool: runTool, logger, clock: systemClock };
    const effect: Extract<Effect, { kind: 'runTool' }> = {
      kind: 'runTool', ticket: 1, requestId: 1, tool: 'harness_task', args: { harness: 'super-pi-planner', prompt: 'read big.txt' }, harness: 'super-pi-planner',
      client: { sampling: true, elicitation: false }, rounds: { sample: true, ask: false, resume: null }, task: true,
    };
    const node = new DetachedTasks();
    const created: EffectResult = await node.start(effect, task, deps, {} as Scheduler);
    if (created.kind !== 'taskCreated') throw new Error(`no task: ${JSON.stringify(created)}`);
    const id = created.task.taskId;
    const status = async () => (await store.getConversation(id, PRINCIPAL))?.status;
    await pollUntil('the first turn', async () => ((await status()) === 'input_required' ? true : null), 10_000);
    const turn = await parkedInput(store, (await store.taskRecord(id, PRINCIPAL))!, PRINCIPAL, READER);
    if (turn?.kind !== 'turn') throw new Error('not parked at a model turn');
    assert.ok(await node.answer(id, [{ key: turn.key, sampled: sampled(answer) }], false, task, deps));
    // Either the task ends, or it parks at turn 2 (the calls ran): then the client's model says it is done.
    const next = await pollUntil('the turn to be taken', async () => {
      const now = await status();
      if (now === 'failed' || now === 'completed') return now;
      if (now !== 'input_required') return null;
      const at = await parkedInput(store, (await store.taskRecord(id, PRINCIPAL))!, PRINCIPAL, READER);
      return at?.kind === 'turn' && at.turn === 2 ? at : null;
    }, 60_000);
    if (typeof next !== 'string') {
      assert.ok(await node.answer(id, [{ key: next.key, sampled: sampled('Read it.') }], false, task, deps));
      await pollUntil('the end', async () => ((await status()) === 'completed' ? true : null), 10_000);
    }
    const entries = (await store.entries(id, PRINCIPAL))!;
    const error = entries.find((e) => e.type === 'error')?.payload as { message?: string } | undefined;
    const results = entries.filter((e) => e.type === 'tool_result').map((e) => String((e.payload as { text?: unknown }).text));
    return { status: await status(), message: error?.message ?? '', reads: results.length, results };
  } finally {
    await store.close();
    await removeHome(home);
  }
}

test(`a model turn asking for more than MAX_TOOL_CALLS_PER_TURN (${MAX_TOOL_CALLS_PER_TURN}) calls runs none and fails the task, naming the limit`, async () => {
  const over = await runTurn(reads(MAX_TOOL_CALLS_PER_TURN + 1));
  assert.is(over.status, 'failed');
  assert.is(over.reads, 0, 'no call ran');
  assert.match(over.message, `asked for ${MAX_TOOL_CALLS_PER_TURN + 1} tool calls in one turn, more than MAX_TOOL_CALLS_PER_TURN (${MAX_TOOL_CALLS_PER_TURN})`);
});

test('a turn of exactly MAX_TOOL_CALLS_PER_TURN calls runs them all', async () => {
  const at = await runTurn(reads(MAX_TOOL_CALLS_PER_TURN));
  assert.is(at.status, 'completed');
  assert.is(at.reads, MAX_TOOL_CALLS_PER_TURN);
});

test('a call whose arguments nest 200,000 levels deep is not run, and the task goes on: the model reads why (before, the turn could not be recorded and the task stayed running)', async () => {
  const deep = `<tool_call>{"name": "read", "arguments": {"path": "big.txt", "x": ${'['.repeat(200_000)}${']'.repeat(200_000)}}}</tool_call>`;
  const r = await runTurn(deep);
  assert.is(r.status, 'completed');
  assert.is(r.reads, 1);
  assert.match(r.results[0]!, 'nest deeper than MAX_JSON_DEPTH (64) levels');
});

test('a call whose arguments do not match its tool\'s schema is refused as a caller\'s would be, naming the field, and runs nothing', async () => {
  const r = await runTurn('<tool_call>{"name": "read", "arguments": {"path": ["big.txt"]}}</tool_call>');
  assert.is(r.status, 'completed');
  assert.equal(r.results, ['Invalid arguments for tool read: path must be string']);
});

test('a run whose history grows past TASK_HISTORY_MAX_BYTES stops before its next model turn, failed with an error entry naming the limit', () => {
  const setup = { conversationId: 'c', harness: 'super-pi-planner' as const, maxTurns: 200, local: false, forbidWrites: false, canConfirm: false };
  let step: TaskStep = resumeTask(setup, [{ seq: 1, conversationId: 'c', time: 0, type: 'user', payload: { text: 'read everything' } }]);
  const big = 'x'.repeat(MAX_RESULT_CHARS);
  let turns = 0;
  let ran = 0;
  for (;;) {
    const last = step.actions.at(-1) as TaskAction;
    if (last.a === 'finish') break;
    if (last.a === 'model') {
      turns++;
      const calls = Array.from({ length: MAX_TOOL_CALLS_PER_TURN }, (_, i) => ({ id: `t${turns}-${i}`, name: 'read', arguments: { path: 'big.txt' } }));
      step = stepTask(step.state, { e: 'model', text: '', toolCalls: calls, stopReason: 'tool_calls' });
    } else if (last.a === 'tool') {
      ran++;
      step = stepTask(step.state, { e: 'tool', id: last.call.id, outcome: { text: big } });
    } else throw new Error(`unexpected ${last.a}`);
  }
  const finish = step.actions.at(-1) as Extract<TaskAction, { a: 'finish' }>;
  assert.is(finish.status, 'failed');
  assert.match(finish.text, 'grew past TASK_HISTORY_MAX_BYTES');
  assert.ok(step.actions.some((a) => a.a === 'append' && a.type === 'error'), 'an error entry says why');
  const held = Math.ceil(TASK_HISTORY_MAX_BYTES / MAX_RESULT_CHARS);
  assert.ok(ran >= held && ran < held + MAX_TOOL_CALLS_PER_TURN, `stopped at the first turn past the bound (${ran} results)`);
  assert.ok(turns < setup.maxTurns);
});

test.run();
