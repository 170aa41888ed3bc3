// A model's tool-call ids are its own text: it may repeat one within a turn or across turns (a malicious or
// prompt-injected model, a compatible server that numbers each turn's calls from 1). The transcript, the resume
// and a parked task's answers all pair a result or an answer with its call by id, so a repeated id let one
// call take another's: the person's yes to one question ran the call they declined. The task core makes each
// call's id unique in its conversation as the turn comes in (task-core.ts `uniqueCallIds`).

import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
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
import { resumeTask, stepTask, type TaskAction, type TaskStep } from '../../src/task/task-core.ts';
import type { Entry } from '../../src/store/store.ts';
import { startScriptedServer, type ScriptStep } from '../model/fixtures/scripted-server.ts';
import { pollUntil } from '../hang-guard.ts';
import { fakeOwnership } from '../store/contract.ts';
import { removeHome, tempHome } from '../store/helpers.ts';

const logger = createLogger('error', { write: () => true });
const PRINCIPAL = 'token:alice';
const REMOTE = { local: false, forbidWrites: false, canConfirm: true };
const NO_SCHEDULER = {} as Scheduler;
const bashCall = (id: string, command: string) => ({ id, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command }) } });
const turnOf = (calls: unknown[]): ScriptStep => ({ body: { choices: [{ finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: calls } }] } });
const said = (text: string): ScriptStep => ({ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: text } }] } });

test('two calls of one turn with the same id: the person\'s yes to one never runs the other they declined, answered in either order', async () => {
  const home = await tempHome();
  const ws = path.join(home, 'ws');
  await mkdir(ws);
  const model = await startScriptedServer([turnOf([bashCall('dup', 'echo declined >> declined.txt'), bashCall('dup', 'echo allowed >> allowed.txt')]), said('Done.'), said('Done.')]);
  const store: AsyncConversationStore = new SyncStoreAdapter(SqliteConversationStore.open(databasePath(home), { ownership: fakeOwnership('node-a') }));
  try {
    const task: TaskContext = {
      store: () => store, principal: PRINCIPAL, local: false, forbidWrites: false, sessionId: 'modern',
      env: { SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted' },
      supervise: async () => { throw new Error('an asking task is not supervised'); },
    };
    const deps: DetachedStartDeps = { workspace: ws, toolTimeoutMs: 10_000, executeTool: runTool, logger, clock: systemClock };
    const effect: Extract<Effect, { kind: 'runTool' }> = {
      kind: 'runTool', ticket: 1, requestId: 1, tool: 'harness_task', args: { harness: 'super-pi-code', prompt: 'run two commands' }, harness: 'super-pi-code',
      client: { sampling: false, elicitation: false }, rounds: { sample: false, ask: true, resume: null }, task: true,
    };
    const node = new DetachedTasks();
    const created: EffectResult = await node.start(effect, task, deps, NO_SCHEDULER);
    if (created.kind !== 'taskCreated') throw new Error(`no task: ${JSON.stringify(created)}`);
    const id = created.task.taskId;
    const status = async () => (await store.getConversation(id, PRINCIPAL))?.status;
    await pollUntil('the park', async () => ((await status()) === 'input_required' ? true : null), 10_000);
    const input = await parkedInput(store, (await store.taskRecord(id, PRINCIPAL))!, PRINCIPAL, REMOTE);
    if (input?.kind !== 'ask') throw new Error(`not parked at a question: ${JSON.stringify(input)}`);
    const [declined, allowed] = input.pending;
    assert.match(declined!.message, /echo declined/);
    assert.match(allowed!.message, /echo allowed/);
    assert.is.not(declined!.callId, allowed!.callId, 'each question names its own call');
    // The second question answered first (yes), then the first (no): the last answer resumes the task.
    assert.ok(await node.answer(id, [{ key: allowed!.key, person: { allowed: true, refusal: '' } }], true, task, deps));
    assert.ok(await node.answer(id, [{ key: declined!.key, person: { allowed: false, refusal: 'the person answered "decline"' } }], true, task, deps));
    await pollUntil('the end', async () => ((await status()) === 'completed' ? true : null), 10_000);
    assert.is(existsSync(path.join(ws, 'declined.txt')), false, 'the declined call did not run');
    assert.is(await readFile(path.join(ws, 'allowed.txt'), 'utf8'), 'allowed\n', 'the allowed one ran once');
  } finally {
    await store.close();
    await model.close();
    await removeHome(home);
  }
});

/** Drives the pure core: each model turn from `turns` (ids as the model sent them), each tool call answered; at `crashAt` entries the task is resumed from its transcript. */
function drive(turns: string[][], crashAt: number): Entry[] {
  const setup = { conversationId: 'c', harness: 'super-pi-planner' as const, maxTurns: turns.length + 1, local: false, forbidWrites: false, canConfirm: false };
  const entries: Entry[] = [{ seq: 1, conversationId: 'c', time: 0, type: 'user', payload: { text: 'go' } }];
  let step: TaskStep = resumeTask(setup, entries);
  let crashed = false;
  for (let guard = 0; guard < 1000; guard++) {
    let next: Parameters<typeof stepTask>[1] | null = null;
    for (const action of step.actions as TaskAction[]) {
      if (action.a === 'append') entries.push({ seq: entries.length + 1, conversationId: 'c', time: 0, type: action.type, payload: structuredClone(action.payload) });
      if (action.a === 'finish') return entries;
      if (action.a === 'model') {
        const ids = turns[action.turn - 1] ?? [];
        next = { e: 'model', text: ids.length === 0 ? 'done' : '', toolCalls: ids.map((id, i) => ({ id, name: 'read', arguments: { path: `f${action.turn}-${i}` } })), stopReason: ids.length === 0 ? 'end' : 'tool_calls' };
      }
      if (action.a === 'tool') next = { e: 'tool', id: action.call.id, outcome: { text: `read ${String(action.call.arguments.path)}` } };
    }
    if (!crashed && entries.length >= crashAt) {
      crashed = true;
      step = resumeTask(setup, entries);
      continue;
    }
    if (next === null) throw new Error('the core waits for nothing');
    step = stepTask(step.state, next);
  }
  throw new Error('the task never finished');
}

test('property: whatever ids a model sends, every call of the conversation has its own id and exactly one result, read for its own call, across a resume', () => {
  const id = fc.constantFrom('a', 'b', 'a-2', 'call-1', '');
  fc.assert(fc.property(fc.array(fc.array(id, { minLength: 1, maxLength: 4 }), { maxLength: 4 }), fc.nat(40), (turns, crashAt) => {
    const entries = drive(turns, crashAt);
    const calls = entries.filter((e) => e.type === 'model').flatMap((e) => (e.payload as { toolCalls: { id: string; arguments: { path: string } }[] }).toolCalls);
    assert.is(new Set(calls.map((c) => c.id)).size, calls.length, 'ids unique in the conversation');
    assert.is(calls.length, turns.flat().length, 'every call the model made is kept');
    for (const call of calls) {
      const results = entries.filter((e) => e.type === 'tool_result' && (e.payload as { id: string }).id === call.id);
      assert.is(results.length, 1, `one result for ${call.id}`);
      assert.is((results[0]!.payload as { text: string }).text, `read ${call.arguments.path}`, 'its own call\'s result');
    }
  }), { numRuns: 300 });
});

test.run();
