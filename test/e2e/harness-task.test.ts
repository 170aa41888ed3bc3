// harness_task end to end: the official SDK client over stdio; a scripted OpenAI-compatible model on
// 127.0.0.1 (a test fixture serving canned turns) drives a task that reads, edits and runs a command in
// a temporary workspace; every step lands in the SQLite store and reads back as a JSON-lines transcript.

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type ScriptStep, startScriptedServer } from '../model/fixtures/scripted-server.ts';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { type Connected, connectStdio, makeSandbox, type Sandbox, startHttpServerProcess, textOf } from './fixtures.ts';
import { guarded, pollUntil } from '../hang-guard.ts';

const toolTurn = (calls: { name: string; arguments: object }[]): ScriptStep => ({
  body: {
    choices: [{
      finish_reason: 'tool_calls',
      message: { role: 'assistant', content: null, tool_calls: calls.map((c, i) => ({ id: `call-${c.name}-${i}`, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } })) },
    }],
  },
});
const answer = (text: string): ScriptStep => ({ body: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: text } }] } });

const tasks = suite('harness_task');
let box: Sandbox;
let home: string;

tasks.before(async () => {
  box = await makeSandbox();
  home = await mkdtemp(path.join(os.tmpdir(), 'superpi-home-'));
});
tasks.after(async () => {
  await box.cleanup();
  await rm(home, { recursive: true, force: true });
});

async function withModel(script: ScriptStep[], body: (c: Connected, requests: { body: unknown }[]) => Promise<void>) {
  const model = await startScriptedServer(script);
  const c = await connectStdio(box.ws, [], {}, (x) => x, { SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted', SUPERPI_API_KEY: 'sk-test-secret', SUPERPI_HOME: home });
  try {
    // Listed first, as hosts do: the SDK client then checks every harness_task structuredContent (answer,
    // failure, undo) against the outputSchema it lists, and refuses one that does not fit.
    await c.client.listTools();
    await body(c, model.requests);
  } finally {
    await c.close();
    await model.close();
  }
}

tasks('a super-pi-code task reads, edits and runs a command, then answers; the transcript has every step once, in order', async () => {
  await withModel([
    toolTurn([{ name: 'read', arguments: { path: 'src/greet.ts' } }]),
    toolTurn([{ name: 'edit', arguments: { path: 'src/greet.ts', oldText: 'hello', newText: 'howdy' } }, { name: 'bash', arguments: { command: 'grep -c howdy src/greet.ts' } }]),
    answer('Changed the greeting to howdy.'),
  ], async (c, requests) => {
    const progress: number[] = [];
    const r = await c.client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'Say howdy instead of hello.' } }, undefined, { onprogress: (p) => progress.push(p.progress) });
    assert.not.ok(r.isError, textOf(r));
    assert.is(textOf(r), 'Changed the greeting to howdy.');
    const s = r.structuredContent as { conversation_id: string; harness: string; status: string; turns: number; tool_calls: number; answer: string };
    // The final answer is in structuredContent too: a client that hands the model only that (Mastra) must not lose it.
    assert.equal({ ...s, conversation_id: 'x' }, { conversation_id: 'x', harness: 'super-pi-code', status: 'completed', turns: 3, tool_calls: 3, answer: 'Changed the greeting to howdy.' });
    assert.match(await readFile(path.join(box.ws, 'src/greet.ts'), 'utf8'), /howdy/);
    assert.ok(progress.length >= 3, 'progress per step');
    // The model saw the tools and the results of its calls.
    const second = requests[1]?.body as { tools: { function: { name: string } }[]; messages: { role: string; content: string | null }[]; model: string };
    assert.is(second.model, 'scripted');
    assert.ok(second.tools.some((t) => t.function.name === 'edit'));
    assert.ok(second.messages.some((m) => m.role === 'tool' && /export function greet/.test(m.content ?? '')));
    const third = requests[2]?.body as { messages: { role: string; content: string | null }[] };
    assert.ok(third.messages.some((m) => m.role === 'tool' && /^1\b/.test(m.content ?? '')), 'bash ran in the workspace');
    // The transcript, as this connection's resource.
    const uri = `superpi://conversation/${s.conversation_id}/transcript`;
    const { resources } = await c.client.listResources();
    assert.ok(resources.some((x) => x.uri === uri));
    const t = await c.client.readResource({ uri });
    const entries = (t.contents[0] as { text: string }).text.split('\n').map((l) => JSON.parse(l) as { seq: number; type: string });
    // The edit's before-image (written ahead of the edit), then its completed snapshot.
    assert.equal(entries.map((e) => e.type), ['user', 'model', 'tool_call', 'tool_result', 'model', 'tool_call', 'file_snapshot', 'file_snapshot', 'tool_result', 'tool_call', 'tool_result', 'model', 'final']);
    assert.ok(entries.every((e, i) => i === 0 || e.seq > (entries[i - 1] as { seq: number }).seq), 'strictly increasing seq');
  });
});

