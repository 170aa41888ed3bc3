// Taking over a task whose node stopped renewing its lease: one pass finds the lapsed lease of another
// owner, takes the task over under the next epoch and continues it from its transcript to the end, in
// the directory it ran in; a task its claimer kept no setup for is marked interrupted instead; a live
// lease is left alone; a task this process cannot continue (another directory, no model here) is left to
// one that can until the patience, then marked interrupted. Two stores on one SQLite file stand for two
// nodes; their clock is set by the test, so a lease lapses when the test says.

import { mkdir, mkdtemp, realpath, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Scheduler } from '../../src/actors/scheduler.ts';
import { createLogger } from '../../src/log/logger.ts';
import { schedulerEntry } from '../../src/server/thread-entries.ts';
import { type AsyncConversationStore, SyncStoreAdapter } from '../../src/store/async-store.ts';
import { databasePath } from '../../src/store/location.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import { MAX_EXPIRED_TASKS } from '../../src/limits.ts';
import { judgeOrphan, placementOf } from '../../src/task/takeover-placement.ts';
import { type AnswerTarget, answerOf, setupOf, storedSetup, TaskTakeover, type TaskTakeoverDeps } from '../../src/task/task-takeover.ts';
import type { ToolContext } from '../../src/tools/contract.ts';
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
/** The taking process's workspace (a real directory: a recorded root is checked on disk), and one outside it. */
let ws = '';
let outside = '';

test.before(async () => {
  const top = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-takeover-')));
  ws = path.join(top, 'ws');
  outside = path.join(top, 'outside');
  await mkdir(path.join(ws, 'packages', 'a'), { recursive: true });
  await mkdir(outside);
});

test.after(async () => {
  for (const t of scheduler.threads()) {
    t.stop();
    await t.exited;
  }
  await rm(path.dirname(ws), { recursive: true, force: true });
});

const codeSetup = (id: string) => ({ conversationId: id, harness: 'super-pi-code' as const, maxTurns: 4, local: false, forbidWrites: false, canConfirm: true });
const scriptedEnv = (url: string) => ({ SUPERPI_MODEL_URL: `${url}/v1`, SUPERPI_MODEL: 'scripted' });

async function twoNodes() {
  const home = await tempHome();
  const clock = new ManualClock();
  const open = (owner: string) => new SyncStoreAdapter(SqliteConversationStore.open(databasePath(home), { ownership: fakeOwnership(owner), now: clock.now, leaseMs: LEASE }));
  const a = open('node-a');
  const b = open('node-b');
  return { a, b, clock, async close() { await a.close(); await b.close(); await removeHome(home); } };
}

function takeover(store: AsyncConversationStore, env: NodeJS.ProcessEnv, answer?: (target: AnswerTarget, line: string) => Promise<void>, more: Partial<TaskTakeoverDeps> = {}) {
  return new TaskTakeover({
    store: () => store, leaseMs: LEASE, scheduler, workspace: ws, toolTimeoutMs: 1000, env, logger,
    executorFor: () => async () => ({ text: 'unused' }),
    supervise: async (run) => { await run.start(); },
    transcriptChanged: () => undefined,
    ...(answer ? { answer } : {}),
    ...more,
  });
}

