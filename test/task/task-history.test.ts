// What a task loads of its conversation (task-history.ts), at its start, after a crash and in each round:
// no file snapshot from before its last model turn (the store filters them out, so they are never read),
// every entry after it; at most TASK_HISTORY_MAX_BYTES of payload, past which the task records why and
// fails, naming the limit — and a task resumed mid-change still rebuilds exactly the state the whole
// transcript gives.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Scheduler } from '../../src/actors/scheduler.ts';
import { createLogger } from '../../src/log/logger.ts';
import type { ModelProvider } from '../../src/model/types.ts';
import { schedulerEntry } from '../../src/server/thread-entries.ts';
import { type AsyncConversationStore, SyncStoreAdapter } from '../../src/store/async-store.ts';
import { conversationWith, type EntrySpec, spiedReads } from './fixtures/conversation.ts';
import { fullTranscript } from './fixtures/full-transcript.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import type { EntriesPage } from '../../src/store/store.ts';
import type { TaskLease } from '../../src/store/task-lease.ts';
import { resumeTask, type TaskSetup } from '../../src/task/task-core.ts';
import { taskHistory } from '../../src/task/task-history.ts';
import { TaskRun } from '../../src/task/task-run.ts';
import { TASK_HISTORY_MAX_BYTES } from '../../src/limits.ts';
import { guarded } from '../hang-guard.ts';

const scheduler = new Scheduler({ threads: 1, log: () => undefined, entry: schedulerEntry('source') });
scheduler.startThread(0);
const logger = createLogger('error', { write: () => true });
test.after(async () => {
  for (const t of scheduler.threads()) {
    t.stop();
    await t.exited;
  }
});

/** Each test's store: a fresh in-memory SQLite store, and the same store spied on (spiedReads), closed after. */
let inner: AsyncConversationStore;
let spied: ReturnType<typeof spiedReads>;
test.before.each(() => {
  inner = new SyncStoreAdapter(SqliteConversationStore.open(':memory:'));
  spied = spiedReads(inner);
});
test.after.each(async () => {
  await inner.close();
});

const setupOf = (conversationId: string, maxTurns = 5): TaskSetup => ({ conversationId, harness: 'super-pi-code', maxTurns, local: true, forbidWrites: false, canConfirm: false });
const BIG = 'x'.repeat(100_000);

/** An earlier run that wrote a file (its two snapshots, each BIG), then a new prompt. */
const EARLIER_RUN: readonly EntrySpec[] = [
  ['user', { text: 'change a.txt' }],
  ['model', { text: '', toolCalls: [{ id: 'w1', name: 'write', arguments: { path: 'a.txt', content: 'new' } }] }],
  ['tool_call', { id: 'w1', name: 'write', arguments: { path: 'a.txt', content: 'new' } }],
  ['file_snapshot', { id: 'w1', path: 'a.txt', before: BIG, stage: 'before' }],
  ['file_snapshot', { id: 'w1', path: 'a.txt', before: BIG, after: 'new' }],
  ['tool_result', { id: 'w1', name: 'write', text: 'wrote a.txt', isError: false }],
  ['model', { text: 'done', toolCalls: [] }],
  ['final', { text: 'done' }],
];

function runOf(store: AsyncConversationStore, id: string, lease: TaskLease, provider: ModelProvider, historyMaxBytes?: number): TaskRun {
  return new TaskRun({
    setup: setupOf(id), principal: 'local', store, lease, scheduler, provider, workspace: '/nonexistent',
    executeTool: async () => ({ text: 'unused' }), toolTimeoutMs: 1000, logger,
    onProgress: () => undefined, onAppend: () => undefined, confirm: async () => false,
    ...(historyMaxBytes === undefined ? {} : { historyMaxBytes }),
  });
}

test('a continued task loads no file snapshot of its earlier runs, and its model still gets their whole history', async () => {
  const { store, read } = spied;
  const id = await conversationWith(inner, EARLIER_RUN);
  const lease = await inner.claimTask(id, {});
  await inner.append(id, 'user', { text: 'and now?' }, lease.epoch);
  let sent: unknown = null;
  const provider: ModelProvider = { name: 'scripted', complete: async (req) => {
    sent = req.messages;
    return { text: 'fine', toolCalls: [], stopReason: 'end' };
  } };
  const run = runOf(store, id, lease, provider);
  await run.start();
  assert.is((await guarded(run.outcome, 'the continued task')).text, 'fine');
  assert.ok(read.length > 0);
  assert.equal(read.filter((e) => e.type === 'file_snapshot').map((e) => e.seq), [], 'no snapshot was loaded');
  assert.equal(sent, [
    { role: 'user', content: 'change a.txt' },
    { role: 'assistant', content: '', toolCalls: [{ id: 'w1', name: 'write', arguments: { path: 'a.txt', content: 'new' } }] },
    { role: 'tool', content: 'wrote a.txt', toolCallId: 'w1' },
    { role: 'assistant', content: 'done' },
    { role: 'user', content: 'and now?' },
  ]);
});