tasks('a planner task whose model tries to write is denied, and says so in the transcript', async () => {
  await withModel([
    toolTurn([{ name: 'write', arguments: { path: 'plan.md', content: 'x' } }]),
    answer('I cannot write; here is the plan instead.'),
  ], async (c, requests) => {
    const r = await c.client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-planner', prompt: 'Plan and write it down.' } });
    assert.not.ok(r.isError, textOf(r));
    const firstTools = (requests[0]?.body as { tools: { function: { name: string } }[] }).tools.map((t) => t.function.name);
    assert.equal(firstTools, ['read', 'grep', 'find', 'ls'], 'the planner is offered its loadout only');
    const back = (requests[1]?.body as { messages: { role: string; content: string | null }[] }).messages.find((m) => m.role === 'tool');
    assert.match(back?.content ?? '', /super-pi-planner: write is denied/);
    await readFile(path.join(box.ws, 'plan.md')).then(() => assert.unreachable('nothing was written'), () => undefined);
  });
});

tasks('a conversation continues with conversation_id (a subscriber hears each new entry); an unknown id is a clear tool error', async () => {
  await withModel([answer('first'), answer('second')], async (c, requests) => {
    const first = await c.client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-assistant', prompt: 'one' } });
    const id = (first.structuredContent as { conversation_id: string }).conversation_id;
    const updates: string[] = [];
    c.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { updates.push(n.params.uri); });
    await c.client.subscribeResource({ uri: `superpi://conversation/${id}/transcript` });
    const second = await c.client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-assistant', prompt: 'two', conversation_id: id } });
    assert.is(textOf(second), 'second');
    const history = (requests[1]?.body as { messages: { role: string; content: string | null }[] }).messages.filter((m) => m.role !== 'system').map((m) => m.content);
    assert.equal(history, ['one', 'first', 'two']);
    assert.ok(updates.length >= 3 && updates.every((u) => u.includes(id)), `updates for user, model, final (${updates.length})`);
    const unknown = await c.client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-assistant', prompt: 'x', conversation_id: 'no-such' } });
    assert.is(unknown.isError, true);
    assert.is(textOf(unknown), 'conversation no-such not found');
  });
});

tasks('a model error ends the task with an error that names the provider and status, never the key', async () => {
  await withModel([{ status: 401, body: { error: { message: 'bad key sk-test-secret' } } }], async (c) => {
    const r = await c.client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'x' } });
    assert.is(r.isError, true);
    assert.match(textOf(r), /openai-compatible.*401/);
    assert.not.match(textOf(r), /sk-test-secret/);
    // The failure's words are in structuredContent as well, and the SDK client found it fits the declared outputSchema.
    const s = r.structuredContent as { status: string; message: string };
    assert.equal([s.status, s.message], ['failed', textOf(r)]);
    assert.not.match(JSON.stringify(r.structuredContent), /sk-test-secret/);
  });
});

