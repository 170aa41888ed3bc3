// `resources/list` over 2026-07-28 end to end, with the official SDK v2 client pinned to that revision, over
// stdio (a real child process) and Streamable HTTP (a real socket, two bearer tokens): the conversations
// listed are the caller principal's, from the store — those of earlier connections too, since a modern
// request has no connection of its own to list — and another principal sees none of them. The HTTP server
// runs with `--page-size 1`, so its listing takes one page per conversation, by `nextCursor`; a cursor not
// made for the caller is -32602.

import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type ScriptStep, startScriptedServer } from '../model/fixtures/scripted-server.ts';
import { makeSandbox, repoRoot, type RunningServer, type Sandbox, startHttpServerProcess, stdioEntry } from './fixtures.ts';

const answer = (text: string): ScriptStep => ({ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: text } }] } });
const ALICE = 'resources-alice-token-0123456789';
const BOB = 'resources-bob-token-0123456789';
const T = (c: string) => `superpi://conversation/${c}/transcript`;
const STATIC = ['superpi://workspace', 'superpi://loadout'];

const e2e = suite('resources/list over 2026-07-28: the principal\'s conversations from the store');
let box: Sandbox;
let home: string;
let model: Awaited<ReturnType<typeof startScriptedServer>>;
let server: RunningServer;

e2e.before(async () => {
  box = await makeSandbox();
  home = await mkdtemp(path.join(os.tmpdir(), 'superpi-resources-home-'));
  model = await startScriptedServer(Array.from({ length: 12 }, (_, i) => answer(`answer ${i + 1}`)));
  server = await startHttpServerProcess(box.ws, ['--page-size', '1'], { SUPERPI_TOKENS: `${ALICE}=alice,${BOB}=bob`, ...modelEnv() });
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

async function connect(kind: 'stdio' | 'http', token = ALICE): Promise<Client> {
  const client = new Client({ name: 'resources-e2e', version: '2.4.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(kind === 'http'
    ? new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } })
    : new StdioClientTransport({
      command: process.execPath, args: ['--import', 'tsx', stdioEntry, '--workspace', box.ws], cwd: repoRoot, stderr: 'pipe',
      env: { ...process.env as Record<string, string>, ...modelEnv() },
    }));
  assert.is(client.getNegotiatedProtocolVersion(), '2026-07-28');
  return client;
}

async function task(client: Client, prompt: string): Promise<string> {
  const result = await client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt } });
  const id = (result.structuredContent as { conversation_id?: string } | undefined)?.conversation_id;
  assert.ok(typeof id === 'string' && result.isError !== true, JSON.stringify(result));
  return id as string;
}

/** Every page of resources/list, walked by hand: the URIs of each page. */
async function pages(client: Client): Promise<string[][]> {
  const out: string[][] = [];
  let cursor: string | undefined;
  do {
    const page = await client.request({ method: 'resources/list', params: cursor === undefined ? {} : { cursor } });
    out.push(page.resources.map((r) => r.uri));
    cursor = page.nextCursor;
  } while (cursor !== undefined && out.length < 20);
  return out;
}

async function refusal(run: () => Promise<unknown>): Promise<{ code?: number; message: string }> {
  try {
    await run();
  } catch (err) {
    return err as { code?: number; message: string };
  }
  throw new Error('the request was not refused');
}

e2e('stdio: two tasks run on one connection are listed from a new connection too, newest first, after the static resources', async () => {
  const first = await connect('stdio');
  let ids: string[];
  try {
    ids = [await task(first, 'one'), await task(first, 'two')];
    const { resources, cacheScope } = await first.request({ method: 'resources/list', params: {} }) as { resources: { uri: string }[]; cacheScope?: string };
    assert.equal(resources.map((r) => r.uri), [...STATIC, T(ids[1]!), T(ids[0]!)]);
    assert.is(cacheScope, 'private');
  } finally {
    await first.close();
  }
  // Another process on the same store, same (local) principal: a modern listing is not of one connection.
  const second = await connect('stdio');
  try {
    const { resources } = await second.listResources(undefined, { cacheMode: 'bypass' });
    assert.equal(resources.map((r) => r.uri), [...STATIC, T(ids[1]!), T(ids[0]!)]);
    const transcript = resources.find((r) => r.uri === T(ids[0]!));
    assert.equal(transcript, { uri: T(ids[0]!), name: `conversation-${ids[0]!}`, title: `Transcript of conversation ${ids[0]!}`, mimeType: 'application/jsonl' });
  } finally {
    await second.close();
  }
});

e2e('http: alice\'s two conversations are listed one per page by nextCursor; bob sees none of them, nor can use her cursor', async () => {
  const alice = await connect('http');
  const bob = await connect('http', BOB);
  try {
    const ids = [await task(alice, 'three'), await task(alice, 'four')];
    // --page-size 1: the static resources and one conversation, then one conversation a page.
    assert.equal(await pages(alice), [[...STATIC, T(ids[1]!)], [T(ids[0]!)]]);
    const all = await alice.listResources(undefined, { cacheMode: 'bypass' });
    assert.equal(all.resources.map((r) => r.uri), [...STATIC, T(ids[1]!), T(ids[0]!)], 'the SDK\'s own walk of the pages');

    assert.equal(await pages(bob), [STATIC], 'another principal\'s conversations are never listed');
    const first = await alice.request({ method: 'resources/list', params: {} });
    assert.ok(typeof first.nextCursor === 'string');
    const foreign = await refusal(() => bob.listResources({ cursor: first.nextCursor as string }));
    assert.is(foreign.code, -32602);
    assert.match(foreign.message, /made for another caller/);
    const forged = await refusal(() => alice.listResources({ cursor: 'not-a-cursor' }));
    assert.is(forged.code, -32602);
    assert.match(forged.message, /Invalid cursor/);
    assert.equal((await alice.listResources({ cursor: first.nextCursor as string })).resources.map((r) => r.uri), [T(ids[0]!)], 'alice\'s own cursor still works');
  } finally {
    await alice.close();
    await bob.close();
  }
});

e2e.run();
