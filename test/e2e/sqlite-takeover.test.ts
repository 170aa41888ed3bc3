// A task left running by a server process that died is continued by the next server process on the same
// SQLite file (real processes, one SUPERPI_HOME, the scripted model as the server model): the process is
// killed with SIGKILL mid-task, a new one is started, and the task completes there on its own — every
// step in its transcript once, a non-idempotent call that was in flight recorded interrupted and never run
// again. Two processes started at once on the file: exactly one of them continues it. Without a server
// model the new process cannot continue it (the client that sampled is gone), nor can a process serving
// another workspace: it leaves the task running, and the next process of its workspace with a model
// continues it (past ORPHAN_TASK_PATIENCE_MS it would be marked interrupted: test/task). A
// Tasks-extension task is read with tasks/get on the next process, completed there
// (docs/harness-tasks.md#when-the-server-process-dies).

import { readFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { databasePath } from '../../src/store/location.ts';
import { openSqlite } from '../../src/store/sqlite-driver.ts';
import { pollUntil } from '../hang-guard.ts';
import { type ScriptedServer, type ScriptStep, startScriptedServer } from '../model/fixtures/scripted-server.ts';
import { processesWith, uniqueSleep } from '../tools/processes.ts';
import { type Connected, connectStdio, makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from './fixtures.ts';
import { type StdioTaskServer, startStdioTaskServer, stopStdioServer } from './task-listen-wire.ts';

/** A hang guard for a start, a kill and a takeover on a loaded 2-core machine: not a speed claim. */
const GUARD_MS = 90_000;
const POLL_MS = 100;
const ALICE = 'alice-token-123';

const answer = (text: string): ScriptStep => ({ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: text } }] } });
const toolTurn = (name: string, args: object): ScriptStep => ({
  body: { choices: [{ finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: `call-${name}`, type: 'function', function: { name, arguments: JSON.stringify(args) } }] } }] },
});

interface Line { seq: number; type: string; payload: { id?: string; text?: string; message?: string } }

const takeover = suite('SQLite takeover');
let box: Sandbox;
let home: string;
/** Everything a test started, ended by `after.each` whatever happened. */
let started: { stdio: Connected[]; tasks: StdioTaskServer[]; http: RunningServer[]; models: ScriptedServer[]; sleeps: string[] };

takeover.before.each(async () => {
  box = await makeSandbox();
  home = await mkdtemp(path.join(os.tmpdir(), 'superpi-takeover-home-'));
  started = { stdio: [], tasks: [], http: [], models: [], sleeps: [] };
});
takeover.after.each(async () => {
  for (const c of started.stdio) await c.close().catch(() => undefined);
  for (const t of started.tasks) if (t.child.exitCode === null && t.child.signalCode === null) await stopStdioServer(t);
  for (const s of started.http) if (s.child.exitCode === null && s.child.signalCode === null) await s.stop();
  for (const m of started.models) await m.close();
  for (const marker of started.sleeps) for (const pid of processesWith(marker)) process.kill(pid, 'SIGKILL');
  await box.cleanup();
  await rm(home, { recursive: true, force: true });
});

async function model(script: ScriptStep[]): Promise<ScriptedServer> {
  const m = await startScriptedServer(script);
  started.models.push(m);
  return m;
}

const modelEnv = (m: ScriptedServer | null): Record<string, string> => ({ SUPERPI_HOME: home, ...(m === null ? {} : { SUPERPI_MODEL_URL: `${m.url}/v1`, SUPERPI_MODEL: 'scripted', SUPERPI_API_KEY: 'sk-test' }) });

async function stdio(m: ScriptedServer | null, ws = box.ws): Promise<Connected> {
  const c = await connectStdio(ws, [], {}, (client) => client, modelEnv(m));
  started.stdio.push(c);
  return c;
}

async function killStdio(c: Connected): Promise<void> {
  const pid = c.transport.pid;
  assert.ok(pid !== null, 'the server process');
  const exited = new Promise((resolve) => (c.transport.onclose = () => resolve(undefined)));
  process.kill(pid, 'SIGKILL');
  await exited;
}

/** The store's conversations as the file says (read with the driver: opening a store would settle orphans itself). */
function conversations(): { id: string; status: string }[] {
  let db;
  try {
    db = openSqlite(databasePath(home), { busyTimeoutMs: 5000 });
  } catch {
    return [];
  }
  try {
    return db.prepare<[], { id: string; status: string }>('SELECT id, status FROM conversations').all();
  } catch {
    // Not migrated yet.
    return [];
  } finally {
    db.close();
  }
}

