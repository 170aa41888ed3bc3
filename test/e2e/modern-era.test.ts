// End to end with raw JSON-RPC: a 2026-07-28 client (no initialize, context in every request's _meta)
// over stdio, interleaved with a legacy session on the same process, and over Streamable HTTP POSTs
// that carry no Mcp-Session-Id.

import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'ws';
import { makeSandbox, repoRoot, type RunningServer, type Sandbox, startHttpServerProcess, stdioEntry } from './fixtures.ts';

type Message = Record<string, unknown> & { id?: unknown; result?: Record<string, unknown>; error?: { code: number } };

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw-modern', version: '1' },
};
const modern = (id: number | string, method: string, params: Record<string, unknown> = {}) =>
  ({ jsonrpc: '2.0', id, method, params: { ...params, _meta: META } });

/** A stdio server spoken to line by line; `ask` sends one request and waits for the answer with its id. */
class RawStdio {
  readonly child: ChildProcessWithoutNullStreams;
  readonly messages: Message[] = [];
  #buf = '';
  #stderr = '';
  #waiters = new Map<unknown, (m: Message) => void>();

  constructor(ws: string) {
    this.child = spawn(process.execPath, ['--import', 'tsx', stdioEntry, '--workspace', ws], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stderr.on('data', (d: Buffer) => (this.#stderr += d.toString()));
    this.child.stdout.on('data', (d: Buffer) => {
      this.#buf += d.toString();
      let nl: number;
      while ((nl = this.#buf.indexOf('\n')) !== -1) {
        const msg = JSON.parse(this.#buf.slice(0, nl)) as Message;
        this.#buf = this.#buf.slice(nl + 1);
        this.messages.push(msg);
        if (msg.method === undefined) this.#waiters.get(msg.id)?.(msg);
      }
    });
  }

  ask(message: { id: unknown } & Record<string, unknown>): Promise<Message> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${JSON.stringify(message)}; stderr: ${this.#stderr}`)), 15_000);
      this.#waiters.set(message.id, (m) => { clearTimeout(timer); this.#waiters.delete(message.id); resolve(m); });
      this.child.stdin.write(`${JSON.stringify(message)}\n`);
    });
  }

  async close(): Promise<void> {
    this.child.stdin.end();
    if (this.child.exitCode === null) await new Promise((r) => this.child.once('exit', r));
  }
}

const stdio = suite('2026-07-28 over stdio, raw JSON-RPC');
let box: Sandbox;
let s: RawStdio;

stdio.before(async () => {
  box = await makeSandbox();
  s = new RawStdio(box.ws);
});
stdio.after(async () => {
  await s.close();
  await box.cleanup();
});

stdio('server/discover answers before any initialize, naming both eras', async () => {
  const m = await s.ask({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: META } });
  assert.is(m.result?.resultType, 'complete');
  assert.equal((m.result?.supportedVersions as string[]).slice(0, 2), ['2026-07-28', '2025-11-25']);
});

stdio('tools/list and tools/call read work with no session', async () => {
  const list = await s.ask(modern(2, 'tools/list'));
  assert.ok((list.result?.tools as { name: string }[]).some((t) => t.name === 'read'));
  assert.is(list.result?.cacheScope, 'private');
  const read = await s.ask(modern(3, 'tools/call', { name: 'read', arguments: { path: 'README.md' } }));
  assert.is(read.result?.resultType, 'complete');
  assert.match(JSON.stringify(read.result?.content), /Demo project/);
});

stdio('a legacy initialize after modern requests still opens the legacy session, and both keep working', async () => {
  const legacyBefore = await s.ask({ jsonrpc: '2.0', id: 4, method: 'tools/list' });
  assert.is(legacyBefore.error?.code, -32600);
  const init = await s.ask({ jsonrpc: '2.0', id: 5, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'legacy', version: '1' } } });
  assert.is((init.result as { protocolVersion: string }).protocolVersion, '2025-06-18');
  s.child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  const legacy = await s.ask({ jsonrpc: '2.0', id: 6, method: 'tools/list' });
  assert.is(legacy.result?.resultType, undefined);
  const again = await s.ask(modern(7, 'resources/read', { uri: 'superpi://nowhere' }));
  assert.is(again.error?.code, -32602);
  const versionWrong = await s.ask({ jsonrpc: '2.0', id: 8, method: 'tools/list', params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': '2030-01-01' } } });
  assert.is(versionWrong.error?.code, -32022);
});

stdio.run();

const http = suite('2026-07-28 over Streamable HTTP, raw POSTs without a session');
let hbox: Sandbox;
let server: RunningServer;

http.before(async () => {
  hbox = await makeSandbox();
  // Two sessions at most: a session left open per stateless request would soon refuse the next.
  server = await startHttpServerProcess(hbox.ws, ['--max-sessions', '2']);
});
http.after(async () => {
  await server.stop();
  await hbox.cleanup();
});

/** The headers a 2026-07-28 client derives from the body (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`). */
function derived(body: unknown): Record<string, string> {
  const { method, params } = body as { method: string; params?: { name?: unknown; uri?: unknown } };
  const name = method === 'resources/read' ? params?.uri : method === 'tools/call' || method === 'prompts/get' ? params?.name : undefined;
  return { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method, ...(typeof name === 'string' ? { 'Mcp-Name': name } : {}) };
}

/** POSTs `body` with the derived headers, overridden by `headers`, without those named in `omit`. */
async function post(body: unknown, headers: Record<string, string> = {}, omit: string[] = []): Promise<{ status: number; headers: Headers; message: Message }> {
  const sent: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...derived(body), ...headers };
  for (const name of omit) delete sent[name];
  const res = await fetch(server.url, {
    method: 'POST',
    headers: sent,
    body: JSON.stringify(body),
  });
  const text = await res.text();
  // A tool call may answer as SSE: its last data line is the answer.
  const data = res.headers.get('content-type')?.includes('text/event-stream')
    ? text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).pop() ?? ''
    : text;
  return { status: res.status, headers: res.headers, message: JSON.parse(data) as Message };
}

