// End to end: harness_task over 2026-07-28 on a server without a model of its own, the model being the
// client's. The SDK v2 client pinned to 2026-07-28 declares `sampling`; each model turn comes back as
// `input_required` with a `sampling/createMessage` and a sealed requestState, the client's own driver
// answers it with its (scripted) sampling handler and retries the call. The model asks for `read`, then
// answers from what it read; the final result carries that text and the store's transcript has every turn.
// Over stdio and over Streamable HTTP (where each retry is a request of its own, no session); raw turns
// alternate between two HTTP nodes on one store, and replayed, altered or foreign turns are refused.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { makeSandbox, repoRoot, type RunningServer, type Sandbox, startHttpServerProcess, stdioEntry, TEST_STATE_KEY } from './fixtures.ts';

type Sampled = { messages: { role: string; content: { type: string; text?: string } }[]; systemPrompt?: string };
type ToolResult = { content?: { type: string; text?: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };

const SECRET = 'the password is aubergine';
/** No model of the server's own: the client's is the only one. */
const NO_SERVER_MODEL = { SUPERPI_MODEL_URL: '', SUPERPI_ANTHROPIC_API_KEY: '' };

/** A v2 client pinned to 2026-07-28 whose model is a script: read notes.txt, then say what it read. */
function samplingClient(asked: Sampled[]): Client {
  const client = new Client({ name: 'sampling-e2e', version: '1' }, { capabilities: { sampling: {} }, versionNegotiation: { mode: { pin: '2026-07-28' } } });
  client.setRequestHandler('sampling/createMessage', async (request) => {
    const params = request.params as unknown as Sampled;
    asked.push(params);
    if (asked.length === 1) {
      return { role: 'assistant', model: 'scripted', stopReason: 'endTurn', content: { type: 'text', text: 'Let me look.\n<tool_call>{"name": "read", "arguments": {"path": "notes.txt"}}</tool_call>' } };
    }
    const last = params.messages.at(-1)?.content.text ?? '';
    const read = /Tool result for read \(sampled-1\):[\s\S]*?(the password is \w+)/.exec(last)?.[1] ?? 'nothing readable';
    return { role: 'assistant', model: 'scripted', stopReason: 'endTurn', content: { type: 'text', text: `notes.txt says: ${read}` } };
  });
  return client;
}

const textOf = (r: ToolResult) => (r.content ?? []).map((c) => c.text ?? '').join('\n');

function scenario(name: string, setup: () => Promise<{ box: Sandbox; home: string; connect: (c: Client) => Promise<void>; principal: string; close: () => Promise<void> }>) {
  const t = suite(name);
  let ctx: Awaited<ReturnType<typeof setup>>;
  t.before(async () => { ctx = await setup(); });
  t.after(async () => { await ctx.close(); });

  t('the model asks for read, then answers from it; the result carries its text and the transcript every turn', async () => {
    await writeFile(path.join(ctx.box.ws, 'notes.txt'), `${SECRET}\n`);
    const asked: Sampled[] = [];
    const client = samplingClient(asked);
    await ctx.connect(client);
    let result: ToolResult;
    try {
      assert.is(client.getNegotiatedProtocolVersion(), '2026-07-28');
      result = await client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'What does notes.txt say?' } }) as ToolResult;
    } finally {
      await client.close();
    }
    assert.is(result.isError ?? false, false, textOf(result));
    assert.is(textOf(result), `notes.txt says: ${SECRET}`);
    assert.is(asked.length, 2, 'one sampling round trip per model turn');
    assert.match(asked[0]!.systemPrompt ?? '', /## read/, 'the tools are described in the system prompt (sampling convention)');
    assert.match(asked[0]!.messages.at(-1)?.content.text ?? '', /What does notes\.txt say\?/);
    assert.match(asked[1]!.messages.at(-1)?.content.text ?? '', /Tool result for read \(sampled-1\)/);
    const structured = result.structuredContent ?? {};
    assert.is(structured.status, 'completed');
    assert.is(structured.turns, 2);
    assert.is(structured.tool_calls, 1);
    const id = String(structured.conversation_id);
    const { SqliteConversationStore } = await import('../../src/store/sqlite-store.ts');
    const store = SqliteConversationStore.open(path.join(ctx.home, 'super-pi.db'));
    try {
      assert.is(store.getConversation(id, ctx.principal)?.status, 'completed');
      const entries = store.entries(id, ctx.principal) ?? [];
      assert.equal(entries.map((e) => e.type), ['user', 'model', 'tool_call', 'tool_result', 'model', 'final']);
      const [user, model1, call, toolResult, model2, final] = entries.map((e) => e.payload as Record<string, unknown>);
      assert.is(user!.text, 'What does notes.txt say?');
      assert.equal((model1!.toolCalls as { name: string; arguments: unknown }[]).map((c) => [c.name, c.arguments]), [['read', { path: 'notes.txt' }]]);
      assert.is(call!.name, 'read');
      assert.match(String(toolResult!.text), /the password is aubergine/);
      assert.is(model2!.text, `notes.txt says: ${SECRET}`);
      assert.is(final!.text, `notes.txt says: ${SECRET}`);
    } finally {
      store.close();
    }
  });
  return t;
}

