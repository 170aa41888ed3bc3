// `tasks/get` of a task parked `input_required` is bounded work whatever the transcript's length
// (readStoredTask → parkedRequest, task-input.ts): a question to the person reads the last run alone,
// backwards; a client-model turn reads the earlier runs its request carries, within the same bound; and a
// second poll of the same parked place reads nothing (parked-input-cache.ts). What is shown is what the
// whole transcript replayed gives. Counted through a store that counts the entries it hands out.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type AsyncConversationStore, SyncStoreAdapter } from '../../src/store/async-store.ts';
import { counting, type EntryReads } from './fixtures/counting-store.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import { fullTranscript } from './fixtures/full-transcript.ts';
import type { EntryType, TaskResult } from '../../src/store/store.ts';
import { resumeTask } from '../../src/task/task-core.ts';
import { REMOTE_ASKABLE, TOO_LONG_FOR_A_POLL, wholeParkedInput } from '../../src/task/task-input.ts';
import { questionIn, roundTools, turnParams } from '../../src/task/task-rounds.ts';
import { readStoredTask } from '../../src/task/task-status.ts';
import { MAX_TURNS_LIMIT, TASK_RESULT_TAIL_ENTRIES, TASK_RESULT_TAIL_PAGE } from '../../src/limits.ts';

const PRINCIPAL = 'alice';
const test = suite('readStoredTask: a parked task\'s poll reads a bounded part of its transcript');
let sqlite: SqliteConversationStore;
let store: AsyncConversationStore;
let reads: EntryReads;

test.before.each(() => {
  sqlite = SqliteConversationStore.open(':memory:');
  ({ store, reads } = counting(new SyncStoreAdapter(sqlite)));
});
test.after.each(() => sqlite.close());

type Steps = [EntryType, Record<string, unknown>][];

/** `turns` model turns each calling `read` once (with a result of `size` characters). */
function reads_(turns: number, size = 9): Steps {
  const steps: Steps = [];
  for (let i = 0; i < turns; i++) {
    const call = { id: `r${i}`, name: 'read', arguments: { path: 'notes.txt' } };
    steps.push(['model', { text: '', toolCalls: [call] }], ['tool_call', call], ['tool_result', { id: call.id, name: 'read', text: 'a'.repeat(size), isError: false }]);
  }
  return steps;
}

/** An earlier run, finished: its prompt, `turns` reads, its answer. */
const finishedRun = (turns: number): Steps => [['user', { text: 'first' }], ...reads_(turns), ['model', { text: 'an old answer', toolCalls: [] }], ['final', { text: 'an old answer' }]];
/** A run parked before a `bash` call the person must confirm (the round stops before its tool_call entry). */
const askingRun = (turns: number, size?: number): Steps => [['user', { text: 'append with bash' }], ...reads_(turns, size), ['model', { text: '', toolCalls: [{ id: 'b', name: 'bash', arguments: { command: 'echo once >> out.txt' } }] }]];
/** A run parked at its client's model's next turn. */
const samplingRun = (turns: number): Steps => [['user', { text: 'what does notes.txt say?' }], ...reads_(turns)];

/** A conversation holding `runs`, parked `input_required` with the counts its park stored (none: a park before they were). */
function parked(runs: Steps[], counts?: Pick<TaskResult, 'turns' | 'toolCalls'>): string {
  const c = sqlite.createConversation({ principal: PRINCIPAL, sessionId: 's', harness: 'super-pi-code' });
  for (const steps of runs) for (const [type, payload] of steps) sqlite.append(c.id, type, payload);
  sqlite.setStatus(c.id, 'input_required', undefined, counts === undefined ? undefined : { text: '', isError: false, ...counts });
  return c.id;
}

/** What the whole transcript replayed shows (as every poll computed it before polls were bounded). */
async function wholeReplay(id: string): Promise<unknown> {
  const entries = (await fullTranscript(store, id, PRINCIPAL))!;
  const step = resumeTask({ conversationId: id, harness: 'super-pi-code', maxTurns: MAX_TURNS_LIMIT, ...REMOTE_ASKABLE }, entries);
  const seq = entries.at(-1)!.seq;
  const question = questionIn(step);
  if (question !== undefined) return { asks: [{ key: `confirm-${step.state.turn}-${seq}`, message: question.confirm }] };
  const model = step.actions.at(-1);
  if (model?.a !== 'model') return null;
  return { key: `sample-${model.turn}-${seq}`, params: turnParams('super-pi-code', roundTools('super-pi-code', REMOTE_ASKABLE), model.messages) };
}

const LONG = 3000;

