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
import { httpAsk, type Message, stdioAsker, TASKS, TOKENS, type Who } from './task-listen-wire.ts';

type Sampling = { method: string; params: { messages: { role: string; content: { type: string; text?: string } }[]; systemPrompt?: string } };
type Ask = (method: string, params: Record<string, unknown>, who?: Who) => Promise<Message>;

const SAMPLING = { sampling: {}, extensions: { [TASKS]: {} } };
const NO_SERVER_MODEL = { SUPERPI_MODEL_URL: '', SUPERPI_ANTHROPIC_API_KEY: '' };
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
  child.stderr.resume();
  const ask = stdioAsker(child, SAMPLING);
  return {
    ask, other: false,
    close: async () => {
      child.stdin.end();
      if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
    },
  };
}).run();

scenario('a task on the client\'s model over Streamable HTTP (a token), raw POSTs', async (ws, home) => {
  const server: RunningServer = await startHttpServerProcess(ws, ['--threads', '1', '--tool-threads', '1'], { ...NO_SERVER_MODEL, SUPERPI_HOME: home, SUPERPI_TOKENS: `${TOKENS.alice}=alice,${TOKENS.bob}=bob` });
  const ask: Ask = (method, params, who = 'alice') => httpAsk(server, method, params, who, SAMPLING);
  return { ask, other: true, close: async () => { await server.stop(); } };
}).run();
