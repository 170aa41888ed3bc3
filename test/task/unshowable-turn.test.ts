// A task on its client's model parked at a turn whose conversation is longer than one poll reads
// (unshowable-turn.ts), on two stores of one SQLite file standing for two nodes: it is ended `interrupted`
// at once, saying why and how to go on — by the node that parked it (no poll needed), or by any node's
// `tasks/get` — rather than shown `input_required` with no input request until TASK_INPUT_WAIT_MS; of two
// nodes finding it at once exactly one ends it; an answer that took the place first wins; a turn that is
// shown, and a question to the person, are left waiting.

import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Scheduler } from '../../src/actors/scheduler.ts';
import { EffectRunner } from '../../src/connection/effect-runner.ts';
import { createLogger } from '../../src/log/logger.ts';
import type { Effect, EffectResult } from '../../src/mcp/effects.ts';
import { type AsyncConversationStore, SyncStoreAdapter } from '../../src/store/async-store.ts';
import { databasePath } from '../../src/store/location.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import type { EntryType } from '../../src/store/store.ts';
import { systemClock } from '../../src/time/clock.ts';
import { runTool } from '../../src/tools/tool-runner.ts';
import { DetachedTasks, type DetachedStartDeps } from '../../src/task/detached-tasks.ts';
import type { TaskAllowance } from '../../src/task/principal-budget.ts';
import type { TaskContext } from '../../src/task/task-context.ts';
import { readStoredTask } from '../../src/task/task-status.ts';
import { endUnshowableTurn, unshowableTurnText } from '../../src/task/unshowable-turn.ts';
import { pollUntil } from '../hang-guard.ts';
import { fakeOwnership } from '../store/contract.ts';
import { removeHome, tempHome } from '../store/helpers.ts';

const logger = createLogger('error', { write: () => true });
const PRINCIPAL = 'token:alice';
const READER = { local: false, forbidWrites: false, canConfirm: false };
/** Past TASK_RESULT_TAIL_ENTRIES (2,048) once each turn's three entries are counted. */
const LONG = 3000;

type Steps = [EntryType, Record<string, unknown>][];
function readTurns(turns: number): Steps {
  const steps: Steps = [];
  for (let i = 0; i < turns; i++) {
    const call = { id: `r${i}`, name: 'read', arguments: { path: 'notes.txt' } };
    steps.push(['model', { text: '', toolCalls: [call] }], ['tool_call', call], ['tool_result', { id: call.id, name: 'read', text: 'notes', isError: false }]);
  }
  return steps;
}
const finishedRun = (turns: number): Steps => [['user', { text: 'first' }], ...readTurns(turns), ['model', { text: 'an old answer', toolCalls: [] }], ['final', { text: 'an old answer' }]];
/** A run parked at its client's model's next turn (after one read). */
const samplingRun: Steps = [['user', { text: 'and now?' }], ...readTurns(1)];
/** A run parked before a `bash` call the person must confirm. */
const askingRun: Steps = [['user', { text: 'append with bash' }], ['model', { text: '', toolCalls: [{ id: 'b', name: 'bash', arguments: { command: 'echo once >> out.txt' } }] }]];

const test = suite('a client-model turn no poll can show ends the task at once');
let home: string;
let raw: SqliteConversationStore;
let a: AsyncConversationStore;
let b: AsyncConversationStore;

test.before.each(async () => {
  home = await tempHome();
  raw = SqliteConversationStore.open(databasePath(home), { ownership: fakeOwnership('writer') });
  a = new SyncStoreAdapter(SqliteConversationStore.open(databasePath(home), { ownership: fakeOwnership('node-a') }));
  b = new SyncStoreAdapter(SqliteConversationStore.open(databasePath(home), { ownership: fakeOwnership('node-b') }));
});
test.after.each(async () => {
  raw.close();
  await a.close();
  await b.close();
  await removeHome(home);
});

/** A conversation holding `runs`, with `status` (parked: with the counts its park stored). */
function conversation(runs: Steps[], status: 'input_required' | 'completed' = 'input_required'): string {
  const c = raw.createConversation({ principal: PRINCIPAL, sessionId: 's', harness: 'super-pi-code' });
  for (const steps of runs) for (const [type, payload] of steps) raw.append(c.id, type, payload);
  raw.setStatus(c.id, status, undefined, status === 'input_required' ? { text: '', isError: false, turns: 1, toolCalls: 1 } : undefined);
  return c.id;
}

