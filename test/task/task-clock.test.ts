// A harness task's waits on the clock it is given: a tool call inside the task past its deadline is
// stopped and the model told so, one that finishes before is not; the task's wall time ends it.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Scheduler } from '../../src/actors/scheduler.ts';
import { schedulerEntry } from '../../src/server/thread-entries.ts';
import type { ModelProvider } from '../../src/model/types.ts';
import type { ToolContext, ToolExecutor, ToolOutcome } from '../../src/tools/contract.ts';
import { createLogger } from '../../src/log/logger.ts';
import { TaskRun } from '../../src/task/task-run.ts';
import { SyncStoreAdapter } from '../../src/store/async-store.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import { FakeClock } from '../../src/time/fake-clock.ts';
import { guarded } from '../hang-guard.ts';

const TOOL_TIMEOUT_MS = 1000;
const WALL_MS = 60_000;

const scheduler = new Scheduler({ threads: 1, log: () => undefined, entry: schedulerEntry('source') });
scheduler.startThread(0);
const logger = createLogger('error', { write: () => true });
/** Lists the workspace first, then answers once it has the listing. */
const toolThenAnswer: ModelProvider = {
  name: 'scripted',
  complete: async (req) => req.messages.some((m) => m.role === 'tool')
    ? { text: 'done', toolCalls: [], stopReason: 'end' }
    : { text: '', toolCalls: [{ id: 'call-1', name: 'ls', arguments: { path: '.' } }], stopReason: 'tool_calls' },
};

/** A tool body that runs until the test finishes it, or until its signal aborts it. */
function heldTool() {
  let started!: (ctx: ToolContext) => void;
  const running = new Promise<ToolContext>((r) => (started = r));
  let finish: (outcome: ToolOutcome) => void = () => undefined;
  const executeTool: ToolExecutor = (_tool, _args, _harness, ctx) => new Promise((resolve, reject) => {
    finish = resolve;
    ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
    started(ctx);
  });
  return { executeTool, running, finish: (outcome: ToolOutcome) => finish(outcome) };
}

async function newTask(clock: FakeClock, executeTool: ToolExecutor, toolTimeoutMs = TOOL_TIMEOUT_MS) {
  const store = new SyncStoreAdapter(SqliteConversationStore.open(':memory:'));
  const { id } = await store.createConversation({ principal: 'local', sessionId: 'session-1', harness: 'super-pi-code' });
  const lease = await store.claimTask(id, {});
  await store.append(id, 'user', { text: 'hello' }, lease.epoch);
  const run = new TaskRun({
    setup: { conversationId: id, harness: 'super-pi-code', maxTurns: 5, local: true, forbidWrites: false, canConfirm: false },
    principal: 'local', store, lease, scheduler, provider: toolThenAnswer, workspace: '/nonexistent',
    executeTool, toolTimeoutMs, wallMs: WALL_MS, logger, clock,
    onProgress: () => undefined, onAppend: () => undefined, confirm: async () => false,
  });
  const toolResult = async () => JSON.stringify(((await store.entries(id, 'local')) ?? []).find((e) => e.type === 'tool_result')?.payload);
  return { run, store, toolResult };
}

test.after(async () => {
  for (const t of scheduler.threads()) {
    t.stop();
    await t.exited;
  }
});

test('a tool call in a task past its deadline on the task clock is stopped, and the model is told why', async () => {
  const clock = new FakeClock();
  const tool = heldTool();
  const { run, store, toolResult } = await newTask(clock, tool.executeTool);
  await run.start();
  const ctx = await guarded(tool.running, 'the tool call');
  clock.advance(TOOL_TIMEOUT_MS - 1);
  assert.is(ctx.signal.aborted, false);
  clock.advance(1);
  assert.is(ctx.signal.aborted, true);
  assert.is((await guarded(run.outcome, 'the task')).text, 'done');
  assert.match(await toolResult(), 'Stopped: the tool call passed its deadline of 1 s');
  await store.close();
});

test('a tool call in a task that finishes before its deadline is answered with its result', async () => {
  const clock = new FakeClock();
  const tool = heldTool();
  const { run, store, toolResult } = await newTask(clock, tool.executeTool);
  await run.start();
  const ctx = await guarded(tool.running, 'the tool call');
  clock.advance(TOOL_TIMEOUT_MS - 1);
  tool.finish({ text: 'a.txt' });
  assert.is((await guarded(run.outcome, 'the task')).text, 'done');
  clock.advance(TOOL_TIMEOUT_MS);
  assert.is(ctx.signal.aborted, false);
  assert.match(await toolResult(), 'a.txt');
  await store.close();
});

test('a task past its wall time on the task clock is stopped and answered so', async () => {
  const clock = new FakeClock();
  // A tool call that never ends, with a deadline past the wall time: only the wall time can end the task.
  const tool = heldTool();
  const { run, store } = await newTask(clock, tool.executeTool, 10 * WALL_MS);
  await run.start();
  await guarded(tool.running, 'the tool call');
  clock.advance(WALL_MS - 1);
  await new Promise((r) => setImmediate(r));
  assert.is(run.finished, false);
  clock.advance(1);
  const outcome = await guarded(run.outcome, 'the task past its wall time');
  assert.is(outcome.isError, true);
  assert.match(outcome.text, 'wall time of 60 s');
  await store.close();
});

test.run();
