// `subscriptions/listen` end to end with the official SDK v2 client pinned to 2026-07-28, over stdio (a
// real child process) and Streamable HTTP (a real socket, the stream an SSE reply of one POST), and over
// WebSocket with raw 2026-07-28 messages (the SDK v2 client has no WebSocket transport): a harness
// task (a scripted model on 127.0.0.1) writes a conversation; a listen stream names its transcript and one
// of no conversation, and is acknowledged for the first alone; the next task on that conversation is heard
// on the stream; once the stream is closed, nothing more arrives.

import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import WebSocket from 'ws';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type ScriptStep, startScriptedServer } from '../model/fixtures/scripted-server.ts';
import { makeSandbox, repoRoot, type RunningServer, type Sandbox, startHttpServerProcess, stdioEntry } from './fixtures.ts';
import { pollUntil } from '../hang-guard.ts';
import { DRAIN_GRACE_MS } from '../../src/limits.ts';

const answer = (text: string): ScriptStep => ({ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: text } }] } });
const TOKEN = 'listen-test-token-0123456789';
const T = (c: string) => `superpi://conversation/${c}/transcript`;

const e2e = suite('subscriptions/listen: SDK v2 client pinned to 2026-07-28');
let box: Sandbox;
let home: string;
let model: Awaited<ReturnType<typeof startScriptedServer>>;
let server: RunningServer;

e2e.before(async () => {
  box = await makeSandbox();
  home = await mkdtemp(path.join(os.tmpdir(), 'superpi-listen-home-'));
  model = await startScriptedServer(Array.from({ length: 12 }, (_, i) => answer(`answer ${i + 1}`)));
  server = await startHttpServerProcess(box.ws, [], { SUPERPI_TOKENS: `${TOKEN}=alice`, ...modelEnv() });
});
e2e.after(async () => {
  await server?.stop();
  await model?.close();
  await box.cleanup();
  await rm(home, { recursive: true, force: true });
});

function modelEnv(): Record<string, string> {
  return { SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted', SUPERPI_API_KEY: 'sk-test', SUPERPI_HOME: home };
}

function transportFor(kind: 'stdio' | 'http'): StdioClientTransport | StreamableHTTPClientTransport {
  if (kind === 'http') return new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } });
  return new StdioClientTransport({
    command: process.execPath, args: ['--import', 'tsx', stdioEntry, '--workspace', box.ws], cwd: repoRoot, stderr: 'pipe',
    env: { ...process.env as Record<string, string>, ...modelEnv() },
  });
}

for (const kind of ['stdio', 'http'] as const) {
  e2e(`${kind}: acknowledged for the caller's transcript alone; the next task on it is heard on the stream; nothing after close`, async () => {
    const client = new Client({ name: 'listen-e2e', version: '2.4.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(transportFor(kind));
    try {
      assert.is(client.getNegotiatedProtocolVersion(), '2026-07-28');
      const updates: { uri: string; subscription: unknown }[] = [];
      client.setNotificationHandler('notifications/resources/updated', async (n) => {
        updates.push({ uri: n.params.uri, subscription: n.params._meta?.['io.modelcontextprotocol/subscriptionId'] });
      });
      await client.listTools();
      const first = await client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'one' } });
      const conversation = (first.structuredContent as { conversation_id?: string } | undefined)?.conversation_id;
      assert.ok(typeof conversation === 'string', JSON.stringify(first));
      const uri = T(conversation as string);

      const subscription = await client.listen({ resourceSubscriptions: [uri, T('no-such-conversation')], toolsListChanged: true });
      assert.equal(subscription.honoredFilter, { resourceSubscriptions: [uri] }, 'only the caller\'s transcript; the lists never change');

      const second = await client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'two', conversation_id: conversation } });
      assert.not.ok(second.isError, JSON.stringify(second));
      await pollUntil('an update of the transcript on the stream', async () => (updates.some((u) => u.uri === uri) ? true : null), 30_000, 50);
      assert.ok(updates.every((u) => u.uri === uri && u.subscription !== undefined), JSON.stringify(updates));

      await subscription.close();
      // Let the close reach the server (HTTP: the stream's connection; stdio: notifications/cancelled).
      await client.listTools();
      updates.length = 0;
      const third = await client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'three', conversation_id: conversation } });
      assert.not.ok(third.isError, JSON.stringify(third));
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(updates, [], 'nothing after the stream was closed');
    } finally {
      await client.close();
    }
  });
}

