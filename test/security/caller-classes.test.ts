// The threat model, stated once, with one test per rule of what each caller class may do. The other
// files of test/security/ each take one rule of issue 10 (see test/security/README.md for the index).
//
// Caller classes:
// - the local user (stdio): runs the server; may read, write, edit and run commands in the workspace.
//   An `ask` rule is trusted to the host, which confirms every tool call with its user before sending it.
// - a token principal (HTTP/WebSocket, `Authorization: Bearer`): its own sessions and conversations
//   only (another principal's look exactly like ones that do not exist); an `ask` rule becomes an
//   `elicitation/create` when the client declared elicitation, else a denial naming the rule.
// - an anonymous remote caller: one principal per session; reads only — no `write`, `edit` or `bash`
//   unless the operator passed `--allow-anonymous-writes`, no `harness_task` (the operator's model)
//   unless `--allow-anonymous-tasks`, and `tools/list` shows it only what it may call; `/health` tells
//   it only `{status}` once tokens are configured.
// - the content of the workspace (always): a cloned repository is attacker-controlled. It never
//   chooses a program or an option the server runs (git config, hooks, pagers), never leads a read
//   or write outside the root (symlinks, swapped directories), and never hangs or bloats the server
//   (FIFOs, devices, huge files): see confinement.test.ts, special-files.test.ts, git-config.test.ts.
//
// Every server here is a real process on 127.0.0.1 and a free port, driven by the official SDK client.

import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { connectStdio, makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess, textOf } from '../e2e/fixtures.ts';

const TOKENS = 'alice-caller-classes-token=alice,bob-caller-classes-token=bob';

interface ToolReply { isError?: boolean; content: { type: string; text?: string }[] }

async function httpClient(url: string, token: string | null, elicitation: 'accept' | 'decline' | null = null): Promise<Client> {
  const client = new Client({ name: 'caller-classes', version: '1.0.0' }, { capabilities: elicitation ? { elicitation: {} } : {} });
  if (elicitation) {
    client.setRequestHandler(ElicitRequestSchema, async () => (elicitation === 'accept' ? { action: 'accept', content: { allow: true } } : { action: 'decline' }));
  }
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

const call = (client: Client, name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }) as Promise<ToolReply>;

const classes = suite('caller classes');
let box: Sandbox;
let server: RunningServer;
let openServer: RunningServer;

classes.before(async () => {
  box = await makeSandbox();
  server = await startHttpServerProcess(box.ws, [], { SUPERPI_TOKENS: TOKENS });
  openServer = await startHttpServerProcess(box.ws, ['--allow-anonymous-writes']);
});
classes.after(async () => {
  assert.is(await server.stop(), 0);
  assert.is(await openServer.stop(), 0);
  await box.cleanup();
});

classes('the local user may write, edit and run commands (the host confirmed each call)', async () => {
  const local = await connectStdio(box.ws);
  try {
    const w = await call(local.client, 'write', { path: 'local.txt', content: 'local one\n' });
    assert.not.ok(w.isError, textOf(w));
    const e = await call(local.client, 'edit', { path: 'local.txt', oldText: 'one', newText: 'two' });
    assert.not.ok(e.isError, textOf(e));
    const b = await call(local.client, 'bash', { command: 'cat local.txt' });
    assert.not.ok(b.isError, textOf(b));
    assert.match(textOf(b), /local two/);
  } finally {
    await local.close();
  }
});

classes('a token principal whose client cannot be asked is denied an `ask` tool, and the denial names the rule', async () => {
  const alice = await httpClient(server.url, 'alice-caller-classes-token');
  try {
    const b = await call(alice, 'bash', { command: 'touch token-bash-ran' });
    assert.is(b.isError, true);
    assert.match(textOf(b), /super-pi-code: bash/);
    const w = await call(alice, 'write', { path: 'alice.txt', content: 'alice\n' });
    assert.not.ok(w.isError, 'write is allowed outright for a token principal under super-pi-code');
  } finally {
    await alice.close();
  }
});

