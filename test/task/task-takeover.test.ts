// Taking over a task whose node stopped renewing its lease: one pass finds the lapsed lease of another
// owner, takes the task over under the next epoch and continues it from its transcript to the end; a
// task its claimer kept no setup for is marked interrupted instead; a live lease is left alone. Two
// stores on one SQLite file stand for two nodes; their clock is set by the test, so a lease lapses when
// the test says.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Scheduler } from '../../src/actors/scheduler.ts';
import { createLogger } from '../../src/log/logger.ts';
import { schedulerEntry } from '../../src/server/thread-entries.ts';
import { type AsyncConversationStore, SyncStoreAdapter } from '../../src/store/async-store.ts';
import { databasePath } from '../../src/store/location.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import { type AnswerTarget, answerOf, canContinue, setupOf, storedSetup, TaskTakeover } from '../../src/task/task-takeover.ts';
import { guarded, pollUntil } from '../hang-guard.ts';
import { startScriptedServer } from '../model/fixtures/scripted-server.ts';
import { fakeOwnership } from '../store/contract.ts';
import { ManualClock, removeHome, tempHome } from '../store/helpers.ts';

const LEASE = 1000;
const scheduler = new Scheduler({ threads: 1, log: () => undefined, entry: schedulerEntry('source') });
scheduler.startThread(0);
const lines: string[] = [];
const logger = createLogger('info', { write: (line: string) => { lines.push(line); return true; } });
const alice = { principal: 'token:alice', sessionId: 'session-1', harness: 'super-pi-code' };

test.after(async () => {
  for (const t of scheduler.threads()) {
    t.stop();
    await t.exited;
  }
});

async function twoNodes() {
  const home = await tempHome();
  const clock = new ManualClock();
  const open = (owner: string) => new SyncStoreAdapter(SqliteConversationStore.open(databasePath(home), { ownership: fakeOwnership(owner), now: clock.now, leaseMs: LEASE }));
  const a = open('node-a');
  const b = open('node-b');
  return { a, b, clock, async close() { await a.close(); await b.close(); await removeHome(home); } };
}

function takeover(store: AsyncConversationStore, env: NodeJS.ProcessEnv, answer?: (target: AnswerTarget, line: string) => Promise<void>) {
  return new TaskTakeover({
    store: () => store, leaseMs: LEASE, scheduler, workspace: '/nonexistent', toolTimeoutMs: 1000, env, logger,
    executorFor: () => async () => ({ text: 'unused' }),
    supervise: async (run) => { await run.start(); },
    transcriptChanged: () => undefined,
    ...(answer ? { answer } : {}),
  });
}

test('a pass takes over a task whose lease lapsed and completes it from its transcript under the next epoch', async () => {
  const model = await startScriptedServer([{ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: 'finished on b' } }] } }]);
  const nodes = await twoNodes();
  try {
    const c = await nodes.a.createConversation(alice);
    const lease = await nodes.a.claimTask(c.id, storedSetup({ conversationId: c.id, harness: 'super-pi-code', maxTurns: 4, local: false, forbidWrites: false, canConfirm: true }));
    await nodes.a.append(c.id, 'user', { text: 'hello' }, lease.epoch);
    const onB = takeover(nodes.b, { SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted' });
    await onB.pass();
    assert.equal(onB.running, [], 'a live lease is left alone');
    nodes.clock.tick(LEASE + 1);
    await onB.pass();
    const [run] = onB.running;
    assert.ok(run, 'the lapsed task runs on b');
    assert.is(run.epoch, lease.epoch + 1);
    const outcome = await guarded(run.outcome, 'the taken-over task');
    assert.is(outcome.text, 'finished on b');
    assert.equal(((await nodes.b.entries(c.id, 'token:alice')) ?? []).map((e) => [e.seq, e.type]), [[1, 'user'], [2, 'model'], [3, 'final']]);
    assert.is((await nodes.a.getConversation(c.id, 'token:alice'))?.status, 'completed');
    await rejectsFenced(nodes.a.append(c.id, 'model', { text: 'late' }, lease.epoch));
    assert.ok(lines.some((l) => l.includes('took over a task whose lease lapsed')));
    await onB.stop();
  } finally {
    await nodes.close();
    await model.close();
  }
});

