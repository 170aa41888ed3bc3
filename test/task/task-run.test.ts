// A task on a store whose writes take real time, as a database across the network does: the actions
// are carried out in order with each write committed before the next, the actor's normal exit (which
// arrives while its last writes are still under way) does not drop the finish queued before it, and a
// failed write ends the incarnation without a gap in the transcript: the next one continues from it, or,
// when the actor had already exited, the task is answered as interrupted.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Scheduler } from '../../src/actors/scheduler.ts';
import { schedulerEntry } from '../../src/server/thread-entries.ts';
import type { ModelProvider } from '../../src/model/types.ts';
import type { ToolExecutor } from '../../src/tools/contract.ts';
import { createLogger } from '../../src/log/logger.ts';
import { TaskRun } from '../../src/task/task-run.ts';
import { type AsyncConversationStore, SyncStoreAdapter } from '../../src/store/async-store.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import type { ConversationStatus, EntryType } from '../../src/store/store.ts';
import { guarded } from '../hang-guard.ts';
import { FakeClock } from '../../src/time/fake-clock.ts';
import { TASK_STATUS_RETRY_MS } from '../../src/limits.ts';

/** How long each write of the slow store takes: long enough that the actor's exit arrives first. */
const WRITE_DELAY_MS = 40;

/** The SQLite store behind the asynchronous contract, each write resolving only after a delay; the next append of `failType` rejects once. */
class SlowStore extends SyncStoreAdapter {
  failType: EntryType | null = null;

  override async append(conversationId: string, type: EntryType, payload: unknown, epoch?: number) {
    await new Promise((r) => setTimeout(r, WRITE_DELAY_MS));
    if (this.failType === type) {
      this.failType = null;
      throw new Error('connection terminated unexpectedly');
    }
    return super.append(conversationId, type, payload, epoch);
  }

  override async setStatus(id: string, status: ConversationStatus, epoch?: number) {
    await new Promise((r) => setTimeout(r, WRITE_DELAY_MS));
    return super.setStatus(id, status, epoch);
  }
}

const scheduler = new Scheduler({ threads: 1, log: () => undefined, entry: schedulerEntry('source') });
scheduler.startThread(0);
const logger = createLogger('error', { write: () => true });
const answering: ModelProvider = { name: 'scripted', complete: async () => ({ text: 'done', toolCalls: [], stopReason: 'end' }) };
/** Lists the workspace first, then answers once it has the listing. */
const toolThenAnswer: ModelProvider = {
  name: 'scripted',
  complete: async (req) => req.messages.some((m) => m.role === 'tool')
    ? { text: 'done', toolCalls: [], stopReason: 'end' }
    : { text: '', toolCalls: [{ id: 'call-1', name: 'ls', arguments: { path: '.' } }], stopReason: 'tool_calls' },
};

async function newTask(store: AsyncConversationStore, provider: ModelProvider = answering, executeTool: ToolExecutor = async () => ({ text: 'unused' }), leaseMs?: number): Promise<TaskRun> {
  const { id } = await store.createConversation({ principal: 'local', sessionId: 'session-1', harness: 'super-pi-code' });
  const lease = await store.claimTask(id, {});
  await store.append(id, 'user', { text: 'hello' }, lease.epoch);
  return new TaskRun({
    setup: { conversationId: id, harness: 'super-pi-code', maxTurns: 5, local: true, forbidWrites: false, canConfirm: false },
    principal: 'local', store, lease, ...(leaseMs === undefined ? {} : { leaseMs }), scheduler, provider, workspace: '/nonexistent',
    executeTool, toolTimeoutMs: 1000, logger,
    onProgress: () => undefined, onAppend: () => undefined, confirm: async () => false,
  });
}

/** The SQLite store, refusing every append and status write as a full disk does while `full` is set. */
class FullDiskStore extends SyncStoreAdapter {
  full = false;
  refusedStatus = 0;

  override async append(conversationId: string, type: EntryType, payload: unknown, epoch?: number) {
    if (this.full) throw new Error('database or disk is full');
    return super.append(conversationId, type, payload, epoch);
  }

