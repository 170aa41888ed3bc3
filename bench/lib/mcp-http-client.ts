// One MCP client for every server bench/http.ts compares, so each side gets exactly the same client
// work: node:http requests on a keep-alive Agent with the same headers, a JSON or an SSE reply parsed the
// same way; and a WebSocket JSON-RPC client (`ws`) that keeps a window of requests in flight.
// node:http rather than fetch: undici's fetch costs ~500 µs of client CPU per call on this 2-core machine,
// which the client takes from the very cores the servers run on and which capped every ratio at 1.3-1.9×;
// node:http costs a fraction of that, the same fraction for every server.

import { readFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { WebSocket } from 'ws';

export const ACCEPT = 'application/json, text/event-stream';
export const PROTOCOL_VERSION = '2025-06-18';

export interface JsonRpcReply {
  readonly jsonrpc?: string;
  readonly id?: number | string | null;
  readonly method?: string;
  readonly result?: { readonly isError?: boolean; readonly content?: { readonly type: string; readonly text?: string }[] } & Record<string, unknown>;
  readonly error?: { readonly code: number; readonly message: string };
}

export const initializeParams = { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'bench-http', version: '1.0.0' } };
export const readParams = (file: string) => ({ name: 'read', arguments: { path: file } });

/** Every JSON-RPC message in a reply body: a JSON object (or batch), or the `data:` of each SSE event. */
export function parseReplyBody(contentType: string, text: string): JsonRpcReply[] {
  if (!contentType.includes('text/event-stream')) {
    const parsed = JSON.parse(text) as JsonRpcReply | JsonRpcReply[];
    return Array.isArray(parsed) ? parsed : [parsed];
  }
  const out: JsonRpcReply[] = [];
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(l.startsWith('data: ') ? 6 : 5));
    if (data.length > 0 && data.join('').trim() !== '') out.push(JSON.parse(data.join('\n')) as JsonRpcReply);
  }
  return out;
}

/** Keep-alive connections shared by every session of this process (one socket per request in flight). */
const agent = new Agent({ keepAlive: true, scheduling: 'lifo' });

interface HttpReply {
  readonly status: number;
  readonly contentType: string;
  readonly sessionId: string | undefined;
  readonly text: string;
}

/**
 * One HTTP exchange: the whole reply body (an SSE stream ends when the server ends it). A request sent on a
 * kept-alive socket that the server closed meanwhile (its keep-alive timeout ran out while this session
 * idled between blocks) is sent once more on a new socket, as Node's documentation advises; never a
 * request the server may have read (then the error is the server's, and it counts).
 */
async function exchange(url: URL, method: string, headers: Record<string, string>, body?: string): Promise<HttpReply> {
  try {
    return await exchangeOnce(url, method, headers, body);
  } catch (err) {
    if (!(err instanceof StaleSocketError)) throw err;
    return exchangeOnce(url, method, headers, body);
  }
}

class StaleSocketError extends Error {}

function exchangeOnce(url: URL, method: string, headers: Record<string, string>, body?: string): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ agent, host: url.hostname, port: url.port, path: url.pathname, method, headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const id = res.headers['mcp-session-id'];
        resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'] ?? '', sessionId: Array.isArray(id) ? id[0] : id, text: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      const stale = req.reusedSocket && err.code === 'ECONNRESET';
      reject(stale ? new StaleSocketError(err.message, { cause: err }) : err);
    });
    req.end(body);
  });
}

/** The reply to request `id` in an HTTP exchange (a JSON body or an SSE stream); throws on an HTTP error or none. */
function replyTo(method: string, id: number, res: HttpReply): JsonRpcReply {
  if (res.status < 200 || res.status > 299) throw new Error(`${method}: HTTP ${res.status}: ${res.text.slice(0, 300)}`);
  const reply = parseReplyBody(res.contentType, res.text).find((m) => m.id === id);
  if (!reply) throw new Error(`${method}: no reply with id ${id} in ${res.text.slice(0, 300)}`);
  return reply;
}

/** A tools/call reply that must be a success (no error, no isError). */
function succeeded(name: string, reply: JsonRpcReply): JsonRpcReply {
  if (reply.error || !reply.result || reply.result.isError) throw new Error(`tools/call ${name}: ${JSON.stringify(reply).slice(0, 300)}`);
  return reply;
}

/** One Streamable HTTP session: initialize + notifications/initialized, then requests one at a time. */
export class McpHttpSession {
  readonly url: string;
  readonly id: string;
  readonly #target: URL;
  readonly #headers: Record<string, string>;
  #nextId = 1;

  private constructor(url: string, id: string) {
    this.url = url;
    this.id = id;
    this.#target = new URL(url);
    this.#headers = { accept: ACCEPT, 'content-type': 'application/json', 'mcp-session-id': id, 'mcp-protocol-version': PROTOCOL_VERSION };
  }