http('server/discover, tools/list and tools/call read are served with no session id minted', async () => {
  const discover = await post({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: META } }, { 'Mcp-Method': 'server/discover' });
  assert.is(discover.status, 200);
  assert.is(discover.headers.get('mcp-session-id'), null);
  assert.is(discover.message.result?.resultType, 'complete');
  const list = await post(modern(2, 'tools/list'), { 'Mcp-Method': 'tools/list' });
  assert.is(list.headers.get('mcp-session-id'), null);
  assert.ok((list.message.result?.tools as { name: string }[]).some((t) => t.name === 'read'));
  const read = await post(modern(3, 'tools/call', { name: 'read', arguments: { path: 'README.md' } }), { 'Mcp-Method': 'tools/call', 'Mcp-Name': 'read' });
  assert.is(read.headers.get('mcp-session-id'), null);
  assert.is(read.message.id, 3);
  assert.match(JSON.stringify(read.message.result?.content), /Demo project/);
});

http('a header that disagrees with the body is a 400 with -32020, echoing the id', async () => {
  const version = await post(modern(4, 'tools/list'), { 'MCP-Protocol-Version': '2025-11-25' });
  assert.is(version.status, 400);
  assert.equal([version.message.id, version.message.error?.code], [4, -32020]);
  const method = await post(modern(5, 'tools/list'), { 'Mcp-Method': 'prompts/list' });
  assert.equal([method.status, method.message.error?.code], [400, -32020]);
  const name = await post(modern(6, 'tools/call', { name: 'read', arguments: { path: 'README.md' } }), { 'Mcp-Method': 'tools/call', 'Mcp-Name': 'bash' });
  assert.equal([name.status, name.message.error?.code], [400, -32020]);
});

