// One transport contract: the same scenarios over stdio, Streamable HTTP and WebSocket, in both eras: the
// official SDK 1.x Client speaking 2025-06-18 (initialize, a session), and the SDK v2 Client pinned to
// 2026-07-28 (no handshake, each request's context in its `_meta`; a confirmation is an `input_required`
// round trip; cancelling an HTTP call closes its stream). Every transport and era must give the same results.

import { randomInt } from 'node:crypto';
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import { Client as ClientV2, StreamableHTTPClientTransport as StreamableHTTPClientTransportV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioClientTransportV2 } from '@modelcontextprotocol/client/stdio';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'ws';
import { allGone, atLeast, killLeftovers } from '../tools/processes.ts';
import { connectStdio, makeSandbox, repoRoot, type RunningServer, type Sandbox, startHttpServerProcess, stdioEntry, textOf } from './fixtures.ts';
import { stdioServerEnv } from '../test-home.ts';

// Node 20 has no global WebSocket; the SDK's WebSocketClientTransport uses the global one.
(globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;

type Era = '2025-06-18' | '2026-07-28';
type ToolResult = { content?: { type: string; text?: string }[]; isError?: boolean; structuredContent?: unknown };
interface CallOptions { signal?: AbortSignal; onprogress?: (p: { progress: number }) => void }

/** What a scenario asks of a client, whichever SDK and era: the two Clients differ in a few signatures. */
interface Connection {
  serverName(): string | undefined;
  call(name: string, args: Record<string, unknown>, options?: CallOptions): Promise<ToolResult>;
  listTools(): Promise<{ tools: { name: string }[] }>;
  /** The connection still serves: ping in 2025 (2026-07-28 removed it), a tools/list in 2026-07-28. */
  alive(): Promise<void>;
  listPrompts(): Promise<{ prompts: unknown[] }>;
  getPrompt(name: string, args: Record<string, string>): Promise<{ messages: unknown[] }>;
  readResource(uri: string): Promise<{ contents: unknown[] }>;
  complete(ref: { type: 'ref/prompt'; name: string }, argument: { name: string; value: string }): Promise<{ completion: { values: string[] } }>;
  close(): Promise<void>;
}

/** Every client declares elicitation and allows what it is asked (bash is `ask` under super-pi-code). */
const questions: string[] = [];
const allow = { action: 'accept' as const, content: { allow: true } };
function personWhoAllows(client: Client): Client {
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    questions.push(req.params.message);
    return allow;
  });
  return client;
}
const newClient = () => personWhoAllows(new Client({ name: 'contract', version: '1' }, { capabilities: { elicitation: {} } }));

function legacy(client: Client): Connection {
  return {
    serverName: () => client.getServerVersion()?.name,
    call: async (name, args, options) => await client.callTool({ name, arguments: args }, undefined, options) as ToolResult,
    listTools: () => client.listTools(),
    alive: async () => assert.equal(await client.ping(), {}),
    listPrompts: () => client.listPrompts(),
    getPrompt: (name, args) => client.getPrompt({ name, arguments: args }),
    readResource: (uri) => client.readResource({ uri }),
    complete: (ref, argument) => client.complete({ ref, argument }),
    close: () => client.close(),
  };
}

/** The SDK v2 Client pinned to 2026-07-28 over `transport`, its person allowing what it is asked. */
async function modern(transport: unknown): Promise<Connection> {
  const client = new ClientV2({ name: 'contract', version: '2' }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } });
  client.setRequestHandler('elicitation/create', async (request) => {
    questions.push(String((request.params as { message?: unknown }).message));
    return allow;
  });
  await client.connect(transport as Parameters<ClientV2['connect']>[0]);
  assert.is(client.getNegotiatedProtocolVersion(), '2026-07-28');
  return {
    serverName: () => client.getServerVersion()?.name,
    call: async (name, args, options) => await client.callTool({ name, arguments: args }, options) as ToolResult,
    listTools: () => client.listTools(),
    alive: async () => assert.ok((await client.listTools()).tools.length > 0),
    listPrompts: () => client.listPrompts(),
    getPrompt: (name, args) => client.getPrompt({ name, arguments: args }),
    readResource: (uri) => client.readResource({ uri }),
    complete: (ref, argument) => client.complete({ ref, argument }),
    close: () => client.close(),
  };
}

