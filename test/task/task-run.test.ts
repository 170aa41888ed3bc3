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

/** How long each write of the slow store takes: long enough that the actor's exit arrives first. */
const WRITE_DELAY_MS = 40;

/** The SQLite store behind the asynchronous contract, each write resolving only after a delay; the next append of `failType` rejects once. */
class SlowStore extends SyncStoreAdapter {
  failType: EntryType | null = null;

  override async append(conversationId: string, type: EntryType, payload: unknown) {
    await new Promise((r) => setTimeout(r, WRITE_DELAY_MS));
    if (this.failType === type) {
      this.failType = null;
      throw new Error('connection terminated unexpectedly');
    }
    return super.append(conversationId, type, payload);
  }

  override async setStatus(id: string, status: ConversationStatus) {
    await new Promise((r) => setTimeout(r, WRITE_DELAY_MS));
    return super.setStatus(id, status);
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

async function newTask(store: AsyncConversationStore, provider: ModelProvider = answering, executeTool: ToolExecutor = async () => ({ text: 'unused' })): Promise<TaskRun> {
  const { id } = await store.createConversation({ principal: 'local', sessionId: 'session-1', harness: 'super-pi-code' });
  await store.append(id, 'user', { text: 'hello' });
  return new TaskRun({
    setup: { conversationId: id, harness: 'super-pi-code', maxTurns: 5, local: true, forbidWrites: false, canConfirm: false },
    principal: 'local', store, scheduler, provider, workspace: '/nonexistent',
    executeTool, toolTimeoutMs: 1000, logger,
    onProgress: () => undefined, onAppend: () => undefined, confirm: async () => false,
  });
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

test.run();