  static async open(url: string): Promise<McpHttpSession> {
    const res = await exchange(new URL(url), 'POST', { accept: ACCEPT, 'content-type': 'application/json' },
      JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: initializeParams }));
    const id = res.sessionId;
    if (res.status !== 200 || !id) throw new Error(`initialize: HTTP ${res.status}, session ${id}: ${res.text.slice(0, 300)}`);
    const init = parseReplyBody(res.contentType, res.text).find((m) => m.id === 0);
    if (!init?.result) throw new Error(`initialize: no result in ${res.text.slice(0, 300)}`);
    const session = new McpHttpSession(url, id);
    await session.notify('notifications/initialized');
    return session;
  }

  async notify(method: string, params?: Record<string, unknown>): Promise<void> {
    const res = await exchange(this.#target, 'POST', this.#headers, JSON.stringify(params ? { jsonrpc: '2.0', method, params } : { jsonrpc: '2.0', method }));
    if (res.status !== 202 && res.status !== 200) throw new Error(`${method}: HTTP ${res.status}: ${res.text.slice(0, 300)}`);
  }

  /** One request; resolves with its reply (from a JSON body or an SSE stream), throws on HTTP errors. */
  async request(method: string, params?: Record<string, unknown>): Promise<JsonRpcReply> {
    const id = this.#nextId++;
    return replyTo(method, id, await exchange(this.#target, 'POST', this.#headers, JSON.stringify({ jsonrpc: '2.0', id, method, params })));
  }

  /** A tools/call that must succeed. */
  async call(name: string, args: Record<string, unknown>): Promise<JsonRpcReply> {
    return succeeded(name, await this.request('tools/call', { name, arguments: args }));
  }

  async close(): Promise<void> {
    await exchange(this.#target, 'DELETE', this.#headers);
  }
}

/** Runs `task(i)` for i in 0..count-1 with at most `concurrency` at a time. */
export async function bounded<T>(count: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(count);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, async () => {
    while (next < count) {
      const i = next++;
      out[i] = await task(i);
    }
  }));
  return out;
}

/** A JSON-RPC client over one WebSocket: requests matched to replies by id. */
export class WsRpc {
  readonly #ws: WebSocket;
  readonly #waiting = new Map<number, (reply: JsonRpcReply) => void>();
  #nextId = 1;

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.on('message', (data) => {
      const reply = JSON.parse(data.toString()) as JsonRpcReply;
      if (typeof reply.id !== 'number') return;
      const waiter = this.#waiting.get(reply.id);
      if (!waiter) return;
      this.#waiting.delete(reply.id);
      waiter(reply);
    });
  }

  static connect(url: string): Promise<WsRpc> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, 'mcp');
      ws.once('open', () => resolve(new WsRpc(ws)));
      ws.once('error', reject);
    });
  }

  request(method: string, params?: Record<string, unknown>): Promise<JsonRpcReply> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      if (this.#ws.readyState !== WebSocket.OPEN) return reject(new Error('the WebSocket is closed'));
      this.#waiting.set(id, resolve);
      this.#ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  notify(method: string): void {
    this.#ws.send(JSON.stringify({ jsonrpc: '2.0', method }));
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.#ws.readyState === WebSocket.CLOSED) return resolve();
      this.#ws.once('close', () => resolve());
      this.#ws.close();
    });
  }
}

/** Resident set size of a process (all its threads), in bytes, from /proc/<pid>/status. */
export function rssBytes(pid: number): number {
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]) * 1024;
}

/** CPU time a process (all its threads) has used, user + system, in microseconds, from /proc/<pid>/stat. */
export function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of stat (utime, stime) are 11 and 12 after the ")"-terminated command name.
  return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS) * 1e6;
}

/** USER_HZ: 100 on every Linux this runs on (sysconf(_SC_CLK_TCK) is not reachable from Node). */
const CLOCK_TICKS = 100;

/** Pings over `session` one after another for at least `minMs` and for as long as `busy()`; each round trip in ms. */
export async function pingWhile(session: McpHttpSession, busy: () => boolean, minMs: number): Promise<number[]> {
  const out: number[] = [];
  const end = performance.now() + minMs;
  while (performance.now() < end || busy()) {
    const t0 = performance.now();
    const reply = await session.request('ping');
    if (reply.error) throw new Error(`ping failed: ${JSON.stringify(reply)}`);
    out.push(performance.now() - t0);
  }
  return out;
}

export const MODERN_VERSION = '2026-07-28';
/** The `_meta` every 2026-07-28 request carries: its version, the client's capabilities and info. */
export const modernMeta = {
  'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'bench-http', version: '1.0.0' },
};

/** The body field `Mcp-Name` repeats, by method. */
const NAMED: Readonly<Record<string, string>> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' };

/**
 * A 2026-07-28 client over Streamable HTTP: no handshake, no session; every request carries its context
 * in `_meta` and repeats its method (and name) in headers, as the spec asks.
 */
export class McpModernHttp {
  readonly url: string;
  readonly #target: URL;
  #nextId = 1;

  constructor(url: string) {
    this.url = url;
    this.#target = new URL(url);
  }

  async request(method: string, params: Record<string, unknown> = {}): Promise<JsonRpcReply> {
    const id = this.#nextId++;
    const headers: Record<string, string> = { accept: ACCEPT, 'content-type': 'application/json', 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': method };
    const field = NAMED[method];
    const named = field === undefined ? undefined : params[field];
    if (typeof named === 'string') headers['mcp-name'] = named;
    // Not `{ ...params, _meta }`: on Node 20 a key added to a spread's copy is V8's slow path (~2 µs), which
    // the legacy client's request does not pay; both clients should cost what the protocol makes them cost.
    const withMeta = Object.assign({}, params, { _meta: modernMeta });
    return replyTo(method, id, await exchange(this.#target, 'POST', headers, JSON.stringify({ jsonrpc: '2.0', id, method, params: withMeta })));
  }

  /** A tools/call that must succeed. */
  async call(name: string, args: Record<string, unknown>): Promise<JsonRpcReply> {
    return succeeded(name, await this.request('tools/call', { name, arguments: args }));
  }
}