http('a request without MCP-Protocol-Version, Mcp-Method or (for a named call) Mcp-Name is a 400 with -32020', async () => {
  const call = modern(7, 'tools/call', { name: 'read', arguments: { path: 'README.md' } });
  for (const missing of ['MCP-Protocol-Version', 'Mcp-Method', 'Mcp-Name']) {
    const r = await post(call, {}, [missing]);
    assert.equal([r.status, r.message.id, r.message.error?.code], [400, 7, -32020], missing);
    assert.match(String((r.message.error as { message?: string }).message), new RegExp(missing, 'i'));
  }
});

http('an Mcp-Name sent as =?base64?…?= is decoded before it is compared; bad base64 is a 400', async () => {
  const call = modern(8, 'resources/read', { uri: 'superpi://workspace' });
  const wrapped = `=?base64?${Buffer.from('superpi://workspace').toString('base64')}?=`;
  const ok = await post(call, { 'Mcp-Name': wrapped });
  assert.is(ok.status, 200, JSON.stringify(ok.message));
  assert.is(ok.message.result?.resultType, 'complete');
  const bad = await post(call, { 'Mcp-Name': '=?base64?!!!?=' });
  assert.equal([bad.status, bad.message.error?.code], [400, -32020]);
});

http('a bad _meta is refused with HTTP 400: -32602 when _meta or its version is missing, -32022 for an unknown version', async () => {
  const bare = await post({ jsonrpc: '2.0', id: 9, method: 'server/discover', params: {} });
  assert.equal([bare.status, bare.message.id, bare.message.error?.code], [400, 9, -32602]);
  const { 'io.modelcontextprotocol/protocolVersion': _v, ...noVersion } = META;
  const unnamed = await post({ jsonrpc: '2.0', id: 10, method: 'server/discover', params: { _meta: noVersion } });
  assert.equal([unnamed.status, unnamed.message.error?.code], [400, -32602]);
  const future = await post({ jsonrpc: '2.0', id: 11, method: 'server/discover', params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': 'v999' } } }, { 'MCP-Protocol-Version': 'v999' });
  assert.equal([future.status, future.message.error?.code], [400, -32022]);
  assert.equal((future.message.error as { data?: unknown }).data, { supported: ['2026-07-28'], requested: 'v999' });
});

http('a removed or unknown method is HTTP 404 with -32601; a handler\'s own -32602 (unknown tool) stays in a 200', async () => {
  for (const method of ['ping', 'initialize', 'logging/setLevel', 'resources/subscribe', 'no/such']) {
    const r = await post(modern(12, method, { uri: 'superpi://workspace', level: 'info' }));
    assert.equal([r.status, r.message.id, r.message.error?.code], [404, 12, -32601], method);
  }
  const unknown = await post(modern(13, 'prompts/get', { name: 'no-such-prompt' }));
  assert.equal([unknown.status, unknown.message.error?.code], [200, -32602]);
});

http('ten modern requests in a row pass --max-sessions 2: no session is left behind per request', async () => {
  for (let i = 0; i < 10; i++) {
    const list = await post(modern(100 + i, 'prompts/list'));
    assert.is(list.status, 200, `request ${i}: ${JSON.stringify(list.message)}`);
    assert.is(list.message.result?.resultType, 'complete');
  }
});

/** The node's count of open HTTP sessions, from /health (public without tokens). */
async function httpSessions(url: string): Promise<number> {
  const health = await (await fetch(url.replace(/\/mcp$/, '/health'))).json() as { httpSessions?: number };
  if (typeof health.httpSessions !== 'number') throw new Error(`no httpSessions in /health: ${JSON.stringify(health)}`);
  return health.httpSessions;
}

http('modern requests one after another are served by one kept session, not one session each', async () => {
  for (let i = 0; i < 20; i++) assert.is((await post(modern(200 + i, 'tools/list'))).status, 200);
  assert.is(await httpSessions(server.url), 1);
});

http('two modern requests at once with the same id each get their own answer, from two sessions', async () => {
  // Two reads at once overlap only if the first is still in flight when the second arrives, which a loaded
  // machine does not promise; a listen stream with the same id is in flight until it is closed, so the
  // read arrives while the id is taken on the kept session, every time (the listen is the first request).
  const listen = new AbortController();
  const body = modern('same', 'subscriptions/listen', { notifications: {} });
  const stream = await fetch(server.url, {
    method: 'POST', signal: listen.signal,
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...derived(body) },
    body: JSON.stringify(body),
  });
  try {
    assert.is(stream.status, 200);
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    assert.match(new TextDecoder().decode(first.value), /acknowledged/, 'the listen is open');
    const a = await post(modern('same', 'tools/call', { name: 'read', arguments: { path: 'README.md' } }));
    assert.is(a.status, 200);
    assert.is(a.message.id, 'same');
    assert.match(JSON.stringify(a.message.result?.content), /Demo project/);
    assert.is(await httpSessions(server.url), 2, 'the read went to a session where its id was not in flight');
  } finally {
    listen.abort();
  }
});

http('a legacy initialize is not refused for the sessions kept for modern requests: the idle ones give their slots back', async () => {
  // --max-sessions 2, both held by idle kept sessions (the test before): the initialize still opens one.
  const res = await fetch(server.url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'legacy', version: '1' } } }),
  });
  assert.is(res.status, 200, await res.clone().text());
  const id = res.headers.get('mcp-session-id');
  assert.ok(id);
  await res.text();
  // And modern requests go on being served beside it.
  assert.is((await post(modern(300, 'tools/list'))).status, 200);
  await fetch(server.url, { method: 'DELETE', headers: { 'Mcp-Session-Id': id as string, 'MCP-Protocol-Version': '2025-06-18' } });
});

