// End to end with raw JSON-RPC (the SDK v2 client cannot drive SEP-2663): the 2026-07-28 Tasks extension
// for harness_task on a server with its own model (a scripted OpenAI-compatible one). A call that declares
// the extension gets a flat CreateTaskResult at once; tasks/get polls it to `completed` with the harness_task
// result inlined, equal to the result of the same task run synchronously; another principal's tasks/get is
// -32602; tasks/cancel stops a running task (`cancelled`) and acks a finished one. Over stdio and over
// Streamable HTTP (where tasks/* carry Mcp-Name: <taskId>), where a second node on the same store cancels
// a task the first runs.

import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type ScriptedServer, type ScriptStep, startScriptedServer } from '../model/fixtures/scripted-server.ts';
import { guarded, pollUntil } from '../hang-guard.ts';
import { makeSandbox, repoRoot, type RunningServer, type Sandbox, startHttpServerProcess, stdioEntry } from './fixtures.ts';

type Result = Record<string, unknown> & { content?: { text?: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };
type Message = { id?: unknown; method?: string; result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };

const TASKS = 'io.modelcontextprotocol/tasks';
const WITH_TASKS = { extensions: { [TASKS]: {} } };
const meta = (capabilities: object) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': capabilities,
  'io.modelcontextprotocol/clientInfo': { name: 'raw-tasks', version: '1' },
});

const toolTurn = (name: string, args: object): ScriptStep => ({
  body: { choices: [{ finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: `call-${name}`, type: 'function', function: { name, arguments: JSON.stringify(args) } }] } }] },
});
const answer = (text: string): ScriptStep => ({ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: text } }] } });

/** One transport's way to send a 2026-07-28 request as a principal (`who`) and get its answer. */
type Ask = (method: string, params: Record<string, unknown>, capabilities?: object, who?: 'alice' | 'bob') => Promise<Message>;

/** The content a client compares: a modern answer's envelope (`resultType`, `_meta`) aside. */
function body(result: Record<string, unknown> | undefined): Result {
  const { resultType: _type, _meta: _m, ...rest } = result ?? {};
  return rest as Result;
}

const PROMPT = 'What does notes.txt say?';
/** One task's model turns: read notes.txt, then answer from it. */
const readThenAnswer = (): ScriptStep[] => [toolTurn('read', { path: 'notes.txt' }), answer('It says: the password is aubergine.')];

