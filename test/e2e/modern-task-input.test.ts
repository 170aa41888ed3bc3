// End to end with raw JSON-RPC: a Tasks-extension harness_task (SEP-2663) on the server's model (a scripted
// OpenAI-compatible one) whose person is asked from inside it. super-pi-code's `bash` is `ask`: a token
// caller that declares form elicitation and the extension gets a task that parks `input_required` with the
// confirmation form, and `tasks/update` delivers the answer — on the node that parked it or on a second node
// of the same store. Accept runs the command, decline tells the model "Not run"; a duplicate or stale answer
// changes nothing, another token's update is -32602. Two calls under `ask` in one model turn are asked at
// once and may be answered one at a time (SEP-2663 partial fulfilment). Over stdio the local user is never asked: the task
// runs the command without parking.

import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type ScriptedServer, type ScriptStep, startScriptedServer } from '../model/fixtures/scripted-server.ts';
import { pollUntil } from '../hang-guard.ts';
import { makeSandbox, repoRoot, type RunningServer, type Sandbox, stdioEntry } from './fixtures.ts';
import { type TwoNodes, startTwoNodes } from './two-nodes.ts';
import { httpAsk, httpListen, type Message, stdioAsker, TASKS, type Who } from './task-listen-wire.ts';

type InputRequests = Record<string, { method: string; params: { message: string; requestedSchema: unknown } }>;

const ASKABLE = { elicitation: { form: {} }, extensions: { [TASKS]: {} } };
const bashTurn = (command: string): ScriptStep => ({
  body: { choices: [{ finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'call-bash-0', type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command }) } }] } }] },
});
const said = (text: string): ScriptStep => ({ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: text } }] } });

/** A request of a caller who can be asked (form elicitation and the extension declared, unless told otherwise). */
const post = (server: RunningServer, method: string, params: Record<string, unknown>, who: Who = 'alice', capabilities: object = ASKABLE): Promise<Message> =>
  httpAsk(server, method, params, who, capabilities);

const http = suite('a Tasks-extension task asks its person through input_required and tasks/update (HTTP, two nodes on one store)');
const script: ScriptStep[] = [];
let nodes: TwoNodes;
let box: Sandbox;
let model: ScriptedServer;
let nodeA: RunningServer;
let nodeB: RunningServer;

http.before(async () => {
  nodes = await startTwoNodes(script);
  ({ box, model, nodeA, nodeB } = nodes);
});
http.after(async () => {
  await nodes?.stop();
});

const poll = (node: RunningServer, taskId: string, want: (status: unknown) => boolean) => pollUntil(`task ${taskId} to settle`, async () => {
  const got = await post(node, 'tasks/get', { taskId });
  return want(got.result?.status) ? got : null;
}, 15_000);

/** Submits a super-pi-code task on node A and polls it to input_required with `count` input requests: its id, their keys and them. */
async function parkedWith(prompt: string, count: number): Promise<{ taskId: string; keys: string[]; requests: InputRequests }> {
  const created = await post(nodeA, 'tools/call', { name: 'harness_task', arguments: { harness: 'super-pi-code', prompt } });
  assert.is(created.result?.resultType, 'task', JSON.stringify(created));
  const taskId = String(created.result?.taskId);
  const waiting = await poll(nodeA, taskId, (s) => s !== 'working');
  assert.is(waiting.result?.status, 'input_required', JSON.stringify(waiting));
  const requests = waiting.result?.inputRequests as InputRequests;
  const keys = Object.keys(requests);
  assert.is(keys.length, count, JSON.stringify(requests));
  for (const absent of ['result', 'error', 'requestState']) assert.not.ok(absent in (waiting.result ?? {}), absent);
  return { taskId, keys, requests };
}

/** The same, parked at one question: its key. */
async function parked(prompt: string): Promise<{ taskId: string; key: string; requests: InputRequests }> {
  const { taskId, keys, requests } = await parkedWith(prompt, 1);
  return { taskId, key: keys[0]!, requests };
}

const ACCEPT = { action: 'accept', content: { allow: true } };