test('a task resumed mid-change rebuilds exactly the state, and the actions, that the whole transcript gives', async () => {
  const store = inner;
  // The current run crashed inside a write: its before-image is durable, its result is not.
  const midWrite: EntrySpec[] = [
    ...EARLIER_RUN,
    ['user', { text: 'change it again' }],
    ['model', { text: '', toolCalls: [{ id: 'w2', name: 'write', arguments: { path: 'a.txt', content: 'newer' } }] }],
    ['tool_call', { id: 'w2', name: 'write', arguments: { path: 'a.txt', content: 'newer' } }],
    ['file_snapshot', { id: 'w2', path: 'a.txt', before: 'new', stage: 'before' }],
  ];
  const cases: (readonly EntrySpec[])[] = [
    midWrite,
    [...midWrite, ['interrupted', { message: 'the process died' }]],
    EARLIER_RUN,
    [...EARLIER_RUN, ['undo', { reverted: [4, 5], refused: [] }], ['user', { text: 'again' }]],
    [['user', { text: 'only a prompt' }]],
  ];
  for (const entries of cases) {
    const id = await conversationWith(store, entries);
    const whole = await fullTranscript(store, id, 'local');
    const loaded = await taskHistory(store, id, 'local');
    assert.ok(whole !== null && loaded !== null && 'entries' in loaded);
    assert.is(loaded.entries.at(-1)?.seq, whole.at(-1)?.seq, 'the last entry read is the transcript\'s last');
    if (entries.some(([type]) => type === 'user')) {
      assert.equal(resumeTask(setupOf(id), loaded.entries), resumeTask(setupOf(id), whole));
    }
  }
  // The re-run write of the mid-write case carries its durable before-image.
  const id = await conversationWith(store, midWrite);
  const loaded = await taskHistory(store, id, 'local');
  assert.ok(loaded !== null && 'entries' in loaded);
  const rerun = resumeTask(setupOf(id), loaded.entries).actions.find((a) => a.a === 'tool');
  assert.equal(rerun?.a === 'tool' ? rerun.stored : null, { id: 'w2', path: 'a.txt', before: 'new', stage: 'before' });
});

test('a history at the bound loads; one byte more is refused, naming TASK_HISTORY_MAX_BYTES, after reading at most one entry past it', async () => {
  const { store, read } = spied;
  const entry = { text: 'y'.repeat(90) }; // 101 bytes of JSON
  const id = await conversationWith(inner, Array.from({ length: 10 }, () => ['user', entry] as const));
  const bytes = 10 * Buffer.byteLength(JSON.stringify(entry));
  const within = await taskHistory(store, id, 'local', bytes);
  assert.ok(within !== null && 'entries' in within);
  assert.is(within.entries.length, 10);
  read.length = 0;
  const over = await taskHistory(store, id, 'local', bytes - 1);
  assert.ok(over !== null && 'refused' in over);
  assert.match(over.refused, /TASK_HISTORY_MAX_BYTES/);
  assert.match(over.refused, /new conversation/);
  assert.ok(read.length <= 10, `read ${read.length} entries`);
  // Many more entries past the bound are not read at all.
  const long = await conversationWith(inner, Array.from({ length: 200 }, () => ['user', entry] as const));
  read.length = 0;
  assert.ok(await taskHistory(store, long, 'local', 20 * 101).then((h) => h !== null && 'refused' in h));
  assert.ok(read.length <= 21, `read ${read.length} entries`);
  assert.is(await taskHistory(store, id, 'mallory'), null, 'another principal\'s conversation is not found');
  assert.ok(TASK_HISTORY_MAX_BYTES >= 16 * 1024 * 1024, 'the bound admits the largest entry the store takes');
});