async function tempHome(): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), 'superpi-home-'));
}

const stdio = scenario('harness_task sampled by a 2026-07-28 client over stdio (SDK v2)', async () => {
  const box = await makeSandbox();
  const home = await tempHome();
  return {
    box, home, principal: 'local',
    connect: (c) => c.connect(new StdioClientTransport({
      command: process.execPath, args: ['--import', 'tsx', stdioEntry, '--workspace', box.ws], cwd: repoRoot, stderr: 'pipe',
      env: { ...getDefaultEnvironment(), SUPERPI_HOME: home, ...NO_SERVER_MODEL },
    })),
    close: async () => { await box.cleanup(); await rm(home, { recursive: true, force: true }); },
  };
});

const http = scenario('harness_task sampled by a 2026-07-28 client over Streamable HTTP, each turn a request of its own (SDK v2)', async () => {
  const box = await makeSandbox();
  const home = await tempHome();
  const tokens = path.join(box.base, 'tokens');
  await writeFile(tokens, 'tok-alice alice\n');
  const server: RunningServer = await startHttpServerProcess(box.ws, ['--tokens', tokens, '--threads', '1', '--tool-threads', '1'], { SUPERPI_STATE_KEY: TEST_STATE_KEY, SUPERPI_HOME: home, ...NO_SERVER_MODEL });
  return {
    box, home, principal: 'token:alice',
    connect: (c) => c.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { Authorization: 'Bearer tok-alice' } } })),
    close: async () => { await server.stop(); await box.cleanup(); await rm(home, { recursive: true, force: true }); },
  };
});

/** What a raw 2026-07-28 POST answers: a result (input_required or complete) or an error. */
type Answer = { result?: { resultType?: string; requestState?: string; inputRequests?: Record<string, { method: string; params: Sampled }>; isError?: boolean; content?: { text?: string }[]; structuredContent?: Record<string, unknown> }; error?: { code: number; message: string } };

const replay = suite('harness_task turns over 2026-07-28: stale, replayed and tampered retries (raw HTTP, the store)');
let rbox: Sandbox;
let rhome: string;
let rserver: RunningServer;
/** A second node on the same store (one SQLite file) and key: each turn may reach either. */
let rserver2: RunningServer;
replay.before(async () => {
  rbox = await makeSandbox();
  rhome = await tempHome();
  const tokens = path.join(rbox.base, 'tokens');
  await writeFile(tokens, 'tok-alice alice\ntok-bobby bob\n');
  const start = () => startHttpServerProcess(rbox.ws, ['--tokens', tokens, '--threads', '1', '--tool-threads', '1'], { SUPERPI_STATE_KEY: TEST_STATE_KEY, SUPERPI_HOME: rhome, ...NO_SERVER_MODEL });
  [rserver, rserver2] = await Promise.all([start(), start()]);
});
replay.after(async () => {
  await Promise.all([rserver?.stop(), rserver2?.stop()]);
  await rbox.cleanup();
  await rm(rhome, { recursive: true, force: true });
});