test('a pass takes over a task whose lease lapsed and completes it from its transcript under the next epoch', async () => {
  const model = await startScriptedServer([{ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: 'finished on b' } }] } }]);
  const nodes = await twoNodes();
  try {
    const c = await nodes.a.createConversation(alice);
    const lease = await nodes.a.claimTask(c.id, storedSetup({ conversationId: c.id, harness: 'super-pi-code', maxTurns: 4, local: false, forbidWrites: false, canConfirm: true }, { workspace: ws }));
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
    const lease = await nodes.a.claimTask(c.id, storedSetup({ conversationId: c.id, harness: 'super-pi-code', maxTurns: 4, local: false, forbidWrites: false, canConfirm: true }, { answers: target, workspace: ws }));
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
    const lease = await nodes.a.claimTask(c.id, storedSetup({ conversationId: c.id, harness: 'super-pi-code', maxTurns: 4, local: false, forbidWrites: false, canConfirm: true }, { workspace: ws }));
    await nodes.a.append(c.id, 'user', { text: 'hello' }, lease.epoch);
    nodes.clock.tick(LEASE + 1);
    let store: AsyncConversationStore | null = null;
    let asked = 0;
    const onB = new TaskTakeover({
      store: () => (asked++, store), leaseMs: LEASE, scheduler, workspace: ws, toolTimeoutMs: 1000, logger,
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
    ownership: fakeOwnership(owner, gone), now: clock.now, leaseMs, judgeOrphan: (task) => judgeOrphan(task, { workspace: ws, below: false, model: true }),
  }));
  const a = open('process-a');
  let b: AsyncConversationStore | null = null;
  try {
    const c = await a.createConversation(alice);
    const lease = await a.claimTask(c.id, storedSetup({ conversationId: c.id, harness: 'super-pi-code', maxTurns: 4, local: false, forbidWrites: false, canConfirm: true }, { workspace: ws }));
    await a.append(c.id, 'user', { text: 'hello' }, lease.epoch);
    await a.close();
    b = open('process-b', new Set(['process-a']));
    const onB = new TaskTakeover({
      store: () => b, leaseMs, scheduler, workspace: ws, toolTimeoutMs: 1000, logger, env,
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

test('placementOf: here only in the directory it ran in, when this process serves it and has a model; elsewhere when another may; nowhere when none can', () => {
  const task = { conversationId: 'c1', harness: 'super-pi-code', setup: { maxTurns: 7, local: false, forbidWrites: true, workspace: '/srv/a' } };
  const site = { workspace: '/srv/a', below: false, model: true };
  assert.equal(placementOf(task, site), { kind: 'here', root: '/srv/a' });
  assert.is(placementOf(task, { ...site, model: false }).kind, 'elsewhere', 'no server model: the task sampled its client, which is gone; a process with one may continue it');
  assert.is(placementOf(task, { ...site, workspace: '/srv/b' }).kind, 'elsewhere', 'another project\'s task (or a root its session chose)');
  const inside = { ...task, setup: { ...task.setup, workspace: '/srv/a/packages/x' } };
  assert.is(placementOf(inside, site).kind, 'elsewhere', 'below the workspace: only a process that follows roots there serves it');
  assert.equal(placementOf(inside, { ...site, below: true }), { kind: 'here', root: '/srv/a/packages/x' });
  assert.is(placementOf({ ...task, setup: { ...task.setup, workspace: '/srv/ab' } }, { ...site, below: true }).kind, 'elsewhere', 'a sibling sharing its prefix is not below it');
  for (const root of ['/srv/a/../etc', 'srv/a', '/srv/a/', '/srv/a/./x', '/srv//a']) {
    assert.is(placementOf({ ...task, setup: { ...task.setup, workspace: root } }, { ...site, below: true }).kind, 'nowhere', `${root}: not a path super-pi records`);
  }
  assert.is(placementOf({ ...task, setup: { maxTurns: 7, local: false, forbidWrites: true } }, site).kind, 'nowhere', 'kept before setups named a workspace: where it ran is unknown');
  assert.is(placementOf({ ...task, setup: null }, site).kind, 'nowhere');
  assert.is(placementOf({ ...task, harness: 'rogue' }, site).kind, 'nowhere');
  assert.equal([judgeOrphan(task, site), judgeOrphan(task, { ...site, model: false }), judgeOrphan({ ...task, setup: null }, site)], ['continue', 'leave', 'interrupt']);
});

/** A takeover whose tool calls report the directory they ran in. */
function reportingTakeover(store: AsyncConversationStore, env: NodeJS.ProcessEnv, more: Partial<TaskTakeoverDeps> = {}) {
  const ranIn: string[] = [];
  const t = takeover(store, env, undefined, {
    executorFor: () => async (_tool, _args, _harness, ctx: ToolContext) => (ranIn.push(ctx.workspace), { text: 'listed' }),
    ...more,
  });
  return { takeover: t, ranIn };
}

const lsThenAnswer = (text: string) => [
  { body: { choices: [{ finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'call-ls', type: 'function', function: { name: 'ls', arguments: '{}' } }] } }] } },
  { body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: text } }] } },
];

