// A conversation belongs to its principal, not to the connection that started it (issue 12), end to end
// with the SDK client over stdio and Streamable HTTP: a task's transcript is read from a second
// connection and after the server process restarts (same SUPERPI_HOME); another principal gets -32002
// — the very answer a nonexistent id gets — on read, subscribe and completion; a server killed with
// SIGKILL mid-task, restarted without a server model (so it cannot continue the task itself), leaves the
// conversation running for a process that can (its principal reads it there, nobody else); a restart
// with a model takes it over and completes it (test/e2e/sqlite-takeover.test.ts has more of that), and a
// later call continues it.

import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pollUntil } from '../hang-guard.ts';
import { type ScriptStep, startScriptedServer } from '../model/fixtures/scripted-server.ts';
import { connectStdio, makeSandbox, type Sandbox, startHttpServerProcess, textOf } from './fixtures.ts';

const answer = (text: string): ScriptStep => ({ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: text } }] } });
const TEMPLATE = 'superpi://conversation/{id}/transcript';
const uriOf = (id: string) => `superpi://conversation/${id}/transcript`;
const NONEXISTENT = '00000000-0000-4000-8000-000000000000';
const TOKENS = 'alice-token-123=alice,bob-token-4567=bob';

interface Line { seq: number; type: string; payload: { text?: string; message?: string } }

const ownership = suite('conversation ownership');
let box: Sandbox;
let home: string;

ownership.before.each(async () => {
  box = await makeSandbox();
  home = await mkdtemp(path.join(os.tmpdir(), 'superpi-home-'));
});
ownership.after.each(async () => {
  await box.cleanup();
  await rm(home, { recursive: true, force: true });
});

function modelEnv(url: string): Record<string, string> {
  return { SUPERPI_MODEL_URL: `${url}/v1`, SUPERPI_MODEL: 'scripted', SUPERPI_API_KEY: 'sk-test', SUPERPI_HOME: home };
}

async function transcript(client: Client, id: string): Promise<Line[]> {
  const r = await client.readResource({ uri: uriOf(id) });
  return (r.contents[0] as { text: string }).text.split('\n').map((l) => JSON.parse(l) as Line);
}

async function completeIds(client: Client, prefix = ''): Promise<string[]> {
  const r = await client.complete({ ref: { type: 'ref/resource', uri: TEMPLATE }, argument: { name: 'id', value: prefix } });
  return r.completion.values;
}

/** The JSON-RPC error a call failed with, the uri it names replaced, so two answers compare byte for byte. */
async function errorOf(call: Promise<unknown>, uri: string): Promise<string> {
  try {
    await call;
  } catch (err) {
    const { code, message, data } = err as { code?: number; message?: string; data?: unknown };
    return JSON.stringify({ code, message, data }).split(uri).join('<uri>');
  }
  throw new Error('the call succeeded');
}

async function connectHttp(url: string, token?: string): Promise<Client> {
  const client = new Client({ name: token ?? 'anonymous', version: '1' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {}));
  return client;
}

ownership('stdio: a transcript is read, subscribed and completed from a second connection and after a restart', async () => {
  const model = await startScriptedServer([answer('first answer')]);
  try {
    const first = await connectStdio(box.ws, [], {}, (c) => c, modelEnv(model.url));
    const done = await first.client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-assistant', prompt: 'remember this' } });
    const id = (done.structuredContent as { conversation_id: string }).conversation_id;
    // A second connection (its own server process over stdio) while the first is still up.
    const second = await connectStdio(box.ws, [], {}, (c) => c, modelEnv(model.url));
    assert.equal((await transcript(second.client, id)).map((l) => [l.seq, l.type]), [[1, 'user'], [2, 'model'], [3, 'final']]);
    assert.equal(await second.client.subscribeResource({ uri: uriOf(id) }), {});
    assert.equal(await completeIds(second.client, id.slice(0, 8)), [id]);
    const { resources } = await second.client.listResources();
    assert.not.ok(resources.some((r) => r.uri === uriOf(id)), 'resources/list keeps to the conversations this connection started');
    await second.close();
    await first.close();
    // After a restart: a new process on the same SUPERPI_HOME.
    const again = await connectStdio(box.ws, [], {}, (c) => c, modelEnv(model.url));
    assert.equal((await transcript(again.client, id)).map((l) => l.type), ['user', 'model', 'final']);
    assert.equal(await completeIds(again.client), [id]);
    await again.close();
  } finally {
    await model.close();
  }
});