test('two nodes finding it at once: exactly one ends it interrupted, and both then read why and how to go on', async () => {
  const id = conversation([finishedRun(LONG), samplingRun]);
  const before = await readStoredTask(b, PRINCIPAL, id, READER);
  assert.ok(before?.question != null && 'unshown' in before.question, 'a poll cannot show its request');
  const heard: string[] = [];
  const ended = await Promise.all([endUnshowableTurn(a, id, PRINCIPAL, READER, (t) => heard.push(`a ${t}`)), endUnshowableTurn(b, id, PRINCIPAL, READER, (t) => heard.push(`b ${t}`))]);
  assert.equal(ended.filter(Boolean).length, 1, `one ended it: ${JSON.stringify(ended)}`);
  assert.is(heard.length, 1, 'its status listeners were told once');
  for (const node of [a, b]) {
    const task = await readStoredTask(node, PRINCIPAL, id, READER);
    assert.is(task?.status, 'interrupted');
    assert.equal(task?.outcome, { text: unshowableTurnText(id), isError: true, structured: task?.outcome?.structured });
    assert.match(task?.outcome?.text ?? '', new RegExp(`too long to send to its client's model.*conversation_id ${id} on a server with a model of its own, or start a new conversation`));
  }
});

test('an answer that took the parked place first wins: the task is not ended', async () => {
  const id = conversation([finishedRun(LONG), samplingRun]);
  const record = (await a.taskRecord(id, PRINCIPAL))!;
  assert.ok(await b.resumeParkedTask(id, PRINCIPAL, record.lastSeq), 'node B took the place (as an answer would)');
  assert.is(await endUnshowableTurn(a, id, PRINCIPAL, READER), false);
  assert.is((await a.getConversation(id, PRINCIPAL))?.status, 'running');
});

test('a client-model turn that a poll shows, and a question to the person behind a long run, are left waiting', async () => {
  const shown = conversation([finishedRun(20), samplingRun]);
  const asking = conversation([finishedRun(LONG), askingRun]);
  for (const id of [shown, asking]) {
    assert.is(await endUnshowableTurn(a, id, PRINCIPAL, READER), false);
    assert.is((await b.getConversation(id, PRINCIPAL))?.status, 'input_required');
  }
  const finished = conversation([finishedRun(LONG)], 'completed');
  assert.is(await endUnshowableTurn(a, finished, PRINCIPAL, READER), false, 'a task not parked is left alone');
});

/** The task context of one node (no model of its own: its tasks run on their client's model). */
const context = (store: AsyncConversationStore): TaskContext => ({
  store: () => store, principal: PRINCIPAL, local: false, forbidWrites: false, sessionId: 'modern', env: {},
  openAllowance: (): TaskAllowance => ({ release: () => undefined, admitTurn: async () => undefined, admitModelCall: async () => undefined }),
  supervise: async () => { throw new Error('a task in rounds is not supervised'); },
});

test('any node\'s tasks/get ends it: the poll answers interrupted at once, not input_required with no request', async () => {
  const id = conversation([finishedRun(LONG), samplingRun]);
  const task = context(b);
  const read = await new Promise<EffectResult>((resolve) => {
    new EffectRunner({ workspace: home, logger, toolTimeoutMs: 10_000, task, detached: new DetachedTasks() }, resolve).run({ kind: 'readTask', ticket: 1, taskId: id, canAsk: false });
  });
  assert.is(read.kind, 'taskRead');
  const found = read.kind === 'taskRead' ? read.task : null;
  assert.is(found?.status, 'interrupted');
  assert.is(found?.outcome?.text, unshowableTurnText(id));
});

test('the node that parks it ends it at once, with no poll and long before its wait would be over', async () => {
  const id = conversation([finishedRun(LONG)], 'completed');
  const ws = path.join(home, 'ws');
  await mkdir(ws);
  const task = context(a);
  const deps: DetachedStartDeps = { workspace: ws, toolTimeoutMs: 10_000, executeTool: runTool, logger, clock: systemClock };
  const effect: Extract<Effect, { kind: 'runTool' }> = {
    kind: 'runTool', ticket: 1, requestId: 1, tool: 'harness_task', args: { harness: 'super-pi-code', prompt: 'and now?', conversation_id: id }, harness: 'super-pi-code',
    client: { sampling: true, elicitation: false }, rounds: { sample: true, ask: false, resume: null }, task: true,
  };
  const node = new DetachedTasks({ inputWaitMs: 3_600_000 });
  const created = await node.start(effect, task, deps, {} as Scheduler);
  assert.is(created.kind, 'taskCreated', JSON.stringify(created));
  await pollUntil('the task to end', async () => ((await b.getConversation(id, PRINCIPAL))?.status === 'interrupted' ? true : null), 20_000);
  assert.is((await readStoredTask(b, PRINCIPAL, id, READER))?.outcome?.text, unshowableTurnText(id));
});

test.run();