test('a history counts each entry by the size the store reports for it, not by its payload serialised again', async () => {
  // A store that reports every size three times over: the bound must be reached by what it reports.
  const tripled = new Proxy(inner, {
    get(target, key) {
      const value = Reflect.get(target, key) as unknown;
      if (key !== 'entriesPage' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
      return async (...args: unknown[]) => {
        const page = await (value as (...a: unknown[]) => Promise<EntriesPage | null>).apply(target, args);
        return page === null ? null : { ...page, payloadSizes: page.payloadSizes.map((n) => 3 * n) };
      };
    },
  });
  const entry = { text: 'y'.repeat(90) }; // 101 bytes of JSON
  const id = await conversationWith(inner, Array.from({ length: 4 }, () => ['user', entry] as const));
  const loaded = await taskHistory(tripled, id, 'local');
  assert.ok(loaded !== null && 'entries' in loaded);
  assert.equal(loaded.payloadSizes, [303, 303, 303, 303]);
  assert.is(loaded.bytes, 4 * 303);
  assert.ok(await taskHistory(tripled, id, 'local', 4 * 101).then((h) => h !== null && 'refused' in h), 'over the bound by the reported sizes');
});

test('a read on from a known history that passes the bound is read whole and loads, when a whole read fits', async () => {
  const { store, calls } = spied;
  const big = { id: 'w1', path: 'a.txt', before: BIG, stage: 'before' };
  const id = await conversationWith(inner, [['user', { text: 'go' }], ['model', { text: '', toolCalls: [] }], ['file_snapshot', big]]);
  const known = await taskHistory(inner, id, 'local');
  assert.ok(known !== null && 'entries' in known && known.entries.length === 3, 'the snapshot after the last model turn is known');
  // A model turn and a prompt since: on from `known` (its BIG snapshot counted) they pass the bound; the whole
  // read leaves the snapshot out (it is now before the last model turn) and fits.
  await inner.append(id, 'model', { text: 'done', toolCalls: [] });
  await inner.append(id, 'user', { text: 'z'.repeat(200) });
  const bound = known.bytes + 100;
  const whole = await taskHistory(inner, id, 'local', bound);
  assert.ok(whole !== null && 'entries' in whole, 'a whole read fits');
  calls.length = 0;
  const got = await taskHistory(store, id, 'local', bound, known);
  assert.equal(got, whole, 'not refused: the answer a whole read gives');
  assert.is(calls[0]?.afterSeq, 3, 'read on from known first');
  assert.ok(calls.slice(1).some((c) => c.afterSeq === 0), 'then whole');
  // With no known history to read on from, a history over the bound is refused (the other use of the bound).
  assert.ok(await taskHistory(store, id, 'local', 100).then((h) => h !== null && 'refused' in h));
});

test('a read on from a known history that finds a model turn since reads whole, within the bound, leaving the known snapshots out', async () => {
  const { store, calls } = spied;
  const snapshot = { id: 'w1', path: 'a.txt', before: 'old', stage: 'before' };
  const id = await conversationWith(inner, [['user', { text: 'go' }], ['model', { text: '', toolCalls: [] }], ['file_snapshot', snapshot]]);
  const known = await taskHistory(inner, id, 'local');
  assert.ok(known !== null && 'entries' in known && known.entries.length === 3);
  // Another node ran a model turn meanwhile: well within the bound, but `known`'s snapshot must go.
  await inner.append(id, 'model', { text: 'done', toolCalls: [] });
  calls.length = 0;
  const got = await taskHistory(store, id, 'local', TASK_HISTORY_MAX_BYTES, known);
  assert.equal(got, await taskHistory(inner, id, 'local'));
  assert.ok(got !== null && 'entries' in got);
  assert.equal(got.entries.map((e) => e.type), ['user', 'model', 'model'], 'the snapshot before the new model turn is left out');
  assert.equal(calls.map((c) => c.afterSeq), [3, 0, 4], 'on from known, then whole: its history, then the snapshots after its last model turn');
});

test('a task whose history is past the bound fails with an error entry naming the limit; the model is not asked', async () => {
  const store = inner;
  const id = await conversationWith(store, EARLIER_RUN);
  const lease = await store.claimTask(id, {});
  await store.append(id, 'user', { text: 'and now?' }, lease.epoch);
  let asked = 0;
  const provider: ModelProvider = { name: 'scripted', complete: async () => {
    asked++;
    return { text: 'fine', toolCalls: [], stopReason: 'end' };
  } };
  const run = runOf(store, id, lease, provider, 100);
  await run.start();
  const outcome = await guarded(run.outcome, 'the refused task');
  assert.ok(outcome.isError);
  assert.match(outcome.text, /TASK_HISTORY_MAX_BYTES \(100 bytes\)/);
  assert.match(outcome.text, /without conversation_id/);
  assert.is(asked, 0);
  assert.is((await store.getConversation(id, 'local'))?.status, 'failed');
  const last = await store.lastEntry(id);
  assert.is(last?.type, 'error');
  assert.equal(last?.payload, { message: outcome.text, status: 'failed' });
});

test.run();