http('accept: input_required with the confirmation form (on both nodes); the other node takes the answer, the command runs once, the task completes', async () => {
  script.push(bashTurn('echo yes >> accepted.txt'), said('Done: appended.'));
  const { taskId, key, requests } = await parked('append yes');
  assert.match(key, /^confirm-\d+-\d+$/);
  assert.is(requests[key]!.method, 'elicitation/create');
  assert.match(requests[key]!.params.message, /run the command: echo yes >> accepted\.txt/);
  assert.equal(requests[key]!.params.requestedSchema, { type: 'object', properties: { allow: { type: 'boolean', title: 'Allow', description: 'Allow this call', default: true } } });
  assert.is(existsSync(path.join(box.ws, 'accepted.txt')), false, 'nothing runs before the answer');
  const elsewhere = await post(nodeB, 'tasks/get', { taskId });
  assert.equal(elsewhere.result?.inputRequests, requests, 'a node that did not run the task reads the same question from the store');

  const bobs = await post(nodeB, 'tasks/update', { taskId, inputResponses: { [key]: ACCEPT } }, 'bob');
  assert.is(bobs.error?.code, -32602, JSON.stringify(bobs));
  const bobGets = await post(nodeB, 'tasks/get', { taskId }, 'bob');
  assert.is(bobGets.error?.code, -32602);

  const ack = await post(nodeB, 'tasks/update', { taskId, inputResponses: { [key]: ACCEPT } });
  assert.equal(Object.keys(ack.result ?? {}).sort(), ['_meta', 'resultType'], JSON.stringify(ack));
  assert.is(ack.result?.resultType, 'complete');
  const done = await poll(nodeA, taskId, (s) => s === 'completed' || s === 'failed' || s === 'cancelled');
  assert.is(done.result?.status, 'completed', JSON.stringify(done));
  const result = done.result?.result as { content: { text: string }[]; isError?: boolean };
  assert.is(result.content[0]?.text, 'Done: appended.');
  assert.is(await readFile(path.join(box.ws, 'accepted.txt'), 'utf8'), 'yes\n');

  const duplicate = await post(nodeA, 'tasks/update', { taskId, inputResponses: { [key]: ACCEPT } });
  assert.is(duplicate.result?.resultType, 'complete', 'a duplicate answer is acked');
  assert.is((await post(nodeA, 'tasks/get', { taskId })).result?.status, 'completed');
  assert.is(await readFile(path.join(box.ws, 'accepted.txt'), 'utf8'), 'yes\n', 'and runs nothing again');
});

http('decline: the model is told "Not run" and the task completes; the command never ran', async () => {
  script.push(bashTurn('echo no >> declined.txt'), said('Understood: not run.'));
  const asked = model.requests.length;
  const { taskId, key } = await parked('append no');
  const ack = await post(nodeA, 'tasks/update', { taskId, inputResponses: { [key]: { action: 'decline' } } });
  assert.is(ack.result?.resultType, 'complete', JSON.stringify(ack));
  const done = await poll(nodeA, taskId, (s) => s !== 'working' && s !== 'input_required');
  assert.is(done.result?.status, 'completed', JSON.stringify(done));
  assert.is((done.result?.result as { content: { text: string }[] }).content[0]?.text, 'Understood: not run.');
  assert.is(model.requests.length, asked + 2);
  assert.match(JSON.stringify(model.requests.at(-1)?.body), /Not run: bash needs the person's confirmation and the person answered \\"decline\\"/);
  assert.is(existsSync(path.join(box.ws, 'declined.txt')), false);
});

http('an answer to a key not pending (stale or unknown) is acked and changes nothing; the parked task can be cancelled', async () => {
  script.push(bashTurn('echo stale >> stale.txt'));
  const { taskId, key, requests } = await parked('append stale');
  const [, turn, seq] = key.split('-').map(Number);
  for (const other of [`confirm-${turn}-${seq! - 1}`, `confirm-${turn! + 1}-${seq}`, 'unknown-key']) {
    const ack = await post(nodeB, 'tasks/update', { taskId, inputResponses: { [other]: ACCEPT } });
    assert.is(ack.result?.resultType, 'complete', JSON.stringify(ack));
  }
  const still = await post(nodeA, 'tasks/get', { taskId });
  assert.is(still.result?.status, 'input_required');
  assert.equal(still.result?.inputRequests, requests);
  const missing = await post(nodeA, 'tasks/update', { taskId: '00000000-0000-4000-8000-000000000000', inputResponses: { [key]: ACCEPT } });
  assert.is(missing.error?.code, -32602);
  const cancelled = await post(nodeB, 'tasks/cancel', { taskId });
  assert.is(cancelled.result?.resultType, 'complete');
  assert.is((await post(nodeA, 'tasks/get', { taskId })).result?.status, 'cancelled');
  const late = await post(nodeA, 'tasks/update', { taskId, inputResponses: { [key]: ACCEPT } });
  assert.is(late.result?.resultType, 'complete', 'an answer after the cancel is acked');
  assert.is((await post(nodeA, 'tasks/get', { taskId })).result?.status, 'cancelled');
  assert.is(existsSync(path.join(box.ws, 'stale.txt')), false, 'and runs nothing');
});

http('two calls under ask in one model turn: both questions at once; one answered leaves only the other (on either node); the other answered on the other node resumes it there, the accepted call run and the declined one "Not run", in order', async () => {
  script.push({
    body: { choices: [{ finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [
      { id: 'call-pair-0', type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: 'echo first >> first.txt' }) } },
      { id: 'call-pair-1', type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: 'echo second >> second.txt' }) } },
    ] } }] },
  }, said('First ran; second was declined.'));
  const asked = model.requests.length;
  const { taskId, keys, requests } = await parkedWith('append both', 2);
  const [first, second] = keys as [string, string];
  assert.match(requests[first]!.params.message, /echo first >> first\.txt/);
  assert.match(requests[second]!.params.message, /echo second >> second\.txt/);
  assert.equal((await post(nodeB, 'tasks/get', { taskId })).result?.inputRequests, requests, 'the same questions on the other node');

  const partial = await post(nodeA, 'tasks/update', { taskId, inputResponses: { [first]: ACCEPT } });
  assert.is(partial.result?.resultType, 'complete', JSON.stringify(partial));
  for (const node of [nodeA, nodeB]) {
    const still = await post(node, 'tasks/get', { taskId });
    assert.is(still.result?.status, 'input_required', 'one of two answered: still waiting');
    assert.equal(Object.keys(still.result?.inputRequests as object), [second], 'only the unanswered key remains');
  }
  assert.is(existsSync(path.join(box.ws, 'first.txt')), false, 'nothing runs before every question is answered');

  const last = await post(nodeB, 'tasks/update', { taskId, inputResponses: { [second]: { action: 'decline' } } });
  assert.is(last.result?.resultType, 'complete', JSON.stringify(last));
  const done = await poll(nodeA, taskId, (s) => s !== 'working' && s !== 'input_required');
  assert.is(done.result?.status, 'completed', JSON.stringify(done));
  assert.is(await readFile(path.join(box.ws, 'first.txt'), 'utf8'), 'first\n');
  assert.is(existsSync(path.join(box.ws, 'second.txt')), false);
  assert.is(model.requests.length, asked + 2);
  const told = JSON.stringify(model.requests.at(-1)?.body);
  assert.match(told, /Not run: bash needs the person's confirmation and the person answered \\"decline\\"/);
  assert.ok(told.indexOf('"tool_call_id":"call-pair-0"') < told.indexOf('"tool_call_id":"call-pair-1"'), 'the results in the turn\'s order');
});

