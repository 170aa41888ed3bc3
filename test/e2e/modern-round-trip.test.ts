// End to end: the SDK v2 client pinned to 2026-07-28 calls `bash` under the `ask` rule over stdio and
// over Streamable HTTP; the server answers input_required, the client's elicitation handler answers, and
// the client retries with the sealed requestState. Accept writes a real file; decline writes nothing; a
// tampered state is -32602 and writes nothing. Over HTTP the retry reaches a fresh stateless session.

import { access, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { makeSandbox, repoRoot, type RunningServer, type Sandbox, startHttpServerProcess, stdioEntry, TEST_STATE_KEY } from './fixtures.ts';
import { stdioServerEnv } from '../test-home.ts';

type Answer = { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, string | number | boolean> };

const exists = (p: string) => access(p).then(() => true, () => false);

/** A v2 client pinned to 2026-07-28 whose person answers each confirmation with the next of `answers`. */
function pinnedClient(answers: Answer[], asked: string[]): Client {
  const client = new Client({ name: 'round-trip-e2e', version: '1' }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } });
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(String((request.params as { message?: unknown }).message));
    return answers.shift() ?? { action: 'cancel' };
  });
  return client;
}

const textOf = (r: unknown) => ((r as { content?: { type: string; text?: string }[] }).content ?? []).map((c) => c.text ?? '').join('\n');

/** The headers a 2026-07-28 POST must carry beside its body (docs/protocol.md): version, method, and the name a `tools/call` names. */
function modernHeaders(body: object): Record<string, string> {
  const { method, params } = body as { method: string; params?: { name?: string } };
  return { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method, ...(params?.name === undefined ? {} : { 'Mcp-Name': params.name }) };
}

function scenarios(name: string, setup: () => Promise<{ box: Sandbox; connect: (c: Client) => Promise<void>; raw: (body: object) => Promise<{ error?: { code: number; message: string } }>; close: () => Promise<void> }>) {
  const t = suite(name);
  let ctx: Awaited<ReturnType<typeof setup>>;
  t.before(async () => { ctx = await setup(); });
  t.after(async () => { await ctx.close(); });

  t('accept: the person is asked once, the retry with the sealed state runs the command, the file is written', async () => {
    const asked: string[] = [];
    const client = pinnedClient([{ action: 'accept', content: { allow: true } }], asked);
    await ctx.connect(client);
    try {
      const result = await client.callTool({ name: 'bash', arguments: { command: 'echo yes > accepted.txt' } });
      assert.is((result as { isError?: boolean }).isError ?? false, false, textOf(result));
      assert.is(asked.length, 1);
      assert.match(asked[0]!, /run the command: echo yes > accepted.txt/);
      assert.ok(await exists(path.join(ctx.box.ws, 'accepted.txt')));
    } finally {
      await client.close();
    }
  });

  t('decline: a tool error saying so, and the file is never written', async () => {
    const asked: string[] = [];
    const client = pinnedClient([{ action: 'decline' }], asked);
    await ctx.connect(client);
    try {
      const result = await client.callTool({ name: 'bash', arguments: { command: 'echo no > declined.txt' } });
      assert.is((result as { isError?: boolean }).isError, true);
      assert.match(textOf(result), /Not run: bash .*answered "decline"/);
      assert.is(asked.length, 1);
      assert.not.ok(await exists(path.join(ctx.box.ws, 'declined.txt')));
    } finally {
      await client.close();
    }
  });

  t('a tampered requestState with an accept is -32602 and the file is never written', async () => {
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
    };
    const args = { command: 'echo forged > forged.txt' };
    const first = await ctx.raw({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'bash', arguments: args, _meta: meta } }) as { result?: { resultType: string; requestState: string } };
    assert.is(first.result?.resultType, 'input_required');
    const state = first.result!.requestState;
    const flipped = `${state.slice(0, 10)}${state[10] === 'A' ? 'B' : 'A'}${state.slice(11)}`;
    const accept = { confirm: { action: 'accept', content: { allow: true } } };
    for (const [what, params] of [
      ['flipped', { name: 'bash', arguments: args, requestState: flipped, inputResponses: accept }],
      ['other arguments', { name: 'bash', arguments: { command: 'echo forged > forged.txt; true' }, requestState: state, inputResponses: accept }],
    ] as const) {
      const retry = await ctx.raw({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { ...params, _meta: meta } });
      assert.is(retry.error?.code, -32602, what);
      assert.match(retry.error!.message, /requestState/, what);
    }
    assert.not.ok(await exists(path.join(ctx.box.ws, 'forged.txt')));
  });
  return t;
}

