// A Tasks-extension task that asks its person (detached-tasks.ts, task-input.ts), on two stores of one SQLite
// file standing for two nodes, the server's model a scripted OpenAI-compatible endpoint and the real tool
// runner in a temporary workspace: the task parks `input_required` at bash's question; two answers at once
// on two nodes resume it once; a wait past TASK_INPUT_WAIT_MS ends unanswered, by the parking node's timer
// or by another node's `tasks/get`; a parked task holds no task slot.

import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Scheduler } from '../../src/actors/scheduler.ts';
import { createLogger } from '../../src/log/logger.ts';
import type { Effect, EffectResult } from '../../src/mcp/effects.ts';
import { type AsyncConversationStore, SyncStoreAdapter } from '../../src/store/async-store.ts';
import { databasePath } from '../../src/store/location.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import { systemClock } from '../../src/time/clock.ts';
import { runTool } from '../../src/tools/tool-runner.ts';
import { DetachedTasks, type DetachedStartDeps } from '../../src/task/detached-tasks.ts';
import type { TaskAllowance } from '../../src/task/principal-budget.ts';
import type { TaskContext } from '../../src/task/task-context.ts';
import { type ParkedInput, parkedInput } from '../../src/task/task-input.ts';
import { MAX_PARKED_QUESTIONS } from '../../src/limits.ts';
import { readStoredTask } from '../../src/task/task-status.ts';
import { type ScriptedServer, type ScriptStep, startScriptedServer } from '../model/fixtures/scripted-server.ts';
import { pollUntil } from '../hang-guard.ts';
import { fakeOwnership } from '../store/contract.ts';
import { removeHome, tempHome } from '../store/helpers.ts';

const logger = createLogger('error', { write: () => true });
const PRINCIPAL = 'token:alice';
const REMOTE = { local: false, forbidWrites: false, canConfirm: true };
const bashTurn = (command: string): ScriptStep => ({
  body: { choices: [{ finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'call-bash-0', type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command }) } }] } }] },
});
/** One model turn asking for two bash commands at once (parallel tool calls): both under `ask`. Call ids are unique in a run, as a model's are. */
const twoBashTurn = (first: string, second: string, turn = 1): ScriptStep => ({
  body: { choices: [{ finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [
    { id: `call-bash-${turn}-0`, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: first }) } },
    { id: `call-bash-${turn}-1`, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: second }) } },
  ] } }] },
});
const said = (text: string): ScriptStep => ({ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: text } }] } });
/** The asking path never schedules an actor: a round runs where it is started. */
const NO_SCHEDULER = {} as Scheduler;