http('a listen on the other node hears an answer to one of two questions: input_required again, only the other key, lastUpdatedAt moved', async () => {
  script.push({
    body: { choices: [{ finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [
      { id: 'call-heard-0', type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: 'echo left >> left.txt' }) } },
      { id: 'call-heard-1', type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: 'echo right >> right.txt' }) } },
    ] } }] },
  }, said('Both ran.'));
  const { taskId, keys } = await parkedWith('append left and right', 2);
  const [first, second] = keys as [string, string];
  // Node B hears node A's write through the SQLite change feed (another process on the same file).
  const stream = await httpListen(nodeB, { taskIds: [taskId] });
  try {
    await stream.next('the acknowledgment');
    const before = await stream.next('the state at the acknowledgment');
    assert.equal([before.params?.status, Object.keys(before.params?.inputRequests as object)], ['input_required', [first, second]], JSON.stringify(before));
    const partial = await post(nodeA, 'tasks/update', { taskId, inputResponses: { [first]: ACCEPT } });
    assert.is(partial.result?.resultType, 'complete', JSON.stringify(partial));
    const heard = await stream.next('the partial answer');
    assert.equal([heard.method, heard.params?.taskId, heard.params?.status], ['notifications/tasks', taskId, 'input_required'], JSON.stringify(heard));
    assert.equal(Object.keys(heard.params?.inputRequests as object), [second], 'only the unanswered question is left');
    assert.ok(String(heard.params?.lastUpdatedAt) > String(before.params?.lastUpdatedAt), `lastUpdatedAt moved: ${String(before.params?.lastUpdatedAt)} -> ${String(heard.params?.lastUpdatedAt)}`);
    const polled = await post(nodeB, 'tasks/get', { taskId });
    assert.equal([polled.result?.inputRequests, polled.result?.lastUpdatedAt], [heard.params?.inputRequests, heard.params?.lastUpdatedAt], 'what tasks/get reads');

    assert.is((await post(nodeA, 'tasks/update', { taskId, inputResponses: { [second]: ACCEPT } })).result?.resultType, 'complete');
    const after: unknown[] = [];
    while (after.at(-1) !== 'completed') {
      const m = await stream.next('the task going on');
      assert.is(m.method, 'notifications/tasks', JSON.stringify(m));
      after.push(m.params?.status);
    }
    assert.is(await readFile(path.join(box.ws, 'right.txt'), 'utf8'), 'right\n');
  } finally {
    await stream.close();
  }
});