function until<T>(what: string, probe: () => Promise<T | null> | T | null): Promise<T> {
  return pollUntil(what, probe, GUARD_MS, POLL_MS);
}

/** The one conversation, once it has this status. */
function settled(status: string): Promise<{ id: string; status: string }> {
  return until(`the task ${status}`, () => {
    const [c, ...more] = conversations();
    assert.is(more.length, 0, 'one conversation');
    return c?.status === status ? c : null;
  });
}

async function transcript(client: Client, id: string): Promise<Line[]> {
  const text = ((await client.readResource({ uri: `superpi://conversation/${id}/transcript` })).contents[0] as { text: string }).text;
  return text.split('\n').map((l) => JSON.parse(l) as Line);
}

takeover('stdio: a server killed mid-task with a bash call in flight; the next server process continues the task, the call recorded interrupted and never run again', async () => {
  const sleep = uniqueSleep();
  started.sleeps.push(sleep);
  const m = await model([toolTurn('bash', { command: `echo ran >> counter.txt; sleep ${sleep}` }), answer('done after the crash')]);
  const doomed = await stdio(m);
  void doomed.client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'count' } }, undefined, { timeout: GUARD_MS }).catch(() => undefined);
  const counter = path.join(box.ws, 'counter.txt');
  await until('the bash call running', async () => ((await readFile(counter, 'utf8').catch(() => '')) === 'ran\n' && processesWith(sleep).length > 0 ? true : null));
  await killStdio(doomed);
  // The command outlived its server; it never reports to anyone now.
  for (const pid of processesWith(sleep)) process.kill(pid, 'SIGKILL');

  const next = await stdio(m);
  const done = await settled('completed');
  const lines = await transcript(next.client, done.id);
  assert.equal(lines.map((l) => l.type), ['user', 'model', 'tool_call', 'tool_interrupted', 'model', 'final']);
  assert.equal(lines.map((l) => l.seq), [1, 2, 3, 4, 5, 6], 'seq strictly increasing, no gap');
  assert.equal(lines.filter((l) => l.type === 'tool_call').map((l) => l.payload.id), ['call-bash'], 'the call is recorded once');
  assert.is(lines.at(-1)?.payload.text, 'done after the crash');
  assert.is(await readFile(counter, 'utf8'), 'ran\n', 'the non-idempotent call ran once, on the dead process');
  assert.is(m.requests.length, 2, 'the new process asked the model once, with the call marked interrupted');
  assert.match(JSON.stringify(m.requests[1]?.body), 'this call was interrupted before it returned');
  assert.match(next.stderr(), /took over a task whose lease lapsed/);
});

takeover('HTTP: two server processes started at once on the file of a killed one: exactly one continues the task, every step once', async () => {
  const m = await model([toolTurn('read', { path: 'src/greet.ts' }), { hang: true }, answer('greet says hello.'), answer('a second continuation')]);
  const env = { ...modelEnv(m), SUPERPI_TOKENS: `${ALICE}=alice` };
  const start = async () => {
    const s = await startHttpServerProcess(box.ws, ['--threads', '1', '--tool-threads', '1'], env);
    started.http.push(s);
    return s;
  };
  const doomed = await start();
  const alice = new Client({ name: 'alice', version: '1' }, { capabilities: {} });
  await alice.connect(new StreamableHTTPClientTransport(new URL(doomed.url), { requestInit: { headers: { authorization: `Bearer ${ALICE}` } } }));
  void alice.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'What does greet say?' } }, undefined, { timeout: GUARD_MS }).catch(() => undefined);
  // The second model request is the dead process asking about the read's result: the read is durable.
  await until('the first process asking the model its second question', () => (m.requests.length >= 2 ? true : null));
  const exited = new Promise((resolve) => doomed.child.once('exit', resolve));
  doomed.child.kill('SIGKILL');
  await exited;
  await alice.close().catch(() => undefined);

  const [b, c] = await Promise.all([start(), start()]);
  const done = await settled('completed');
  const viaB = new Client({ name: 'alice', version: '1' }, { capabilities: {} });
  await viaB.connect(new StreamableHTTPClientTransport(new URL(b.url), { requestInit: { headers: { authorization: `Bearer ${ALICE}` } } }));
  const lines = await transcript(viaB, done.id);
  await viaB.close();
  assert.equal(lines.map((l) => l.type), ['user', 'model', 'tool_call', 'tool_result', 'model', 'final']);
  assert.equal(lines.map((l) => l.seq), [1, 2, 3, 4, 5, 6]);
  assert.is(lines.at(-1)?.payload.text, 'greet says hello.');
  assert.is(m.requests.length, 3, 'one process asked the question the dead one never got answered, and nothing more');
  const takers = [b, c].filter((s) => /took over a task whose lease lapsed/.test(s.stderr()));
  assert.is(takers.length, 1, 'exactly one process took it over');
});