http('over WebSocket the same core serves server/discover and tools/list before any initialize', async () => {
  const socket = new WebSocket(server.wsUrl, ['mcp']);
  await new Promise<void>((resolve, reject) => { socket.once('open', () => resolve()); socket.once('error', reject); });
  const answers = new Map<unknown, Message>();
  const arrived = new Promise<void>((resolve) => socket.on('message', (data: Buffer) => {
    const m = JSON.parse(data.toString()) as Message;
    answers.set(m.id, m);
    if (answers.size === 2) resolve();
  }));
  socket.send(JSON.stringify({ jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: META } }));
  socket.send(JSON.stringify(modern('l', 'tools/list')));
  await arrived;
  socket.close();
  assert.is(answers.get('d')?.result?.resultType, 'complete');
  assert.ok((answers.get('l')?.result?.tools as unknown[]).length > 0);
});

http('a legacy POST without a session id is still refused as before', async () => {
  const res = await fetch(server.url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }),
  });
  assert.is(res.status, 400);
  assert.match(await res.text(), /Mcp-Session-Id header is required/);
});

http.run();

const anonymousTasks = suite('2026-07-28 over HTTP when anonymous callers may run harness tasks');
let abox: Sandbox;
let aserver: RunningServer;

anonymousTasks.before(async () => {
  abox = await makeSandbox();
  aserver = await startHttpServerProcess(abox.ws, ['--allow-anonymous-tasks']);
});
anonymousTasks.after(async () => {
  await aserver.stop();
  await abox.cleanup();
});

anonymousTasks('no session is shared between anonymous clients: each request\'s own closes with its answer', async () => {
  for (let i = 0; i < 5; i++) {
    const res = await fetch(aserver.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...derived(modern(i, 'tools/list')) },
      body: JSON.stringify(modern(i, 'tools/list')),
    });
    assert.is(res.status, 200);
    await res.text();
  }
  // Closing is asynchronous (the session's actor stops after the answer has gone): wait for it, bounded.
  const until = Date.now() + 5000;
  while (await httpSessions(aserver.url) > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  assert.is(await httpSessions(aserver.url), 0);
});

anonymousTasks.run();
