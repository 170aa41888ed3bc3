// Each reply reaches the request it answers, and only that one, on every transport (issue 13): the
// server routes by what the core says a message answers (`inReplyTo`) or belongs to (`relatedTo`), never
// by the text of the message. MCP forbids reusing a request id in flight, and progress tokens must be
// unique among active requests; a client that breaks either rule still gets no one else's answers:
// - a request reusing an id in flight is refused with -32600 naming the id (ping included), the first
//   request keeps its id, is answered once, and stays in flight for draining and shutdown;
// - progress and questions go to the POST of the request they belong to, not to another POST that happens
//   to share the progress token or to be newer.
// Real servers on 127.0.0.1 (stdio: a child process), raw JSON-RPC.

import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'ws';
import { guarded } from '../hang-guard.ts';
import { makeSandbox, repoRoot, type RunningServer, type Sandbox, startHttpServerProcess } from './fixtures.ts';

type Message = { id?: unknown; result?: unknown; error?: { code: number; message: string }; method?: string; params?: Record<string, unknown> };

const ACCEPT = 'application/json, text/event-stream';
const INIT_PARAMS = { protocolVersion: '2025-06-18', capabilities: { elicitation: {} }, clientInfo: { name: 'raw', version: '1' } };
const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT_PARAMS };
const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };
const bash = (id: number, command: string, progressToken?: string) => ({
  jsonrpc: '2.0', id, method: 'tools/call',
  params: { name: 'bash', arguments: { command }, ...(progressToken === undefined ? {} : { _meta: { progressToken } }) },
});
const allow = (id: unknown) => ({ jsonrpc: '2.0', id, result: { action: 'accept', content: { allow: true } } });
const decline = (id: unknown) => ({ jsonrpc: '2.0', id, result: { action: 'decline' } });
const withId = (messages: readonly Message[], id: unknown) => messages.filter((m) => m.id === id && m.method === undefined);

/** A line-oriented client of one connection (stdio or WebSocket): every message it got, and a way to wait for one. */
class Wire {
  readonly messages: Message[] = [];
  #waiters: (() => void)[] = [];