test('a lapsed task its claimer kept no setup for is marked interrupted, with an entry saying how to continue it', async () => {
  const nodes = await twoNodes();
  try {
    const c = await nodes.a.createConversation(alice);
    const lease = await nodes.a.claimTask(c.id, null);
    await nodes.a.append(c.id, 'user', { text: 'hello' }, lease.epoch);
    nodes.clock.tick(LEASE + 1);
    const onB = takeover(nodes.b, {});
    await onB.pass();
    assert.equal(onB.running, []);
    const last = await nodes.b.lastEntry(c.id);
    assert.is(last?.type, 'interrupted');
    assert.match(String((last?.payload as { message: string }).message), `its claimer kept no setup to continue it with. Continue it with conversation_id ${c.id}.`);
    assert.is((await nodes.b.getConversation(c.id, 'token:alice'))?.status, 'interrupted');
    await onB.stop();
  } finally {
    await nodes.close();
  }
});

test('setupOf: the stored setup with the row\'s harness, nobody to ask; a setup no super-pi writes is refused with why', () => {
  const task = { conversationId: 'c1', principal: 'p', harness: 'super-pi-planner', epoch: 3, setup: { maxTurns: 7, local: false, forbidWrites: true } };
  assert.equal(setupOf(task), { conversationId: 'c1', harness: 'super-pi-planner', maxTurns: 7, local: false, forbidWrites: true, canConfirm: false });
  assert.is(setupOf({ ...task, harness: 'rogue' }), 'its harness "rogue" is not one this server runs');
  assert.is(setupOf({ ...task, setup: null }), 'its claimer kept no setup to continue it with');
  assert.is(setupOf({ ...task, setup: { maxTurns: 0, local: false, forbidWrites: true } }), 'the setup its claimer kept is not one super-pi writes');
  assert.is(setupOf({ ...task, setup: { maxTurns: 3, local: 'yes', forbidWrites: true } }), 'the setup its claimer kept is not one super-pi writes');
});

test('a taken-over task whose claimer kept the request it answers sends its answer there: the JSON-RPC response the connection actor would have sent', async () => {
  const model = await startScriptedServer([{ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: 'finished on b' } }] } }]);
  const nodes = await twoNodes();
  try {
    const c = await nodes.a.createConversation(alice);
    const target = { session: '0b6c1d2e-session', principal: 'token:alice', request: 7 };
    const lease = await nodes.a.claimTask(c.id, storedSetup({ conversationId: c.id, harness: 'super-pi-code', maxTurns: 4, local: false, forbidWrites: false, canConfirm: true }, { answers: target }));
    await nodes.a.append(c.id, 'user', { text: 'hello' }, lease.epoch);
    let sent!: (v: [AnswerTarget, string]) => void;
    const answered = new Promise<[AnswerTarget, string]>((r) => (sent = r));
    const onB = takeover(nodes.b, { SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted' }, async (t, line) => sent([t, line]));
    nodes.clock.tick(LEASE + 1);
    await onB.pass();
    const [to, line] = await guarded(answered, 'the taken-over task\'s answer');
    assert.equal(to, target);
    const reply = JSON.parse(line) as { jsonrpc: string; id: number; result: { content: { type: string; text: string }[]; isError?: boolean; structuredContent?: { conversation_id?: string } } };
    assert.is(reply.jsonrpc, '2.0');
    assert.is(reply.id, 7);
    assert.equal(reply.result.content, [{ type: 'text', text: 'finished on b' }]);
    assert.is(reply.result.isError, undefined);
    assert.is(reply.result.structuredContent?.conversation_id, c.id);
    await onB.stop();
  } finally {
    await nodes.close();
    await model.close();
  }
});

