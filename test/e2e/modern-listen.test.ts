// `subscriptions/listen` end to end with the official SDK v2 client pinned to 2026-07-28, over stdio (a
// real child process) and Streamable HTTP (a real socket, the stream an SSE reply of one POST): a harness
// task (a scripted model on 127.0.0.1) writes a conversation; a listen stream names its transcript and one
// of no conversation, and is acknowledged for the first alone; the next task on that conversation is heard
// on the stream; once the stream is closed, nothing more arrives.

import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type ScriptStep, startScriptedServer } from '../model/fixtures/scripted-server.ts';
import { makeSandbox, repoRoot, type RunningServer, type Sandbox, startHttpServerProcess, stdioEntry } from './fixtures.ts';
import { pollUntil } from '../hang-guard.ts';

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

e2e.run();
