// End to end with raw JSON-RPC: a Tasks-extension harness_task (SEP-2663) on a server WITHOUT a model of its
// own, for a client that declares sampling: each model turn parks the task `input_required` with one
// `sampling/createMessage` input request, and the client's model answers it through `tasks/update`. The
// client here plays its model by script: turn 1 calls `read` (in the sampling convention's text form), turn 2
// answers from what the tool said. Over stdio (the local user) and over Streamable HTTP (a token), where a
// stale turn's answer is acked and changes nothing and another token's update is -32602.

import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pollUntil } from '../hang-guard.ts';
import { makeSandbox, repoRoot, type RunningServer, type Sandbox, startHttpServerProcess, stdioEntry } from './fixtures.ts';

type Message = { id?: unknown; method?: string; result?: Record<string, unknown>; error?: { code: number; message: string } };
type Sampling = { method: string; params: { messages: { role: string; content: { type: string; text?: string } }[]; systemPrompt?: string } };
type Ask = (method: string, params: Record<string, unknown>, who?: 'alice' | 'bob') => Promise<Message>;

const TASKS = 'io.modelcontextprotocol/tasks';
const SAMPLING = { sampling: {}, extensions: { [TASKS]: {} } };
const NO_SERVER_MODEL = { SUPERPI_MODEL_URL: '', SUPERPI_ANTHROPIC_API_KEY: '' };
const meta = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': SAMPLING,
  'io.modelcontextprotocol/clientInfo': { name: 'raw-task-sampling', version: '1' },
};
const said = (text: string) => ({ role: 'assistant', model: 'client-model', stopReason: 'endTurn', content: { type: 'text', text } });

function scenario(name: string, start: (ws: string, home: string) => Promise<{ ask: Ask; close: () => Promise<void>; other: boolean }>) {
  const t = suite(name);
  let box: Sandbox;
  let home: string;
  let ask: Ask;
  let close: () => Promise<void>;
  let other: boolean;
  t.before(async () => {
    box = await makeSandbox();
    home = await mkdtemp(path.join(os.tmpdir(), 'superpi-home-'));
    await writeFile(path.join(box.ws, 'notes.txt'), 'the password is aubergine\n');
    ({ ask, close, other } = await start(box.ws, home));
  });
  t.after(async () => {
    await close?.();
    await box?.cleanup();
    await rm(home, { recursive: true, force: true });
  });

  /** Polls the task to its next input request (or its end): the status and the one request, by key. */
  const next = async (taskId: string, after?: string) => {
    const got = await pollUntil(`task ${taskId} to wait or end`, async () => {
      const r = await ask('tasks/get', { taskId });
      const keys = Object.keys((r.result?.inputRequests as object | undefined) ?? {});
      return r.result?.status === 'working' || (r.result?.status === 'input_required' && keys[0] === after) ? null : r;
    }, 15_000);
    const requests = (got.result?.inputRequests ?? {}) as Record<string, Sampling>;
    const key = Object.keys(requests)[0];
    return { got, key, request: key === undefined ? undefined : requests[key] };
  };

  t('each model turn waits input_required with sampling/createMessage; the answers through tasks/update drive the task to completed', async () => {
    const created = await ask('tools/call', { name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'What does notes.txt say?' } });
    assert.is(created.result?.resultType, 'task', JSON.stringify(created));
    const taskId = String(created.result?.taskId);

    const turn1 = await next(taskId);
    assert.is(turn1.got.result?.status, 'input_required', JSON.stringify(turn1.got));
    assert.match(String(turn1.key), /^sample-1-\d+$/);
    assert.is(turn1.request?.method, 'sampling/createMessage');
    assert.match(JSON.stringify(turn1.request?.params.messages), /What does notes\.txt say\?/);
    assert.match(String(turn1.request?.params.systemPrompt), /tool_call/, 'the tools are described in the system prompt');
    // The tools its rounds offer this caller: the local user's host confirms bash itself; a token caller
    // that cannot be asked (no elicitation declared) is not offered it.
    const offersBash = /\n## bash\n/.test(String(turn1.request?.params.systemPrompt));
    assert.is(offersBash, !other, `bash offered: ${offersBash}`);
    for (const absent of ['result', 'error', 'requestState']) assert.not.ok(absent in (turn1.got.result ?? {}), absent);

    if (other) {
      const bobs = await ask('tasks/update', { taskId, inputResponses: { [turn1.key!]: said('hijack') } }, 'bob');
      assert.is(bobs.error?.code, -32602, JSON.stringify(bobs));
    }
    const ack = await ask('tasks/update', { taskId, inputResponses: { [turn1.key!]: said('<tool_call>{"name": "read", "arguments": {"path": "notes.txt"}}</tool_call>') } });
    assert.equal(Object.keys(ack.result ?? {}).sort(), ['_meta', 'resultType'], JSON.stringify(ack));

    const turn2 = await next(taskId, turn1.key);
    assert.is(turn2.got.result?.status, 'input_required', JSON.stringify(turn2.got));
    assert.match(String(turn2.key), /^sample-2-\d+$/);
    assert.match(JSON.stringify(turn2.request?.params.messages), /the password is aubergine/, 'the read tool ran in the workspace and the model is shown it');

    const stale = await ask('tasks/update', { taskId, inputResponses: { [turn1.key!]: said('a replay of turn 1') } });
    assert.is(stale.result?.resultType, 'complete', 'a stale turn\'s answer is acked');
    const still = await ask('tasks/get', { taskId });
    assert.equal(Object.keys((still.result?.inputRequests as object | undefined) ?? {}), [turn2.key], 'and changes nothing');

    await ask('tasks/update', { taskId, inputResponses: { [turn2.key!]: said('It says the password is aubergine.') } });
    const done = await next(taskId, turn2.key);
    assert.is(done.got.result?.status, 'completed', JSON.stringify(done.got));
    const result = done.got.result?.result as { content: { text: string }[]; structuredContent?: { turns?: number } };
    assert.is(result.content[0]?.text, 'It says the password is aubergine.');
    assert.is(result.structuredContent?.turns, 2);
  });

  t('a sample-… answer that is not a CreateMessageResult is -32602', async () => {
    const bad = await ask('tasks/update', { taskId: '00000000-0000-4000-8000-000000000000', inputResponses: { 'sample-1-2': { action: 'accept' } } });
    assert.is(bad.error?.code, -32602);
  });

  return t;
}

