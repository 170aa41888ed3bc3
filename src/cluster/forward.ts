// Forwarding one Streamable HTTP request to the node that is its session's home (cluster design: "the
// home's lease is fresh → forward"). The request goes on with the client's own headers that matter to
// MCP (the bearer token is checked again there: the home trusts no other node's judgement), plus
// X-SuperPi-Forwarded-By naming this node; a request carrying that header is never forwarded again, so a
// loop is impossible. The reply is streamed back as it comes (an SSE reply reaches the client event by
// event, read from the home no faster than the client takes it), and the client going away aborts the
// upstream request. What one node opens to another is
// bounded: GET streams and other requests go over separate agents, each with its own limit per node
// (MAX_FORWARD_STREAMS_PER_NODE, MAX_FORWARD_SOCKETS_PER_NODE) and a queue past it, so a request never
// waits behind streams that stay open. A node bound to one address forwards from it (`localAddress`), so
// its peers know its connections by the address its advertise URL names (peer-addresses.ts).

import { createRequire } from 'node:module';
import type * as Http from 'node:http';
import type * as Https from 'node:https';
import type { Socket } from 'node:net';
import { guarded } from '../log/guarded.ts';
import { forwardSource } from './forward-policy.ts';
import type { Logger } from '../log/logger.ts';
import { ErrorCode, errorLine } from '../mcp/jsonrpc.ts';
import { FORWARD_CONNECT_TIMEOUT_MS, MAX_FORWARD_SOCKETS_PER_NODE, MAX_FORWARD_STREAMS_PER_NODE } from '../limits.ts';

/** The header that marks a forwarded request (and names the node that forwarded it). */
export const FORWARDED_BY_HEADER = 'x-superpi-forwarded-by';

/** The client's headers passed on to the home node (lower case); every other header stays here. */
export const FORWARDED_HEADERS: readonly string[] = ['authorization', 'mcp-session-id', 'mcp-protocol-version', 'accept', 'content-type', 'last-event-id'];

/** Headers of the home's reply not passed back (hop-by-hop, RFC 9110 §7.6.1; the length is the stream's). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'content-length']);

/** What forwarding reads of the client's request. */
export interface ForwardRequest {
  readonly method: string;
  header(name: string): string | undefined;
}

/** Where the home's reply is written: the client's reply (a ServerResponse-shaped subset). */
export interface ForwardTarget {
  writeHead(status: number, headers: Readonly<Record<string, string>>): unknown;
  flushHeaders(): void;
  /** False: the client's connection holds enough unsent; the home's reply is not read until 'drain'. */
  write(chunk: string): unknown;
  end(chunk?: string): unknown;
  readonly destroyed: boolean;
  on(event: 'close', listener: () => void): unknown;
  once(event: 'drain', listener: () => void): unknown;
}

/**
 * How a forward ended: `done` (the home answered; its reply went to the client, whole or until one side
 * went away), or `unreachable` (no reply began: nothing was written to the client, the caller may wait
 * and try again, or take the session over).
 */
export type ForwardOutcome = { readonly kind: 'done' } | { readonly kind: 'unreachable'; readonly reason: string };

/** The agents forwards go over: GET streams on their own, so that requests never queue behind them. */
export interface ForwardAgents {
  readonly streams: { readonly http: Http.Agent; readonly https: Https.Agent };
  readonly requests: { readonly http: Http.Agent; readonly https: Https.Agent };
}

/** Keep-alive agents with at most `limits` sockets per node (past them a forward waits in the agent's queue). */
export function forwardAgents(limits: { readonly streams: number; readonly requests: number } = { streams: MAX_FORWARD_STREAMS_PER_NODE, requests: MAX_FORWARD_SOCKETS_PER_NODE }): ForwardAgents {
  const { http, https } = loadModules();
  const pair = (maxSockets: number) => ({ http: new http.Agent({ keepAlive: true, maxSockets }), https: new https.Agent({ keepAlive: true, maxSockets }) });
  return { streams: pair(limits.streams), requests: pair(limits.requests) };
}

/** How this node forwards: from which local address (none: the system's choice; see `forwardSource`), over which agents (default: the shared ones). */
export interface ForwardVia {
  readonly localAddress?: string;
  readonly agents?: ForwardAgents;
}

interface Clients {
  readonly http: typeof Http;
  readonly https: typeof Https;
  readonly agents: ForwardAgents;
}

/**
 * node:http and node:https (which loads TLS and crypto), loaded by the first forward: a stdio start, or a
 * node on SQLite, never forwards and never loads them (test/package/stdio-start.test.ts).
 */
let clients: Clients | null = null;

function loadClients(): Clients {
  clients ??= { ...loadModules(), agents: forwardAgents() };
  return clients;
}

function loadModules(): { readonly http: typeof Http; readonly https: typeof Https } {
  // require, not import(): in the `super-pi` bundle, compiled from its V8 code cache, a dynamic import()
  // of a module outside the bundle fails with ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING (as the tool pool's
  // piscina did), which bench/cluster caught as a 500 on every forwarded request.
  const require = createRequire(import.meta.url);
  const http = require('node:http') as typeof Http;
  const https = require('node:https') as typeof Https;
  return { http, https };
}

