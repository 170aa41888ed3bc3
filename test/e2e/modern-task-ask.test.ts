// End to end: the person asked from inside a harness_task over 2026-07-28. The SDK v2 client pinned to
// 2026-07-28, over Streamable HTTP with a bearer token: the task's model (the client's, then the server's
// scripted one) asks for `bash`, which super-pi-code's policy marks `ask`; the call answers input_required
// with the confirmation form, the client's elicitation handler answers, the driver retries, and the command
// runs (accept) or the model reads the refusal (decline). A client that cannot be asked gets the call refused
// as before; over stdio the local user is never asked from inside a task. Raw retries: a replayed, altered
// or another caller's question is -32602 and runs nothing.

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { type ScriptedServer, type ScriptStep, startScriptedServer } from '../model/fixtures/scripted-server.ts';
import { makeSandbox, repoRoot, type RunningServer, type Sandbox, startHttpServerProcess, stdioEntry, TEST_STATE_KEY } from './fixtures.ts';

type Sampled = { messages: { role: string; content: { type: string; text?: string } }[]; systemPrompt?: string };
type ToolResult = { content?: { type: string; text?: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };
type Answer = { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, string | number | boolean> };

/** No model of the server's own: the client's is the only one. */
const NO_SERVER_MODEL = { SUPERPI_MODEL_URL: '', SUPERPI_ANTHROPIC_API_KEY: '' };
const textOf = (r: ToolResult) => (r.content ?? []).map((c) => c.text ?? '').join('\n');
const bashCall = (command: string) => `<tool_call>{"name": "bash", "arguments": {"command": ${JSON.stringify(command)}}}</tool_call>`;

/**
 * A v2 client pinned to 2026-07-28. Its model (when `capabilities` has sampling) asks for `command`, then
 * says what the last tool result was; its person (when it can elicit) answers with the next of `answers`.
 */
function pinnedClient(capabilities: Record<string, object>, command: string, answers: Answer[], seen: { sampled: Sampled[]; asked: string[] }): Client {
  const client = new Client({ name: 'task-ask-e2e', version: '1' }, { capabilities, versionNegotiation: { mode: { pin: '2026-07-28' } } });
  if (capabilities.sampling) {
    client.setRequestHandler('sampling/createMessage', async (request) => {
      const params = request.params as unknown as Sampled;
      seen.sampled.push(params);
      const text = seen.sampled.length === 1 ? bashCall(command) : `The tool said: ${params.messages.at(-1)?.content.text ?? ''}`;
      return { role: 'assistant', model: 'scripted', stopReason: 'endTurn', content: { type: 'text', text } };
    });
  }
  if (capabilities.elicitation) {
    client.setRequestHandler('elicitation/create', async (request) => {
      seen.asked.push(String((request.params as { message?: unknown }).message));
      return answers.shift() ?? { action: 'cancel' };
    });
  }
  return client;
}

async function tempHome(): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), 'superpi-home-'));
}

async function transcriptTypes(home: string, principal: string, id: string): Promise<string[]> {
  const { SqliteConversationStore } = await import('../../src/store/sqlite-store.ts');
  const store = SqliteConversationStore.open(path.join(home, 'super-pi.db'));
  try {
    return (store.entries(id, principal) ?? []).map((e) => e.type);
  } finally {
    store.close();
  }
}

// --- The client's model, over HTTP with a token -------------------------------------------------------

const clientModel = suite('a task sampled by its 2026-07-28 client asks the person from inside it (HTTP, token, SDK v2)');
let cbox: Sandbox;
let chome: string;
let cserver: RunningServer;
clientModel.before(async () => {
  cbox = await makeSandbox();
  chome = await tempHome();
  const tokens = path.join(cbox.base, 'tokens');
  await writeFile(tokens, 'tok-alice alice\n');
  cserver = await startHttpServerProcess(cbox.ws, ['--tokens', tokens, '--threads', '1', '--tool-threads', '1'], { SUPERPI_STATE_KEY: TEST_STATE_KEY, SUPERPI_HOME: chome, ...NO_SERVER_MODEL });
});
clientModel.after(async () => {
  await cserver?.stop();
  await cbox.cleanup();
  await rm(chome, { recursive: true, force: true });
});

