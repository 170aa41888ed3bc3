// The node:http adapter: one port, where `/mcp` is Streamable HTTP (streamable-http.ts, on web-standard
// Request/Response) and WebSocket (websocket.ts, on an upgrade), and `/health`, `/metrics` and
// `/observer` stay plain node:http routes. It turns an IncomingMessage into a Request (the body streamed,
// the client's disconnect as the request's AbortSignal) and writes the Response back (streamed, waiting
// for 'drain' when the socket is full). It runs the idle-session reaper and the shutdown drain, both on
// the session host's Clock. It knows the server only as a SessionHost.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TokenTable } from '../auth/tokens.ts';
import type { Logger } from '../log/logger.ts';
import { ErrorCode, errorLine } from '../mcp/jsonrpc.ts';
import { isLoopbackHost } from '../observer/observer-access.ts';
import { ObserverRoutes } from '../observer/observer-http.ts';
import type { ServerObserver } from '../observer/server-observer.ts';
import { checkHostAndOrigin, type OriginPolicy } from './origin.ts';
import type { SessionHost, TransportName } from './session-host.ts';
import { SessionReaper } from './session-reaper.ts';
import { StreamableHttp } from './streamable-http.ts';
import { WebSocketTransport } from './websocket.ts';

export { DEFAULT_SESSION_IDLE_MS } from './session-reaper.ts';
export { DEFAULT_MAX_SESSIONS } from './session-quota.ts';
export { WS_PING_INTERVAL_MS } from './websocket.ts';
/**
 * How long an idle keep-alive connection stays open (Node's default is 5 s). A client that reuses a
 * connection just as the server closes it gets "other side closed" for a request the server never saw
 * (undici's fetch, under load, did: test/e2e/many-clients.test.ts); a longer timeout than the clients'
 * own (undici keeps one 4 s by default; load balancers up to 60 s) leaves the closing to the client.
 */
export const HTTP_KEEP_ALIVE_MS = 65_000;
/** How long `close()` lets calls in flight finish before their sessions are closed under them. */
export const DEFAULT_CLOSE_GRACE_MS = 5000;

export interface HttpServerOptions {
  readonly host: string;
  readonly port: number;
  /** The server's sessions: the one registry behind every transport. */
  readonly sessions: SessionHost;
  /** What /health shows (status, and for callers the operator knows, how busy the server is). */
  readonly health: () => Record<string, unknown>;
  /** What /metrics and /observer show. */
  readonly observer: ServerObserver;
  readonly logger: Logger;
  readonly tokens: TokenTable;
  readonly requireAuth: boolean;
  readonly origin: OriginPolicy;
  readonly maxMessageBytes: number;
  readonly sessionIdleMs?: number;
  /** Token principals who may read /metrics and /observer (--observers). */
  readonly observers?: readonly string[];
}

export interface RunningHttpServer {
  readonly url: string;
  readonly port: number;
  readonly sessions: () => number;
  /** Stops accepting, closes every session (aborting work in flight after `graceMs`) and the sockets. */
  close(graceMs?: number): Promise<void>;
}