  got(message: Message): void {
    this.messages.push(message);
    for (const w of this.#waiters.splice(0)) w();
  }

  /** The first message (from `from` on) matching `match`. */
  async next(what: string, match: (m: Message) => boolean, from = 0): Promise<Message> {
    const find = () => this.messages.slice(from).find(match);
    return guarded((async () => {
      for (let m = find(); ; m = find()) {
        if (m) return m;
        await new Promise<void>((r) => this.#waiters.push(r));
      }
    })(), what);
  }
}

function stdioServer(ws: string): { child: ChildProcessWithoutNullStreams; wire: Wire; send: (m: unknown) => void; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/stdio.ts', '--workspace', ws], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
  const wire = new Wire();
  let pending = '';
  child.stdout.on('data', (d: Buffer) => {
    pending += d.toString();
    for (let nl = pending.indexOf('\n'); nl !== -1; nl = pending.indexOf('\n')) {
      wire.got(JSON.parse(pending.slice(0, nl)) as Message);
      pending = pending.slice(nl + 1);
    }
  });
  child.stderr.resume();
  child.stdin.on('error', () => undefined);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, wire, send: (m) => child.stdin.write(`${JSON.stringify(m)}\n`), exited };
}

const routing = suite('reply routing');
let box: Sandbox;
let server: RunningServer;

routing.before(async () => {
  box = await makeSandbox();
  server = await startHttpServerProcess(box.ws, ['--allow-anonymous-writes']);
});
routing.after(async () => {
  assert.is(await server.stop(), 0);
  await box.cleanup();
});

/**
 * The shared scenario of stdio and WebSocket: a bash call (id 7) waits for the person's confirmation; a
 * ping reusing id 7 is refused, naming the id; the call, confirmed, gets its own answer, once.
 */
async function reusedIdOnOneConnection(wire: Wire, send: (m: unknown) => void): Promise<void> {
  send(initialize);
  await wire.next('initialize answer', (m) => m.id === 1);
  send(initialized);
  send(bash(7, 'echo first-call'));
  const question = await wire.next('the confirmation question', (m) => m.method === 'elicitation/create');
  send({ jsonrpc: '2.0', id: 7, method: 'ping' });
  const refused = await wire.next('an answer to the reused id', (m) => m.id === 7 && m.method === undefined);
  assert.is(refused.error?.code, -32600, `the ping reusing id 7 is refused, not answered: ${JSON.stringify(refused)}`);
  assert.match(refused.error?.message ?? '', /id 7 is already used/);
  send(allow(question.id));
  const answers = () => withId(wire.messages, 7);
  await wire.next('the call\'s own answer', (m) => m.id === 7 && m.result !== undefined);
  send({ jsonrpc: '2.0', id: 8, method: 'ping' });
  await wire.next('a later ping', (m) => m.id === 8);
  assert.is(answers().length, 2, `one refusal, one answer: ${JSON.stringify(answers())}`);
  assert.match(JSON.stringify(answers()[1]?.result), /first-call/);
}

routing('stdio: a ping reusing an id in flight is -32600 naming the id; the request in flight gets its own answer, once', async () => {
  const s = stdioServer(box.ws);
  try {
    await reusedIdOnOneConnection(s.wire, s.send);
    s.child.stdin.end();
    assert.is(await guarded(s.exited, 'the stdio server exit'), 0);
  } finally {
    s.child.kill('SIGKILL');
  }
});

routing('stdio: a request reusing an id in flight does not end the first: at end of input the first is still answered', async () => {
  const s = stdioServer(box.ws);
  try {
    s.send(initialize);
    await s.wire.next('initialize answer', (m) => m.id === 1);
    s.send(initialized);
    s.send(bash(7, 'echo never-confirmed'));
    await s.wire.next('the confirmation question', (m) => m.method === 'elicitation/create');
    s.send({ jsonrpc: '2.0', id: 7, method: 'tools/list' });
    const refused = await s.wire.next('the refusal', (m) => m.id === 7);
    assert.is(refused.error?.code, -32600);
    // The question is never answered: when the input ends, the call is still in flight, and is answered.
    s.child.stdin.end();
    assert.is(await guarded(s.exited, 'the stdio server exit'), 0);
    const answers = withId(s.wire.messages, 7);
    assert.is(answers.length, 2, `the refusal, then the call's own answer at shutdown: ${JSON.stringify(answers)}`);
    assert.is(answers[1]?.error?.code, -32010, 'the call in flight is answered "aborted" when the input ends');
  } finally {
    s.child.kill('SIGKILL');
  }
});

routing('WebSocket: a ping reusing an id in flight is -32600 naming the id; the request in flight gets its own answer, once', async () => {
  const ws = new WebSocket(server.wsUrl, ['mcp']);
  const wire = new Wire();
  ws.on('message', (data) => wire.got(JSON.parse(String(data)) as Message));
  await guarded(new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject)), 'the WebSocket open');
  try {
    await reusedIdOnOneConnection(wire, (m) => ws.send(JSON.stringify(m)));
  } finally {
    ws.close();
  }
});

/** An SSE reply being read: everything so far, and a way to read until a condition or the end. */
class Stream {
  text = '';
  #done = false;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;

  constructor(body: ReadableStream<Uint8Array>) {
    this.#reader = body.getReader();
  }

  get messages(): Message[] {
    const t = this.text.trimStart();
    if (t.startsWith('{')) return [JSON.parse(t) as Message];
    return this.text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as Message);
  }

  /** Reads until `until` holds of what was read (or the stream ends, when `until` is omitted). */
  async read(what: string, until?: (messages: Message[]) => boolean): Promise<Message[]> {
    return guarded((async () => {
      while (!this.#done && !(until?.(this.messages) ?? false)) {
        const { value, done } = await this.#reader.read();
        if (done) this.#done = true;
        else this.text += new TextDecoder().decode(value);
      }
      return this.messages;
    })(), what);
  }
}