/** The one conversation as it is now (the file read with the driver). */
function only(): { id: string; status: string } {
  const [c, ...more] = conversations();
  assert.is(more.length, 0, 'one conversation');
  assert.ok(c, 'the conversation');
  return c;
}

takeover('stdio without a server model: the next process cannot continue a task (no model here, its client gone), so it leaves it running; the next process of its workspace with a model continues it', async () => {
  const m = await model([{ hang: true }, answer('continued where a model is')]);
  const doomed = await stdio(m);
  void doomed.client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-assistant', prompt: 'wait for the model' } }, undefined, { timeout: GUARD_MS }).catch(() => undefined);
  await until('the model asked', () => (m.requests.length >= 1 ? true : null));
  await killStdio(doomed);
  const next = await stdio(null);
  const { id } = only();
  // Reading the transcript opens the store there, which settles the dead process's tasks.
  assert.equal((await transcript(next.client, id)).map((l) => l.type), ['user']);
  assert.is(only().status, 'running', 'left for a process that can continue it (before, it was marked interrupted here)');
  const able = await stdio(m);
  await settled('completed');
  const lines = await transcript(able.client, id);
  assert.equal(lines.map((l) => [l.seq, l.type]), [[1, 'user'], [2, 'model'], [3, 'final']]);
  assert.is(lines.at(-1)?.payload.text, 'continued where a model is');
  assert.not.match(next.stderr(), /took over a task/);
  assert.match(able.stderr(), /took over a task whose lease lapsed/);
});

takeover('stdio: a server process of another workspace on the same SUPERPI_HOME does not continue the task (its tools would run in the wrong project): it leaves it running for the process of its own workspace', async () => {
  const m = await model([{ hang: true }, answer('continued in its own project')]);
  const doomed = await stdio(m);
  void doomed.client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'wait for the model' } }, undefined, { timeout: GUARD_MS }).catch(() => undefined);
  await until('the model asked', () => (m.requests.length >= 1 ? true : null));
  await killStdio(doomed);
  const other = await mkdtemp(path.join(os.tmpdir(), 'superpi-other-ws-'));
  try {
    const next = await stdio(m, other);
    const { id } = only();
    assert.equal((await transcript(next.client, id)).map((l) => l.type), ['user']);
    assert.is(only().status, 'running', 'left for a process of its workspace (before, it was marked interrupted here)');
    assert.is(m.requests.length, 1, 'nobody asked the model again');
    const own = await stdio(m);
    await settled('completed');
    assert.equal((await transcript(own.client, id)).map((l) => l.type), ['user', 'model', 'final']);
    assert.is(m.requests.length, 2, 'asked once more, by the process of its workspace');
    assert.not.match(next.stderr(), /took over a task/);
  } finally {
    await rm(other, { recursive: true, force: true });
  }
});

takeover('Tasks extension over stdio: the server running a detached task is killed; tasks/get on the next process answers working, then completed with the taken-over run\'s result', async () => {
  const m = await model([{ hang: true }, answer('finished by the next process')]);
  const env = modelEnv(m);
  const a = startStdioTaskServer(box.ws, env);
  started.tasks.push(a);
  const created = await a.ask('tools/call', { name: 'harness_task', arguments: { harness: 'super-pi-assistant', prompt: 'Think slowly.' } });
  assert.is(created.result?.resultType, 'task', JSON.stringify(created));
  const taskId = String(created.result?.taskId);
  await until('the model asked', () => (m.requests.length >= 1 ? true : null));
  const exited = new Promise((resolve) => a.child.once('exit', resolve));
  a.child.kill('SIGKILL');
  await exited;

  const b = startStdioTaskServer(box.ws, env);
  started.tasks.push(b);
  const done = await until('tasks/get answering completed on the next process', async () => {
    const got = await b.ask('tasks/get', { taskId });
    assert.ok(got.result?.status === 'working' || got.result?.status === 'completed', JSON.stringify(got));
    return got.result?.status === 'completed' ? got : null;
  });
  const result = done.result?.result as { content?: { text?: string }[]; structuredContent?: { conversation_id?: string } };
  assert.is(result.content?.[0]?.text, 'finished by the next process');
  assert.is(result.structuredContent?.conversation_id, taskId);
  assert.is(m.requests.length, 2);
});

takeover.run();