test('a node that follows roots continues a task in the root below its workspace that the task ran in, not in its own workspace', async () => {
  const model = await startScriptedServer(lsThenAnswer('listed the package'));
  const nodes = await twoNodes();
  try {
    const c = await nodes.a.createConversation(alice);
    const root = path.join(ws, 'packages', 'a');
    const lease = await nodes.a.claimTask(c.id, storedSetup(codeSetup(c.id), { workspace: root }));
    await nodes.a.append(c.id, 'user', { text: 'list it' }, lease.epoch);
    nodes.clock.tick(LEASE + 1);
    const onB = reportingTakeover(nodes.b, scriptedEnv(model.url), { servesBelow: true });
    await onB.takeover.pass();
    const [run] = onB.takeover.running;
    assert.ok(run, 'taken over');
    assert.is((await guarded(run.outcome, 'the taken-over task')).text, 'listed the package');
    assert.equal(onB.ranIn, [root], 'its tool ran in the root the task ran in');
    await onB.takeover.stop();
  } finally {
    await nodes.close();
    await model.close();
  }
});

test('a recorded root this process does not serve is never run in: outside the workspace, escaping it by a symlink, or missing here; left running, then interrupted past the patience', async () => {
  const escape = path.join(ws, 'escape');
  await symlink(outside, escape);
  const model = await startScriptedServer([]);
  const nodes = await twoNodes();
  try {
    const roots = [outside, escape, path.join(ws, 'packages', 'gone')];
    const ids: string[] = [];
    for (const root of roots) {
      const c = await nodes.a.createConversation(alice);
      await nodes.a.claimTask(c.id, storedSetup(codeSetup(c.id), { workspace: root }));
      ids.push(c.id);
    }
    nodes.clock.tick(LEASE + 1);
    const patienceMs = 60_000;
    const onB = reportingTakeover(nodes.b, scriptedEnv(model.url), { servesBelow: true, patienceMs });
    await onB.takeover.pass();
    assert.equal(onB.takeover.running, []);
    for (const id of ids) {
      assert.is((await nodes.b.getConversation(id, 'token:alice'))?.status, 'running', 'left for a process that serves it');
      assert.is(await nodes.b.lastEntry(id), null);
    }
    nodes.clock.tick(patienceMs);
    await onB.takeover.pass();
    assert.equal(onB.takeover.running, []);
    assert.equal(onB.ranIn, [], 'no tool ran anywhere');
    assert.is(model.requests.length, 0, 'nor was the model asked');
    const messages = await Promise.all(ids.map(async (id) => {
      assert.is((await nodes.b.getConversation(id, 'token:alice'))?.status, 'interrupted');
      return String(((await nodes.b.lastEntry(id))?.payload as { message: string }).message);
    }));
    assert.match(messages[0] ?? '', `it ran in ${outside}, which this process does not serve`);
    assert.match(messages[1] ?? '', `resolves to ${outside}, which this process does not serve`);
    assert.match(messages[2] ?? '', 'it does not exist here (ENOENT)');
    for (const [i, m] of messages.entries()) {
      assert.match(m, `no process that could continue it took it over within ${patienceMs / 1000} s of its lease lapsing`);
      assert.match(m, `Continue it with conversation_id ${ids[i]}.`);
    }
    await onB.takeover.stop();
  } finally {
    await nodes.close();
    await model.close();
    await rm(escape);
  }
});