routing('HTTP: progress goes to the POST of the call it belongs to, even when another POST carries the same progress token', async () => {
  const headers = { 'content-type': 'application/json', accept: ACCEPT };
  const opened = await fetch(server.url, { method: 'POST', headers, body: JSON.stringify(initialize) });
  await opened.text();
  const session = { ...headers, 'mcp-session-id': opened.headers.get('mcp-session-id') as string, 'mcp-protocol-version': '2025-06-18' };
  assert.is((await fetch(server.url, { method: 'POST', headers: session, body: JSON.stringify(initialized) })).status, 202);
  const postStream = async (body: unknown) => new Stream((await fetch(server.url, { method: 'POST', headers: session, body: JSON.stringify(body) })).body as ReadableStream<Uint8Array>);
  const isQuestion = (ms: Message[]) => ms.some((m) => m.method === 'elicitation/create');
  const questionOf = (ms: Message[]) => ms.find((m) => m.method === 'elicitation/create') as Message;

  // Two calls, one progress token: the first call prints (progress), the second never runs.
  const first = await postStream(bash(1, 'echo from-one; sleep 1; echo still-one', 'shared'));
  const firstQuestion = questionOf(await first.read('the first call\'s question', isQuestion));
  const second = await postStream(bash(2, 'echo from-two', 'shared'));
  const secondQuestion = questionOf(await second.read('the second call\'s question', isQuestion));
  await fetch(server.url, { method: 'POST', headers: session, body: JSON.stringify(allow(firstQuestion.id)) });
  const firstMessages = await first.read('the first call\'s stream to its end');
  await fetch(server.url, { method: 'POST', headers: session, body: JSON.stringify(decline(secondQuestion.id)) });
  const secondMessages = await second.read('the second call\'s stream to its end');

  assert.match(JSON.stringify(withId(firstMessages, 1)[0]?.result), /from-one/);
  assert.ok(firstMessages.some((m) => m.method === 'notifications/progress'), `the first call's progress is on its POST: ${first.text}`);
  assert.match(JSON.stringify(withId(secondMessages, 2)[0]?.result), /Not run/);
  assert.equal(secondMessages.filter((m) => m.method === 'notifications/progress'), [], `the second call never ran: no progress on its POST (${second.text})`);
  assert.not.ok(firstMessages.some((m) => m.id === 2) || secondMessages.some((m) => m.id === 1), 'no answer crossed');
});

routing('HTTP: an initialize the core refuses leaves no session behind; one it accepts opens a session', async () => {
  const headers = { 'content-type': 'application/json', accept: ACCEPT };
  const refusedInit = { ...initialize, params: { ...INIT_PARAMS, capabilities: 'none' } };
  const refused = await fetch(server.url, { method: 'POST', headers, body: JSON.stringify(refusedInit) });
  const body = (await refused.json()) as Message;
  assert.is(body.error?.code, -32602, JSON.stringify(body));
  const id = refused.headers.get('mcp-session-id') as string;
  assert.ok(id, 'the session id was given with the answer');
  // The session goes once the refusal is written; a later POST with its id is 404 (polled: the close is asynchronous).
  const statusOf = async () => (await fetch(server.url, { method: 'POST', headers: { ...headers, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }) })).status;
  await guarded((async () => { while (await statusOf() !== 404) await new Promise((r) => setTimeout(r, 50)); })(), 'the refused session to be gone');
  const accepted = await fetch(server.url, { method: 'POST', headers, body: JSON.stringify(initialize) });
  await accepted.text();
  const session = { ...headers, 'mcp-session-id': accepted.headers.get('mcp-session-id') as string, 'mcp-protocol-version': '2025-06-18' };
  const ping = await fetch(server.url, { method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }) });
  assert.is(ping.status, 200, 'the accepted session stays');
  assert.equal(((await ping.json()) as Message).result, {});
});

routing.run();