test('a question behind a long earlier run: one page read, the question the whole transcript gives; the next poll reads nothing', async () => {
  const id = parked([finishedRun(LONG), askingRun(2)], { turns: 3, toolCalls: 2 });
  const task = await readStoredTask(store, PRINCIPAL, id);
  assert.ok(reads.entries <= TASK_RESULT_TAIL_PAGE, `read ${reads.entries} entries of ${LONG * 3 + 12}`);
  assert.is(task?.status, 'input_required');
  const expected = await wholeReplay(id);
  assert.equal(task?.question, expected);
  assert.match(JSON.stringify(task?.question), /confirm-3-\d+.*echo once >> out\.txt/);
  reads.entries = 0;
  reads.calls = 0;
  assert.equal((await readStoredTask(store, PRINCIPAL, id))?.question, expected);
  assert.equal(reads, { calls: 0, entries: 0 }, 'a second poll of the same parked place reads no entry');
});

test('a question at the end of a last run longer than the bound: at most TASK_RESULT_TAIL_ENTRIES read, its turn from the counts the park stored', async () => {
  const turns = TASK_RESULT_TAIL_ENTRIES;
  const id = parked([askingRun(turns)], { turns: turns + 1, toolCalls: turns });
  const task = await readStoredTask(store, PRINCIPAL, id);
  assert.ok(reads.entries <= TASK_RESULT_TAIL_ENTRIES, `read ${reads.entries} entries`);
  assert.equal(task?.question, await wholeReplay(id), 'the same key and message as the whole run replayed');
});

test('a last run cut by the bytes bound is numbered right too; without stored counts no question is shown rather than a wrong one, and the expiry\'s whole read finds it', async () => {
  const size = 50_000; // 200 results of 50 KB: past TASK_RESULT_TAIL_BYTES long before TASK_RESULT_TAIL_ENTRIES
  const id = parked([askingRun(200, size)], { turns: 201, toolCalls: 200 });
  const task = await readStoredTask(store, PRINCIPAL, id);
  assert.ok(reads.entries < 200 * 3, `read ${reads.entries} entries`);
  assert.equal(task?.question, await wholeReplay(id));
  const legacy = parked([askingRun(200, size)]);
  assert.is((await readStoredTask(store, PRINCIPAL, legacy))?.question, null);
  // The wait's expiry must still find the place to resume it unanswered: it reads the whole transcript once.
  const record = (await store.taskRecord(legacy, PRINCIPAL))!;
  const whole = await wholeReplay(legacy);
  const found = await wholeParkedInput(store, record, PRINCIPAL, REMOTE_ASKABLE);
  assert.equal(found?.kind === 'ask' ? { asks: found.pending.map(({ key, message }) => ({ key, message })) } : null, whole);
});

test('a client-model turn: the request carries the earlier runs, read within the bound; the next poll reads nothing', async () => {
  const id = parked([finishedRun(20), samplingRun(3)], { turns: 3, toolCalls: 3 });
  const task = await readStoredTask(store, PRINCIPAL, id);
  const first = reads.entries;
  assert.ok(first <= TASK_RESULT_TAIL_ENTRIES, `read ${first} entries`);
  const expected = await wholeReplay(id);
  assert.equal(task?.question, expected, 'the same key and sampling params as the whole transcript replayed');
  assert.match(JSON.stringify(task?.question), /sample-4-\d+.*an old answer/);
  reads.entries = 0;
  assert.equal((await readStoredTask(store, PRINCIPAL, id))?.question, expected);
  assert.is(reads.entries, 0, 'a second poll reads no entry');
});

test('a client-model turn whose conversation is longer than the bound: at most TASK_RESULT_TAIL_ENTRIES read, the request not shown and why', async () => {
  const id = parked([finishedRun(LONG), samplingRun(1)], { turns: 1, toolCalls: 1 });
  const task = await readStoredTask(store, PRINCIPAL, id);
  assert.ok(reads.entries <= TASK_RESULT_TAIL_ENTRIES, `read ${reads.entries} entries`);
  const whole = (await wholeReplay(id)) as { key: string };
  assert.equal(task?.question, { key: whole.key, unshown: TOO_LONG_FOR_A_POLL }, 'its key is still the one an answer must name');
});

test('another principal\'s parked task reads as none and reads nothing; a reader that cannot be asked is kept apart', async () => {
  const id = parked([samplingRun(0)], { turns: 0, toolCalls: 0 });
  assert.is(await readStoredTask(store, 'bob', id), null);
  assert.equal(reads, { calls: 0, entries: 0 });
  const askable = await readStoredTask(store, PRINCIPAL, id);
  const readOnly = await readStoredTask(store, PRINCIPAL, id, { local: false, forbidWrites: true, canConfirm: true });
  assert.not.equal(askable?.question, readOnly?.question, 'the tools offered differ by reader, so each has its own cached place');
});

test.run();