async function callTask(capabilities: Record<string, object>, command: string, answers: Answer[]) {
  const seen = { sampled: [] as Sampled[], asked: [] as string[] };
  const client = pinnedClient(capabilities, command, answers, seen);
  await client.connect(new StreamableHTTPClientTransport(new URL(cserver.url), { requestInit: { headers: { Authorization: 'Bearer tok-alice' } } }));
  try {
    const result = await client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: `run ${command}` } }) as ToolResult;
    return { result, ...seen };
  } finally {
    await client.close();
  }
}

clientModel('accept: the person is asked once, the command runs, the model reads its output and answers', async () => {
  const { result, sampled, asked } = await callTask({ sampling: {}, elicitation: { form: {} } }, 'echo yes > accepted.txt && echo wrote it', [{ action: 'accept', content: { allow: true } }]);
  assert.is(result.isError ?? false, false, textOf(result));
  assert.is(asked.length, 1);
  assert.match(asked[0]!, /super-pi-code task wants to run the command: echo yes > accepted\.txt/);
  assert.is(await readFile(path.join(cbox.ws, 'accepted.txt'), 'utf8'), 'yes\n');
  assert.is(sampled.length, 2);
  assert.match(textOf(result), /wrote it/);
  const structured = result.structuredContent ?? {};
  assert.is(structured.status, 'completed');
  assert.equal(await transcriptTypes(chome, 'token:alice', String(structured.conversation_id)), ['user', 'model', 'tool_call', 'tool_result', 'model', 'final']);
});

clientModel('decline: the command never runs and the model reads the refusal', async () => {
  const { result, asked } = await callTask({ sampling: {}, elicitation: { form: {} } }, 'echo no > declined.txt', [{ action: 'decline' }]);
  assert.is(asked.length, 1);
  assert.is(existsSync(path.join(cbox.ws, 'declined.txt')), false);
  assert.match(textOf(result), /Not run: bash needs the person's confirmation and the person answered "decline"/);
  assert.is(result.structuredContent?.status, 'completed', 'the task goes on after a no');
});

clientModel('a client that cannot be asked (no elicitation) gets the call refused, with a tool error its model reads', async () => {
  const { result, asked } = await callTask({ sampling: {} }, 'echo never > unasked.txt', []);
  assert.is(asked.length, 0);
  assert.is(existsSync(path.join(cbox.ws, 'unasked.txt')), false);
  assert.match(textOf(result), /cannot be asked/);
});

// --- The server's model, over HTTP with a token --------------------------------------------------------

const toolTurn = (command: string): ScriptStep => ({
  body: { choices: [{ finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'call-bash-0', type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command }) } }] } }] },
});
const said = (text: string): ScriptStep => ({ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: text } }] } });

const serverModel = suite('a task on the server\'s model asks a 2026-07-28 client\'s person from inside it (HTTP, token)');
let sbox: Sandbox;
let shome: string;
let sserver: RunningServer;
let model: ScriptedServer;
serverModel.before(async () => {
  sbox = await makeSandbox();
  shome = await tempHome();
  const tokens = path.join(sbox.base, 'tokens');
  await writeFile(tokens, 'tok-alice alice\ntok-bobby bob\n');
  model = await startScriptedServer([toolTurn('echo once >> sdk.txt'), said('Done with the SDK.'), toolTurn('echo raw >> raw.txt'), said('Done raw.')]);
  sserver = await startHttpServerProcess(sbox.ws, ['--tokens', tokens, '--threads', '1', '--tool-threads', '1'], {
    SUPERPI_STATE_KEY: TEST_STATE_KEY, SUPERPI_HOME: shome, SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted', SUPERPI_API_KEY: 'sk-test',
  });
});
serverModel.after(async () => {
  await sserver?.stop();
  await model?.close();
  await sbox.cleanup();
  await rm(shome, { recursive: true, force: true });
});

serverModel('the SDK client declaring only elicitation: asked once, the command runs, the task completes', async () => {
  const seen = { sampled: [] as Sampled[], asked: [] as string[] };
  const client = pinnedClient({ elicitation: { form: {} } }, '', [{ action: 'accept', content: { allow: true } }], seen);
  await client.connect(new StreamableHTTPClientTransport(new URL(sserver.url), { requestInit: { headers: { Authorization: 'Bearer tok-alice' } } }));
  let result: ToolResult;
  try {
    result = await client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'append once' } }) as ToolResult;
  } finally {
    await client.close();
  }
  assert.is(result.isError ?? false, false, textOf(result));
  assert.is(textOf(result), 'Done with the SDK.');
  assert.equal(seen.asked.length, 1);
  assert.match(seen.asked[0]!, /run the command: echo once >> sdk\.txt/);
  assert.is(await readFile(path.join(sbox.ws, 'sdk.txt'), 'utf8'), 'once\n');
});

