// The node:http adapter: one port, where `/mcp` is Streamable HTTP (streamable-http.ts) and WebSocket
// (websocket.ts, on an upgrade), and `/health`, `/metrics` and `/observer` stay plain node:http routes.
// A request to `/mcp` reaches the same core a web-standard Request does (`StreamableHttp.handle`), as an
// `IncomingView` (its headers, its body read up to the size limit) with the ServerResponse as the
// `ReplyTarget` (the client going away is the response's 'close'): no Request, AbortSignal, body stream
// or Response is built per POST. It runs the idle-session reaper and the shutdown drain, both on the
// session host's Clock. It knows the server only as a SessionHost.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { TokenTable } from '../auth/tokens.ts';
import { BearerAuthority, isAuthRefusal } from '../auth/bearer-authority.ts';
import { metadataPaths, protectedResourceMetadata } from '../auth/protected-resource-metadata.ts';
import type { ClusterSessions } from '../cluster/session-locator.ts';
import { guarded } from '../log/guarded.ts';
import type { Logger } from '../log/logger.ts';
import { ErrorCode, errorLine } from '../mcp/jsonrpc.ts';
import { isLoopbackHost } from '../observer/observer-access.ts';
import { ObserverRoutes } from '../observer/observer-http.ts';
import type { ServerObserver } from '../observer/server-observer.ts';
import { type ConnectionLimits, DEFAULT_CONNECTION_LIMITS, gateConnections, type RefusalReport } from './connection-gate.ts';
import { checkHostAndOrigin, type OriginPolicy } from './origin.ts';
import type { SessionHost, TransportName } from './session-host.ts';
import { SendTimeout } from './send-timeout.ts';
import { SessionReaper } from './session-reaper.ts';
import { KeepAlive } from './sse-keepalive.ts';
import { httpConnectionBacklog } from './backlog-sources.ts';
import { OutputBudget } from './output-budget.ts';
import { type IncomingView, StreamableHttp } from './streamable-http.ts';
import { BodyDropped } from './incoming-view.ts';
import { catchSocketErrors, WebSocketTransport } from './websocket.ts';
import type { SessionEventFeed } from '../store/session-event-feed.ts';
import { DEFAULT_CLOSE_GRACE_MS, HTTP_KEEP_ALIVE_MS, HTTP_SEND_TIMEOUT_MS, MAX_NODE_OUTPUT_BACKLOG_BYTES, MAX_NODE_REQUEST_BODY_BYTES, MAX_OUTPUT_BACKLOG_BYTES, SSE_KEEPALIVE_MS } from '../limits.ts';

