// Raw JSON-RPC clients for the fault-injection tests: one per transport (a stdio child process, Streamable
// HTTP, WebSocket), each able to pipeline thousands of requests and to say which were never answered.
// No SDK client: its own timeouts and retries would hide what the server did.

import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import WebSocket from 'ws';
import { repoRoot, stdioEntry } from './fixtures.ts';

export interface Reply {
  readonly id: number;
  readonly result?: { isError?: boolean; content?: { text?: string }[] };
  readonly error?: { code: number; message: string; data?: { reason?: string } };
}

export interface Wire {
  /** Resolves with the reply, or null if none came before the wire ended (or `timeoutMs` passed). */
  request(method: string, params: object, timeoutMs: number): Promise<Reply | null>;
  close(): Promise<void>;
}

const INITIALIZE = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'chaos-e2e', version: '1.0.0' } };
const ACCEPT = 'application/json, text/event-stream';

/** Routes replies (by id) to their waiters; every waiter is settled null when the wire ends. */
class Waiters {
  readonly #waiting = new Map<number, (r: Reply | null) => void>();
  #next = 1;

  wait(timeoutMs: number, send: (id: number) => void): Promise<Reply | null> {
    const id = this.#next++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(id);
        resolve(null);
      }, timeoutMs);
      this.#waiting.set(id, (r) => {
        clearTimeout(timer);
        resolve(r);
      });
      send(id);
    });
  }

  settle(message: unknown): void {
    for (const m of Array.isArray(message) ? message : [message]) {
      const id = (m as { id?: unknown }).id;
      if (typeof id !== 'number') continue;
      const waiter = this.#waiting.get(id);
      this.#waiting.delete(id);
      waiter?.(m as Reply);
    }
  }

  endAll(): void {
    for (const w of this.#waiting.values()) w(null);
    this.#waiting.clear();
  }
}

/**
 * Initializes a new wire, or closes it and throws: the caller never sees a wire that failed here, so it
 * could not end it (a child process left running keeps the test file from exiting). Under chaos an
 * `initialize` may be caught by a fault twice in a row (answered -32010 "poison"): a client initializes again.
 */
async function initialize(wire: Wire, context: () => string): Promise<void> {
  let init: Reply | null = null;
  for (let attempt = 0; attempt < 3 && !init?.result; attempt++) {
    init = await wire.request('initialize', INITIALIZE, 20_000);
    if (init?.error?.code !== -32010) break;
  }
  if (init?.result) return;
  await wire.close();
  throw new Error(`initialize failed: ${JSON.stringify(init)}${context()}`);
}

const line = (id: number | undefined, method: string, params: object) => JSON.stringify(id === undefined ? { jsonrpc: '2.0', method, params } : { jsonrpc: '2.0', id, method, params });

export interface StdioWire extends Wire {
  readonly child: ChildProcess;
  stderr(): string;
  /** The exit code, once the process has ended. */
  readonly exited: Promise<number | null>;
}

export async function stdioWire(ws: string, args: string[]): Promise<StdioWire> {
  const child = spawn(process.execPath, ['--import', 'tsx', stdioEntry, '--workspace', ws, ...args], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const waiters = new Waiters();
  let partial = '';
  child.stdout.on('data', (d: Buffer) => {
    const lines = (partial + d.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const l of lines) if (l.trim()) waiters.settle(JSON.parse(l));
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => {
    waiters.endAll();
    resolve(code);
  }));
  child.stdin.on('error', () => {
    // The server exited (it gave up): writes after that fail; the waiters were settled null.
  });
  const write = (text: string) => {
    if (child.exitCode === null && child.stdin.writable) child.stdin.write(`${text}\n`);
  };
  const wire: StdioWire = {
    child,
    exited,
    stderr: () => stderr,
    request: (method, params, timeoutMs) => waiters.wait(timeoutMs, (id) => write(line(id, method, params))),
    close: async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  await initialize(wire, () => `; stderr: ${stderr}`);
  write(line(undefined, 'notifications/initialized', {}));
  return wire;
}

export interface HttpWire extends Wire {
  readonly sessionId: string;
  /** The HTTP status a plain `ping` on this session gets now (404 once the session is gone). */
  status(): Promise<number>;
}

export async function httpWire(url: string): Promise<HttpWire> {
  const first = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT }, body: line(0, 'initialize', INITIALIZE) });
  await first.text();
  const sessionId = first.headers.get('mcp-session-id');
  if (first.status !== 200 || !sessionId) throw new Error(`initialize failed: ${first.status}`);
  const headers = { 'content-type': 'application/json', accept: ACCEPT, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' };
  await (await fetch(url, { method: 'POST', headers, body: line(undefined, 'notifications/initialized', {}) })).text();
  const waiters = new Waiters();
  return {
    sessionId,
    request: (method, params, timeoutMs) => waiters.wait(timeoutMs, (id) => {
      void (async () => {
        try {
          const r = await fetch(url, { method: 'POST', headers, body: line(id, method, params), signal: AbortSignal.timeout(timeoutMs) });
          const text = await r.text();
          // Plain JSON, or an SSE stream whose data lines carry the reply (and any progress before it).
          const messages = (r.headers.get('content-type') ?? '').includes('text/event-stream')
            ? text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as unknown)
            : r.status === 200 ? [JSON.parse(text) as unknown]
            // An HTTP refusal (404: the session is gone) answers the request too, with no JSON-RPC body.
            : [{ id, error: { code: -r.status, message: text, data: { reason: `http-${r.status}` } } }];
          for (const m of messages) waiters.settle(m);
        } catch (err) {
          // Timed out or refused: the waiter's own timer reports it unanswered.
          void err;
        }
      })();
    }),
    status: async () => {
      const r = await fetch(url, { method: 'POST', headers, body: line(999_999, 'ping', {}) });
      await r.text();
      return r.status;
    },
    close: async () => {
      await (await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': sessionId } })).text();
    },
  };
}

