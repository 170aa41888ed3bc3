// One transport contract: the same scenarios, with the official SDK Client, over stdio, Streamable
// HTTP and WebSocket. Every transport must give the same results.

import { randomInt } from 'node:crypto';
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'ws';
import { allGone, atLeast, killLeftovers } from '../tools/processes.ts';
import { connectStdio, makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess, textOf } from './fixtures.ts';

// Node 20 has no global WebSocket; the SDK's WebSocketClientTransport uses the global one.
(globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;

interface Connection { client: Client; close(): Promise<void> }

/** Every client declares elicitation and allows what it is asked (bash is `ask` under super-pi-code). */
const questions: string[] = [];
function personWhoAllows(client: Client): Client {
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    questions.push(req.params.message);
    return { action: 'accept', content: { allow: true } };
  });
  return client;
}
const newClient = () => personWhoAllows(new Client({ name: 'contract', version: '1' }, { capabilities: { elicitation: {} } }));
type Connect = (box: Sandbox) => Promise<Connection>;

let server: RunningServer | null = null;
async function httpServer(box: Sandbox): Promise<RunningServer> {
  // The remote clients are anonymous: the operator's opt-ins give them (and list) the eight tools stdio has.
  server ??= await startHttpServerProcess(box.ws, ['--allow-anonymous-writes', '--allow-anonymous-tasks']);
  return server;
}

const transports: [string, Connect][] = [
  ['stdio', async (box) => {
    const c = await connectStdio(box.ws, [], { elicitation: {} }, personWhoAllows);
    return { client: c.client, close: () => c.close() };
  }],
  ['streamable http', async (box) => {
    const s = await httpServer(box);
    const client = newClient();
    await client.connect(new StreamableHTTPClientTransport(new URL(s.url)));
    return { client, close: () => client.close() };
  }],
  ['websocket', async (box) => {
    const s = await httpServer(box);
    const client = newClient();
    await client.connect(new WebSocketClientTransport(new URL(s.wsUrl)));
    return { client, close: () => client.close() };
  }],
];

let box: Sandbox;

for (const [name, connect] of transports) {
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
    assert.is(c.client.getServerVersion()?.name, 'super-pi');
    const { tools } = await c.client.listTools();
    assert.equal(tools.map((x) => x.name), ['read', 'write', 'edit', 'bash', 'grep', 'find', 'ls', 'harness_task']);
  });

  t('read, ls (structured), grep', async () => {
    assert.match(textOf(await c.client.callTool({ name: 'read', arguments: { path: 'src/greet.ts' } })), /export function greet/);
    const ls = await c.client.callTool({ name: 'ls', arguments: { path: 'src' } });
    assert.ok((ls.structuredContent as { entries: { name: string }[] }).entries.some((e) => e.name === 'math.ts'));
    const grep = await c.client.callTool({ name: 'grep', arguments: { pattern: 'hello' } });
    assert.ok((grep.structuredContent as { matches: { path: string }[] }).matches.some((m) => m.path === 'src/greet.ts'));
  });

  t('write then read back; edit', async () => {
    const file = `contract-${name.replace(/\W/g, '')}.txt`;
    assert.not.ok((await c.client.callTool({ name: 'write', arguments: { path: file, content: 'one\n' } })).isError);
    assert.not.ok((await c.client.callTool({ name: 'edit', arguments: { path: file, oldText: 'one', newText: 'two' } })).isError);
    assert.is(await readFile(path.join(box.ws, file), 'utf8'), 'two\n');
  });

  t('bash: the person is asked (elicitation), then it runs with progress', async () => {
    const asked = questions.length;
    const seen: number[] = [];
    const r = await c.client.callTool({ name: 'bash', arguments: { command: 'for i in 1 2 3; do echo tick $i; sleep 0.3; done' } }, undefined, { onprogress: (p) => seen.push(p.progress) });
    assert.match(textOf(r), /tick 3/);
    assert.ok(seen.length >= 1, 'progress arrived');
    assert.is(questions.length, asked + 1);
    assert.match(questions[asked] as string, /run the command: for i in 1 2 3/);
  });

  t('a cancelled call sends no result and the session goes on', async () => {
    const controller = new AbortController();
    const call = c.client.callTool({ name: 'bash', arguments: { command: 'sleep 5' } }, undefined, { signal: controller.signal });
    setTimeout(() => controller.abort('test'), 200);
    await call.then(() => assert.unreachable('cancelled'), (err: unknown) => assert.ok(err));
    assert.equal(await c.client.ping(), {});
  });

  // The SDK rejects a cancelled call locally whatever the server does; this proves the server stopped.
  t('a cancelled call stops its command on the server: the marker it would write after 2 s never appears', async () => {
    const marker = path.join(box.ws, `cancelled-${name.replace(/\W/g, '')}`);
    // `sleep 2.<random>`: a little over 2 s, and a command line no other process on the machine has.
    const pause = `2.${randomInt(1e8, 1e9)}`;
    const command = `sleep ${pause} && touch ${marker}`;
    const controller = new AbortController();
    try {
      const call = c.client.callTool({ name: 'bash', arguments: { command } }, undefined, { signal: controller.signal });
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
      assert.equal(await c.client.ping(), {});
    } finally {
      killLeftovers(pause);
      killLeftovers(command);
    }
  });

  t('bad arguments are an isError result (SEP-1303); escapes are refused', async () => {
    const bad = await c.client.callTool({ name: 'read', arguments: { path: 1 } });
    assert.is(bad.isError, true);
    assert.match(textOf(bad), /Invalid arguments for read/);
    const r = await c.client.callTool({ name: 'read', arguments: { path: '../outside/secret.txt' } });
    assert.is(r.isError, true);
    assert.match(textOf(r), /outside the workspace/);
  });

  t('prompts, resources, completion', async () => {
    const { prompts } = await c.client.listPrompts();
    assert.is(prompts.length, 5);
    const p = await c.client.getPrompt({ name: 'plan_architecture', arguments: { goal: 'split it' } });
    assert.match(JSON.stringify(p.messages), /split it/);
    const r = await c.client.readResource({ uri: 'superpi://workspace' });
    assert.match((r.contents[0] as { text: string }).text, /Demo project/);
    const done = await c.client.complete({ ref: { type: 'ref/prompt', name: 'super-pi-code' }, argument: { name: 'path', value: 'sr' } });
    assert.equal(done.completion.values, ['src/']);
    await c.client.readResource({ uri: 'superpi://conversation/x/transcript' }).then(() => assert.unreachable(), (err: { code?: number }) => assert.is(err.code, -32002));
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