async function ground(script: ScriptStep[], options: { serverModel?: boolean } = {}) {
  const home = await tempHome();
  const ws = path.join(home, 'ws');
  await mkdir(ws);
  const model: ScriptedServer = await startScriptedServer(script);
  const env: Record<string, string> = options.serverModel === false ? {} : { SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted', SUPERPI_API_KEY: 'sk-test' };
  const open = (owner: string) => new SyncStoreAdapter(SqliteConversationStore.open(databasePath(home), { ownership: fakeOwnership(owner) }));
  const a = open('node-a');
  const b = open('node-b');
  let slots = 0;
  const deps = (store: AsyncConversationStore): DetachedStartDeps & { task: TaskContext } => ({
    task: {
      store: () => store, principal: PRINCIPAL, local: false, forbidWrites: false, sessionId: 'modern', env,
      openAllowance: (): TaskAllowance => {
        slots++;
        let held = true;
        return { release: () => { if (held) slots--; held = false; }, admitTurn: async () => undefined, admitModelCall: async () => undefined };
      },
      supervise: async () => { throw new Error('an asking task is not supervised'); },
    },
    workspace: ws, toolTimeoutMs: 10_000, executeTool: runTool, logger, clock: systemClock,
  });
  const effect: Extract<Effect, { kind: 'runTool' }> = {
    kind: 'runTool', ticket: 1, requestId: 1, tool: 'harness_task', args: { harness: 'super-pi-code', prompt: 'append with bash' }, harness: 'super-pi-code',
    client: { sampling: false, elicitation: false }, rounds: { sample: false, ask: true, resume: null }, task: true,
  };
  const start = async (node: DetachedTasks, store: AsyncConversationStore, rounds = effect.rounds!): Promise<string> => {
    const d = deps(store);
    const created: EffectResult = await node.start({ ...effect, rounds }, d.task, d, NO_SCHEDULER);
    if (created.kind !== 'taskCreated') throw new Error(`no task: ${JSON.stringify(created)}`);
    return created.task.taskId;
  };
  const status = async (id: string) => (await a.getConversation(id, PRINCIPAL))?.status;
  const until = (id: string, want: string) => pollUntil(`task ${id} to be ${want}`, async () => ((await status(id)) === want ? true : null), 10_000);
  return {
    a, b, ws, model, deps, start, status, until, slots: () => slots,
    async close() { await a.close(); await b.close(); await model.close(); await removeHome(home); },
  };
}

test('parks input_required at the question, holding no task slot; two answers at once on two nodes resume it once and the command runs once', async () => {
  const g = await ground([bashTurn('echo once >> out.txt'), said('Appended.')]);
  try {
    const nodeA = new DetachedTasks();
    const nodeB = new DetachedTasks();
    const id = await g.start(nodeA, g.a);
    await g.until(id, 'input_required');
    assert.is(g.slots(), 0, 'a parked task holds no slot of the principal\'s task budget');
    assert.equal(await g.b.expiredTasks(10), [], 'nor a lease another node could take over');
    const record = (await g.b.taskRecord(id, PRINCIPAL))!;
    const question = (await parkedInput(g.b, record, PRINCIPAL, REMOTE))!;
    if (question.kind !== 'ask') throw new Error(`parked at ${question.kind}, not a question`);
    assert.is(question.pending.length, 1, 'one call asked: one question');
    const [only] = question.pending;
    assert.match(only!.message, /run the command: echo once >> out\.txt/);
    assert.is(only!.key, `confirm-${question.turn}-${question.seq}`);
    const yes = [{ key: only!.key, person: { allowed: true, refusal: '' } }];
    const [byA, byB] = await Promise.all([nodeA.answer(id, yes, true, g.deps(g.a).task, g.deps(g.a)), nodeB.answer(id, yes, true, g.deps(g.b).task, g.deps(g.b))]);
    assert.equal([byA, byB], [true, true], 'both are the caller\'s task: both acked');
    await g.until(id, 'completed');
    assert.is(await readFile(path.join(g.ws, 'out.txt'), 'utf8'), 'once\n');
    assert.is(g.model.requests.length, 2, 'one resume asked the model once more');
    assert.is(await nodeB.answer(id, yes, true, { ...g.deps(g.b).task, principal: 'token:mallory' }, g.deps(g.b)), false, 'another principal\'s task is not found');
  } finally {
    await g.close();
  }
});

test('a wait past its limit ends unanswered by the parking node\'s timer: not run, the model reads why, the task completes', async () => {
  const g = await ground([bashTurn('echo late >> late.txt'), said('No answer, so not run.')]);
  try {
    const id = await g.start(new DetachedTasks({ inputWaitMs: 300 }), g.a);
    await g.until(id, 'completed');
    assert.match(JSON.stringify(g.model.requests.at(-1)?.body), /Not run: bash needs the person's confirmation and the person gave no answer within 0\.3 s \(TASK_INPUT_WAIT_MS\)/);
    assert.is(existsSync(path.join(g.ws, 'late.txt')), false);
  } finally {
    await g.close();
  }
});

test('another node\'s tasks/get ends a wait past its limit (the parking node\'s timer may have died); before it, nothing', async () => {
  const g = await ground([bashTurn('echo late >> late.txt'), said('Not run.')]);
  try {
    const id = await g.start(new DetachedTasks({ inputWaitMs: 60_000 }), g.a);
    await g.until(id, 'input_required');
    const patient = new DetachedTasks({ inputWaitMs: 60_000 });
    assert.is(await patient.expireIfDue(id, g.deps(g.b).task, g.deps(g.b)), false);
    assert.is(await g.status(id), 'input_required');
    const due = new DetachedTasks({ inputWaitMs: 0 });
    assert.is(await due.expireIfDue(id, g.deps(g.b).task, g.deps(g.b)), true);
    await g.until(id, 'completed');
    assert.match(JSON.stringify(g.model.requests.at(-1)?.body), /the person gave no answer/);
    assert.is(existsSync(path.join(g.ws, 'late.txt')), false);
  } finally {
    await g.close();
  }
});

const sampled = (text: string) => ({ role: 'assistant', model: 'client', stopReason: 'endTurn', content: { type: 'text', text } });
const CLIENT_MODEL = { sample: true, ask: false, resume: null } as const;
const REMOTE_UNASKABLE = { local: false, forbidWrites: false, canConfirm: false };

test('on the client\'s model (no model here): each turn parks input_required with its sampling/createMessage params; the answers, on either node, drive it to completed', async () => {
  const g = await ground([], { serverModel: false });
  try {
    await writeFile(path.join(g.ws, 'notes.txt'), 'the password is aubergine\n');
    const nodeA = new DetachedTasks();
    const nodeB = new DetachedTasks();
    const id = await g.start(nodeA, g.a, CLIENT_MODEL);
    await g.until(id, 'input_required');
    const conversation = async () => (await g.a.taskRecord(id, PRINCIPAL))!;
    const turn1 = (await parkedInput(g.b, await conversation(), PRINCIPAL, REMOTE_UNASKABLE))!;
    if (turn1.kind !== 'turn') throw new Error('not parked at a model turn');
    assert.is(turn1.key, `sample-1-${turn1.seq}`);
    const params = turn1.kind === 'turn' ? turn1.params : null;
    assert.match(JSON.stringify(params?.messages), /append with bash/, 'the prompt is the turn\'s message');
    assert.match(String(params?.systemPrompt), /read/, 'the tools are described in the system prompt');
    const read = sampled('<tool_call>{"name": "read", "arguments": {"path": "notes.txt"}}</tool_call>');
    assert.ok(await nodeB.answer(id, [{ key: turn1.key, sampled: read }], false, g.deps(g.b).task, g.deps(g.b)));
    await pollUntil('turn 2', async () => {
      const next = (await g.a.getConversation(id, PRINCIPAL))?.status === 'input_required' ? await parkedInput(g.a, await conversation(), PRINCIPAL, REMOTE_UNASKABLE) : null;
      return next !== null && next.turn === 2 ? true : null;
    }, 10_000);
    const turn2 = (await parkedInput(g.a, await conversation(), PRINCIPAL, REMOTE_UNASKABLE))!;
    assert.match(JSON.stringify(turn2.kind === 'turn' ? turn2.params?.messages : null), /the password is aubergine/, 'the read ran in the workspace');
    assert.ok(await nodeB.answer(id, [{ key: turn1.key, sampled: sampled('stale') }], false, g.deps(g.b).task, g.deps(g.b)), 'a stale turn\'s answer is acked');
    assert.is(await g.status(id), 'input_required', 'and changes nothing');
    if (turn2.kind !== 'turn') throw new Error('not parked at a model turn');
    assert.ok(await nodeA.answer(id, [{ key: turn2.key, sampled: sampled('It says aubergine.') }], false, g.deps(g.a).task, g.deps(g.a)));
    await g.until(id, 'completed');
    assert.is(g.model.requests.length, 0, 'no model of the server was asked');
  } finally {
    await g.close();
  }
});

test('a model turn nobody takes within the wait leaves the task interrupted (continuable), as a round trip\'s client that never came back', async () => {
  const g = await ground([], { serverModel: false });
  try {
    const id = await g.start(new DetachedTasks({ inputWaitMs: 300 }), g.a, CLIENT_MODEL);
    await g.until(id, 'interrupted');
  } finally {
    await g.close();
  }
});

const YES = { allowed: true, refusal: '' };
const DECLINED = { allowed: false, refusal: 'the person answered "decline"' };
type Ask = Extract<ParkedInput, { kind: 'ask' }>;

/** What the parked task waits for, read on `store` (a node): its questions not answered yet. */
async function asks(store: AsyncConversationStore, id: string): Promise<Ask> {
  const input = await parkedInput(store, (await store.taskRecord(id, PRINCIPAL))!, PRINCIPAL, REMOTE);
  if (input?.kind !== 'ask') throw new Error(`task ${id} is not parked at a question: ${JSON.stringify(input)}`);
  return input;
}

/** The tool results the model read at its last request, in order: [call id, text]. */
function toolResultsRead(model: ScriptedServer): [string, string][] {
  const body = model.requests.at(-1)?.body as { messages?: { role: string; tool_call_id?: string; content?: string }[] } | undefined;
  return (body?.messages ?? []).filter((m) => m.role === 'tool').map((m) => [m.tool_call_id ?? '', String(m.content)]);
}

test('several calls under ask in one turn park once with every question; an answer to one keeps it input_required at the other; the other answered on the other node resumes it there, each call as answered, in order', async () => {
  const g = await ground([twoBashTurn('echo one >> one.txt', 'echo two >> two.txt'), said('One ran, two was declined.')]);
  try {
    const nodeA = new DetachedTasks();
    const nodeB = new DetachedTasks();
    const id = await g.start(nodeA, g.a);
    await g.until(id, 'input_required');
    const parked = await asks(g.b, id);
    assert.equal(parked.pending.map((q) => q.key), [1, 2].map((n) => `confirm-${parked.turn}-${parked.seq}-${n}`), 'one key each, minted from the place');
    assert.match(parked.pending[0]!.message, /echo one >> one\.txt/);
    assert.match(parked.pending[1]!.message, /echo two >> two\.txt/);
    const shown = await readStoredTask(g.a, PRINCIPAL, id);
    assert.equal(shown?.question, { asks: parked.pending.map(({ key, message }) => ({ key, message })) }, 'both questions shown at once, on either node');
    const [first, second] = parked.pending as [Ask['pending'][number], Ask['pending'][number]];

    assert.ok(await nodeA.answer(id, [{ key: first.key, person: YES }], true, g.deps(g.a).task, g.deps(g.a)));
    assert.is(await g.status(id), 'input_required', 'one answer of two: still parked');
    assert.equal((await asks(g.b, id)).pending.map((q) => q.key), [second.key], 'only the unanswered key remains, on the other node too');
    assert.is(g.model.requests.length, 1, 'nothing resumed');
    assert.is(existsSync(path.join(g.ws, 'one.txt')), false, 'nothing ran before every question was answered');
    // Durable: a store opened afresh on the file (a restarted node) reads the same.
    const restarted = new SyncStoreAdapter(SqliteConversationStore.open(databasePath(path.dirname(g.ws)), { ownership: fakeOwnership('node-c') }));
    try {
      assert.equal((await asks(restarted, id)).pending.map((q) => q.key), [second.key]);
    } finally {
      await restarted.close();
    }
    assert.ok(await nodeB.answer(id, [{ key: first.key, person: DECLINED }], true, g.deps(g.b).task, g.deps(g.b)), 'a duplicate answer is acked');
    assert.ok(await nodeB.answer(id, [{ key: `confirm-${parked.turn}-${parked.seq}`, person: YES }, { key: 'unknown-key', person: YES }], true, g.deps(g.b).task, g.deps(g.b)), 'unknown keys are acked');
    assert.equal((await asks(g.a, id)).pending.map((q) => q.key), [second.key], 'and change nothing');

    assert.ok(await nodeB.answer(id, [{ key: second.key, person: DECLINED }], true, g.deps(g.b).task, g.deps(g.b)));
    await g.until(id, 'completed');
    assert.is(await readFile(path.join(g.ws, 'one.txt'), 'utf8'), 'one\n', 'the accepted call ran once');
    assert.is(existsSync(path.join(g.ws, 'two.txt')), false, 'the declined one did not');
    const results = toolResultsRead(g.model);
    assert.equal(results.map(([callId]) => callId), ['call-bash-1-0', 'call-bash-1-1'], 'in the turn\'s order');
    assert.match(results[1]![1], /Not run: bash needs the person's confirmation and the person answered "decline"/);
    assert.is(g.model.requests.length, 2);
    const types = (await g.a.entries(id, PRINCIPAL))!.map((e) => e.type);
    assert.equal(types.filter((t) => t === 'person_answer').length, 1, 'the first answer was recorded; the last resumed the task');
  } finally {
    await g.close();
  }
});

test('concurrent answers on two nodes: the same key lands once; different keys both land and resume it once; the last key answered twice resumes it once', async () => {
  const g = await ground([
    twoBashTurn('echo a >> a.txt', 'echo b >> b.txt'), twoBashTurn('echo c >> c.txt', 'echo d >> d.txt', 2), said('Done.'),
  ]);
  try {
    const nodeA = new DetachedTasks();
    const nodeB = new DetachedTasks();
    const id = await g.start(nodeA, g.a);
    await g.until(id, 'input_required');
    const [a, b] = (await asks(g.a, id)).pending as [Ask['pending'][number], Ask['pending'][number]];
    // The same key on two nodes at once: one answer wins.
    await Promise.all([
      nodeA.answer(id, [{ key: a.key, person: YES }], true, g.deps(g.a).task, g.deps(g.a)),
      nodeB.answer(id, [{ key: a.key, person: DECLINED }], true, g.deps(g.b).task, g.deps(g.b)),
    ]);
    const recorded = (await g.a.entries(id, PRINCIPAL))!.filter((e) => e.type === 'person_answer');
    assert.is(recorded.length, 1, 'one answer for the key');
    assert.equal((await asks(g.b, id)).pending.map((q) => q.key), [b.key]);
    const aRuns = (recorded[0]!.payload as { allowed: boolean }).allowed;
    // The last key on two nodes at once: one resume.
    await Promise.all([
      nodeA.answer(id, [{ key: b.key, person: YES }], true, g.deps(g.a).task, g.deps(g.a)),
      nodeB.answer(id, [{ key: b.key, person: YES }], true, g.deps(g.b).task, g.deps(g.b)),
    ]);
    await pollUntil('the second turn\'s park', async () => ((await g.status(id)) === 'input_required' && (await asks(g.a, id)).turn === 2 ? true : null), 10_000);
    assert.is(existsSync(path.join(g.ws, 'a.txt')), aRuns, 'the call ran as the answer that won said');
    assert.is(await readFile(path.join(g.ws, 'b.txt'), 'utf8'), 'b\n', 'the last call ran once');
    // Different keys on two nodes at once: both land, one of them resumes it.
    const [c, d] = (await asks(g.b, id)).pending as [Ask['pending'][number], Ask['pending'][number]];
    await Promise.all([
      nodeA.answer(id, [{ key: c.key, person: YES }], true, g.deps(g.a).task, g.deps(g.a)),
      nodeB.answer(id, [{ key: d.key, person: YES }], true, g.deps(g.b).task, g.deps(g.b)),
    ]);
    await g.until(id, 'completed');
    assert.is(await readFile(path.join(g.ws, 'c.txt'), 'utf8'), 'c\n');
    assert.is(await readFile(path.join(g.ws, 'd.txt'), 'utf8'), 'd\n');
    assert.is(g.model.requests.length, 3, 'each resume asked the model once');
  } finally {
    await g.close();
  }
});

test('one tasks/update answering every question resumes at once; a wait past its limit counts only the unanswered as no answer', async () => {
  const g = await ground([twoBashTurn('echo x >> x.txt', 'echo y >> y.txt'), twoBashTurn('echo p >> p.txt', 'echo q >> q.txt', 2), said('Done.')]);
  try {
    const node = new DetachedTasks({ inputWaitMs: 60_000 });
    const id = await g.start(node, g.a);
    await g.until(id, 'input_required');
    const both = (await asks(g.a, id)).pending.map((q) => ({ key: q.key, person: YES }));
    assert.ok(await node.answer(id, both, true, g.deps(g.a).task, g.deps(g.a)));
    await pollUntil('the second turn\'s park', async () => ((await g.status(id)) === 'input_required' && (await asks(g.a, id)).turn === 2 ? true : null), 10_000);
    assert.is(await readFile(path.join(g.ws, 'x.txt'), 'utf8'), 'x\n');
    assert.is(await readFile(path.join(g.ws, 'y.txt'), 'utf8'), 'y\n');
    const [p] = (await asks(g.a, id)).pending;
    assert.ok(await node.answer(id, [{ key: p!.key, person: YES }], true, g.deps(g.a).task, g.deps(g.a)));
    assert.is(await new DetachedTasks({ inputWaitMs: 0 }).expireIfDue(id, g.deps(g.b).task, g.deps(g.b)), true, 'another node ends the wait');
    await g.until(id, 'completed');
    assert.is(await readFile(path.join(g.ws, 'p.txt'), 'utf8'), 'p\n', 'the answered call ran');
    assert.is(existsSync(path.join(g.ws, 'q.txt')), false, 'the unanswered one did not');
    assert.match(toolResultsRead(g.model)[3]![1], /Not run: bash needs the person's confirmation and the person gave no answer/);
  } finally {
    await g.close();
  }
});

test('an answer to one of several questions moves the task\'s lastUpdatedAt, and the wait still runs from the park', async () => {
  const WAIT_MS = 1500;
  const g = await ground([twoBashTurn('echo w >> w.txt', 'echo z >> z.txt'), said('Done.')]);
  try {
    const node = new DetachedTasks({ inputWaitMs: 60_000 });
    const id = await g.start(node, g.a);
    await g.until(id, 'input_required');
    const parked = (await g.a.taskRecord(id, PRINCIPAL))!;
    assert.ok(parked.result?.parkedAt !== undefined, 'the park keeps its time with its counts');
    // Past the wait since the park, then an answer to one question: the wait is over all the same.
    await new Promise((r) => setTimeout(r, WAIT_MS));
    const [first] = (await asks(g.a, id)).pending;
    assert.ok(await node.answer(id, [{ key: first!.key, person: YES }], true, g.deps(g.a).task, g.deps(g.a)));
    const answered = (await g.b.taskRecord(id, PRINCIPAL))!;
    assert.is(answered.conversation.status, 'input_required');
    assert.ok(answered.conversation.updatedAt > parked.conversation.updatedAt, 'the answer moved updatedAt (the task\'s lastUpdatedAt)');
    assert.is(answered.result?.parkedAt, parked.result?.parkedAt);
    assert.is(await new DetachedTasks({ inputWaitMs: WAIT_MS }).expireIfDue(id, g.deps(g.b).task, g.deps(g.b)), true, 'another node ends the wait, counted from the park');
    await g.until(id, 'completed');
    assert.is(await readFile(path.join(g.ws, 'w.txt'), 'utf8'), 'w\n', 'the answered call ran');
    assert.is(existsSync(path.join(g.ws, 'z.txt')), false, 'the unanswered one did not');
  } finally {
    await g.close();
  }
});

test('a turn asking more than MAX_PARKED_QUESTIONS parks with the first ones; once they ran it parks again for the rest', async () => {
  const count = MAX_PARKED_QUESTIONS + 1;
  const calls = Array.from({ length: count }, (_, i) => ({ id: `call-many-${i}`, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: `echo ${i} >> many-${i}.txt` }) } }));
  const g = await ground([{ body: { choices: [{ finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: calls } }] } }, said('All asked.')]);
  try {
    const node = new DetachedTasks();
    const id = await g.start(node, g.a);
    await g.until(id, 'input_required');
    const first = await asks(g.a, id);
    assert.is(first.pending.length, MAX_PARKED_QUESTIONS);
    assert.ok(await node.answer(id, first.pending.map((q) => ({ key: q.key, person: YES })), true, g.deps(g.a).task, g.deps(g.a)));
    await pollUntil('the park for the rest', async () => ((await g.status(id)) === 'input_required' && (await asks(g.a, id)).seq !== first.seq ? true : null), 10_000);
    const rest = await asks(g.b, id);
    assert.equal(rest.pending.map((q) => q.key), [`confirm-${rest.turn}-${rest.seq}`], 'the one left, asked alone, in the same turn');
    assert.is(rest.turn, first.turn);
    assert.is(await readFile(path.join(g.ws, `many-${MAX_PARKED_QUESTIONS - 1}.txt`), 'utf8'), `${MAX_PARKED_QUESTIONS - 1}\n`, 'the first ones ran');
    assert.is(existsSync(path.join(g.ws, `many-${MAX_PARKED_QUESTIONS}.txt`)), false);
    assert.ok(await node.answer(id, [{ key: rest.pending[0]!.key, person: YES }], true, g.deps(g.b).task, g.deps(g.b)));
    await g.until(id, 'completed');
    assert.is(await readFile(path.join(g.ws, `many-${MAX_PARKED_QUESTIONS}.txt`), 'utf8'), `${MAX_PARKED_QUESTIONS}\n`);
    assert.equal(toolResultsRead(g.model).map(([callId]) => callId), calls.map((c) => c.id), 'every result, in the turn\'s order');
  } finally {
    await g.close();
  }
});

