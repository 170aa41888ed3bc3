// Raw 2026-07-28 JSON-RPC for the Tasks-extension tests (the SDK v2 client cannot drive SEP-2663): over
// Streamable HTTP a POST with the headers its body implies and its answer from a JSON or SSE reply, and a
// `subscriptions/listen` whose SSE reply is read message by message; over stdio a request written as a line
// and its answer read from the child's stdout, and a listen whose notifications are read from it. Not a
// *.test.ts file.

import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import * as assert from 'uvu/assert';
import { guarded } from '../hang-guard.ts';
import { repoRoot, type RunningServer, stdioEntry } from './fixtures.ts';
import { sseReader } from './sse-reader.ts';

export type Message = { id?: unknown; method?: string; params?: Record<string, unknown>; result?: Record<string, unknown>; error?: { code: number; message: string } };
export type Who = 'alice' | 'bob';

export const TASKS = 'io.modelcontextprotocol/tasks';
export const WITH_TASKS = { extensions: { [TASKS]: {} } };
export const SUB = 'io.modelcontextprotocol/subscriptionId';
export const TOKENS: Record<Who, string> = { alice: 'tok-alice-123', bob: 'tok-bob-4567' };
export const meta = (capabilities: object) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': capabilities,
  'io.modelcontextprotocol/clientInfo': { name: 'raw-task-notifications', version: '1' },
});

/** A listen stream's messages as they arrive (the acknowledgment first). */
export interface Stream {
  next(what: string): Promise<Message>;
  /** What arrived and was not taken by `next`. */
  readonly waiting: Message[];
  close(): Promise<void>;
}

/** A queue of messages with a guarded wait for the next. */
export class Queue implements Stream {
  readonly waiting: Message[] = [];
  #wake: (() => void) | null = null;
  constructor(readonly close: () => Promise<void> = async () => undefined) {}
  push(m: Message): void {
    this.waiting.push(m);
    this.#wake?.();
  }
  async next(what: string): Promise<Message> {
    return guarded((async () => {
      while (this.waiting.length === 0) await new Promise<void>((r) => (this.#wake = r));
      return this.waiting.shift() as Message;
    })(), what, 15_000);
  }
}

/** One 2026-07-28 POST with the headers its body implies (Mcp-Name: the tool, or the task id). */
function post(server: RunningServer, method: string, params: Record<string, unknown>, who: Who, capabilities: object, signal?: AbortSignal, id: string | number = 1): Promise<Response> {
  const name = method === 'tools/call' ? params.name : method.startsWith('tasks/') ? params.taskId : undefined;
  return fetch(server.url, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${TOKENS[who]}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method, ...(typeof name === 'string' ? { 'Mcp-Name': name } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta(capabilities) } }),
    ...(signal === undefined ? {} : { signal }),
  });
}

/**
 * A request declaring `capabilities` (the Tasks extension by default), and its answer (from a JSON or an
 * SSE reply). `id`: the request's JSON-RPC id (1 unless a test checks that each answer echoes its own).
 */
export async function httpAsk(server: RunningServer, method: string, params: Record<string, unknown>, who: Who = 'alice', capabilities: object = WITH_TASKS, id: string | number = 1): Promise<Message> {
  const res = await post(server, method, params, who, capabilities, undefined, id);
  const text = await res.text();
  const data = res.headers.get('content-type')?.includes('text/event-stream')
    ? text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).filter((l) => l.includes('"id"')).pop() ?? '{}'
    : text;
  return JSON.parse(data) as Message;
}

/** A `subscriptions/listen` declaring the extension: its SSE reply, message by message, until closed. */
export async function httpListen(server: RunningServer, notifications: object, who: Who = 'alice'): Promise<Stream> {
  const abort = new AbortController();
  const res = await post(server, 'subscriptions/listen', { notifications }, who, WITH_TASKS, abort.signal);
  assert.is(res.status, 200, `listen: ${res.status}`);
  assert.match(res.headers.get('content-type') ?? '', 'text/event-stream');
  const events = sseReader(res.body as ReadableStream<Uint8Array>);
  const stream = new Queue(async () => {
    abort.abort();
    await events.cancel().catch(() => undefined);
  });
  void (async () => {
    for (;;) {
      const event = await events.next().catch(() => null);
      if (event === null) return;
      stream.push(JSON.parse(event.data) as Message);
    }
  })();
  return stream;
}

/**
 * Requests over a stdio server's stdin, each declaring `capabilities`: `ask` resolves with the answer of
 * its id read from the child's stdout (notifications and requests of the server are passed over).
 */
export function stdioAsker(child: ChildProcessWithoutNullStreams, capabilities: object): (method: string, params: Record<string, unknown>) => Promise<Message> {
  const waiters = new Map<unknown, (m: Message) => void>();
  let buf = '';
  child.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) !== -1) {
      const msg = JSON.parse(buf.slice(0, nl)) as Message;
      buf = buf.slice(nl + 1);
      if (msg.method === undefined) waiters.get(msg.id)?.(msg);
    }
  });
  let nextId = 1;
  return (method, params) => {
    const id = nextId++;
    return guarded(new Promise<Message>((resolve) => {
      waiters.set(id, (m) => { waiters.delete(id); resolve(m); });
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta(capabilities) } })}\n`);
    }), `the answer to ${method}`, 15_000);
  };
}

/**
 * A `subscriptions/listen` declaring the extension over a stdio server's stdin, with a string id of its own
 * (so it never meets `stdioAsker`'s numbers): the messages the child's stdout carries for it (tagged with
 * its id as the subscription, or its error answer), until closed with `notifications/cancelled`.
 */
export function stdioListen(child: ChildProcessWithoutNullStreams, notifications: object, id = 'listen-1'): Stream {
  let buf = '';
  const onData = (d: Buffer) => {
    buf += d.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) !== -1) {
      const msg = JSON.parse(buf.slice(0, nl)) as Message;
      buf = buf.slice(nl + 1);
      if ((msg.method === undefined && msg.id === id) || (msg.params?._meta as Record<string, unknown> | undefined)?.[SUB] === id) stream.push(msg);
    }
  };
  const stream = new Queue(async () => {
    child.stdout.off('data', onData);
    if (child.stdin.writable) child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } })}\n`);
  });
  child.stdout.on('data', onData);
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { notifications, _meta: meta(WITH_TASKS) } })}\n`);
  return stream;
}

/** A stdio server (examples/stdio.ts) and its asker: a 2026-07-28 caller that declares the Tasks extension. */
export interface StdioTaskServer {
  readonly child: ChildProcessWithoutNullStreams;
  readonly ask: (method: string, params: Record<string, unknown>) => Promise<Message>;
}

/** Starts a stdio server on workspace `ws` with `env` added to this process's. */
export function startStdioTaskServer(ws: string, env: Record<string, string>): StdioTaskServer {
  const child = spawn(process.execPath, ['--import', 'tsx', stdioEntry, '--workspace', ws], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  child.stderr.resume();
  return { child, ask: stdioAsker(child, WITH_TASKS) };
}

/** Ends a stdio server as its host would (stdin closed) and waits for it to exit. */
export async function stopStdioServer(server: StdioTaskServer | undefined): Promise<void> {
  if (server === undefined) return;
  server.child.stdin.end();
  if (server.child.exitCode === null && server.child.signalCode === null) await new Promise((r) => server.child.once('exit', r));
}
