// Per-principal task budgets on the fake clock: the concurrency cap and its release however a task
// ends (answered, cancelled, given up after crashes), and the per-minute windows at their exact edges.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../src/time/fake-clock.ts';
import { isBudgetRefusal, PrincipalBudgets, type TaskAllowance, type BudgetRefusal } from '../../src/task/principal-budget.ts';
import { TASK_BUDGET_WINDOW_MS } from '../../src/limits.ts';
import { Scheduler } from '../../src/actors/scheduler.ts';
import { schedulerEntry } from '../../src/server/thread-entries.ts';
import type { ModelProvider } from '../../src/model/types.ts';
import { createLogger } from '../../src/log/logger.ts';
import { TaskRun } from '../../src/task/task-run.ts';
import { SyncStoreAdapter } from '../../src/store/async-store.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import type { ToolProgress } from '../../src/tools/contract.ts';
import { guarded } from '../hang-guard.ts';

const limits = { maxTasks: 2, turnsPerMinute: 3, modelCallsPerMinute: 5 };
const slot = (x: TaskAllowance | BudgetRefusal): TaskAllowance => {
  if (isBudgetRefusal(x)) throw new Error(`refused: ${x.refused}`);
  return x;
};
/** Lets promise callbacks run (the fake clock fires timers synchronously; what they resolve settles after). */
const settle = () => new Promise((r) => setImmediate(r));

const cap = suite('tasks at once');

cap('a principal runs at most maxTasks at once; one more is refused naming --max-tasks-per-principal; another principal is not affected', () => {
  const budgets = new PrincipalBudgets(limits, new FakeClock());
  slot(budgets.open('token:alice'));
  slot(budgets.open('token:alice'));
  const third = budgets.open('token:alice');
  assert.ok(isBudgetRefusal(third));
  assert.match((third as BudgetRefusal).refused, /principal token:alice already run 2 task\(s\) on this node, the most --max-tasks-per-principal allows \(2\)/);
  slot(budgets.open('token:bob'));
  assert.is(budgets.running('token:alice'), 2);
});

cap('a released slot can be taken again, and releasing twice frees one slot only', () => {
  const budgets = new PrincipalBudgets(limits, new FakeClock());
  const a = slot(budgets.open('anonymous'));
  slot(budgets.open('anonymous'));
  a.release();
  a.release();
  assert.is(budgets.running('anonymous'), 1);
  slot(budgets.open('anonymous'));
  assert.ok(isBudgetRefusal(budgets.open('anonymous')), 'the double release did not free a second slot');
  assert.match((budgets.open('anonymous') as BudgetRefusal).refused, /anonymous callers \(who share one budget\)/);
});

cap('a task taken over from another node is counted but never refused', () => {
  const budgets = new PrincipalBudgets(limits, new FakeClock());
  slot(budgets.open('local'));
  slot(budgets.open('local'));
  budgets.adopt('local');
  assert.is(budgets.running('local'), 3);
  assert.ok(isBudgetRefusal(budgets.open('local')));
});

cap('an entry goes once its principal runs nothing and its window is a minute old: the table stays bounded', async () => {
  const clock = new FakeClock();
  const budgets = new PrincipalBudgets(limits, clock);
  const a = slot(budgets.open('token:alice'));
  await a.admitModelCall(new AbortController().signal, () => undefined);
  a.release();
  assert.is(budgets.principals, 1, 'kept while its call still counts: a new task must not get a fresh minute');
  clock.advance(TASK_BUDGET_WINDOW_MS);
  slot(budgets.open('token:bob')).release();
  assert.is(budgets.principals, 0);
});

cap.run();

const window = suite('per-minute windows');

window('model calls: the limit is admitted at once; the next waits, still at 59.999 s, and is admitted at exactly 60 s', async () => {
  const clock = new FakeClock();
  const budgets = new PrincipalBudgets(limits, clock);
  const a = slot(budgets.open('token:alice'));
  const never = new AbortController().signal;
  for (let i = 0; i < limits.modelCallsPerMinute; i++) await a.admitModelCall(never, () => assert.unreachable('no wait within the limit'));
  const waits: string[] = [];
  let admitted = false;
  void a.admitModelCall(never, (m) => waits.push(m)).then(() => { admitted = true; });
  await settle();
  assert.is(admitted, false);
  assert.equal(waits.length, 1);
  assert.match(waits[0] as string, /^waiting for the model budget: .*5 model requests \(--model-calls-per-minute\).*next fits in 60 s/);
  clock.advance(TASK_BUDGET_WINDOW_MS - 1);
  await settle();
  assert.is(admitted, false, 'still waiting 1 ms before the window frees');
  clock.advance(1);
  await settle();
  assert.is(admitted, true);
});

window('the windows are per principal across its tasks: a second task of the same principal shares the spent budget', async () => {
  const clock = new FakeClock();
  const budgets = new PrincipalBudgets(limits, clock);
  const never = new AbortController().signal;
  const a = slot(budgets.open('token:alice'));
  for (let i = 0; i < limits.turnsPerMinute; i++) await a.admitTurn(never, () => undefined);
  const b = slot(budgets.open('token:alice'));
  let waited = false;
  void b.admitTurn(never, () => { waited = true; });
  await settle();
  assert.ok(waited, 'the second task waits for the first task\'s turns to leave the window');
  const bob = slot(budgets.open('token:bob'));
  await bob.admitTurn(never, () => assert.unreachable('bob has his own budget'));
});

