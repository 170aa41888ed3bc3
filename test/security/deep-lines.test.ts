// Threat model, protocol abuse: a message line of the largest size a transport takes (--max-message-bytes,
// 4 MiB) made of nested brackets. Parsed, it cost the main thread about a second and ~120 MB of heap for
// every such line, stalling every session of the node. Rule: a line nesting past MAX_JSON_DEPTH is refused
// from its text (mcp/text-depth.ts) before it is parsed, with the answer the core gives a deep message (a
// request: -32602 with its id), and the server goes on serving every connection.
// Caller classes: the local stdio user, and any remote caller over WebSocket (anonymous here). Each server
// runs with a main-thread heap of HEAP_MB: what one parse of the line needed on its own; bounded before
// parsing, the line costs a few MB and the server serves on.

import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'ws';
import { MAX_JSON_DEPTH } from '../../src/limits.ts';
import { makeSandbox, repoRoot, type Sandbox, stdioEntry } from '../e2e/fixtures.ts';
import { startFuzzServer } from '../e2e/fuzz.ts';

type Message = { id?: unknown; result?: unknown; error?: { code: number; message: string } };

/** The main thread's old-space heap the servers get (MB): room to serve, none to parse the line. */
const HEAP_MB = 96;
const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/** A ping whose params nest as deep as a line of the default largest size allows. */
function deepPing(id: number): string {
  const head = `{"jsonrpc":"2.0","id":${id},"method":"ping","params":{"x":`;
  const levels = Math.floor((DEFAULT_MAX_MESSAGE_BYTES - head.length - 8) / 2);
  return `${head}${'['.repeat(levels)}${']'.repeat(levels)}}}`;
}

function assertRefusedForDepth(m: Message, id: number): void {
  assert.is(m.id, id);
  assert.is(m.error?.code, -32602);
  assert.match(m.error?.message ?? '', `MAX_JSON_DEPTH (${MAX_JSON_DEPTH})`);
}

let sandbox: Sandbox;
test.before(async () => {
  sandbox = await makeSandbox();
});
test.after(async () => {
  await sandbox.cleanup();
});

test('stdio: a 4 MiB line of brackets is refused -32602 with its id; the next ping is answered and the server exits 0', async () => {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [`--max-old-space-size=${HEAP_MB}`, '--import', 'tsx', stdioEntry, '--workspace', sandbox.ws], {
    cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, SUPERPI_HOME: `${sandbox.base}/home` },
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  const messages: Message[] = [];
  let buffer = '';
  const arrived = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      buffer += d.toString();
      for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n')) {
        messages.push(JSON.parse(buffer.slice(0, nl)) as Message);
        buffer = buffer.slice(nl + 1);
      }
      if (messages.some((m) => m.id === 'after')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the server exited (${code}); stderr: ${stderr.slice(-2000)}`)));
  });
  try {
    child.stdin.write(`${deepPing(7)}\n`);
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 'after', method: 'ping' })}\n`);
    await arrived;
    assertRefusedForDepth(messages.find((m) => m.id === 7) ?? {}, 7);
    assert.equal(messages.find((m) => m.id === 'after')?.result, {});
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.stdin.end();
    assert.is(await exited, 0);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});

/** An open WebSocket and the messages it has received. */
async function socket(url: string): Promise<{ ws: WebSocket; reply(id: unknown): Promise<Message> }> {
  const ws = new WebSocket(url, ['mcp']);
  const received: Message[] = [];
  const waiters: (() => void)[] = [];
  ws.on('message', (data) => {
    received.push(JSON.parse(data.toString()) as Message);
    for (const w of waiters.splice(0)) w();
  });
  ws.on('close', () => { for (const w of waiters.splice(0)) w(); });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const reply = async (id: unknown): Promise<Message> => {
    for (;;) {
      const found = received.find((m) => m.id === id);
      if (found) return found;
      if (ws.readyState !== WebSocket.OPEN) throw new Error(`the socket closed before the reply to ${String(id)}`);
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  return { ws, reply };
}

test('WebSocket and HTTP: a 4 MiB frame (and POST) of brackets is refused -32602 with its id, while a ping on another socket is answered', async () => {
  const server = await startFuzzServer(sandbox.ws, [], { SUPERPI_HOME: `${sandbox.base}/home-ws`, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --max-old-space-size=${HEAP_MB}` });
  try {
    const wsUrl = `${server.url.replace(/^http/, 'ws')}`;
    const [attacker, bystander] = await Promise.all([socket(wsUrl), socket(wsUrl)]);
    for (let round = 0; round < 3; round++) {
      attacker.ws.send(deepPing(round));
      bystander.ws.send(JSON.stringify({ jsonrpc: '2.0', id: `bystander-${round}`, method: 'ping' }));
      assert.equal((await bystander.reply(`bystander-${round}`)).result, {});
      assertRefusedForDepth(await attacker.reply(round), round);
    }
    // The same line as a Streamable HTTP POST body of an initialized session: answered on the POST.
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const init = await fetch(server.url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'deep', version: '1' } } }) });
    const session = init.headers.get('mcp-session-id');
    await init.text();
    assert.ok(session !== null, 'a session was opened');
    const posted = await fetch(server.url, { method: 'POST', headers: { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' }, body: deepPing(9) });
    const answer = /\{"jsonrpc".*\}/.exec(await posted.text())?.[0] ?? '{}';
    assertRefusedForDepth(JSON.parse(answer) as Message, 9);
    bystander.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 'bystander-http', method: 'ping' }));
    assert.equal((await bystander.reply('bystander-http')).result, {});
    attacker.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 'after', method: 'ping' }));
    assert.equal((await attacker.reply('after')).result, {});
    attacker.ws.close();
    bystander.ws.close();
  } finally {
    await server.stop();
  }
});

test.run();
