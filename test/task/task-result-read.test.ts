// `tasks/get` of a finished task is bounded work whatever the transcript's length (readStoredTask,
// task-status.ts): the result the run stored with its status is read in one row, no entry read; a task
// finished without one (before the store kept results, say) has it rebuilt from its last run alone, read
// backwards, and never from more than TASK_RESULT_TAIL_ENTRIES entries. Counted through a store that
// counts the entries it hands out.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type AsyncConversationStore, SyncStoreAdapter } from '../../src/store/async-store.ts';
import { counting } from './fixtures/counting-store.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import { fullTranscript } from './fixtures/full-transcript.ts';
import type { EntryType } from '../../src/store/store.ts';
import { outcomeOf, readStoredTask } from '../../src/task/task-status.ts';
import { TASK_RESULT_TAIL_ENTRIES, TASK_RESULT_TAIL_PAGE } from '../../src/limits.ts';

const PRINCIPAL = 'alice';
const test = suite('readStoredTask: a finished task\'s poll reads a bounded part of its transcript');
let sqlite: SqliteConversationStore;
let store: AsyncConversationStore;
let reads: { calls: number; entries: number };

test.before.each(() => {
  sqlite = SqliteConversationStore.open(':memory:');
  ({ store, reads } = counting(new SyncStoreAdapter(sqlite)));
});
test.after.each(() => sqlite.close());

/** One run: the prompt, `turns` model turns each calling `read` once, then the answer. */
function run(prompt: string, turns: number, answer: string): [EntryType, Record<string, unknown>][] {
  const steps: [EntryType, Record<string, unknown>][] = [['user', { text: prompt }]];
  for (let i = 0; i < turns; i++) {
    const call = { id: `c${i}`, name: 'read', arguments: { path: 'notes.txt' } };
    steps.push(['model', { text: '', toolCalls: [call] }], ['tool_call', call], ['tool_result', { id: call.id, name: 'read', text: 'aubergine', isError: false }]);
  }
  steps.push(['model', { text: answer, toolCalls: [] }], ['final', { text: answer }]);
  return steps;
}

/** A conversation holding `runs` in order, left `completed`, with `result` stored or (legacy) none. */
function conversation(runs: [EntryType, Record<string, unknown>][][], result?: { text: string; turns: number; toolCalls: number }): string {
  const c = sqlite.createConversation({ principal: PRINCIPAL, sessionId: 's', harness: 'super-pi-code' });
  for (const steps of runs) for (const [type, payload] of steps) sqlite.append(c.id, type, payload);
  sqlite.setStatus(c.id, 'completed', undefined, result === undefined ? undefined : { ...result, isError: false });
  return c.id;
}

const LONG = 3000;

test('a stored result is read with the status: no entry is read, however long the transcript', async () => {
  const id = conversation([run('first', LONG, 'an old answer'), run('What does notes.txt say?', 1, 'It says aubergine.')], { text: 'It says aubergine.', turns: 2, toolCalls: 1 });
  const task = await readStoredTask(store, PRINCIPAL, id);
  assert.equal(reads, { calls: 0, entries: 0 });
  assert.is(task?.status, 'completed');
  assert.equal(task?.outcome, {
    text: 'It says aubergine.', isError: false,
    structured: { conversation_id: id, harness: 'super-pi-code', status: 'completed', turns: 2, tool_calls: 1, answer: 'It says aubergine.' },
  });
});

test('without a stored result: only the last run is read (one page here), and the result is the one the whole transcript gives', async () => {
  const id = conversation([run('first', LONG, 'an old answer'), run('What does notes.txt say?', 1, 'It says aubergine.')]);
  const task = await readStoredTask(store, PRINCIPAL, id);
  assert.ok(reads.entries <= TASK_RESULT_TAIL_PAGE, `read ${reads.entries} entries of ${LONG * 3 + 10}`);
  const whole = await fullTranscript(store, id, PRINCIPAL);
  const record = sqlite.getConversation(id, PRINCIPAL);
  assert.equal(task?.outcome, outcomeOf(record!, whole!), 'the same result as the whole transcript replayed');
  assert.equal([task?.outcome?.structured?.turns, task?.outcome?.structured?.tool_calls], [2, 1]);
});

test('without a stored result, a last run longer than the bound: at most TASK_RESULT_TAIL_ENTRIES entries are read; the answer is still its own', async () => {
  const id = conversation([run('long', TASK_RESULT_TAIL_ENTRIES, 'Done at last.')]);
  const task = await readStoredTask(store, PRINCIPAL, id);
  assert.ok(reads.entries <= TASK_RESULT_TAIL_ENTRIES, `read ${reads.entries} entries`);
  assert.is(task?.outcome?.text, 'Done at last.');
  assert.is(task?.outcome?.isError, false);
  const turns = task?.outcome?.structured?.turns as number;
  assert.ok(turns > 0 && turns <= TASK_RESULT_TAIL_ENTRIES + 1, 'the counts cover the entries read');
});

test('a running task reads no entry; another principal\'s task reads as none and reads nothing', async () => {
  const c = sqlite.createConversation({ principal: PRINCIPAL, sessionId: 's', harness: 'super-pi-code' });
  for (const [type, payload] of run('go', 50, 'x').slice(0, -2)) sqlite.append(c.id, type, payload);
  assert.equal((await readStoredTask(store, PRINCIPAL, c.id))?.outcome, null);
  assert.is(await readStoredTask(store, 'bob', c.id), null);
  assert.equal(reads, { calls: 0, entries: 0 });
});

test('a continued task drops the result of its earlier run: running, then the new run\'s own result', async () => {
  const id = conversation([run('first', 1, 'first answer')], { text: 'first answer', turns: 2, toolCalls: 1 });
  sqlite.claimTask(id, {});
  assert.is((await readStoredTask(store, PRINCIPAL, id))?.status, 'running');
  for (const [type, payload] of run('second', 0, 'second answer')) sqlite.append(id, type, payload);
  sqlite.setStatus(id, 'completed');
  const task = await readStoredTask(store, PRINCIPAL, id);
  assert.is(task?.outcome?.text, 'second answer', 'not the first run\'s stored result');
  assert.equal([task?.outcome?.structured?.turns, task?.outcome?.structured?.tool_calls], [1, 0]);
});

test.run();
