// The timer a node sets when a Tasks-extension task parks there ends that park's wait, and no later one. On
// two nodes (two stores of one SQLite file) behind a load balancer, a client's answer may resume the task on
// the other node, which parks it again at its next turn; the first node's timer, when it fires, must leave
// that newer park alone — it had waited only since its own park, not TASK_INPUT_WAIT_MS. Node A's timers run
// on a fake clock, so its wait ends exactly when the test says; node B's wait is an hour.

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
import { FakeClock } from '../../src/time/fake-clock.ts';
import { type Clock, systemClock } from '../../src/time/clock.ts';
import { runTool } from '../../src/tools/tool-runner.ts';
import { DetachedTasks, type DetachedStartDeps } from '../../src/task/detached-tasks.ts';
import type { TaskContext } from '../../src/task/task-context.ts';
import { type ParkedInput, parkedInput } from '../../src/task/task-input.ts';
import { pollUntil } from '../hang-guard.ts';
import { fakeOwnership } from '../store/contract.ts';
import { removeHome, tempHome } from '../store/helpers.ts';

const PRINCIPAL = 'token:alice';
const READER = { local: false, forbidWrites: false, canConfirm: false };
const WAIT_MS = 600_000;
/** The asking path never schedules an actor: a round runs where it is started. */
const NO_SCHEDULER = {} as Scheduler;
const sampled = (text: string) => ({ role: 'assistant', model: 'client', stopReason: 'endTurn', content: { type: 'text', text } });

test('a node\'s wait timer, firing after the task was answered on another node and parked there again, leaves the newer park waiting', async () => {
  const home = await tempHome();
  const ws = path.join(home, 'ws');
  await mkdir(ws);
  await writeFile(path.join(ws, 'notes.txt'), 'the password is aubergine\n');
  const open = (owner: string) => new SyncStoreAdapter(SqliteConversationStore.open(databasePath(home), { ownership: fakeOwnership(owner) }));
  const a = open('node-a');
  const b = open('node-b');
  const logged: string[] = [];
  const logger = createLogger('debug', { write: (line: string) => { logged.push(line); return true; } });
  const deps = (store: AsyncConversationStore, clock: Clock): DetachedStartDeps & { task: TaskContext } => ({
    task: { store: () => store, principal: PRINCIPAL, local: false, forbidWrites: false, sessionId: 'modern', env: {}, supervise: async () => { throw new Error('not supervised'); } },
    workspace: ws, toolTimeoutMs: 10_000, executeTool: runTool, logger, clock,
  });
  const clockA = new FakeClock(Date.now());
  const nodeA = new DetachedTasks({ inputWaitMs: WAIT_MS });
  const nodeB = new DetachedTasks({ inputWaitMs: 3_600_000 });
  const depsA = deps(a, clockA);
  const depsB = deps(b, systemClock);
  const place = async (): Promise<Extract<ParkedInput, { kind: 'turn' }> | null> => {
    const record = await a.taskRecord(id, PRINCIPAL);
    if (record?.conversation.status !== 'input_required') return null;
    const input = await parkedInput(a, record, PRINCIPAL, READER);
    return input?.kind === 'turn' ? input : null;
  };
  let id = '';
  try {
    const effect: Extract<Effect, { kind: 'runTool' }> = {
      kind: 'runTool', ticket: 1, requestId: 1, tool: 'harness_task', args: { harness: 'super-pi-code', prompt: 'what does notes.txt say?' }, harness: 'super-pi-code',
      client: { sampling: false, elicitation: false }, rounds: { sample: true, ask: false, resume: null }, task: true,
    };
    const created: EffectResult = await nodeA.start(effect, depsA.task, depsA, NO_SCHEDULER);
    if (created.kind !== 'taskCreated') throw new Error(`no task: ${JSON.stringify(created)}`);
    id = created.task.taskId;
    const turn1 = await pollUntil('turn 1 parked on node A', place, 10_000);
    assert.is(turn1.turn, 1);

    // The client's answer reaches node B, which runs the read and parks the task at turn 2.
    const read = sampled('<tool_call>{"name": "read", "arguments": {"path": "notes.txt"}}</tool_call>');
    assert.ok(await nodeB.answer(id, [{ key: turn1.key, sampled: read }], false, depsB.task, depsB));
    const turn2 = await pollUntil('turn 2 parked on node B', async () => ((await place())?.turn === 2 ? place() : null), 10_000);

    // Node A's timer for turn 1 fires: turn 2 has waited a moment, not WAIT_MS.
    clockA.advance(WAIT_MS);
    const outcome = await pollUntil('node A\'s timer to have acted', async () => {
      if (logged.some((l) => l.includes('a parked task\'s wait timer was for an earlier park'))) return 'left alone';
      const status = (await a.getConversation(id, PRINCIPAL))?.status;
      return status === 'input_required' ? null : `ended (${status})`;
    }, 10_000);
    assert.is(outcome, 'left alone');
    assert.equal(await place(), turn2, 'the task still waits at turn 2, for the same request');

    // Its client answers turn 2 (on node A this time): the task completes.
    assert.ok(await nodeA.answer(id, [{ key: turn2.key, sampled: sampled('It says aubergine.') }], false, depsA.task, depsA));
    await pollUntil('completed', async () => ((await a.getConversation(id, PRINCIPAL))?.status === 'completed' ? true : null), 10_000);
  } finally {
    await a.close();
    await b.close();
    await removeHome(home);
  }
});

test.run();