type Connect = (box: Sandbox) => Promise<Connection>;

let server: RunningServer | null = null;
async function httpServer(box: Sandbox): Promise<RunningServer> {
  // The remote clients are anonymous: the operator's opt-ins give them (and list) the eight tools stdio has.
  server ??= await startHttpServerProcess(box.ws, ['--allow-anonymous-writes', '--allow-anonymous-tasks']);
  return server;
}

const transports: [string, Era, Connect][] = [
  ['stdio', '2025-06-18', async (box) => {
    const c = await connectStdio(box.ws, [], { elicitation: {} }, personWhoAllows);
    return legacy(c.client);
  }],
  ['streamable http', '2025-06-18', async (box) => {
    const s = await httpServer(box);
    const client = newClient();
    await client.connect(new StreamableHTTPClientTransport(new URL(s.url)));
    return legacy(client);
  }],
  ['websocket', '2025-06-18', async (box) => {
    const s = await httpServer(box);
    const client = newClient();
    await client.connect(new WebSocketClientTransport(new URL(s.wsUrl)));
    return legacy(client);
  }],
  ['stdio', '2026-07-28', async (box) => modern(new StdioClientTransportV2({ command: process.execPath, args: ['--import', 'tsx', stdioEntry, '--workspace', box.ws], cwd: repoRoot, env: stdioServerEnv(), stderr: 'ignore' }))],
  ['streamable http', '2026-07-28', async (box) => modern(new StreamableHTTPClientTransportV2(new URL((await httpServer(box)).url)))],
  // SDK v2 has no WebSocket transport; the 1.x one is a plain Transport (one JSON-RPC message a frame).
  ['websocket', '2026-07-28', async (box) => modern(new WebSocketClientTransport(new URL((await httpServer(box)).wsUrl)))],
];

let box: Sandbox;