async function post(token: string, params: object, id = 1, node: RunningServer = rserver): Promise<Answer> {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': { sampling: {} },
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  };
  const body = { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'harness_task', ...params, _meta: meta } };
  const res = await fetch(node.url, {
    method: 'POST', body: JSON.stringify(body),
    headers: { Authorization: `Bearer ${token}`, 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'harness_task', 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
  });
  const text = await res.text();
  return JSON.parse(text.startsWith('{') ? text : text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).find((l) => l.includes('"id"')) ?? '{}') as Answer;
}

const said = (text: string) => ({ sample: { role: 'assistant', model: 'scripted', stopReason: 'endTurn', content: { type: 'text', text } } });

replay('turns alternate between two nodes; a replayed, an altered or another caller\'s turn is -32602 and changes nothing', async () => {
  await writeFile(path.join(rbox.ws, 'notes.txt'), `${SECRET}\n`);
  const args = { harness: 'super-pi-code', prompt: 'read notes.txt twice' };
  const first = await post('tok-alice', { arguments: args });
  assert.is(first.result?.resultType, 'input_required', JSON.stringify(first));
  assert.is(first.result!.inputRequests!.sample!.method, 'sampling/createMessage');
  const turn1 = first.result!.requestState!;
  const readIt = said('<tool_call>{"name": "read", "arguments": {"path": "notes.txt"}}</tool_call>');
  const second = await post('tok-alice', { arguments: args, requestState: turn1, inputResponses: readIt }, 2, rserver2);
  assert.is(second.result?.resultType, 'input_required', JSON.stringify(second));
  const turn2 = second.result!.requestState!;
  assert.match(second.result!.inputRequests!.sample!.params.messages.at(-1)?.content.text ?? '', /the password is aubergine/);

  const { SqliteConversationStore } = await import('../../src/store/sqlite-store.ts');
  const entries = () => {
    const store = SqliteConversationStore.open(path.join(rhome, 'super-pi.db'));
    try {
      const id = store.listConversations('token:alice').items[0]!.id;
      return (store.entries(id, 'token:alice') ?? []).map((e) => e.type);
    } finally {
      store.close();
    }
  };
  const before = entries();
  assert.equal(before, ['user', 'model', 'tool_call', 'tool_result']);

  const replayed = await post('tok-alice', { arguments: args, requestState: turn1, inputResponses: readIt }, 3, rserver2);
  assert.is(replayed.error?.code, -32602, JSON.stringify(replayed));
  assert.match(replayed.error!.message, /turn 1 .*already answered/);
  const flipped = `${turn2.slice(0, 12)}${turn2[12] === 'A' ? 'B' : 'A'}${turn2.slice(13)}`;
  const altered = await post('tok-alice', { arguments: args, requestState: flipped, inputResponses: said('done') }, 4);
  assert.is(altered.error?.code, -32602);
  assert.match(altered.error!.message, /requestState/);
  const bobs = await post('tok-bobby', { arguments: args, requestState: turn2, inputResponses: said('done') }, 5);
  assert.is(bobs.error?.code, -32602);
  assert.match(bobs.error!.message, /another caller/);
  assert.equal(entries(), before, 'nothing was appended by a refused retry');

  const last = await post('tok-alice', { arguments: args, requestState: turn2, inputResponses: said('It says aubergine.') }, 6);
  assert.is(last.result?.resultType ?? 'complete', 'complete', JSON.stringify(last));
  assert.is(last.result?.isError ?? false, false);
  assert.is(last.result?.content?.[0]?.text, 'It says aubergine.');
  assert.equal(entries(), [...before, 'model', 'final']);
  const again = await post('tok-alice', { arguments: args, requestState: turn2, inputResponses: said('It says aubergine.') }, 7);
  assert.is(again.error?.code, -32602, 'a finished task\'s last turn replayed');
  assert.match(again.error!.message, /completed/);
});

stdio.run();
http.run();
replay.run();