/** `script`: the model's turns, consumed in order by every test of the suite (one server for the suite); the caller may add to it. */
function scenario(name: string, start: (env: Record<string, string>, ws: string) => Promise<{ ask: Ask; close: () => Promise<void>; other: boolean }>, script: ScriptStep[] = [], started?: (model: ScriptedServer) => void) {
  const t = suite(name);
  let box: Sandbox;
  let home: string;
  let model: ScriptedServer;
  let ask: Ask;
  let close: () => Promise<void>;
  let other: boolean;

  t.before(async () => {
    box = await makeSandbox();
    home = await mkdtemp(path.join(os.tmpdir(), 'superpi-home-'));
    await writeFile(path.join(box.ws, 'notes.txt'), 'the password is aubergine\n');
    model = await startScriptedServer(script);
    started?.(model);
    ({ ask, close, other } = await start({ SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted', SUPERPI_API_KEY: 'sk-test', SUPERPI_HOME: home }, box.ws));
  });
  t.after(async () => {
    await close?.();
    await model?.close();
    await box?.cleanup();
    await rm(home, { recursive: true, force: true });
  });

  const poll = (taskId: string, done: (status: unknown) => boolean) => pollUntil(`task ${taskId} to settle`, async () => {
    const got = await ask('tasks/get', { taskId }, WITH_TASKS);
    return done(got.result?.status) ? got : null;
  }, 15_000);

  t('server/discover lists the extension', async () => {
    const found = await ask('server/discover', {});
    assert.equal((found.result?.capabilities as { extensions?: unknown }).extensions, { [TASKS]: {} });
  });

  t('a call declaring the extension gets a CreateTaskResult; tasks/get polls it to completed, its result that of the synchronous call', async () => {
    script.push(...readThenAnswer(), ...readThenAnswer());
    const sync = await ask('tools/call', { name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: PROMPT } });
    assert.is(sync.result?.resultType, 'complete', JSON.stringify(sync));

    const created = await ask('tools/call', { name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: PROMPT } }, WITH_TASKS);
    const task = created.result ?? {};
    assert.is(task.resultType, 'task', JSON.stringify(created));
    assert.is(task.status, 'working');
    assert.type(task.taskId, 'string');
    assert.match(String(task.createdAt), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/);
    assert.match(String(task.lastUpdatedAt), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/);
    assert.is(task.ttlMs, null);
    assert.ok(Number.isInteger(task.pollIntervalMs) && (task.pollIntervalMs as number) > 0);
    for (const absent of ['task', 'result', 'requestState', 'inputRequests', 'content']) assert.not.ok(absent in task, `no ${absent} in a CreateTaskResult`);

    const done = await poll(String(task.taskId), (s) => s !== 'working');
    assert.is(done.result?.status, 'completed', JSON.stringify(done));
    assert.is(done.result?.taskId, task.taskId);
    assert.not.ok('requestState' in (done.result ?? {}));
    const inlined = done.result?.result as Result;
    const expected = body(sync.result);
    // The same task, run twice: only the conversation differs.
    assert.equal({ ...inlined, structuredContent: { ...inlined.structuredContent, conversation_id: 'c' } }, { ...expected, structuredContent: { ...expected.structuredContent, conversation_id: 'c' } });
    assert.is(inlined.structuredContent?.conversation_id, task.taskId, 'the task id is the conversation id');
    assert.is(inlined.content?.[0]?.text, 'It says: the password is aubergine.');
    // The detached run's read ran in the workspace: the model's last turn was shown the file.
    const lastTurn = JSON.stringify(model.requests.at(-1)?.body);
    assert.match(lastTurn, /the password is aubergine/, 'the read tool ran in the workspace');
  });

  t('tasks/get of another principal\'s task, or of none, is -32602', async () => {
    script.push(answer('Nothing to do.'));
    const created = await ask('tools/call', { name: 'harness_task', arguments: { harness: 'super-pi-assistant', prompt: 'Say nothing.' } }, WITH_TASKS);
    const taskId = String(created.result?.taskId);
    await poll(taskId, (s) => s === 'completed');
    const unknown = await ask('tasks/get', { taskId: '00000000-0000-4000-8000-000000000000' }, WITH_TASKS);
    assert.is(unknown.error?.code, -32602);
    if (other) {
      const bobs = await ask('tasks/get', { taskId }, WITH_TASKS, 'bob');
      assert.is(bobs.error?.code, -32602, JSON.stringify(bobs));
      assert.is(bobs.error?.message, unknown.error?.message.replace('00000000-0000-4000-8000-000000000000', taskId), 'another principal\'s task reads as none');
      const bobCancels = await ask('tasks/cancel', { taskId }, WITH_TASKS, 'bob');
      assert.is(bobCancels.error?.code, -32602);
    }
  });

  t('tasks/cancel stops a running task (cancelled) with an empty ack, and acks it again once over', async () => {
    // The model takes its time, so the task is still running when the cancel arrives.
    script.push({ hang: true });
    const created = await ask('tools/call', { name: 'harness_task', arguments: { harness: 'super-pi-assistant', prompt: 'Think slowly.' } }, WITH_TASKS);
    const taskId = String(created.result?.taskId);
    const working = await ask('tasks/get', { taskId }, WITH_TASKS);
    assert.is(working.result?.status, 'working');
    assert.not.ok('result' in (working.result ?? {}));
    const ack = await ask('tasks/cancel', { taskId }, WITH_TASKS);
    assert.equal(Object.keys(ack.result ?? {}).sort(), ['_meta', 'resultType'], JSON.stringify(ack));
    assert.is(ack.result?.resultType, 'complete');
    const settled = await poll(taskId, (s) => s !== 'working');
    assert.is(settled.result?.status, 'cancelled');
    const again = await ask('tasks/cancel', { taskId }, WITH_TASKS);
    assert.is(again.result?.resultType, 'complete', 'idempotent for a task already over');
  });

  t('without the extension: tasks/* are -32021 naming it, and harness_task runs synchronously', async () => {
    for (const [method, params] of [['tasks/get', { taskId: 'x' }], ['tasks/update', { taskId: 'x', inputResponses: {} }], ['tasks/cancel', { taskId: 'x' }]] as const) {
      const refused = await ask(method, params);
      assert.is(refused.error?.code, -32021, `${method}: ${JSON.stringify(refused)}`);
      assert.equal(refused.error?.data, { requiredCapabilities: { extensions: { [TASKS]: {} } } });
    }
    const bad = await ask('tasks/get', { taskId: 7 }, WITH_TASKS);
    assert.is(bad.error?.code, -32602);
  });

  return t;
}

/** A stdio server spoken to line by line (one principal: the local user). */
class RawStdio {
  readonly child: ChildProcessWithoutNullStreams;
  #buf = '';
  #stderr = '';
  #next = 1;
  #waiters = new Map<unknown, (m: Message) => void>();

  constructor(ws: string, env: Record<string, string>) {
    this.child = spawn(process.execPath, ['--import', 'tsx', stdioEntry, '--workspace', ws], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    this.child.stderr.on('data', (d: Buffer) => (this.#stderr += d.toString()));
    this.child.stdout.on('data', (d: Buffer) => {
      this.#buf += d.toString();
      let nl: number;
      while ((nl = this.#buf.indexOf('\n')) !== -1) {
        const msg = JSON.parse(this.#buf.slice(0, nl)) as Message;
        this.#buf = this.#buf.slice(nl + 1);
        if (msg.method === undefined) this.#waiters.get(msg.id)?.(msg);
      }
    });
  }

  ask: Ask = (method, params, capabilities = {}) => {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${method}; stderr: ${this.#stderr}`)), 15_000);
      this.#waiters.set(id, (m) => { clearTimeout(timer); this.#waiters.delete(id); resolve(m); });
      this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta(capabilities) } })}\n`);
    });
  };

  async close(): Promise<void> {
    this.child.stdin.end();
    if (this.child.exitCode === null) await new Promise((r) => this.child.once('exit', r));
  }
}

scenario('Tasks extension over stdio, raw JSON-RPC', async (env, ws) => {
  const s = new RawStdio(ws, env);
  return { ask: s.ask, close: () => s.close(), other: false };
}).run();

const TOKENS = { alice: 'tok-alice-123', bob: 'tok-bob-4567' };

/** POSTs one 2026-07-28 request with the headers its body implies (Mcp-Name: the tool, or the task id). */
async function post(server: RunningServer, method: string, params: Record<string, unknown>, capabilities: object, who: 'alice' | 'bob', headers: Record<string, string> = {}): Promise<{ status: number; message: Message }> {
  const name = method === 'tools/call' ? params.name : method.startsWith('tasks/') ? params.taskId : undefined;
  const res = await fetch(server.url, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${TOKENS[who]}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method, ...(typeof name === 'string' ? { 'Mcp-Name': name } : {}), ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta(capabilities) } }),
  });
  const text = await res.text();
  const data = res.headers.get('content-type')?.includes('text/event-stream')
    ? text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).filter((l) => l.includes('"id"')).pop() ?? '{}'
    : text;
  return { status: res.status, message: JSON.parse(data) as Message };
}

let httpServer: RunningServer;
/** A second node on the same store (one SQLite file): it did not run the tasks, and reads and cancels them through the store. */
let otherNode: RunningServer;
let httpModel: ScriptedServer;
const httpScript: ScriptStep[] = [];
/** The task lease (`--task-lease`, seconds): renewed every third of it, so a node meets a fence within a second. */
const LEASE_SECONDS = 3;
const http = scenario('Tasks extension over Streamable HTTP, raw POSTs', async (env, ws) => {
  const start = () => startHttpServerProcess(ws, ['--threads', '1', '--tool-threads', '1', '--task-lease', String(LEASE_SECONDS)], { ...env, SUPERPI_TOKENS: `${TOKENS.alice}=alice,${TOKENS.bob}=bob` });
  [httpServer, otherNode] = await Promise.all([start(), start()]);
  return {
    ask: async (method, params, capabilities = {}, who = 'alice') => (await post(httpServer, method, params, capabilities, who)).message,
    close: async () => { await Promise.all([httpServer.stop(), otherNode.stop()]); },
    other: true,
  };
}, httpScript, (model) => (httpModel = model));

http('a tasks/cancel sent to another node of the same store cancels the task: cancelled on both nodes, and the node running it stops', async () => {
  httpScript.push({ hang: true });
  const asked = httpModel.requests.length;
  const created = await post(httpServer, 'tools/call', { name: 'harness_task', arguments: { harness: 'super-pi-assistant', prompt: 'Wait for the model.' } }, WITH_TASKS, 'alice');
  const taskId = String(created.message.result?.taskId);
  assert.is(created.message.result?.resultType, 'task', JSON.stringify(created.message));
  const request = await pollUntil('the running node to ask the model', () => httpModel.requests[asked] ?? null, 15_000);
  const elsewhere = await post(otherNode, 'tasks/get', { taskId }, WITH_TASKS, 'alice');
  assert.is(elsewhere.message.result?.status, 'working', JSON.stringify(elsewhere.message));

  const ack = await post(otherNode, 'tasks/cancel', { taskId }, WITH_TASKS, 'alice');
  assert.equal(Object.keys(ack.message.result ?? {}).sort(), ['_meta', 'resultType'], JSON.stringify(ack.message));
  assert.is(ack.message.result?.resultType, 'complete');
  // Recorded before the ack: both nodes read it at once.
  for (const node of [otherNode, httpServer]) {
    const got = await post(node, 'tasks/get', { taskId }, WITH_TASKS, 'alice');
    assert.is(got.message.result?.status, 'cancelled', JSON.stringify(got.message));
    assert.match(String(got.message.result?.statusMessage), 'cancelled by the client (tasks/cancel)');
  }
  // The running node meets the fence at its next lease renewal: it aborts its model request and stops.
  await guarded(request.closed, 'the running node to abort its model request', 15_000);
  await pollUntil('the running node to log that it stopped', () => (/lost a task to another holder \(its write was fenced\)/.test(httpServer.stderr()) ? true : null), 15_000);
  assert.is(httpModel.requests.length, asked + 1, 'no model request after the one the fence cut short');
  const after = await post(httpServer, 'tasks/get', { taskId }, WITH_TASKS, 'alice');
  assert.is(after.message.result?.status, 'cancelled', 'the stopped run did not overwrite the cancel');
  assert.is(after.message.result?.statusMessage, (await post(otherNode, 'tasks/get', { taskId }, WITH_TASKS, 'alice')).message.result?.statusMessage);
  const again = await post(otherNode, 'tasks/cancel', { taskId }, WITH_TASKS, 'alice');
  assert.is(again.message.result?.resultType, 'complete', 'idempotent for a task already over');
});

http('tasks/* carry Mcp-Name: <taskId>: a missing or different one is 400 with -32020; without the extension 400 with -32021', async () => {
  const wrong = await post(httpServer, 'tasks/get', { taskId: 'task-a' }, WITH_TASKS, 'alice', { 'Mcp-Name': 'task-b' });
  assert.is(wrong.status, 400);
  assert.is(wrong.message.error?.code, -32020);
  const res = await fetch(httpServer.url, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKENS.alice}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tasks/cancel' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/cancel', params: { taskId: 'task-a', _meta: meta(WITH_TASKS) } }),
  });
  assert.is(res.status, 400);
  assert.is(((await res.json()) as Message).error?.code, -32020);
  const gated = await post(httpServer, 'tasks/get', { taskId: 'task-a' }, {}, 'alice');
  assert.is(gated.status, 400);
  assert.is(gated.message.error?.code, -32021);
});

http.run();