for (const [transport, era, connect] of transports) {
  const name = `${transport}, ${era}`;
  const t = suite(`contract over ${name}`);
  let c: Connection;
  t.before(async () => {
    box ??= await makeSandbox();
    c = await connect(box);
  });
  t.after(async () => {
    await c?.close();
  });

  t('initializes and lists the eight tools', async () => {
    assert.is(c.serverName(), 'super-pi');
    const { tools } = await c.listTools();
    assert.equal(tools.map((x) => x.name), ['read', 'write', 'edit', 'bash', 'grep', 'find', 'ls', 'harness_task']);
  });

  t('read, ls (structured), grep', async () => {
    assert.match(textOf(await c.call('read', { path: 'src/greet.ts' })), /export function greet/);
    const ls = await c.call('ls', { path: 'src' });
    assert.ok((ls.structuredContent as { entries: { name: string }[] }).entries.some((e) => e.name === 'math.ts'));
    const grep = await c.call('grep', { pattern: 'hello' });
    assert.ok((grep.structuredContent as { matches: { path: string }[] }).matches.some((m) => m.path === 'src/greet.ts'));
  });

  t('write then read back; edit', async () => {
    const file = `contract-${name.replace(/\W/g, '')}.txt`;
    assert.not.ok((await c.call('write', { path: file, content: 'one\n' })).isError);
    assert.not.ok((await c.call('edit', { path: file, oldText: 'one', newText: 'two' })).isError);
    assert.is(await readFile(path.join(box.ws, file), 'utf8'), 'two\n');
  });

  t('bash: the person is asked (elicitation), then it runs with progress', async () => {
    const asked = questions.length;
    const seen: number[] = [];
    const r = await c.call('bash', { command: 'for i in 1 2 3; do echo tick $i; sleep 0.3; done' }, { onprogress: (p) => seen.push(p.progress) });
    assert.match(textOf(r), /tick 3/);
    assert.ok(seen.length >= 1, 'progress arrived');
    assert.is(questions.length, asked + 1);
    assert.match(questions[asked] as string, /run the command: for i in 1 2 3/);
  });

  t('a cancelled call sends no result and the session goes on', async () => {
    const controller = new AbortController();
    const call = c.call('bash', { command: 'sleep 5' }, { signal: controller.signal });
    setTimeout(() => controller.abort('test'), 200);
    await call.then(() => assert.unreachable('cancelled'), (err: unknown) => assert.ok(err));
    await c.alive();
  });

  // The SDK rejects a cancelled call locally whatever the server does; this proves the server stopped.
  t('a cancelled call stops its command on the server: the marker it would write after 2 s never appears', async () => {
    const marker = path.join(box.ws, `cancelled-${name.replace(/\W/g, '')}`);
    // `sleep 2.<random>`: a little over 2 s, and a command line no other process on the machine has.
    const pause = `2.${randomInt(1e8, 1e9)}`;
    const command = `sleep ${pause} && touch ${marker}`;
    const controller = new AbortController();
    try {
      const call = c.call('bash', { command }, { signal: controller.signal });
      const settled = call.then(() => 'answered', () => 'rejected');
      // The command is running (the person has allowed it), so its absence later means something.
      await atLeast(pause, 1);
      await atLeast(command, 1);
      await new Promise((r) => setTimeout(r, 500));
      controller.abort('test');
      assert.is(await settled, 'rejected');
      // Wait past the moment the command would have written its marker, had it lived.
      await new Promise((r) => setTimeout(r, 3000));
      assert.is(await access(marker).then(() => true, () => false), false, 'the command was killed on the server: no marker');
      assert.ok(await allGone(command), 'no process of the command remains (its shell)');
      assert.ok(await allGone(pause), 'no process of the command remains (its sleep)');
      await c.alive();
    } finally {
      killLeftovers(pause);
      killLeftovers(command);
    }
  });

  t('bad arguments are an isError result (SEP-1303); escapes are refused', async () => {
    const bad = await c.call('read', { path: 1 });
    assert.is(bad.isError, true);
    assert.match(textOf(bad), /Invalid arguments for read/);
    const r = await c.call('read', { path: '../outside/secret.txt' });
    assert.is(r.isError, true);
    assert.match(textOf(r), /outside the workspace/);
  });

  t('prompts, resources, completion', async () => {
    const { prompts } = await c.listPrompts();
    assert.is(prompts.length, 5);
    const p = await c.getPrompt('plan_architecture', { goal: 'split it' });
    assert.match(JSON.stringify(p.messages), /split it/);
    const r = await c.readResource('superpi://workspace');
    assert.match((r.contents[0] as { text: string }).text, /Demo project/);
    const done = await c.complete({ type: 'ref/prompt', name: 'super-pi-code' }, { name: 'path', value: 'sr' });
    assert.equal(done.completion.values, ['src/']);
    // Resource not found: -32002 until 2025-11-25, -32602 (Invalid Params) from 2026-07-28 (SEP-2164).
    const notFound = era === '2026-07-28' ? -32602 : -32002;
    await c.readResource('superpi://conversation/x/transcript').then(() => assert.unreachable(), (err: { code?: number }) => assert.is(err.code, notFound));
  });

  t.run();
}

const cleanup = suite('cleanup');
cleanup('the HTTP server drains and exits 0 on SIGTERM', async () => {
  assert.ok(server, 'the server was started');
  assert.is(await server!.stop(), 0);
  await box.cleanup();
});
cleanup.run();