export interface WsWire extends Wire {
  /** Resolves with the close code once the server closed the socket. */
  readonly closed: Promise<number>;
}

export async function wsWire(url: string): Promise<WsWire> {
  const socket = new WebSocket(url, ['mcp']);
  const waiters = new Waiters();
  socket.on('message', (data) => waiters.settle(JSON.parse(data.toString())));
  const closed = new Promise<number>((resolve) => socket.once('close', (code) => {
    waiters.endAll();
    resolve(code);
  }));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const send = (text: string) => {
    if (socket.readyState === WebSocket.OPEN) socket.send(text);
  };
  const wire: WsWire = {
    closed,
    request: (method, params, timeoutMs) => waiters.wait(timeoutMs, (id) => send(line(id, method, params))),
    close: async () => {
      if (socket.readyState === WebSocket.OPEN) socket.close();
      await closed;
    },
  };
  await initialize(wire, () => '');
  send(line(undefined, 'notifications/initialized', {}));
  return wire;
}

/** A mix of idempotent calls: reads of a small file and greps, alternating. */
export function readOrGrep(i: number): { method: string; params: object } {
  return i % 2 === 0
    ? { method: 'tools/call', params: { name: 'read', arguments: { path: 'README.md' } } }
    : { method: 'tools/call', params: { name: 'grep', arguments: { pattern: 'hello', path: 'src' } } };
}

export interface Tally {
  ok: number;
  /** Errors by their data.reason (or code, when there is none). */
  readonly errors: Map<string, number>;
  unanswered: number;
}

/** Sends `count` calls with at most `window` in flight; every call ends in the tally. */
export async function pipeline(wire: Wire, count: number, window: number, timeoutMs: number): Promise<Tally> {
  const tally: Tally = { ok: 0, errors: new Map(), unanswered: 0 };
  let next = 0;
  await Promise.all(Array.from({ length: window }, async () => {
    while (next < count) {
      const { method, params } = readOrGrep(next++);
      const reply = await wire.request(method, params, timeoutMs);
      if (reply === null) tally.unanswered++;
      else if (reply.error) {
        const kind = reply.error.data?.reason ?? String(reply.error.code);
        tally.errors.set(kind, (tally.errors.get(kind) ?? 0) + 1);
      } else if (reply.result?.isError) tally.errors.set('tool-error', (tally.errors.get('tool-error') ?? 0) + 1);
      else tally.ok++;
    }
  }));
  return tally;
}

export const describeTally = (t: Tally) => `${t.ok} ok, ${t.unanswered} unanswered, errors ${JSON.stringify(Object.fromEntries(t.errors))}`;

/** Lines of a server's stderr log whose message is `message` (and whose data matches `data`, if given). */
export function logCount(stderr: string, message: string, data?: RegExp): number {
  return stderr.split('\n').filter((l) => l.includes(`: ${message}`) && (data === undefined || data.test(l))).length;
}

export const sandboxFile = (ws: string, name: string) => path.join(ws, name);