scenario('a task on the client\'s model over stdio (the local user), raw JSON-RPC', async (ws, home) => {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ['--import', 'tsx', stdioEntry, '--workspace', ws], {
    cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...NO_SERVER_MODEL, SUPERPI_HOME: home },
  });
  const waiters = new Map<unknown, (m: Message) => void>();
  let buf = '';
  child.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) !== -1) {
      const msg = JSON.parse(buf.slice(0, nl)) as Message;
      buf = buf.slice(nl + 1);
      if (msg.method === undefined) waiters.get(msg.id)?.(msg);
    }
  });
  child.stderr.resume();
  let id = 1;
  const ask: Ask = (method, params) => {
    const n = id++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${method}`)), 15_000);
      waiters.set(n, (m) => { clearTimeout(timer); waiters.delete(n); resolve(m); });
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: n, method, params: { ...params, _meta: meta } })}\n`);
    });
  };
  return {
    ask, other: false,
    close: async () => {
      child.stdin.end();
      if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
    },
  };
}).run();

const TOKENS = { alice: 'tok-alice-123', bob: 'tok-bob-4567' };

scenario('a task on the client\'s model over Streamable HTTP (a token), raw POSTs', async (ws, home) => {
  const server: RunningServer = await startHttpServerProcess(ws, ['--threads', '1', '--tool-threads', '1'], { ...NO_SERVER_MODEL, SUPERPI_HOME: home, SUPERPI_TOKENS: `${TOKENS.alice}=alice,${TOKENS.bob}=bob` });
  const ask: Ask = async (method, params, who = 'alice') => {
    const name = method === 'tools/call' ? params.name : params.taskId;
    const res = await fetch(server.url, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${TOKENS[who]}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method, 'Mcp-Name': String(name),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } }),
    });
    const text = await res.text();
    const data = res.headers.get('content-type')?.includes('text/event-stream')
      ? text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).filter((l) => l.includes('"id"')).pop() ?? '{}'
      : text;
    return JSON.parse(data) as Message;
  };
  return { ask, other: true, close: async () => { await server.stop(); } };
}).run();
