// End to end: harness_task over 2026-07-28 on a server without a model of its own, the model being the
// client's. The SDK v2 client pinned to 2026-07-28 declares `sampling`; each model turn comes back as
// `input_required` with a `sampling/createMessage` and a sealed requestState, the client's own driver
// answers it with its (scripted) sampling handler and retries the call. The model asks for `read`, then
// answers from what it read; the final result carries that text and the store's transcript has every turn.
// Over stdio and over Streamable HTTP (where each retry is a request of its own, no session).

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

stdio.run();
http.run();