tasks('over HTTP, principal B can neither read, list nor continue principal A\'s conversation', async () => {
  const model = await startScriptedServer([answer('for alice only')]);
  const server = await startHttpServerProcess(box.ws, [], {
    SUPERPI_TOKENS: 'alice-token-123=alice,bob-token-4567=bob', SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted', SUPERPI_HOME: home,
  });
  const connect = async (token: string) => {
    const client = new Client({ name: token, version: '1' }, { capabilities: {} });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    return client;
  };
  try {
    const alice = await connect('alice-token-123');
    const done = await alice.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-assistant', prompt: 'secret plan' } });
    const id = (done.structuredContent as { conversation_id: string }).conversation_id;
    const uri = `superpi://conversation/${id}/transcript`;
    assert.match((await alice.readResource({ uri })).contents[0] ? 'ok' : '', /ok/);
    const bob = await connect('bob-token-4567');
    assert.not.ok((await bob.listResources()).resources.some((r) => r.uri.includes(id)), 'not listed');
    await bob.readResource({ uri }).then(() => assert.unreachable('read'), (err: { code?: number }) => assert.is(err.code, -32002));
    const stolen = await bob.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-assistant', prompt: 'continue', conversation_id: id } });
    assert.is(stolen.isError, true);
    assert.match(textOf(stolen), new RegExp(`conversation ${id} not found`));
    await alice.close();
    await bob.close();
  } finally {
    await server.stop();
    await model.close();
  }
});

tasks('an anonymous remote caller cannot write through a task either', async () => {
  const model = await startScriptedServer([toolTurn([{ name: 'write', arguments: { path: 'pwned.txt', content: 'x' } }]), answer('done')]);
  const server = await startHttpServerProcess(box.ws, ['--allow-anonymous-tasks'], { SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted', SUPERPI_HOME: home });
  try {
    const client = new Client({ name: 'anon', version: '1' }, { capabilities: {} });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    await client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'write a file' } });
    const back = (model.requests[1]?.body as { messages: { role: string; content: string | null }[] }).messages.find((m) => m.role === 'tool');
    assert.match(back?.content ?? '', /anonymous remote callers cannot use write/);
    await readFile(path.join(box.ws, 'pwned.txt')).then(() => assert.unreachable('nothing was written'), () => undefined);
    await client.close();
  } finally {
    await server.stop();
    await model.close();
  }
});

tasks('undo reverts a conversation\'s changes newest first, and refuses (naming it) a file changed since', async () => {
  await withModel([
    toolTurn([{ name: 'write', arguments: { path: 'notes/new.md', content: 'created\n' } }, { name: 'edit', arguments: { path: 'src/math.ts', oldText: 'a + b', newText: 'b + a' } }, { name: 'edit', arguments: { path: 'README.md', oldText: 'Demo', newText: 'Changed' } }]),
    answer('done'),
  ], async (c) => {
    const math = await readFile(path.join(box.ws, 'src/math.ts'), 'utf8');
    const r = await c.client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'change things' } });
    const id = (r.structuredContent as { conversation_id: string }).conversation_id;
    assert.match(await readFile(path.join(box.ws, 'src/math.ts'), 'utf8'), /b \+ a/);
    // Someone else edits README.md after the task.
    const { writeFile } = await import('node:fs/promises');
    await writeFile(path.join(box.ws, 'README.md'), 'someone else was here\n');
    const u = await c.client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'undo', conversation_id: id, undo: true } });
    assert.is(u.isError, true, 'a refused file makes the undo an error');
    assert.match(textOf(u), /Refused \(changed since by someone else\): README\.md/);
    assert.equal(u.structuredContent, { conversation_id: id, reverted: 2, reverted_paths: ['src/math.ts', 'notes/new.md'], interrupted: 0, refused: ['README.md'] });
    assert.is(await readFile(path.join(box.ws, 'src/math.ts'), 'utf8'), math, 'the edit was reverted');
    await readFile(path.join(box.ws, 'notes/new.md')).then(() => assert.unreachable('the created file was removed'), () => undefined);
    assert.is(await readFile(path.join(box.ws, 'README.md'), 'utf8'), 'someone else was here\n', 'the other change was kept');
  });
});