e2e('websocket: the same stream as a request in flight on the socket; notifications/cancelled ends it', async () => {
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 'ws-listen', version: '1' } };
  const ws = new WebSocket(server.wsUrl, ['mcp'], { headers: { authorization: `Bearer ${TOKEN}` } });
  const seen: { id?: unknown; method?: string; result?: { structuredContent?: { conversation_id?: string }; isError?: boolean }; params?: { uri?: string; _meta?: Record<string, unknown>; notifications?: unknown } }[] = [];
  ws.on('message', (data) => seen.push(JSON.parse(String(data))));
  await new Promise<void>((resolve, reject) => { ws.once('open', () => resolve()); ws.once('error', reject); });
  const send = (msg: object) => ws.send(JSON.stringify({ jsonrpc: '2.0', ...msg }));
  const answered = (id: unknown) => pollUntil(`the answer to ${String(id)}`, () => seen.find((m) => m.id === id && m.result !== undefined) ?? null, 30_000, 20);
  try {
    const task = (id: string, prompt: string, conversation?: string) => send({ id, method: 'tools/call', params: { _meta: meta, name: 'harness_task', arguments: { harness: 'super-pi-code', prompt, ...(conversation ? { conversation_id: conversation } : {}) } } });
    task('t1', 'one');
    const conversation = (await answered('t1')).result?.structuredContent?.conversation_id as string;
    assert.ok(typeof conversation === 'string');
    send({ id: 'L', method: 'subscriptions/listen', params: { _meta: meta, notifications: { resourceSubscriptions: [T(conversation)] } } });
    const ack = await pollUntil('the acknowledgment', () => seen.find((m) => m.method === 'notifications/subscriptions/acknowledged') ?? null, 30_000, 20);
    assert.equal(ack.params, { _meta: { 'io.modelcontextprotocol/subscriptionId': 'L' }, notifications: { resourceSubscriptions: [T(conversation)] } });
    task('t2', 'two', conversation);
    await answered('t2');
    const updates = () => seen.filter((m) => m.method === 'notifications/resources/updated');
    await pollUntil('an update on the stream', () => (updates().length > 0 ? true : null), 30_000, 20);
    assert.ok(updates().every((m) => m.params?.uri === T(conversation) && m.params?._meta?.['io.modelcontextprotocol/subscriptionId'] === 'L'));
    send({ method: 'notifications/cancelled', params: { requestId: 'L' } });
    const before = updates().length;
    task('t3', 'three', conversation);
    await answered('t3');
    await new Promise((r) => setTimeout(r, 300));
    assert.is(updates().length, before, 'nothing after the cancel');
    assert.not.ok(seen.some((m) => m.id === 'L'), 'a cancelled listen is not answered');
  } finally {
    ws.close();
  }
});

e2e('stdio: SIGTERM with a stream open drains at once (a listen is not work to wait for) and ends the stream with an answer', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', stdioEntry, '--workspace', box.ws], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...modelEnv() } });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 'drain', version: '1' } };
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 'L', method: 'subscriptions/listen', params: { _meta: meta, notifications: {} } })}\n`);
    await pollUntil('the acknowledgment', () => (out.includes('notifications/subscriptions/acknowledged') ? true : null), 30_000, 20);
    const asked = Date.now();
    child.kill('SIGTERM');
    assert.is(await exited, 0);
    // The drain's grace is DRAIN_GRACE_MS; a stream held it to the end before listens were told apart.
    assert.ok(Date.now() - asked < DRAIN_GRACE_MS / 2, `exited after ${Date.now() - asked} ms`);
    const answer = out.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { id?: unknown; error?: unknown }).find((m) => m.id === 'L');
    assert.ok(answer?.error !== undefined, 'the stream ended with an answer to the listen');
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  }
});

e2e.run();