test('answerOf: the request a claimer kept, or null for a setup without one or with one no super-pi writes', () => {
  const task = { conversationId: 'c1', principal: 'p', harness: 'super-pi-code', epoch: 3, setup: { maxTurns: 7, local: false, forbidWrites: true, answers: { session: 's', principal: 'local', request: 'r-1' } } };
  assert.equal(answerOf(task), { session: 's', principal: 'local', request: 'r-1' });
  assert.is(answerOf({ ...task, setup: { maxTurns: 7, local: false, forbidWrites: true } }), null, 'kept by a super-pi from before');
  assert.is(answerOf({ ...task, setup: null }), null);
  assert.is(answerOf({ ...task, setup: { ...task.setup, answers: { session: 's', principal: 'local', request: 1.5 } } }), null);
  assert.is(answerOf({ ...task, setup: { ...task.setup, answers: { session: '', principal: 'local', request: 1 } } }), null);
  assert.equal(setupOf(task), { conversationId: 'c1', harness: 'super-pi-code', maxTurns: 7, local: false, forbidWrites: true, canConfirm: false }, 'the rest of the setup reads as before');
});

test('a pass without a store is a no-op and creates none; once the store exists, the next pass takes over from it', async () => {
  const model = await startScriptedServer([{ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: 'finished later' } }] } }]);
  const nodes = await twoNodes();
  try {
    const c = await nodes.a.createConversation(alice);
    const lease = await nodes.a.claimTask(c.id, storedSetup({ conversationId: c.id, harness: 'super-pi-code', maxTurns: 4, local: false, forbidWrites: false, canConfirm: true }));
    await nodes.a.append(c.id, 'user', { text: 'hello' }, lease.epoch);
    nodes.clock.tick(LEASE + 1);
    let store: AsyncConversationStore | null = null;
    let asked = 0;
    const onB = new TaskTakeover({
      store: () => (asked++, store), leaseMs: LEASE, scheduler, workspace: '/nonexistent', toolTimeoutMs: 1000, logger,
      env: { SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted' },
      executorFor: () => async () => ({ text: 'unused' }), supervise: async (run) => { await run.start(); }, transcriptChanged: () => undefined,
    });
    await onB.pass();
    assert.is(asked, 1, 'the pass asked for the store');
    assert.equal(onB.running, [], 'and, with none, did nothing');
    assert.is((await nodes.a.getConversation(c.id, 'token:alice'))?.status, 'running');
    store = nodes.b;
    await onB.pass();
    const [run] = onB.running;
    assert.ok(run, 'taken over once the store exists');
    assert.is((await guarded(run.outcome, 'the taken-over task')).text, 'finished later');
    await onB.stop();
    await onB.pass();
    assert.is(asked, 2, 'a stopped takeover does not look again');
  } finally {
    await nodes.close();
    await model.close();
  }
});

test('start runs a first pass soon (FIRST_TAKEOVER_PASS_DELAY_MS): a task whose process died (released at open) is taken over without waiting a lease', async () => {
  const model = await startScriptedServer([{ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: 'continued at once' } }] } }]);
  const home = await tempHome();
  const clock = new ManualClock();
  const env = { SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted' };
  // A lease no pass would see lapse during the test: only the open's release lets the task be taken.
  const leaseMs = 3_600_000;
  const open = (owner: string, gone = new Set<string>()) => new SyncStoreAdapter(SqliteConversationStore.open(databasePath(home), {
    ownership: fakeOwnership(owner, gone), now: clock.now, leaseMs, continuesOrphan: (task) => canContinue(task, env, '/nonexistent'),
  }));
  const a = open('process-a');
  let b: AsyncConversationStore | null = null;
  try {
    const c = await a.createConversation(alice);
    const lease = await a.claimTask(c.id, storedSetup({ conversationId: c.id, harness: 'super-pi-code', maxTurns: 4, local: false, forbidWrites: false, canConfirm: true }, { workspace: '/nonexistent' }));
    await a.append(c.id, 'user', { text: 'hello' }, lease.epoch);
    await a.close();
    b = open('process-b', new Set(['process-a']));
    const onB = new TaskTakeover({
      store: () => b, leaseMs, scheduler, workspace: '/nonexistent', toolTimeoutMs: 1000, logger, env,
      executorFor: () => async () => ({ text: 'unused' }), supervise: async (run) => { await run.start(); }, transcriptChanged: () => undefined,
    });
    const store = b;
    onB.start();
    await pollUntil('the task completed by the first pass', async () => ((await store.getConversation(c.id, 'token:alice'))?.status === 'completed' ? true : null), 30_000, 20);
    await rejectsFenced(store.append(c.id, 'model', { text: 'late' }, lease.epoch));
    assert.is(model.requests.length, 1);
    assert.equal(((await b.entries(c.id, 'token:alice')) ?? []).map((e) => e.type), ['user', 'model', 'final']);
    assert.is((await b.getConversation(c.id, 'token:alice'))?.status, 'completed');
    await onB.stop();
  } finally {
    await b?.close();
    await removeHome(home);
    await model.close();
  }
});