type Raw = { result?: { resultType?: string; requestState?: string; inputRequests?: Record<string, { method: string; params: { message: string } }>; isError?: boolean; content?: { text?: string }[] }; error?: { code: number; message: string } };

async function post(token: string, params: object, id: number): Promise<Raw> {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  };
  const body = { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'harness_task', ...params, _meta: meta } };
  const res = await fetch(sserver.url, {
    method: 'POST', body: JSON.stringify(body),
    headers: { Authorization: `Bearer ${token}`, 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'harness_task', 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
  });
  const text = await res.text();
  return JSON.parse(text.startsWith('{') ? text : text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).find((l) => l.includes('"id"')) ?? '{}') as Raw;
}

serverModel('raw: a question answered once runs once; replayed, altered or another caller\'s, it is -32602 and runs nothing', async () => {
  const args = { harness: 'super-pi-code', prompt: 'append raw' };
  const ACCEPT = { confirm: { action: 'accept', content: { allow: true } } };
  const first = await post('tok-alice', { arguments: args }, 1);
  assert.is(first.result?.resultType, 'input_required', JSON.stringify(first));
  const confirm = first.result!.inputRequests!.confirm!;
  assert.is(confirm.method, 'elicitation/create');
  assert.match(confirm.params.message, /run the command: echo raw >> raw\.txt/);
  const state = first.result!.requestState!;
  assert.is(existsSync(path.join(sbox.ws, 'raw.txt')), false, 'nothing runs before the answer');

  const bobs = await post('tok-bobby', { arguments: args, requestState: state, inputResponses: ACCEPT }, 2);
  assert.is(bobs.error?.code, -32602);
  assert.match(bobs.error!.message, /another caller/);
  const flipped = `${state.slice(0, 12)}${state[12] === 'A' ? 'B' : 'A'}${state.slice(13)}`;
  const altered = await post('tok-alice', { arguments: args, requestState: flipped, inputResponses: ACCEPT }, 3);
  assert.is(altered.error?.code, -32602);
  assert.match(altered.error!.message, /requestState/);
  assert.is(existsSync(path.join(sbox.ws, 'raw.txt')), false);

  const yes = await post('tok-alice', { arguments: args, requestState: state, inputResponses: ACCEPT }, 4);
  assert.is(yes.result?.resultType ?? 'complete', 'complete', JSON.stringify(yes));
  assert.is(yes.result?.content?.[0]?.text, 'Done raw.');
  const replayed = await post('tok-alice', { arguments: args, requestState: state, inputResponses: ACCEPT }, 5);
  assert.is(replayed.error?.code, -32602, JSON.stringify(replayed));
  assert.is(await readFile(path.join(sbox.ws, 'raw.txt'), 'utf8'), 'raw\n', 'ran exactly once');
  assert.is(model.requests.length, 4, 'no refused retry reached the model');
});

// --- stdio: the local user ----------------------------------------------------------------------------

const stdio = suite('over stdio the local user is never asked from inside a task (SDK v2, 2026-07-28)');
let lbox: Sandbox;
let lhome: string;
stdio.before(async () => {
  lbox = await makeSandbox();
  lhome = await tempHome();
});
stdio.after(async () => {
  await lbox.cleanup();
  await rm(lhome, { recursive: true, force: true });
});

stdio('a client declaring sampling and elicitation: the command runs without a question, as in the 2025 era', async () => {
  const seen = { sampled: [] as Sampled[], asked: [] as string[] };
  const client = pinnedClient({ sampling: {}, elicitation: { form: {} } }, 'echo local > local.txt', [], seen);
  await client.connect(new StdioClientTransport({
    command: process.execPath, args: ['--import', 'tsx', stdioEntry, '--workspace', lbox.ws], cwd: repoRoot, stderr: 'pipe',
    env: { ...getDefaultEnvironment(), SUPERPI_HOME: lhome, ...NO_SERVER_MODEL },
  }));
  let result: ToolResult;
  try {
    result = await client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'write local.txt' } }) as ToolResult;
  } finally {
    await client.close();
  }
  assert.is(result.isError ?? false, false, textOf(result));
  assert.is(seen.asked.length, 0, 'the local user is not asked from inside the task');
  assert.is(await readFile(path.join(lbox.ws, 'local.txt'), 'utf8'), 'local\n');
});

clientModel.run();
serverModel.run();
stdio.run();