  override async setStatus(...args: Parameters<SyncStoreAdapter['setStatus']>) {
    if (this.full) {
      this.refusedStatus++;
      throw new Error('database or disk is full');
    }
    return super.setStatus(...args);
  }
}

const typesOf = async (store: AsyncConversationStore, id: string) => ((await store.entries(id, 'local')) ?? []).map((e) => e.type);

test.after(async () => {
  for (const t of scheduler.threads()) {
    t.stop();
    await t.exited;
  }
});

test('on a slow store the task answers after its final entry and status are committed, though its actor exited first', async () => {
  const store = new SlowStore(SqliteConversationStore.open(':memory:'));
  const run = await newTask(store);
  const actor = await run.start();
  const outcome = await guarded(run.outcome, 'the answer of a task on a slow store');
  assert.is(outcome.text, 'done');
  assert.is((await actor.exited).kind, 'normal');
  assert.equal(await typesOf(store, run.conversationId), ['user', 'model', 'final']);
  assert.is((await store.getConversation(run.conversationId, 'local'))?.status, 'completed');
  await store.close();
});

test('a failed write kills the incarnation with nothing after it written or run; the next one continues from the store, each step once', async () => {
  const store = new SlowStore(SqliteConversationStore.open(':memory:'));
  store.failType = 'model';
  const ran: string[] = [];
  const run = await newTask(store, toolThenAnswer, async (tool) => { ran.push(tool); return { text: 'a.txt' }; });
  const first = await run.start();
  assert.is((await guarded(first.exited, 'the incarnation whose write failed')).kind, 'killed');
  assert.not.ok(run.finished, 'not answered by an incarnation whose write failed');
  assert.equal(await typesOf(store, run.conversationId), ['user'], 'the tool_call after the failed entry was not written');
  assert.equal(ran, [], 'nor was the tool run');
  // What its supervisor does: start another incarnation, from the transcript.
  await run.start();
  assert.is((await guarded(run.outcome, 'the answer after a restart')).text, 'done');
  assert.equal(await typesOf(store, run.conversationId), ['user', 'model', 'tool_call', 'tool_result', 'model', 'final']);
  assert.equal(ran, ['ls']);
  await store.close();
});

test('a write that fails after the actor exited normally answers the task as interrupted instead of never', async () => {
  const store = new SlowStore(SqliteConversationStore.open(':memory:'));
  store.failType = 'final';
  const run = await newTask(store);
  const actor = await run.start();
  const outcome = await guarded(run.outcome, 'the answer of a task whose final entry failed');
  assert.is((await actor.exited).kind, 'normal');
  assert.is(outcome.isError, true);
  assert.match(outcome.text, /interrupted: its transcript could not be written \(connection terminated unexpectedly\)/);
  assert.equal(await typesOf(store, run.conversationId), ['user', 'model']);
  assert.is((await store.getConversation(run.conversationId, 'local'))?.status, 'interrupted', 'resumable');
  await store.close();
});

/** A model that answers (with a tool call) only when `release()` is called, and records that it was aborted. */
function gatedModel() {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const seen = { asked: 0, aborted: false };
  let asked!: () => void;
  const firstAsk = new Promise<void>((r) => (asked = r));
  const provider: ModelProvider = {
    name: 'gated',
    complete: async (req) => {
      seen.asked++;
      asked();
      req.signal?.addEventListener('abort', () => (seen.aborted = true));
      await released;
      return { text: '', toolCalls: [{ id: 'call-1', name: 'ls', arguments: { path: '.' } }], stopReason: 'tool_calls' };
    },
  };
  return { provider, release, seen, firstAsk };
}