ownership('HTTP: another connection and a restarted server serve the principal; principal B gets exactly the nonexistent-id answer', async () => {
  const model = await startScriptedServer([answer('for alice only'), answer('continued')]);
  let server = await startHttpServerProcess(box.ws, [], { SUPERPI_TOKENS: TOKENS, ...modelEnv(model.url) });
  try {
    const alice = await connectHttp(server.url, 'alice-token-123');
    const done = await alice.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-assistant', prompt: 'secret plan' } });
    const id = (done.structuredContent as { conversation_id: string }).conversation_id;
    const uri = uriOf(id);

    // Alice, on a second connection: read, subscribe (and hear the task that the first one continues), complete.
    const alice2 = await connectHttp(server.url, 'alice-token-123');
    assert.equal((await transcript(alice2, id)).map((l) => l.type), ['user', 'model', 'final']);
    const heard: string[] = [];
    alice2.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { heard.push(n.params.uri); });
    await alice2.subscribeResource({ uri });
    assert.equal(await completeIds(alice2), [id]);
    const continued = await alice.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-assistant', prompt: 'go on', conversation_id: id } });
    assert.is(textOf(continued), 'continued');
    for (let i = 0; i < 50 && heard.length < 3; i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok(heard.length >= 3 && heard.every((u) => u === uri), `the second connection heard the first one's task (${heard.length} updates)`);

    // Bob: his -32002 for alice's conversation is byte for byte the one for an id that never existed.
    const bob = await connectHttp(server.url, 'bob-token-4567');
    const missing = uriOf(NONEXISTENT);
    assert.is(await errorOf(bob.readResource({ uri }), uri), await errorOf(bob.readResource({ uri: missing }), missing));
    assert.is(await errorOf(bob.subscribeResource({ uri }), uri), await errorOf(bob.subscribeResource({ uri: missing }), missing));
    assert.match(await errorOf(bob.readResource({ uri }), uri), /"code":-32002/);
    assert.match(await errorOf(bob.subscribeResource({ uri }), uri), /"code":-32002/);
    assert.equal(await completeIds(bob), [], 'completion never offers another principal\'s conversation');
    assert.equal(await completeIds(bob, id.slice(0, 8)), []);
    for (const c of [alice, alice2, bob]) await c.close();

    // Restart the server on the same SUPERPI_HOME.
    assert.is(await server.stop(), 0);
    server = await startHttpServerProcess(box.ws, [], { SUPERPI_TOKENS: TOKENS, ...modelEnv(model.url) });
    const aliceAfter = await connectHttp(server.url, 'alice-token-123');
    assert.equal((await transcript(aliceAfter, id)).map((l) => [l.seq, l.type]), [[1, 'user'], [2, 'model'], [3, 'final'], [4, 'user'], [5, 'model'], [6, 'final']]);
    await aliceAfter.subscribeResource({ uri });
    assert.equal(await completeIds(aliceAfter), [id]);
    const bobAfter = await connectHttp(server.url, 'bob-token-4567');
    assert.is(await errorOf(bobAfter.readResource({ uri }), uri), await errorOf(bobAfter.readResource({ uri: missing }), missing));
    await aliceAfter.close();
    await bobAfter.close();
  } finally {
    await server.stop();
    await model.close();
  }
});

ownership('HTTP: an anonymous caller is one principal per session, also across a restart (session ids repeat)', async () => {
  const model = await startScriptedServer([answer('anonymous one')]);
  let server = await startHttpServerProcess(box.ws, ['--allow-anonymous-tasks'], modelEnv(model.url));
  try {
    const anon = await connectHttp(server.url);
    const done = await anon.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-assistant', prompt: 'mine' } });
    const id = (done.structuredContent as { conversation_id: string }).conversation_id;
    assert.equal((await transcript(anon, id)).map((l) => l.type), ['user', 'model', 'final'], 'its own session reads it');
    const other = await connectHttp(server.url);
    await other.readResource({ uri: uriOf(id) }).then(() => assert.unreachable('another anonymous session'), (err: { code?: number }) => assert.is(err.code, -32002));
    await anon.close();
    await other.close();
    assert.is(await server.stop(), 0);
    // The first session of the new process has the same session number as the first of the old one.
    server = await startHttpServerProcess(box.ws, ['--allow-anonymous-tasks'], modelEnv(model.url));
    const next = await connectHttp(server.url);
    await next.readResource({ uri: uriOf(id) }).then(() => assert.unreachable('a new anonymous session after a restart'), (err: { code?: number }) => assert.is(err.code, -32002));
    assert.equal(await completeIds(next), []);
    await next.close();
  } finally {
    await server.stop();
    await model.close();
  }
});

