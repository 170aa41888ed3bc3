// A parked Tasks-extension task holds no slot of its principal's task budget (it runs nowhere while it waits),
// but the node that parked it keeps its wait (a timer, in a Map by task id) for TASK_INPUT_WAIT_MS. A task on
// the client's model parks at its first turn without asking any model of the server's, so without a bound of
// its own one principal could start tasks as fast as it can send requests and make the node hold a wait for
// each. MAX_PARKED_TASKS_PER_PRINCIPAL bounds them per principal on a node: one more new task is refused with
// a tool error naming it, nothing written; a wait that ended elsewhere (the task cancelled, answered on another
// node and finished there) no longer counts. The waits run on a fake clock: none ends during the test.

import { mkdir } from 'node:fs/promises';
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
import { runTool } from '../../src/tools/tool-runner.ts';
import { cancelStoredTask, DetachedTasks, type DetachedStartDeps } from '../../src/task/detached-tasks.ts';
import type { TaskContext } from '../../src/task/task-context.ts';
import { parkedInput } from '../../src/task/task-input.ts';
import { MAX_PARKED_TASKS_PER_PRINCIPAL } from '../../src/limits.ts';
import { pollUntil } from '../hang-guard.ts';
import { fakeOwnership } from '../store/contract.ts';
import { removeHome, tempHome } from '../store/helpers.ts';

const logger = createLogger('error', { write: () => true });
const NO_SCHEDULER = {} as Scheduler;
const READER = { local: false, forbidWrites: false, canConfirm: false };
const effect: Extract<Effect, { kind: 'runTool' }> = {
  kind: 'runTool', ticket: 1, requestId: 1, tool: 'harness_task', args: { harness: 'super-pi-code', prompt: 'what does notes.txt say?' }, harness: 'super-pi-code',
  client: { sampling: false, elicitation: false }, rounds: { sample: true, ask: false, resume: null }, task: true,
};

test('a principal parks at most MAX_PARKED_TASKS_PER_PRINCIPAL tasks on a node; one more is refused, writing nothing; another principal is not; a wait that ended elsewhere frees its place', async () => {
  const home = await tempHome();
  const ws = path.join(home, 'ws');
  await mkdir(ws);
  const open = (owner: string) => new SyncStoreAdapter(SqliteConversationStore.open(databasePath(home), { ownership: fakeOwnership(owner) }));
  const a = open('node-a');
  const b = open('node-b');
  const clock = new FakeClock(Date.now());
  const deps = (store: AsyncConversationStore, principal: string): DetachedStartDeps & { task: TaskContext } => ({
    task: { store: () => store, principal, local: false, forbidWrites: false, sessionId: 'modern', env: {}, supervise: async () => { throw new Error('not supervised'); } },
    workspace: ws, toolTimeoutMs: 10_000, executeTool: runTool, logger, clock,
  });
  const nodeA = new DetachedTasks();
  const nodeB = new DetachedTasks();
  const alice = deps(a, 'token:alice');
  const start = (d: DetachedStartDeps & { task: TaskContext }): Promise<EffectResult> => nodeA.start(effect, d.task, d, NO_SCHEDULER);
  const parked = (id: string, principal = 'token:alice') => pollUntil(`task ${id} parked`, async () => ((await a.getConversation(id, principal))?.status === 'input_required' ? true : null), 10_000);
  const count = async (principal: string) => (await a.listConversations(principal, { limit: 200 })).items.length;
  try {
    const ids: string[] = [];
    for (let i = 0; i < MAX_PARKED_TASKS_PER_PRINCIPAL; i++) {
      const created = await start(alice);
      if (created.kind !== 'taskCreated') throw new Error(`task ${i + 1} not created: ${JSON.stringify(created)}`);
      ids.push(created.task.taskId);
      await parked(created.task.taskId);
    }
    const refused = await start(alice);
    assert.is(refused.kind, 'toolDone', 'one more is not a task');
    const outcome = refused.kind === 'toolDone' ? refused.outcome : null;
    assert.is(outcome?.isError, true);
    assert.match(outcome?.text ?? '', `MAX_PARKED_TASKS_PER_PRINCIPAL (${MAX_PARKED_TASKS_PER_PRINCIPAL})`);
    assert.is(await count('token:alice'), MAX_PARKED_TASKS_PER_PRINCIPAL, 'the refused start wrote nothing');

    const bob = await start(deps(a, 'token:bob'));
    assert.is(bob.kind, 'taskCreated', 'another principal\'s tasks are counted apart');

    // One of alice's tasks is cancelled (from node B's store): its place on node A is free again.
    assert.is(await cancelStoredTask(b, 'token:alice', ids[0] as string, nodeB), 'fenced');
    const again = await start(alice);
    assert.is(again.kind, 'taskCreated', 'a cancelled task no longer counts');
    if (again.kind === 'taskCreated') await parked(again.task.taskId);
    assert.is((await start(alice)).kind, 'toolDone', 'full again');

    // Another: answered on node B with its last answer, it completes there.
    const id = ids[1] as string;
    const record = (await b.taskRecord(id, 'token:alice'))!;
    const turn = (await parkedInput(b, record, 'token:alice', READER))!;
    const onB = deps(b, 'token:alice');
    assert.ok(await nodeB.answer(id, [{ key: turn.kind === 'turn' ? turn.key : '', sampled: { role: 'assistant', model: 'client', stopReason: 'endTurn', content: { type: 'text', text: 'Done.' } } }], false, onB.task, onB));
    await pollUntil('completed on node B', async () => ((await b.getConversation(id, 'token:alice'))?.status === 'completed' ? true : null), 10_000);
    assert.is((await start(alice)).kind, 'taskCreated', 'a task that finished elsewhere no longer counts');
  } finally {
    await a.close();
    await b.close();
    await removeHome(home);
  }
});

test.run();