test('a write refused as fenced (a newer claim holds the task) stops the task here: nothing more written or run, no restart, the caller told it was cancelled or taken over', async () => {
  const store = new SyncStoreAdapter(SqliteConversationStore.open(':memory:'));
  const model = gatedModel();
  const ran: string[] = [];
  const run = await newTask(store, model.provider, async (tool) => { ran.push(tool); return { text: 'a.txt' }; });
  const actor = await run.start();
  await guarded(model.firstAsk, 'the first model request');
  // What another node's takeover does to this run: the epoch moves on.
  const newer = await store.claimTask(run.conversationId, {});
  assert.is(newer.epoch, run.epoch + 1);
  model.release();
  const outcome = await guarded(run.outcome, 'the answer of a fenced task');
  assert.is(outcome.isError, true);
  assert.match(outcome.text, `It was cancelled (tasks/cancel), or another server node took it over (this node's lease lapsed); its result will be in the transcript of conversation ${run.conversationId}`);
  assert.equal(await typesOf(store, run.conversationId), ['user'], 'the refused model entry, and nothing after it');
  assert.equal(ran, [], 'the tool the refused entry asked for did not run');
  assert.is((await store.getConversation(run.conversationId, 'local'))?.status, 'running', 'left to the new holder');
  actor.kill();
  await actor.exited;
  await store.close();
});

test('a renewal refused as fenced stops the task without waiting for its next write: its model request is aborted', async () => {
  const store = new SyncStoreAdapter(SqliteConversationStore.open(':memory:'));
  const model = gatedModel();
  // A 30 ms lease is renewed every 10 ms: the fence is met at the next heartbeat.
  const run = await newTask(store, model.provider, undefined, 30);
  const actor = await run.start();
  await guarded(model.firstAsk, 'the first model request');
  await store.claimTask(run.conversationId, {});
  const outcome = await guarded(run.outcome, 'the answer of a task whose renewal was fenced');
  assert.match(outcome.text, 'took it over');
  assert.ok(model.seen.aborted, 'the model request in flight was aborted');
  model.release();
  assert.equal(await typesOf(store, run.conversationId), ['user']);
  actor.kill();
  await actor.exited;
  await store.close();
});

test('a renewal refused while the task\'s own finish is being written (it ended the lease) does not turn the answer into "taken over"', async () => {
  // The status is committed first, then the call takes its time: heartbeats in between find the task
  // no longer running and are refused.
  class CommitThenWait extends SyncStoreAdapter {
    refusedRenewals = 0;
    override async setStatus(id: string, status: ConversationStatus, epoch?: number) {
      await super.setStatus(id, status, epoch);
      await new Promise((r) => setTimeout(r, 80));
    }
    override async renewLease(id: string, epoch: number) {
      try {
        return await super.renewLease(id, epoch);
      } catch (err) {
        this.refusedRenewals++;
        throw err;
      }
    }
  }
  const store = new CommitThenWait(SqliteConversationStore.open(':memory:'));
  const run = await newTask(store, answering, undefined, 15);
  const actor = await run.start();
  const outcome = await guarded(run.outcome, 'the answer of a task whose finish is slow');
  assert.ok(store.refusedRenewals > 0, 'a heartbeat did meet the ended lease');
  assert.is(outcome.text, 'done');
  assert.is(outcome.isError, false);
  await actor.exited;
  await store.close();
});

test('a running task renews its lease, under its own epoch, while it waits on the model', async () => {
  const renewals: [string, number][] = [];
  let renewed!: () => void;
  const firstRenewal = new Promise<void>((r) => (renewed = r));
  class Counting extends SyncStoreAdapter {
    override async renewLease(id: string, epoch: number) {
      renewals.push([id, epoch]);
      renewed();
      return super.renewLease(id, epoch);
    }
  }
  const store = new Counting(SqliteConversationStore.open(':memory:'));
  const model = gatedModel();
  const run = await newTask(store, model.provider, undefined, 30);
  const actor = await run.start();
  await guarded(firstRenewal, 'the first heartbeat');
  assert.equal(renewals[0], [run.conversationId, run.epoch]);
  run.stop('test over');
  model.release();
  await guarded(run.outcome, 'the stopped task');
  const after = renewals.length;
  await new Promise((r) => setTimeout(r, 50));
  assert.is(renewals.length, after, 'no heartbeat after the task answered');
  actor.kill();
  await actor.exited;
  await store.close();
});