test('canContinue: a setup super-pi wrote naming this workspace, and a server model configured; else no', () => {
  const task = { conversationId: 'c1', principal: 'p', harness: 'super-pi-code', epoch: 3, setup: { maxTurns: 7, local: false, forbidWrites: true, workspace: '/srv/a' } };
  const env = { SUPERPI_MODEL_URL: 'http://127.0.0.1:9/v1', SUPERPI_MODEL: 'm' };
  assert.ok(canContinue(task, env, '/srv/a'));
  assert.not.ok(canContinue(task, {}, '/srv/a'), 'no server model: the task sampled its client, which is gone');
  assert.not.ok(canContinue(task, env, '/srv/b'), 'another project\'s task (or a root its session chose)');
  assert.not.ok(canContinue({ ...task, setup: { maxTurns: 7, local: false, forbidWrites: true } }, env, '/srv/a'), 'kept before setups named a workspace: where it ran is unknown');
  assert.not.ok(canContinue({ ...task, setup: null }, env, '/srv/a'));
  assert.not.ok(canContinue({ ...task, harness: 'rogue' }, env, '/srv/a'));
});

test('with sameWorkspaceOnly, a pass leaves a lapsed task of another workspace (or of none named) to a process of its own', async () => {
  const nodes = await twoNodes();
  try {
    const setup = (id: string) => ({ conversationId: id, harness: 'super-pi-code' as const, maxTurns: 4, local: false, forbidWrites: false, canConfirm: true });
    const elsewhere = await nodes.a.createConversation(alice);
    await nodes.a.claimTask(elsewhere.id, storedSetup(setup(elsewhere.id), { workspace: '/srv/other-project' }));
    const unnamed = await nodes.a.createConversation(alice);
    await nodes.a.claimTask(unnamed.id, storedSetup(setup(unnamed.id)));
    nodes.clock.tick(LEASE + 1);
    const onB = new TaskTakeover({
      store: () => nodes.b, leaseMs: LEASE, scheduler, workspace: '/nonexistent', sameWorkspaceOnly: true, toolTimeoutMs: 1000, logger, env: {},
      executorFor: () => async () => ({ text: 'unused' }), supervise: async (run) => { await run.start(); }, transcriptChanged: () => undefined,
    });
    await onB.pass();
    assert.equal(onB.running, []);
    for (const c of [elsewhere, unnamed]) {
      assert.is((await nodes.b.getConversation(c.id, 'token:alice'))?.status, 'running', 'not taken, not interrupted');
      assert.is(await nodes.b.lastEntry(c.id), null);
    }
    assert.is((await nodes.b.expiredTasks(10)).length, 2, 'still there for a process of their workspace');
    await onB.stop();
  } finally {
    await nodes.close();
  }
});

test('a pass that keeps failing the same way (a store this version cannot open) says so once, and again when the error changes', async () => {
  let error = 'schema_too_new';
  const onB = new TaskTakeover({
    store: () => { throw new Error(error); }, leaseMs: LEASE, scheduler, workspace: '/nonexistent', toolTimeoutMs: 1000, logger, env: {},
    executorFor: () => async () => ({ text: 'unused' }), supervise: async (run) => { await run.start(); }, transcriptChanged: () => undefined,
  });
  const said = () => lines.filter((l) => l.includes('looking for tasks to take over failed')).length;
  const before = said();
  await onB.pass();
  await onB.pass();
  assert.is(said() - before, 1, 'once for two passes');
  error = 'disk I/O error';
  await onB.pass();
  assert.is(said() - before, 2, 'a new error is said');
  await onB.stop();
});

async function rejectsFenced(p: Promise<unknown>): Promise<void> {
  const err = await p.then(() => null, (e: unknown) => e);
  assert.is((err as { code?: string } | null)?.code, 'fenced');
}

test.run();