test('an answer resumes the task in the workspace it started in (its session\'s chosen root), not the answering node\'s configured one, on either node', async () => {
  const g = await ground([bashTurn('echo here > where.txt'), said('Written.')]);
  try {
    const chosen = path.join(g.ws, 'chosen-root');
    await mkdir(chosen);
    const nodeA = new DetachedTasks();
    const d = g.deps(g.a);
    const created = await nodeA.start({
      kind: 'runTool', ticket: 1, requestId: 1, tool: 'harness_task', args: { harness: 'super-pi-code', prompt: 'write where.txt' }, harness: 'super-pi-code',
      client: { sampling: false, elicitation: false }, rounds: { sample: false, ask: true, resume: null }, task: true, workspace: chosen,
    }, d.task, d, NO_SCHEDULER);
    if (created.kind !== 'taskCreated') throw new Error(`no task: ${JSON.stringify(created)}`);
    const id = created.task.taskId;
    await g.until(id, 'input_required');
    const question = (await parkedInput(g.b, (await g.b.taskRecord(id, PRINCIPAL))!, PRINCIPAL, REMOTE))!;
    if (question.kind !== 'ask') throw new Error(`parked at ${question.kind}, not a question`);
    // Answered on the other node, whose configured workspace (g.ws) is not where the task ran.
    await new DetachedTasks().answer(id, [{ key: question.pending[0]!.key, person: { allowed: true, refusal: '' } }], true, g.deps(g.b).task, g.deps(g.b));
    await g.until(id, 'completed');
    assert.is(await readFile(path.join(chosen, 'where.txt'), 'utf8'), 'here\n', 'the confirmed command ran where the task works');
    assert.not.ok(existsSync(path.join(g.ws, 'where.txt')), 'and not in the answering node\'s workspace');
  } finally {
    await g.close();
  }
});

test.run();