http('a listen naming the task hears it park input_required with its question, then go on after the answer to completed', async () => {
  let release!: () => void;
  script.push({ ...bashTurn('echo heard >> heard.txt'), release: new Promise<void>((r) => (release = r)) }, said('Done: heard.'));
  const created = await post(nodeA, 'tools/call', { name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'append heard' } });
  assert.is(created.result?.resultType, 'task', JSON.stringify(created));
  const taskId = String(created.result?.taskId);
  const stream = await httpListen(nodeA, { taskIds: [taskId] });
  try {
    const ack = await stream.next('the acknowledgment');
    assert.equal(ack.params?.notifications, { taskIds: [taskId] }, JSON.stringify(ack));
    const first = await stream.next('the state at the acknowledgment');
    assert.equal([first.method, first.params?.status], ['notifications/tasks', 'working'], JSON.stringify(first));
    // The model's turn is held until now: the park happens while the stream listens (a park appends no
    // entry, so only the round's own report of it can tell the stream).
    release();
    const waiting = await stream.next('the park');
    assert.equal([waiting.method, waiting.params?.taskId, waiting.params?.status], ['notifications/tasks', taskId, 'input_required'], JSON.stringify(waiting));
    const requests = waiting.params?.inputRequests as InputRequests;
    const polled = await post(nodeA, 'tasks/get', { taskId });
    assert.equal(requests, polled.result?.inputRequests, 'the question tasks/get reads');
    const [key] = Object.keys(requests);
    const ack2 = await post(nodeA, 'tasks/update', { taskId, inputResponses: { [key!]: ACCEPT } });
    assert.is(ack2.result?.resultType, 'complete', JSON.stringify(ack2));
    const after: unknown[] = [];
    while (after.at(-1) !== 'completed') {
      const m = await stream.next('the task going on');
      assert.is(m.method, 'notifications/tasks', JSON.stringify(m));
      after.push(m.params?.status);
    }
    // `working` is heard when the resume is read before the run ends (each status once, reads coalesce).
    assert.ok(after.length <= 2 && (after.length === 1 || after[0] === 'working'), JSON.stringify(after));
    assert.is(await readFile(path.join(box.ws, 'heard.txt'), 'utf8'), 'heard\n');
  } finally {
    await stream.close();
  }
});

http.run();

// --- stdio: the local user is never asked from inside a task ------------------------------------------

const stdio = suite('over stdio the local user is not asked: the task runs bash without parking');
let sbox: Sandbox;
let shome: string;
let smodel: ScriptedServer;
let child: ChildProcessWithoutNullStreams;
let ask: (method: string, params: Record<string, unknown>) => Promise<Message>;

stdio.before(async () => {
  sbox = await makeSandbox();
  shome = await mkdtemp(path.join(os.tmpdir(), 'superpi-home-'));
  smodel = await startScriptedServer([bashTurn('echo local >> local.txt'), said('Done locally.')]);
  child = spawn(process.execPath, ['--import', 'tsx', stdioEntry, '--workspace', sbox.ws], {
    cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, SUPERPI_MODEL_URL: `${smodel.url}/v1`, SUPERPI_MODEL: 'scripted', SUPERPI_API_KEY: 'sk-test', SUPERPI_HOME: shome },
  });
  ask = stdioAsker(child, ASKABLE);
  child.stderr.resume();
});
stdio.after(async () => {
  child.stdin.end();
  if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
  await smodel?.close();
  await sbox?.cleanup();
  await rm(shome, { recursive: true, force: true });
});

stdio('a task whose command would ask a remote caller runs it for the local user and completes', async () => {
  const created = await ask('tools/call', { name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'append local' } });
  assert.is(created.result?.resultType, 'task', JSON.stringify(created));
  const taskId = String(created.result?.taskId);
  const statuses = new Set<unknown>();
  const done = await pollUntil('the stdio task to finish', async () => {
    const got = await ask('tasks/get', { taskId });
    statuses.add(got.result?.status);
    return got.result?.status === 'working' ? null : got;
  }, 15_000);
  assert.is(done.result?.status, 'completed', JSON.stringify(done));
  assert.not.ok(statuses.has('input_required'));
  assert.is(await readFile(path.join(sbox.ws, 'local.txt'), 'utf8'), 'local\n');
});

stdio.run();