classes('a token principal is asked by elicitation: yes runs the call, no does not', async () => {
  const yes = await httpClient(server.url, 'bob-caller-classes-token', 'accept');
  const no = await httpClient(server.url, 'bob-caller-classes-token', 'decline');
  try {
    const ran = await call(yes, 'bash', { command: 'echo asked-and-allowed' });
    assert.not.ok(ran.isError, textOf(ran));
    assert.match(textOf(ran), /asked-and-allowed/);
    const refused = await call(no, 'bash', { command: 'touch declined-bash-ran' });
    assert.is(refused.isError, true);
    const ls = await call(yes, 'ls', { path: '.' });
    assert.not.match(textOf(ls), /declined-bash-ran/, 'the declined command never ran');
  } finally {
    await yes.close();
    await no.close();
  }
});

classes('an anonymous remote caller may read but not write, edit or run commands', async () => {
  const anon = await httpClient(server.url, null);
  try {
    const r = await call(anon, 'read', { path: 'README.md' });
    assert.not.ok(r.isError, textOf(r));
    for (const [name, args] of [['write', { path: 'anon.txt', content: 'x' }], ['edit', { path: 'README.md', oldText: 'Demo', newText: 'Pwned' }], ['bash', { command: 'touch anon-bash-ran' }]] as const) {
      const denied = await call(anon, name, args);
      assert.is(denied.isError, true, `${name} must be denied`);
      assert.match(textOf(denied), /anonymous/);
    }
    const ls = await call(anon, 'ls', { path: '.' });
    assert.not.match(textOf(ls), /anon\.txt|anon-bash-ran/);
  } finally {
    await anon.close();
  }
});

classes('an anonymous remote caller cannot start harness_task, and is shown only the tools it may call', async () => {
  const anon = await httpClient(server.url, null);
  try {
    assert.equal((await anon.listTools()).tools.map((t) => t.name), ['read', 'grep', 'find', 'ls']);
    const denied = await call(anon, 'harness_task', { harness: 'super-pi-code', prompt: 'spend the operator\'s model' });
    assert.is(denied.isError, true);
    assert.match(textOf(denied), /anonymous remote callers cannot start harness_task.*--allow-anonymous-tasks/);
  } finally {
    await anon.close();
  }
});

classes('with --allow-anonymous-writes the operator lets anonymous callers write', async () => {
  const anon = await httpClient(openServer.url, null);
  try {
    const w = await call(anon, 'write', { path: 'anon-allowed.txt', content: 'opted in\n' });
    assert.not.ok(w.isError, textOf(w));
  } finally {
    await anon.close();
  }
});

classes("a principal never sees another principal's session", async () => {
  const alice = await httpClient(server.url, 'alice-caller-classes-token');
  try {
    const sessionId = (alice.transport as StreamableHTTPClientTransport).sessionId as string;
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
    const asBob = await fetch(server.url, { method: 'POST', headers: { ...headers, authorization: 'Bearer bob-caller-classes-token', 'mcp-session-id': sessionId }, body: ping });
    const unknown = await fetch(server.url, { method: 'POST', headers: { ...headers, authorization: 'Bearer bob-caller-classes-token', 'mcp-session-id': 'no-such-session' }, body: ping });
    assert.is(asBob.status, 404);
    assert.is(unknown.status, 404);
    assert.is(await asBob.text(), await unknown.text(), 'the same answer as for a session that does not exist');
  } finally {
    await alice.close();
  }
});

classes('workspace content cannot lead a caller outside: a symlinked file in the workspace is refused', async () => {
  const { symlink } = await import('node:fs/promises');
  await writeFile(path.join(box.base, 'outside', 'caller-classes-secret.txt'), 'outside secret for caller classes\n');
  await symlink(path.join(box.base, 'outside', 'caller-classes-secret.txt'), path.join(box.ws, 'innocent.md'));
  const anon = await httpClient(server.url, null);
  try {
    const r = await call(anon, 'read', { path: 'innocent.md' });
    assert.is(r.isError, true);
    assert.not.match(textOf(r), /outside secret/);
  } finally {
    await anon.close();
  }
});

classes.run();