test('without a server model, a pass leaves a task of its workspace to a process with one until the patience, then marks it interrupted saying why', async () => {
  const nodes = await twoNodes();
  try {
    const c = await nodes.a.createConversation(alice);
    await nodes.a.claimTask(c.id, storedSetup(codeSetup(c.id), { workspace: ws }));
    nodes.clock.tick(LEASE + 1);
    const onB = takeover(nodes.b, {}, undefined, { patienceMs: 60_000 });
    await onB.pass();
    assert.is((await nodes.b.getConversation(c.id, 'token:alice'))?.status, 'running', 'not taken, not interrupted');
    assert.is(await nodes.b.lastEntry(c.id), null);
    nodes.clock.tick(60_000 - 2);
    await onB.pass();
    assert.is((await nodes.b.getConversation(c.id, 'token:alice'))?.status, 'running', 'one millisecond short of the patience');
    nodes.clock.tick(1);
    await onB.pass();
    assert.is((await nodes.b.getConversation(c.id, 'token:alice'))?.status, 'interrupted');
    const message = String(((await nodes.b.lastEntry(c.id))?.payload as { message: string }).message);
    assert.match(message, 'no server model is configured on this process');
    assert.match(message, `Continue it with conversation_id ${c.id}.`);
    await onB.stop();
  } finally {
    await nodes.close();
  }
});

test('tasks of other workspaces never use a pass\'s budget: with more than MAX_EXPIRED_TASKS of them lapsed first, the one of this workspace is continued in the first pass', async () => {
  const model = await startScriptedServer([{ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: 'mine, continued' } }] } }]);
  const nodes = await twoNodes();
  try {
    const others: string[] = [];
    for (let i = 0; i < MAX_EXPIRED_TASKS + 5; i++) {
      const c = await nodes.a.createConversation(alice);
      await nodes.a.claimTask(c.id, storedSetup(codeSetup(c.id), { workspace: outside }));
      others.push(c.id);
      nodes.clock.tick(1);
    }
    const own = await nodes.a.createConversation(alice);
    const lease = await nodes.a.claimTask(own.id, storedSetup(codeSetup(own.id), { workspace: ws }));
    await nodes.a.append(own.id, 'user', { text: 'hello' }, lease.epoch);
    nodes.clock.tick(LEASE + 1);
    const onB = takeover(nodes.b, scriptedEnv(model.url));
    await onB.pass();
    const [run] = onB.running;
    assert.ok(run, 'its own task taken over in the first pass');
    assert.is((await guarded(run.outcome, 'the taken-over task')).text, 'mine, continued');
    for (const id of others) assert.is((await nodes.b.getConversation(id, 'token:alice'))?.status, 'running', 'the others left to a process of theirs');
    await onB.stop();
  } finally {
    await nodes.close();
    await model.close();
  }
});

test('a pass leaves a lapsed task of another workspace to a process of its own; one naming no workspace is marked interrupted (where it ran is unknown, so no process can continue it)', async () => {
  const nodes = await twoNodes();
  try {
    const elsewhere = await nodes.a.createConversation(alice);
    await nodes.a.claimTask(elsewhere.id, storedSetup(codeSetup(elsewhere.id), { workspace: '/srv/other-project' }));
    const unnamed = await nodes.a.createConversation(alice);
    await nodes.a.claimTask(unnamed.id, storedSetup(codeSetup(unnamed.id)));
    nodes.clock.tick(LEASE + 1);
    const onB = takeover(nodes.b, {});
    await onB.pass();
    assert.equal(onB.running, []);
    assert.is((await nodes.b.getConversation(elsewhere.id, 'token:alice'))?.status, 'running', 'not taken, not interrupted');
    assert.is(await nodes.b.lastEntry(elsewhere.id), null);
    assert.is((await nodes.b.getConversation(unnamed.id, 'token:alice'))?.status, 'interrupted');
    assert.match(String(((await nodes.b.lastEntry(unnamed.id))?.payload as { message: string }).message), 'its claimer recorded no directory it ran in');
    assert.equal((await nodes.b.expiredTasks(10)).map((t) => t.conversationId), [elsewhere.id], 'still there for a process of its workspace');
    await onB.stop();
  } finally {
    await nodes.close();
  }
});

test('a pass that keeps failing the same way (a store this version cannot open) says so once, and again when the error changes', async () => {
  let error = 'schema_too_new';
  const onB = new TaskTakeover({
    store: () => { throw new Error(error); }, leaseMs: LEASE, scheduler, workspace: ws, toolTimeoutMs: 1000, logger, env: {},
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