/** Waits until the scripted model has received `n` requests. */
async function requestsReached(model: { requests: unknown[] }, n: number): Promise<void> {
  for (let i = 0; i < 200 && model.requests.length < n; i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(model.requests.length >= n, `the model got ${model.requests.length} requests, expected ${n}`);
}

/**
 * After the kill, on a server with no model (it cannot continue the task; a process with one may): the
 * conversation is left running, its prompt read by its principal from here.
 */
async function assertLeftRunning(client: Client): Promise<string> {
  const [id] = await completeIds(client);
  assert.ok(id, 'the principal\'s conversation is offered by completion');
  const lines = await transcript(client, id);
  assert.equal(lines.map((l) => [l.seq, l.type]), [[1, 'user']], 'not marked interrupted: left for a process with a model');
  return id;
}

/** On a server with a model, its takeover completes the task (`finishing`'s first answer); continuing the conversation then works, with it as history. */
async function assertContinues(client: Client, id: string, model: { requests: { body: unknown }[] }): Promise<void> {
  await pollUntil('the task taken over and completed', async () => ((await transcript(client, id)).at(-1)?.type === 'final' ? true : null), 60_000, 100);
  const r = await client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-assistant', prompt: 'please finish', conversation_id: id } });
  assert.not.ok(r.isError, textOf(r));
  assert.is(textOf(r), 'finished after the crash');
  assert.is((r.structuredContent as { status: string }).status, 'completed');
  const sent = (model.requests.at(-1)?.body as { messages: { role: string; content: string | null }[] }).messages.filter((m) => m.role === 'user').map((m) => m.content);
  assert.equal(sent, ['wait for the model', 'please finish'], 'the continued run has the interrupted one as history');
  assert.equal((await transcript(client, id)).map((l) => l.type), ['user', 'model', 'final', 'user', 'model', 'final']);
}

ownership('stdio: a server killed with SIGKILL mid-task, restarted without a server model, leaves the conversation running for one with a model, which completes it, and it continues', async () => {
  const hanging = await startScriptedServer([{ hang: true }]);
  const finishing = await startScriptedServer([answer('taken over and finished'), answer('finished after the crash')]);
  try {
    const doomed = await connectStdio(box.ws, [], {}, (c) => c, modelEnv(hanging.url));
    void doomed.client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-assistant', prompt: 'wait for the model' } }, undefined, { timeout: 60_000 }).catch(() => undefined);
    await requestsReached(hanging, 1);
    const pid = doomed.transport.pid;
    assert.ok(pid !== null, 'the server process');
    const exited = new Promise((resolve) => doomed.transport.onclose = () => resolve(undefined));
    process.kill(pid, 'SIGKILL');
    await exited;
    const after = await connectStdio(box.ws, [], {}, (c) => c, { SUPERPI_HOME: home });
    let id: string;
    try {
      id = await assertLeftRunning(after.client);
    } finally {
      await after.close();
    }
    const later = await connectStdio(box.ws, [], {}, (c) => c, modelEnv(finishing.url));
    try {
      await assertContinues(later.client, id, finishing);
    } finally {
      await later.close();
    }
  } finally {
    await hanging.close();
    await finishing.close();
  }
});

ownership('HTTP: a server killed with SIGKILL mid-task, restarted without a server model, leaves the conversation running for one with a model, which completes it, and it continues', async () => {
  const hanging = await startScriptedServer([{ hang: true }]);
  const finishing = await startScriptedServer([answer('taken over and finished'), answer('finished after the crash')]);
  const doomed = await startHttpServerProcess(box.ws, [], { SUPERPI_TOKENS: TOKENS, ...modelEnv(hanging.url) });
  let server = doomed;
  try {
    const alice = await connectHttp(doomed.url, 'alice-token-123');
    void alice.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-assistant', prompt: 'wait for the model' } }, undefined, { timeout: 60_000 }).catch(() => undefined);
    await requestsReached(hanging, 1);
    const exited = new Promise((resolve) => doomed.child.once('exit', resolve));
    doomed.child.kill('SIGKILL');
    await exited;
    server = await startHttpServerProcess(box.ws, [], { SUPERPI_TOKENS: TOKENS, SUPERPI_HOME: home });
    const aliceAfter = await connectHttp(server.url, 'alice-token-123');
    const bob = await connectHttp(server.url, 'bob-token-4567');
    assert.equal(await completeIds(bob), [], 'not bob\'s');
    const id = await assertLeftRunning(aliceAfter);
    await aliceAfter.close();
    await bob.close();
    await server.stop();
    server = await startHttpServerProcess(box.ws, [], { SUPERPI_TOKENS: TOKENS, ...modelEnv(finishing.url) });
    const aliceLater = await connectHttp(server.url, 'alice-token-123');
    await assertContinues(aliceLater, id, finishing);
    await aliceLater.close();
    await alice.close().catch(() => undefined);
  } finally {
    await server.stop();
    await hanging.close();
    await finishing.close();
  }
});

ownership.run();
