// Raw 2026-07-28 JSON-RPC over Streamable HTTP for the task notification tests (modern-task-notifications,
// cluster-task-notifications): a POST with the headers its body implies, and a `subscriptions/listen`
// whose SSE reply is read message by message. Not a *.test.ts file.

import * as assert from 'uvu/assert';
import { guarded } from '../hang-guard.ts';
import type { RunningServer } from './fixtures.ts';
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
function post(server: RunningServer, method: string, params: Record<string, unknown>, who: Who, signal?: AbortSignal): Promise<Response> {
  const name = method === 'tools/call' ? params.name : method.startsWith('tasks/') ? params.taskId : undefined;
  return fetch(server.url, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${TOKENS[who]}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method, ...(typeof name === 'string' ? { 'Mcp-Name': name } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta(WITH_TASKS) } }),
    ...(signal === undefined ? {} : { signal }),
  });
}

/** A request declaring the Tasks extension, and its answer (from a JSON or an SSE reply). */
export async function httpAsk(server: RunningServer, method: string, params: Record<string, unknown>, who: Who = 'alice'): Promise<Message> {
  const res = await post(server, method, params, who);
  const text = await res.text();
  const data = res.headers.get('content-type')?.includes('text/event-stream')
    ? text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).filter((l) => l.includes('"id"')).pop() ?? '{}'
    : text;
  return JSON.parse(data) as Message;
}

/** A `subscriptions/listen` declaring the extension: its SSE reply, message by message, until closed. */
export async function httpListen(server: RunningServer, notifications: object, who: Who = 'alice'): Promise<Stream> {
  const abort = new AbortController();
  const res = await post(server, 'subscriptions/listen', { notifications }, who, abort.signal);
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