export interface HttpServerOptions {
  readonly host: string;
  readonly port: number;
  /** The server's sessions: the one registry behind every transport. */
  readonly sessions: SessionHost;
  /** What /health shows (status, and for callers the operator knows, how busy the server is). */
  readonly health: () => Record<string, unknown>;
  /** This node in a cluster (id, store backend and reachability, tasks it holds), shown on /health to known callers. */
  readonly node?: () => Promise<unknown>;
  /** What /metrics and /observer show. */
  readonly observer: ServerObserver;
  readonly logger: Logger;
  readonly tokens: TokenTable;
  readonly requireAuth: boolean;
  /** Static tokens and OAuth together (auth/bearer-authority.ts); default: the static `tokens` alone. */
  readonly auth?: BearerAuthority;
  readonly origin: OriginPolicy;
  readonly maxMessageBytes: number;
  /** A WebSocket session's unhandled input before its socket is not read. Default MAX_INPUT_BACKLOG_BYTES. */
  readonly maxInputBacklogBytes?: number;
  /** Output a client may leave unread before its WebSocket is closed 1008 or its SSE stream ended. Default MAX_OUTPUT_BACKLOG_BYTES. */
  readonly maxOutputBacklogBytes?: number;
  /** Unread output of every connection together, past which the one holding the most is closed (`--max-node-output-backlog-bytes`). Default MAX_NODE_OUTPUT_BACKLOG_BYTES. */
  readonly maxNodeOutputBacklogBytes?: number;
  /** POST bodies being read, every connection together, past which the largest is dropped with a 503 (`--max-node-request-body-bytes`). Default MAX_NODE_REQUEST_BODY_BYTES. */
  readonly maxNodeRequestBodyBytes?: number;
  /** An HTTP or WebSocket session with nothing in flight, nothing held open and no message this long is closed (`--session-idle`). Default DEFAULT_SESSION_IDLE_MS. */
  readonly sessionIdleMs?: number;
  /** A comment is written on an SSE stream idle this long (`--sse-keepalive`), on the host's clock. Default SSE_KEEPALIVE_MS. */
  readonly sseKeepAliveMs?: number;
  /** An HTTP connection or WebSocket whose client takes none of its output this long is destroyed (`--send-timeout`). Default HTTP_SEND_TIMEOUT_MS. */
  readonly sendTimeoutMs?: number;
  /** Open connections allowed, in all and per client address (`--max-connections`, `--max-connections-per-address`). Default MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS. */
  readonly connectionLimits?: ConnectionLimits;
  /** Token principals who may read /metrics and /observer (--observers). */
  readonly observers?: readonly string[];
  /** On a cluster: where sessions not held here are (null until the node joined). */
  readonly cluster?: () => ClusterSessions | null;
  /** The session event log of a PostgreSQL store: SSE events kept for Last-Event-ID on any node. */
  readonly events?: SessionEventFeed | null;
}

export interface RunningHttpServer {
  readonly url: string;
  readonly port: number;
  readonly sessions: () => number;
  /** Connections from these addresses (the cluster's other nodes) count against the total cap only, not the per-address one. */
  trustPeers(addresses: ReadonlySet<string>): void;
  /** Stops accepting, closes every session (aborting work in flight after `graceMs`) and the sockets. */
  close(graceMs?: number): Promise<void>;
}