const stdio = scenarios('2026-07-28 round trip over stdio (SDK v2 client)', async () => {
  const box = await makeSandbox();
  const raw = new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', stdioEntry, '--workspace', box.ws], cwd: repoRoot, env: stdioServerEnv(), stderr: 'pipe' });
  const waiting = new Map<unknown, (m: unknown) => void>();
  raw.onmessage = (m) => waiting.get((m as { id?: unknown }).id)?.(m);
  await raw.start();
  return {
    box,
    connect: (c) => c.connect(new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', stdioEntry, '--workspace', box.ws], cwd: repoRoot, env: stdioServerEnv(), stderr: 'pipe' })),
    raw: (body) => new Promise((resolve) => {
      waiting.set((body as { id: unknown }).id, (m) => resolve(m as never));
      void raw.send(body as never);
    }),
    close: async () => { await raw.close(); await box.cleanup(); },
  };
});

const http = scenarios('2026-07-28 round trip over Streamable HTTP, stateless (SDK v2 client)', async () => {
  const box = await makeSandbox();
  const tokens = path.join(box.base, 'tokens');
  await writeFile(tokens, 'tok-alice alice\n');
  const server: RunningServer = await startHttpServerProcess(box.ws, ['--tokens', tokens, '--threads', '1', '--tool-threads', '1'], { SUPERPI_STATE_KEY: TEST_STATE_KEY });
  const headers = { Authorization: 'Bearer tok-alice' };
  return {
    box,
    connect: (c) => c.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers } })),
    raw: async (body) => {
      const res = await fetch(server.url, { method: 'POST', headers: { ...headers, ...modernHeaders(body), 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }, body: JSON.stringify(body) });
      const text = await res.text();
      const data = text.startsWith('{') ? text : text.split('\n').find((l) => l.startsWith('data: '))?.slice(6) ?? '{}';
      return JSON.parse(data) as never;
    },
    close: async () => { await server.stop(); await box.cleanup(); },
  };
});

const cluster = suite('2026-07-28 round trip across nodes: the key is the cluster\'s, not the node\'s');
let nodes: RunningServer[] = [];
let cbox: Sandbox;
cluster.before(async () => {
  cbox = await makeSandbox();
  const other = 'another-state-key-of-at-least-32-bytes-0123456789';
  nodes = await Promise.all([TEST_STATE_KEY, TEST_STATE_KEY, other].map((key) => startHttpServerProcess(cbox.ws, ['--threads', '1', '--tool-threads', '1', '--allow-anonymous-writes'], { SUPERPI_STATE_KEY: key })));
});
cluster.after(async () => {
  await Promise.all(nodes.map((n) => n.stop()));
  await cbox.cleanup();
});

cluster('a state sealed on node A runs the call on node B (same key); on node C (another key) it is -32602 and nothing is written', async () => {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  };
  const post = async (url: string, params: object) => {
    const body = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { ...params, _meta: meta } };
    const res = await fetch(url, { method: 'POST', headers: { ...modernHeaders(body), 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }, body: JSON.stringify(body) });
    const text = await res.text();
    return JSON.parse(text.startsWith('{') ? text : text.split('\n').find((l) => l.startsWith('data: '))?.slice(6) ?? '{}') as { result?: { resultType?: string; requestState?: string; isError?: boolean }; error?: { code: number; message: string } };
  };
  const [a, b, c] = nodes as [RunningServer, RunningServer, RunningServer];
  const onC = { name: 'bash', arguments: { command: 'echo c > on-c.txt' } };
  const sealedForC = (await post(a.url, onC)).result?.requestState;
  assert.type(sealedForC, 'string');
  const refused = await post(c.url, { ...onC, requestState: sealedForC, inputResponses: { confirm: { action: 'accept' } } });
  assert.is(refused.error?.code, -32602);
  assert.match(refused.error!.message, /failed verification/);
  assert.not.ok(await exists(path.join(cbox.ws, 'on-c.txt')));
  const onB = { name: 'bash', arguments: { command: 'echo b > on-b.txt' } };
  const first = await post(a.url, onB);
  assert.is(first.result?.resultType, 'input_required');
  const ran = await post(b.url, { ...onB, requestState: first.result!.requestState, inputResponses: { confirm: { action: 'accept' } } });
  assert.is(ran.result?.isError ?? false, false, JSON.stringify(ran));
  assert.ok(await exists(path.join(cbox.ws, 'on-b.txt')));
});

stdio.run();
http.run();
cluster.run();