window('a wait ends at once when its signal aborts (a cancel, the wall time)', async () => {
  const clock = new FakeClock();
  const budgets = new PrincipalBudgets(limits, clock);
  const a = slot(budgets.open('local'));
  const never = new AbortController().signal;
  for (let i = 0; i < limits.turnsPerMinute; i++) await a.admitTurn(never, () => undefined);
  const stop = new AbortController();
  const waiting = a.admitTurn(stop.signal, () => undefined);
  stop.abort(new Error('cancelled'));
  await waiting.then(() => assert.unreachable('admitted'), (err: Error) => assert.is(err.message, 'cancelled'));
  assert.is(clock.pendingTimers, 0, 'its timer is cleared');
});

window.run();

// ── A real task run (its actor on a scheduler thread) with a budget: the slot is released however it ends.

const runs = suite('a task run releases its slot');
const scheduler = new Scheduler({ threads: 1, log: () => undefined, entry: schedulerEntry('source') });
scheduler.startThread(0);
const logger = createLogger('error', { write: () => true });

/** A model that never answers until aborted: the task sits in a model turn. */
const hanging: ModelProvider = {
  name: 'hanging',
  complete: (req) => new Promise((_, reject) => req.signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true })),
};

async function budgetedRun(budgets: PrincipalBudgets, provider: ModelProvider, progress: ToolProgress[] = []) {
  const store = new SyncStoreAdapter(SqliteConversationStore.open(':memory:'));
  const { id } = await store.createConversation({ principal: 'local', sessionId: 'session-1', harness: 'super-pi-code' });
  const lease = await store.claimTask(id, {});
  await store.append(id, 'user', { text: 'hello' }, lease.epoch);
  const run = new TaskRun({
    setup: { conversationId: id, harness: 'super-pi-code', maxTurns: 5, local: true, forbidWrites: false, canConfirm: false },
    principal: 'local', store, lease, scheduler, provider, workspace: '/nonexistent',
    executeTool: async () => ({ text: 'unused' }), toolTimeoutMs: 1000, logger,
    onProgress: (p) => progress.push(p), onAppend: () => undefined, confirm: async () => false,
    allowance: slot(budgets.open('local')),
  });
  return { run, store };
}

runs.after(async () => {
  for (const t of scheduler.threads()) {
    t.stop();
    await t.exited;
  }
});

runs('a cancelled task frees its slot', async () => {
  const budgets = new PrincipalBudgets({ ...limits, maxTasks: 1 }, new FakeClock());
  const { run, store } = await budgetedRun(budgets, hanging);
  await run.start();
  assert.ok(isBudgetRefusal(budgets.open('local')), 'the one slot is held while it runs');
  run.stop('the task was cancelled by the client');
  assert.is((await guarded(run.outcome, 'the cancelled task')).isError, true);
  assert.is(budgets.running('local'), 0);
  slot(budgets.open('local'));
  await store.close();
});

runs('a task whose actor kept crashing (its supervisor gave up) frees its slot', async () => {
  const budgets = new PrincipalBudgets({ ...limits, maxTasks: 1 }, new FakeClock());
  const { run, store } = await budgetedRun(budgets, hanging);
  const actor = await run.start();
  actor.kill();
  run.gaveUp('its actor kept failing (killed)');
  assert.match((await guarded(run.outcome, 'the given-up task')).text, /interrupted/);
  assert.is(budgets.running('local'), 0);
  await store.close();
});

runs('a task past its principal\'s turn budget waits, reporting "waiting for the model budget", and a stop ends the wait', async () => {
  const clock = new FakeClock();
  const budgets = new PrincipalBudgets({ ...limits, turnsPerMinute: 1 }, clock);
  const spent = slot(budgets.open('local'));
  await spent.admitTurn(new AbortController().signal, () => undefined);
  let asked = 0;
  const counting: ModelProvider = { name: 'counting', complete: async () => { asked++; return { text: 'done', toolCalls: [], stopReason: 'end' }; } };
  const progress: ToolProgress[] = [];
  const { run, store } = await budgetedRun(budgets, counting, progress);
  await run.start();
  await guarded((async () => { while (!progress.some((p) => /waiting for the model budget/.test(p.message ?? ''))) await settle(); })(), 'the waiting progress');
  assert.is(asked, 0, 'the model was not called past the budget');
  run.stop('the task passed its wall time of 900 s');
  assert.match((await guarded(run.outcome, 'the stopped task')).text, /wall time/);
  assert.is(asked, 0);
  await store.close();
});

runs('once the window allows, the waiting task calls the model and finishes', async () => {
  const clock = new FakeClock();
  const budgets = new PrincipalBudgets({ ...limits, turnsPerMinute: 1 }, clock);
  await slot(budgets.open('local')).admitTurn(new AbortController().signal, () => undefined);
  let asked = 0;
  const counting: ModelProvider = { name: 'counting', complete: async () => { asked++; return { text: 'done', toolCalls: [], stopReason: 'end' }; } };
  const progress: ToolProgress[] = [];
  const { run, store } = await budgetedRun(budgets, counting, progress);
  await run.start();
  await guarded((async () => { while (!progress.some((p) => /waiting for the model budget/.test(p.message ?? ''))) await settle(); })(), 'the waiting progress');
  clock.advance(TASK_BUDGET_WINDOW_MS);
  assert.is((await guarded(run.outcome, 'the task after the wait')).text, 'done');
  assert.is(asked, 1);
  await store.close();
});

runs.run();