tasks('notifications/cancelled stops a task and marks its conversation cancelled', async () => {
  await withModel([toolTurn([{ name: 'bash', arguments: { command: 'sleep 5' } }]), answer('too late')], async (c) => {
    const controller = new AbortController();
    const call = c.client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'wait' } }, undefined, { signal: controller.signal });
    setTimeout(() => controller.abort('user'), 800);
    await call.then(() => assert.unreachable('cancelled'), () => undefined);
    await new Promise((r) => setTimeout(r, 1500));
    const { resources } = await c.client.listResources();
    assert.is(resources.filter((x) => x.uri.startsWith('superpi://conversation/')).length, 0, 'a cancelled call sends no result, so the connection never learnt the id');
    const { SqliteConversationStore } = await import('../../src/store/sqlite-store.ts');
    const store = SqliteConversationStore.open(path.join(home, 'super-pi.db'));
    const latest = store.listConversations('local').items[0];
    assert.is(latest?.status, 'cancelled');
    store.close();
  });
});

tasks('the same kind of task driven through MCP sampling, answered by the test client', async () => {
  const asked: string[] = [];
  const turns = [
    'Let me look.\n<tool_call>{"name": "read", "arguments": {"path": "src/greet.ts"}}</tool_call>',
    'greet returns a greeting.',
  ];
  const prepare = (client: Client) => {
    client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      asked.push(JSON.stringify(req.params.messages));
      return { role: 'assistant', model: 'test-client', content: { type: 'text', text: turns[asked.length - 1] ?? 'out of script' } };
    });
    return client;
  };
  const c = await connectStdio(box.ws, [], { sampling: {} }, prepare, { SUPERPI_HOME: home });
  try {
    const r = await c.client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-librarian', prompt: 'What does greet do?' } });
    assert.not.ok(r.isError, textOf(r));
    assert.is(textOf(r), 'greet returns a greeting.');
    assert.is(asked.length, 2);
    assert.match(asked[1] as string, /Tool result for read/);
    assert.match(asked[1] as string, /export function greet/);
  } finally {
    await c.close();
  }
});