/** Sends the request (with `body`, for a POST) to `baseUrl` + `/mcp` and streams the reply to `target`. */
export function forwardRequest(baseUrl: string, request: ForwardRequest, body: string | null, target: ForwardTarget, self: string, logger: Logger, via: ForwardVia = {}): Promise<ForwardOutcome> {
  const loaded = loadClients();
  const { http, https } = loaded;
  const agents = request.method === 'GET' ? (via.agents ?? loaded.agents).streams : (via.agents ?? loaded.agents).requests;
  const url = new URL(`${baseUrl}/mcp`);
  const headers: Record<string, string> = { [FORWARDED_BY_HEADER]: self };
  for (const name of FORWARDED_HEADERS) {
    const value = request.header(name);
    if (value !== undefined) headers[name] = value;
  }
  if (body !== null) headers['content-length'] = String(Buffer.byteLength(body));
  const secure = url.protocol === 'https:';
  const send = secure ? https.request : http.request;
  return new Promise((resolve) => {
    let began = false;
    let settled = false;
    const settle = (outcome: ForwardOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(connectTimer);
      resolve(outcome);
    };
    // Whatever the home sent that cannot be passed on (a status like 099, a header node refuses to write)
    // is a 502 from here if nothing was written yet, else the client's reply ends; never a throw.
    let wroteHead = false;
    // The client's reply is ended once, and nothing is written after: a home that sends bytes past the end
    // of its reply (more body than its Content-Length) is a parse error on the upstream request, which ends
    // the client's reply while the body it did declare is still buffered in the reply and flows after;
    // writing that was a write after end, an 'error' on the client's reply that nothing listens for, so an
    // uncaught exception (test/cluster/forward.test.ts, found by its property under another seed).
    let targetEnded = false;
    const endTarget = (chunk?: string): void => {
      if (targetEnded) return;
      targetEnded = true;
      target.end(chunk);
    };
    const badReply = (reason: string, reply: Http.IncomingMessage): void => {
      reply.destroy();
      if (!wroteHead && !target.destroyed) {
        wroteHead = true;
        target.writeHead(502, { 'content-type': 'application/json' });
        endTarget(errorLine(null, ErrorCode.InternalError, `Bad Gateway: ${reason}`));
      } else {
        endTarget();
      }
      settle({ kind: 'done' });
    };
    const onReply = (reply: Http.IncomingMessage): void => {
      began = true;
      clearTimeout(connectTimer);
      const status = reply.statusCode ?? 0;
      if (!isFinalStatus(status)) return badReply(`the session's home node answered with status ${status}`, reply);
      const back: Record<string, string> = {};
      for (const [name, value] of Object.entries(reply.headers)) {
        if (HOP_BY_HOP.has(name) || value === undefined) continue;
        back[name] = Array.isArray(value) ? value.join(', ') : value;
      }
      target.writeHead(status, back);
      wroteHead = true;
      target.flushHeaders();
      reply.setEncoding('utf8');
      const ended = () => {
        endTarget();
        settle({ kind: 'done' });
      };
      const cut = (error: unknown) => badReply(`the reply could not be passed on: ${(error as Error).message}`, reply);
      // At the client's pace: past what its connection holds unsent, the home's reply waits unread (and the
      // home's own limits on a reader that takes nothing judge it), instead of piling up here.
      const resume = guarded(logger, 'forward client drain', () => reply.resume(), cut);
      reply.on('data', guarded(logger, 'forward reply data', (chunk: string) => {
        if (targetEnded || target.destroyed) return;
        if (target.write(chunk) !== false) return;
        reply.pause();
        target.once('drain', resume);
      }, cut));
      reply.on('end', guarded(logger, 'forward reply end', ended, cut));
      // The home went away mid-reply: the client's reply ends too (an SSE client resumes with Last-Event-ID).
      reply.on('error', guarded(logger, 'forward reply error', ended, cut));
      reply.on('aborted', guarded(logger, 'forward reply aborted', ended, cut));
    };
    const upstream = send(url, { method: request.method, headers, agent: secure ? agents.https : agents.http, ...forwardSource(via.localAddress, url.hostname) }, guarded(logger, 'forward reply', onReply, (error, reply) => {
      badReply(`the reply could not be passed on: ${(error as Error).message}`, reply);
    }));
    // Only connecting is bounded: once connected, the home may rightly take long to answer (a tool call) or
    // keep the reply open (SSE). A home that accepts connections and never answers (paused) is not told
    // from a slow one here; its lease lapsing is what lets a later request take the session over. The
    // time starts when the agent gives the request a socket: a request queued behind the per-node limit
    // waits for a busy home, which is not an unreachable one (that would have it taken over).
    let connectTimer: ReturnType<typeof setTimeout> | undefined;
    upstream.on('socket', guarded(logger, 'forward socket', (socket: Socket) => {
      if (!socket.connecting || settled) return;
      connectTimer = setTimeout(() => upstream.destroy(new Error(`could not connect within ${FORWARD_CONNECT_TIMEOUT_MS} ms`)), FORWARD_CONNECT_TIMEOUT_MS);
      socket.once('connect', () => clearTimeout(connectTimer));
    }));
    upstream.on('error', guarded(logger, 'forward error', (err: Error) => {
      if (began) {
        endTarget();
        settle({ kind: 'done' });
        return;
      }
      settle({ kind: 'unreachable', reason: err.message });
    }));
    target.on('close', guarded(logger, 'forward client close', () => {
      if (!settled) upstream.destroy();
      if (!began) settle({ kind: 'done' });
    }));
    upstream.end(body ?? undefined);
  });
}

/** A status a reply may end with and node:http can write back (1xx are interim; node refuses past 999). */
function isFinalStatus(status: number): boolean {
  return Number.isInteger(status) && status >= 200 && status <= 599;
}