export async function startHttpServer(options: HttpServerOptions): Promise<RunningHttpServer> {
  const { sessions: host, logger } = options;
  // The server's own origin is an allowed host at the port it is bound to, known once it listens.
  let boundPort: number | undefined;
  const origin: OriginPolicy = { ...options.origin, port: () => boundPort };
  const auth = options.auth ?? new BearerAuthority({ tokens: options.tokens, requireAuth: options.requireAuth, logger });
  // Read per request: OAuth may be turned on after listening, once the resource URL names the bound port.
  let metadata: { readonly paths: ReadonlySet<string>; readonly body: string } | null = null;
  const metadataNow = () => {
    const oauth = auth.oauth;
    if (oauth !== null && metadata === null) metadata = { paths: metadataPaths(oauth.config.resource), body: JSON.stringify(protectedResourceMetadata(oauth.config)) };
    return metadata;
  };
  const transportOptions = { sessions: host, tokens: options.tokens, requireAuth: options.requireAuth, auth, origin, maxMessageBytes: options.maxMessageBytes, logger, ...(options.cluster ? { cluster: options.cluster } : {}) };
  // One sweep for every SSE stream of this server (sse-keepalive.ts), on the clock the reaper reads too.
  // The same sweep bounds what a stream's client may leave unread (every stream is written through it).
  const maxBacklog = options.maxOutputBacklogBytes ?? MAX_OUTPUT_BACKLOG_BYTES;
  // And every connection's unread output together is held to the node's budget (output-budget.ts).
  const outputBudget = new OutputBudget(options.maxNodeOutputBacklogBytes ?? MAX_NODE_OUTPUT_BACKLOG_BYTES);
  // POST bodies being read, all connections together: the same rule, the largest goes (never below one message).
  const bodies = new OutputBudget(Math.max(options.maxNodeRequestBodyBytes ?? MAX_NODE_REQUEST_BODY_BYTES, options.maxMessageBytes));
  const keepAlive = new KeepAlive(options.sseKeepAliveMs ?? SSE_KEEPALIVE_MS, host.clock, {
    maxBytes: maxBacklog,
    budget: outputBudget,
    onOverflow: (bytes) => logger.log('warning', 'SSE stream ended: its client left too much output unread', { bytes, limit: maxBacklog }),
  });
  const http = new StreamableHttp({ ...transportOptions, keepAlive, ...(options.events ? { events: options.events } : {}) });
  const websocket = new WebSocketTransport({
    ...transportOptions,
    outputBudget,
    ...(options.maxInputBacklogBytes === undefined ? {} : { maxInputBacklogBytes: options.maxInputBacklogBytes }),
    ...(options.maxOutputBacklogBytes === undefined ? {} : { maxOutputBacklogBytes: options.maxOutputBacklogBytes }),
    ...(options.sendTimeoutMs === undefined ? {} : { sendTimeoutMs: options.sendTimeoutMs }),
  });
  // Who sees session and actor counts on /health: everyone on a loopback server with neither tokens nor
  // --require-auth (its own user's machine, as for the observer); else only callers with a valid token. A
  // server bound to another address without tokens gave everyone on the network the full view (the
  // store's error, its host and port included).
  const loopback = isLoopbackHost(options.host);
  const healthIsPublic = () => loopback && options.tokens.size === 0 && !auth.required;
  const observerRoutes = new ObserverRoutes({
    observer: options.observer, tokens: options.tokens, origin, auth,
    access: { loopback: isLoopbackHost(options.host), tokensConfigured: options.tokens.size > 0, requireAuth: options.requireAuth, observers: new Set(options.observers ?? []) },
  });

  const server: Server = createServer(guarded(logger, 'http request', (req: IncomingMessage, res: ServerResponse) => {
    const pathname = pathOf(req.url);
    if (pathname === null) return refuse(res, 400, 'Bad Request: the request target is not a URL');
    if (pathname === '/health' && req.method === 'GET') {
      const bad = checkHostAndOrigin(origin, req.headers.host, req.headers.origin);
      if (bad) return refuse(res, 403, `Forbidden: ${bad}`);
      return void (async () => {
        const health: Record<string, unknown> = { ...options.health(), auth: auth.describe() };
        // How busy the server is tells one caller about the others: only to callers the operator knows.
        const known = healthIsPublic() || await auth.admit(req.headers.authorization).then((a) => !isAuthRefusal(a) && a.principal.kind === 'token');
        res.writeHead(200, { 'Content-Type': 'application/json' });
        if (!known) return void res.end(JSON.stringify({ status: health.status }));
        const counts = countByTransport(host);
        const body = { ...health, httpSessions: counts.get('http') ?? 0, webSockets: counts.get('websocket') ?? 0 };
        // The node's own probe of its store (bounded; never rejects), for callers the operator knows only.
        if (!options.node) return void res.end(JSON.stringify(body));
        res.end(JSON.stringify({ ...body, node: await options.node() }));
      })().catch((err: unknown) => {
        logger.log('error', '/health failed', { error: (err as Error).message });
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    }
    const prm = metadataNow();
    if (prm !== null && prm.paths.has(pathname) && req.method === 'GET') {
      // Public by design (RFC 9728): it names only the issuers and scopes a host needs to get a token.
      res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'max-age=3600' });
      return void res.end(prm.body);
    }
    if (observerRoutes.handle(req, res, pathname)) return;
    if (pathname !== '/mcp') return refuse(res, 404, 'Not Found: the MCP endpoint is /mcp');
    return http.serve(nodeView(req, bodies, logger), res);
  }, (_error, _req, res) => {
    // Whatever failed is ours, not the caller's: a 500 if nothing was sent yet, else the reply is cut.
    if (res.headersSent) return void res.destroy();
    res.writeHead(500, { 'Content-Type': 'application/json', Connection: 'close' });
    res.end(errorLine(null, ErrorCode.InternalError, 'Internal error'));
  }));

  // A connection whose client takes none of its reply is closed (send-timeout.ts); a WebSocket leaves it
  // for the WebSocket transport's own, with the same timeout.
  const sendTimeoutMs = options.sendTimeoutMs ?? HTTP_SEND_TIMEOUT_MS;
  const sendTimeout = new SendTimeout(host.clock, (bytes) => {
    logger.log('warning', 'HTTP connection closed: its client took none of its reply for the send timeout', { bytes, limit: sendTimeoutMs });
  }, sendTimeoutMs);
  server.on('connection', guarded(logger, 'http connection', (socket: Socket) => {
    sendTimeout.watch(socket);
    httpConnectionBacklog(outputBudget, socket, logger, () => ({ address: socket.remoteAddress }));
  }));
  server.keepAliveTimeout = HTTP_KEEP_ALIVE_MS;
  // Node's rule: the time allowed for a request's headers must exceed the keep-alive timeout.
  server.headersTimeout = HTTP_KEEP_ALIVE_MS + 1000;
  server.on('upgrade', guarded(logger, 'http upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // First: a refusal below is written to a socket the client may have reset (websocket.ts).
    catchSocketErrors(socket);
    const pathname = pathOf(req.url);
    if (pathname === null) return void socket.end(bareStatus(400, 'Bad Request'));
    if (pathname !== '/mcp') return void socket.end(bareStatus(404, 'Not Found'));
    sendTimeout.forget(socket as Socket);
    outputBudget.closeConnection(socket);
    websocket.upgrade(req, socket, head);
  }, (_error, _req, socket) => {
    if (socket.writable) socket.end(bareStatus(500, 'Internal Server Error'));
    else socket.destroy();
  }));
  // A request node:http could not parse: answered as node does by default, and noted at debug level (a
  // scanner on the port is no news to the operator).
  server.on('clientError', guarded(logger, 'http client error', (err: NodeJS.ErrnoException, socket: Socket) => {
    logger.log('debug', 'an HTTP request could not be parsed', { code: err.code ?? err.message });
    // A reply already begun on this connection (keep-alive) must not have a status line written into it.
    if (err.code === 'ECONNRESET' || !socket.writable || socket.bytesWritten > 0) return void socket.destroy();
    const [status, text] = err.code === 'HPE_HEADER_OVERFLOW' ? [431, 'Request Header Fields Too Large'] : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? [408, 'Request Timeout'] : [400, 'Bad Request'];
    socket.end(bareStatus(status, text));
  }, (_error, _err, socket) => socket.destroy()));

  // Last, in front of every connection listener above (node:http's own first): a refused connection reaches none.
  const gate = gateConnections(server, options.connectionLimits ?? DEFAULT_CONNECTION_LIMITS, host.clock, (report) => logRefusal(logger, report), (listener) => guarded(logger, 'http connection', listener));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  // HTTP and WebSocket sessions are held to the same idle limit; a WebSocket's client is told why.
  const idleMs = options.sessionIdleMs === undefined ? {} : { idleMs: options.sessionIdleMs };
  const reapers = [
    new SessionReaper({ host, clock: host.clock, transport: 'http', ...idleMs }),
    new SessionReaper({ host, clock: host.clock, transport: 'websocket', ...idleMs, end: (s, ms) => websocket.endIdle(s, ms) }),
  ];
  const port = (server.address() as AddressInfo).port;
  boundPort = port;
  const shownHost = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${shownHost}:${port}/mcp`,
    port,
    sessions: () => countOf(host),
    trustPeers: (addresses) => gate.trustPeers(addresses),
    async close(graceMs = DEFAULT_CLOSE_GRACE_MS) {
      http.stopAccepting();
      websocket.stopAccepting();
      for (const reaper of reapers) reaper.stop();
      sendTimeout.stop();
      gate.stop();
      observerRoutes.close();
      server.close();
      await host.drain(graceMs);
      websocket.closeAll(1001, 'server shutting down');
      await Promise.all([...host.sessions()].filter((s) => s.transport !== 'stdio').map((s) => host.close(s.id)));
      server.closeAllConnections();
    },
  };
}

/** One warning per burst of refused connections (connection-gate.ts). */
function logRefusal(logger: Logger, report: RefusalReport): void {
  if (report.kind === 'refused') logger.log('warning', `connection refused: too many ${report.refusal.limit} (503); more refusals are counted, not logged each`, { address: report.address, limit: report.refusal.max });
  else logger.log('warning', 'more connections refused', { count: report.count, seconds: report.windowMs / 1000 });
}

/** An IncomingMessage as Streamable HTTP reads it, its body held to the node's `bodies` budget. */
function nodeView(req: IncomingMessage, bodies: OutputBudget, logger: Logger): IncomingView {
  return {
    method: req.method ?? 'GET',
    header: (name) => {
      const v = req.headers[name];
      return Array.isArray(v) ? v[0] : v;
    },
    body: (limit) => readBody(req, limit, bodies, logger),
  };
}

/**
 * The body as text, or null as soon as it passes `limit` bytes: nothing past the limit is kept, and the
 * rest is read and dropped rather than the socket destroyed, so the client still gets its 413. What is
 * kept counts against the node's `bodies` budget until the body ends (or its request does): past the
 * budget the largest body in progress is dropped, its promise rejected with BodyDropped (a 503).
 */
function readBody(req: IncomingMessage, limit: number, bodies: OutputBudget, logger: Logger): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    const held = bodies.open({
      measure: () => (over ? 0 : size),
      evict: ({ bytes, limit: budget }) => {
        over = true;
        chunks.length = 0;
        logger.log('warning', 'POST body dropped: the bodies being read reached the node\'s budget', { address: req.socket.remoteAddress, bytes, limit: budget });
        reject(new BodyDropped(`the request bodies this node is reading reached MAX_NODE_REQUEST_BODY_BYTES (${budget} bytes, --max-node-request-body-bytes), and this one held the most (${bytes} bytes)`));
      },
    });
    req.once('close', () => held.close());
    req.on('data', (c: Buffer) => {
      if (over) return;
      size += c.length;
      if (size <= limit) {
        chunks.push(c);
        return void held.note();
      }
      over = true;
      chunks.length = 0;
      held.close();
      resolve(null);
    });
    req.on('end', () => {
      held.close();
      if (!over) resolve(chunks.length === 1 ? (chunks[0] as Buffer).toString('utf8') : Buffer.concat(chunks).toString('utf8'));
    });
    // The client went before its body ended (node:http's "aborted"): nobody to answer, nothing to log as a failure.
    req.on('error', (err: NodeJS.ErrnoException) => {
      held.close();
      logger.log('debug', 'POST body not ended: its connection closed first', { address: req.socket.remoteAddress, bytes: size, code: err.code ?? err.message });
      reject(new BodyDropped('the connection closed before the body ended'));
    });
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

/**
 * The path of a request target: origin-form (`/mcp?x`) without parsing a URL, any other form through
 * URL; null when it is not a URL (`http://`, `http://[`): the caller's mistake, a 400.
 */
export function pathOf(target: string | undefined): string | null {
  if (target === undefined) return '/';
  if (!target.startsWith('/')) return URL.canParse(target, 'http://localhost') ? new URL(target, 'http://localhost').pathname : null;
  const q = target.indexOf('?');
  return q === -1 ? target : target.slice(0, q);
}

/** A whole HTTP/1.1 reply with no body, written on a socket node:http no longer answers on. */
function bareStatus(status: number, text: string): string {
  return `HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`;
}