tasks('a remote task asks the person (elicitation) before an `ask` tool, and runs it when allowed', async () => {
  const model = await startScriptedServer([toolTurn([{ name: 'bash', arguments: { command: 'echo asked-and-allowed' } }]), answer('ran it')]);
  const server = await startHttpServerProcess(box.ws, ['--allow-anonymous-writes', '--allow-anonymous-tasks'], { SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted', SUPERPI_HOME: home });
  try {
    const questions: string[] = [];
    const client = new Client({ name: 'asker', version: '1' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      questions.push(req.params.message);
      return { action: 'accept', content: { allow: true } };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    const r = await client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'run it' } });
    assert.is(textOf(r), 'ran it');
    assert.equal(questions.length, 1);
    assert.match(questions[0] as string, /super-pi-code task wants to run the command: echo asked-and-allowed/);
    const back = (model.requests[1]?.body as { messages: { role: string; content: string | null }[] }).messages.find((m) => m.role === 'tool');
    assert.match(back?.content ?? '', /asked-and-allowed/);
    await client.close();
  } finally {
    await server.stop();
    await model.close();
  }
});

// ── Who may spend the operator's model, and how much (issue 22).

const anonymousClient = async (url: string, name: string) => {
  const client = new Client({ name, version: '1' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
};

tasks('over HTTP an anonymous caller cannot start harness_task by default: a tool error names the flag and tokens, it is not listed, and the model gets no request', async () => {
  const model = await startScriptedServer([answer('should never be asked')]);
  const server = await startHttpServerProcess(box.ws, [], { SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted', SUPERPI_HOME: home });
  try {
    const anon = await anonymousClient(server.url, 'anon');
    assert.equal((await anon.listTools()).tools.map((t) => t.name), ['read', 'grep', 'find', 'ls'], 'only what it may call');
    const results = await Promise.all(Array.from({ length: 5 }, () => anon.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'spend' } })));
    for (const r of results) {
      assert.is(r.isError, true);
      assert.match(textOf(r), /--allow-anonymous-tasks/);
      assert.match(textOf(r), /bearer token/);
    }
    assert.is(model.requests.length, 0, 'the operator\'s model was never called');
    await anon.close();
  } finally {
    await server.stop();
    await model.close();
  }
});

tasks('with --allow-anonymous-tasks and --max-tasks-per-principal 2, anonymous sessions share one budget: a third concurrent task (from a third session) is refused', async () => {
  const model = await startScriptedServer([{ hang: true }, { hang: true }, answer('a third task reached the model')]);
  const server = await startHttpServerProcess(box.ws, ['--allow-anonymous-tasks', '--max-tasks-per-principal', '2'], { SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted', SUPERPI_HOME: home });
  const clients: Client[] = [];
  try {
    for (const name of ['anon-1', 'anon-2', 'anon-3']) clients.push(await anonymousClient(server.url, name));
    const [one, two, three] = clients as [Client, Client, Client];
    const running = [one, two].map((c) => c.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'hang' } }, undefined, { timeout: 60_000 }).catch(() => undefined));
    await pollUntil('both tasks asked the model', () => (model.requests.length >= 2 ? true : null), 20_000);
    const third = await three.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'one more' } });
    assert.is(third.isError, true);
    assert.match(textOf(third), /anonymous callers \(who share one budget\) already run 2 task\(s\) on this node, the most --max-tasks-per-principal allows \(2\)/);
    assert.is(model.requests.length, 2, 'the refused task never reached the model');
    void running;
  } finally {
    for (const c of clients) await c.close().catch(() => undefined);
    await server.stop();
    await model.close();
  }
});

tasks('--model-calls-per-minute 2 bounds what the model endpoint receives: the task waits, saying so, with exactly 2 requests sent', async () => {
  const ls = toolTurn([{ name: 'ls', arguments: { path: '.' } }]);
  const model = await startScriptedServer([ls, ls, ls, ls, answer('done')]);
  const server = await startHttpServerProcess(box.ws, ['--model-calls-per-minute', '2'], {
    SUPERPI_TOKENS: 'carol-token-123=carol', SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted', SUPERPI_HOME: home,
  });
  const client = new Client({ name: 'carol', version: '1' }, { capabilities: {} });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { authorization: 'Bearer carol-token-123' } } }));
    const controller = new AbortController();
    let resolveWaiting!: (n: number) => void;
    const waiting = new Promise<number>((r) => (resolveWaiting = r));
    const call = client.callTool({ name: 'harness_task', arguments: { harness: 'super-pi-code', prompt: 'list it four times' } }, undefined, {
      signal: controller.signal, timeout: 60_000,
      onprogress: (p) => { if (/waiting for the model budget/.test(p.message ?? '')) resolveWaiting(model.requests.length); },
    }).catch(() => undefined);
    const seenWhenWaiting = await guarded(waiting, 'the progress "waiting for the model budget"', 30_000);
    assert.is(seenWhenWaiting, 2, 'two requests reached the model before the task waited');
    controller.abort('enough');
    await call;
    assert.is(model.requests.length, 2, 'no third request was sent');
  } finally {
    await client.close().catch(() => undefined);
    await server.stop();
    await model.close();
  }
});

tasks.run();