export async function startHttpServer(options: HttpServerOptions): Promise<RunningHttpServer> {
  const { sessions: host, logger } = options;
  const transportOptions = { sessions: host, tokens: options.tokens, requireAuth: options.requireAuth, origin: options.origin, maxMessageBytes: options.maxMessageBytes, logger };
  const http = new StreamableHttp(transportOptions);
  const websocket = new WebSocketTransport(transportOptions);
  // Who sees session and actor counts on /health: everyone on a server with neither tokens nor
  // --require-auth (a loopback server for its own user); else only callers with a valid token.
  const healthIsPublic = options.tokens.size === 0 && !options.requireAuth;
  const observerRoutes = new ObserverRoutes({
    observer: options.observer, tokens: options.tokens, origin: options.origin,
    access: { loopback: isLoopbackHost(options.host), tokensConfigured: options.tokens.size > 0, requireAuth: options.requireAuth, observers: new Set(options.observers ?? []) },
  });

  const server: Server = createServer((req, res) => {
    const pathname = pathOf(req.url);
    if (pathname === '/health' && req.method === 'GET') {
      const bad = checkHostAndOrigin(options.origin, req.headers.host, req.headers.origin);
      if (bad) return refuse(res, 403, `Forbidden: ${bad}`);
      const health = options.health();
      res.writeHead(200, { 'Content-Type': 'application/json' });
      // How busy the server is tells one caller about the others: only to callers the operator knows.
      if (!healthIsPublic && options.tokens.resolve(req.headers.authorization)?.kind !== 'token') return void res.end(JSON.stringify({ status: health.status }));
      const counts = countByTransport(host);
      res.end(JSON.stringify({ ...health, httpSessions: counts.get('http') ?? 0, webSockets: counts.get('websocket') ?? 0 }));
      return;
    }
    if (observerRoutes.handle(req, res, pathname)) return;
    if (pathname !== '/mcp') return refuse(res, 404, 'Not Found: the MCP endpoint is /mcp');
    void serveMcp(http, req, res).catch((err: unknown) => {
      logger.log('error', 'HTTP request failed', { method: req.method, error: (err as Error).stack ?? String(err) });
      if (!res.headersSent) refuse(res, 500, 'Internal Server Error');
      else res.end();
    });
  });

  server.keepAliveTimeout = HTTP_KEEP_ALIVE_MS;
  // Node's rule: the time allowed for a request's headers must exceed the keep-alive timeout.
  server.headersTimeout = HTTP_KEEP_ALIVE_MS + 1000;
  server.on('upgrade', (req: IncomingMessage, socket, head: Buffer) => {
    if (pathOf(req.url) !== '/mcp') return void socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    websocket.upgrade(req, socket, head);
  });

  const reaper = new SessionReaper({
    host,
    clock: host.clock,
    transport: 'http',
    ...(options.sessionIdleMs === undefined ? {} : { idleMs: options.sessionIdleMs }),
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${shownHost}:${port}/mcp`,
    port,
    sessions: () => countOf(host),
    async close(graceMs = DEFAULT_CLOSE_GRACE_MS) {
      http.stopAccepting();
      websocket.stopAccepting();
      reaper.stop();
      observerRoutes.close();
      server.close();
      await host.drain(graceMs);
      websocket.closeAll(1001, 'server shutting down');
      await Promise.all([...host.sessions()].filter((s) => s.transport !== 'stdio').map((s) => host.close(s.id)));
      server.closeAllConnections();
    },
  };
}

/** One request to /mcp through the web-standard core: IncomingMessage → Request, Response → the wire. */
async function serveMcp(http: StreamableHttp, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const gone = new AbortController();
  // The client went away before its reply was written: the request's signal says so (its calls are cancelled).
  res.once('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  // The core reads the Host header, not the URL: the URL only has to be valid.
  const request = new Request('http://localhost/mcp', {
    method: req.method ?? 'GET',
    headers: headersOf(req),
    signal: gone.signal,
    ...(req.method === 'POST' ? { body: bodyOf(req), duplex: 'half' } : {}),
  } as RequestInit);
  const response = await http.handle(request, req.socket.remoteAddress === undefined ? {} : { remoteAddress: req.socket.remoteAddress });
  await writeResponse(response, res);
}

/** The request's headers as Headers (repeated ones joined, as Headers does). */
function headersOf(req: IncomingMessage): Headers {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i] as string, raw[i + 1] as string);
  return headers;
}

/**
 * The request body as a web stream. Cancelled (a body past the size limit): the rest is read and dropped
 * rather than the socket destroyed, so the client still gets its 413.
 */
function bodyOf(req: IncomingMessage): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      req.on('data', (chunk: Buffer) => controller.enqueue(chunk));
      req.once('end', () => controller.close());
      req.once('error', (err) => controller.error(err));
    },
    cancel() {
      req.removeAllListeners('data');
      req.resume();
    },
  });
}

/** Writes a Response: a plain body at once; a stream chunk by chunk, never writing while the socket is full. */
async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const body = response.body;
  if (body === null) {
    res.writeHead(response.status, headers).end();
    return;
  }
  if (!(headers['content-type'] ?? '').startsWith('text/event-stream')) {
    const bytes = Buffer.from(await response.arrayBuffer());
    res.writeHead(response.status, headers).end(bytes);
    return;
  }
  res.writeHead(response.status, headers);
  res.flushHeaders();
  const reader = body.getReader();
  const stop = () => void reader.cancel().catch((err: unknown) => void err);
  res.once('close', stop);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!res.write(value) && !res.destroyed) await drained(res);
    if (res.destroyed) return;
  }
  res.off('close', stop);
  res.end();
}

/** Resolves on 'drain', or when the response closes (a closed response will never drain). */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

function refuse(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(errorLine(null, ErrorCode.InvalidRequest, message));
}

function countByTransport(host: SessionHost): Map<TransportName, number> {
  const counts = new Map<TransportName, number>();
  for (const s of host.sessions()) counts.set(s.transport, (counts.get(s.transport) ?? 0) + 1);
  return counts;
}

function countOf(host: SessionHost): number {
  let n = 0;
  for (const s of host.sessions()) if (s.transport !== 'stdio') n++;
  return n;
}

/** The path of a request target: origin-form (`/mcp?x`) without parsing a URL, absolute-form through URL. */
function pathOf(target: string | undefined): string {
  if (target === undefined) return '/';
  if (!target.startsWith('/')) return new URL(target, 'http://localhost').pathname;
  const q = target.indexOf('?');
  return q === -1 ? target : target.slice(0, q);
}