test('the model is offered only the tools the task may run for its caller: no write, edit or bash for an anonymous caller, no bash for one that cannot be asked', async () => {
  const offered = new Map<string, string[]>();
  for (const [who, setup] of [
    ['local', { local: true, forbidWrites: false, canConfirm: false }],
    ['anonymous', { local: false, forbidWrites: true, canConfirm: true }],
    ['token without elicitation', { local: false, forbidWrites: false, canConfirm: false }],
  ] as const) {
    const store = new SyncStoreAdapter(SqliteConversationStore.open(':memory:'));
    const { id } = await store.createConversation({ principal: 'local', sessionId: 'session-1', harness: 'super-pi-code' });
    const lease = await store.claimTask(id, {});
    await store.append(id, 'user', { text: 'hello' }, lease.epoch);
    const provider: ModelProvider = { name: 'recording', complete: async (req) => { offered.set(who, req.tools.map((t) => t.name)); return { text: 'done', toolCalls: [], stopReason: 'end' }; } };
    const run = new TaskRun({
      setup: { conversationId: id, harness: 'super-pi-code', maxTurns: 5, ...setup },
      principal: 'local', store, lease, scheduler, provider, workspace: '/nonexistent',
      executeTool: async () => ({ text: 'unused' }), toolTimeoutMs: 1000, logger,
      onProgress: () => undefined, onAppend: () => undefined, confirm: async () => false,
    });
    await run.start();
    await guarded(run.outcome, `the ${who} task`);
    await store.close();
  }
  assert.equal(offered.get('local'), ['read', 'write', 'edit', 'bash', 'grep', 'find', 'ls']);
  assert.equal(offered.get('anonymous'), ['read', 'grep', 'find', 'ls']);
  assert.equal(offered.get('token without elicitation'), ['read', 'write', 'edit', 'grep', 'find', 'ls']);
});

test('an interrupted status the store refused (disk full) is written again once the store takes writes: the conversation does not read running forever', async () => {
  // Review wt/advdurable: on a full disk the task was answered interrupted but its conversation stayed
  // `running` in the store while the process lived, so a client polling tasks/get waited for nothing.
  const store = new FullDiskStore(SqliteConversationStore.open(':memory:'));
  const clock = new FakeClock();
  const { id } = await store.createConversation({ principal: 'local', sessionId: 'session-1', harness: 'super-pi-code' });
  const lease = await store.claimTask(id, {});
  await store.append(id, 'user', { text: 'hello' }, lease.epoch);
  const run = new TaskRun({
    setup: { conversationId: id, harness: 'super-pi-code', maxTurns: 5, local: true, forbidWrites: false, canConfirm: false },
    principal: 'local', store, lease, scheduler, provider: answering, workspace: '/nonexistent', clock,
    executeTool: async () => ({ text: 'unused' }), toolTimeoutMs: 1000, logger,
    onProgress: () => undefined, onAppend: () => undefined, confirm: async () => false,
  });
  store.full = true;
  const actor = await run.start();
  // Killed (what its supervisor does once the restarts fail as well: give up), or already exited (answered at once).
  if ((await guarded(actor.exited, 'the incarnation whose write failed')).kind === 'killed') run.gaveUp('its actor kept failing');
  const outcome = await guarded(run.outcome, 'the answer on a full disk');
  assert.match(outcome.text, /interrupted/);
  const status = async () => (await store.getConversation(id, 'local'))?.status;
  assert.is(await status(), 'running', 'the store refused the interrupted status');
  clock.advance(TASK_STATUS_RETRY_MS);
  await new Promise((r) => setImmediate(r));
  assert.is(store.refusedStatus, 2, 'written again after TASK_STATUS_RETRY_MS, refused again while the disk is full');
  store.full = false;
  clock.advance(TASK_STATUS_RETRY_MS);
  await new Promise((r) => setImmediate(r));
  assert.is(await status(), 'interrupted', 'written once the store takes writes');
  assert.is(await guarded(run.statusRetried ?? Promise.resolve(false), 'the retries'), true);
  assert.is(clock.pendingTimers, 0, 'no retry left armed');
  await store.close();
});

test.run();
