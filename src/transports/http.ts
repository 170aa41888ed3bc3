// Streamable HTTP (MCP 2025-06-18) and WebSocket on one port and one path, `/mcp`, plus `/health`.
// The transport frames and moves bytes, checks Host/Origin, the protocol header and the bearer token,
// and maps sessions. It reads each POST once with the core's own reader (mcp/frame.ts) — so that what the
// core could only answer with id null is answered on its POST, and each request id maps to one POST — and
// hands that reading on with the message; it never interprets a method beyond initialize (opens a
// session) and tools/call (may stream). Replies are routed by what the core says they answer.

import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import type { TokenTable } from '../auth/tokens.ts';
import { type ReadFrame, readParsed } from '../mcp/frame.ts';
import { type Classified, ErrorCode, errorLine, idKey } from '../mcp/jsonrpc.ts';
import { nestsDeeperThan } from '../mcp/limits.ts';
import type { Outgoing } from '../mcp/outgoing.ts';
import type { Principal } from '../mcp/state.ts';
import { isSupportedVersion, negotiateVersion, versionFeatures } from '../mcp/version.ts';
import { isLoopbackHost } from '../observer/observer-access.ts';
import { ObserverRoutes } from '../observer/observer-http.ts';
import type { Application } from '../server/application.ts';
import type { Logger } from '../log/logger.ts';
import type { Session } from '../connection/session.ts';
import { Exchange, HttpSession } from './http-session.ts';
import { checkHostAndOrigin, type OriginPolicy } from './origin.ts';
import { DEFAULT_MAX_ANONYMOUS_SESSIONS, DEFAULT_MAX_SESSIONS, DEFAULT_MAX_SESSIONS_PER_PRINCIPAL, SessionQuota } from './session-quota.ts';
import { SseStream } from './sse-stream.ts';
import { MAX_BATCH_LENGTH, MAX_JSON_DEPTH } from '../limits.ts';

/** Idle HTTP sessions (no request, no open stream) are closed after this long. */
export const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;
export { DEFAULT_MAX_SESSIONS } from './session-quota.ts';
/**
 * How long an idle keep-alive connection stays open (Node's default is 5 s). A client that reuses a
 * connection just as the server closes it gets "other side closed" for a request the server never saw
 * (undici's fetch, under load, did: test/e2e/many-clients.test.ts); a longer timeout than the clients'
 * own (undici keeps one 4 s by default; load balancers up to 60 s) leaves the closing to the client.
 */
export const HTTP_KEEP_ALIVE_MS = 65_000;
/** WebSocket ping interval; a socket that missed one pong is closed. */
export const WS_PING_INTERVAL_MS = 30_000;
/** The version assumed when a request has no MCP-Protocol-Version header (as the spec says). */
const ASSUMED_VERSION = '2025-03-26';

export interface HttpServerOptions {
  readonly host: string;
  readonly port: number;
  readonly app: Application;
  readonly logger: Logger;
  readonly tokens: TokenTable;
  readonly requireAuth: boolean;
  readonly origin: OriginPolicy;
  readonly maxMessageBytes: number;
  readonly sessionIdleMs?: number;
  readonly maxSessions?: number;
  readonly maxSessionsPerPrincipal?: number;
  readonly maxAnonymousSessions?: number;
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
  const sessions = new Map<string, HttpSession>();
  const sockets = new Set<WebSocket>();
  const { app, logger } = options;
  const quota = new SessionQuota({
    maxSessions: options.maxSessions ?? DEFAULT_MAX_SESSIONS,
    maxSessionsPerPrincipal: options.maxSessionsPerPrincipal ?? DEFAULT_MAX_SESSIONS_PER_PRINCIPAL,
    maxAnonymousSessions: options.maxAnonymousSessions ?? DEFAULT_MAX_ANONYMOUS_SESSIONS,
    tokensConfigured: options.tokens.size > 0,
  });
  // Who sees session and actor counts on /health: everyone on a server with neither tokens nor
  // --require-auth (a loopback server for its own user); else only callers with a valid token.
  const healthIsPublic = options.tokens.size === 0 && !options.requireAuth;
  const idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
  const observerRoutes = new ObserverRoutes({
    observer: app.observer, tokens: options.tokens, origin: options.origin,
    access: { loopback: isLoopbackHost(options.host), tokensConfigured: options.tokens.size > 0, requireAuth: options.requireAuth, observers: new Set(options.observers ?? []) },
  });
  let accepting = true;

  const total = () => sessions.size + sockets.size;

  const refuse = (res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
    res.end(errorLine(null, ErrorCode.InvalidRequest, message));
  };

  /** Host/Origin and bearer token; null when the request was refused (and answered). */
  const admit = (req: IncomingMessage, res: ServerResponse): Principal | null => {
    const bad = checkHostAndOrigin(options.origin, req.headers.host, req.headers.origin);
    if (bad) {
      refuse(res, 403, `Forbidden: ${bad}`);
      return null;
    }
    const principal = options.tokens.resolve(req.headers.authorization);
    if (principal === null || (options.requireAuth && principal.kind === 'anonymous')) {
      refuse(res, 401, principal === null ? 'Unauthorized: unknown bearer token' : 'Unauthorized: a bearer token is required', {
        'WWW-Authenticate': 'Bearer realm="super-pi"',
      });
      return null;
    }
    return principal;
  };

  const lookup = (req: IncomingMessage, res: ServerResponse, principal: Principal): HttpSession | null => {
    const id = header(req, 'mcp-session-id');
    if (!id) {
      refuse(res, 400, 'Bad Request: Mcp-Session-Id header is required (send initialize first to get one)');
      return null;
    }
    const s = sessions.get(id);
    // Another principal's session is indistinguishable from one that does not exist.
    if (!s || !samePrincipal(s.principal, principal)) {
      refuse(res, 404, 'Not Found: unknown or ended session; initialize a new one');
      return null;
    }
    const version = header(req, 'mcp-protocol-version') ?? ASSUMED_VERSION;
    if (!isSupportedVersion(version)) {
      refuse(res, 400, `Bad Request: unsupported MCP-Protocol-Version "${version}"`);
      return null;
    }
    s.lastSeen = Date.now();
    return s;
  };

  const post = async (req: IncomingMessage, res: ServerResponse, principal: Principal) => {
    const accept = req.headers.accept ?? '';
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
      refuse(res, 406, 'Not Acceptable: Accept must list application/json and text/event-stream');
      return;
    }
    if (!(req.headers['content-type'] ?? '').includes('application/json')) {
      refuse(res, 415, 'Unsupported Media Type: Content-Type must be application/json');
      return;
    }
    const body = await readBody(req, options.maxMessageBytes);
    if (body === null) {
      refuse(res, 413, `Payload Too Large: the limit is ${options.maxMessageBytes} bytes (--max-message-bytes)`);
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (err) {
      res.writeHead(400, { 'Content-Type': 'application/json' });
      res.end(errorLine(null, ErrorCode.ParseError, `Parse error: ${(err as Error).message}`));
      return;
    }
    const batch = Array.isArray(parsed);
    const shape = messagesOf(parsed);
    if ('refusal' in shape) {
      res.writeHead(400, { 'Content-Type': 'application/json' });
      res.end(shape.refusal);
      return;
    }
    const { messages, raw } = shape;
    // initialize opens a session only when the POST names none; with one, it goes to that session's core,
    // which refuses it as it would on stdio ("already initialized") and leaves the session as it was.
    const opening = header(req, 'mcp-session-id') === undefined && messages.some((m) => m.kind === 'request' && m.method === 'initialize');
    if (opening && batch) return refuseBody(res, 'Invalid request: JSON-RPC batch arrays are not accepted before initialize; send initialize alone');
    let s: HttpSession | null;
    if (opening) {
      if (!accepting) return refuse(res, 503, 'Service Unavailable: the server is shutting down');
      const refused = quota.acquire(principal);
      if (refused) return refuse(res, refused.status, refused.message);
      const id = randomUUID();
      let session: Session;
      try {
        // Given up (its actor kept crashing): its requests have been answered with why; its id now answers 404.
        session = await app.openSession({ send: routeTo(sessions, id), principal, transport: 'http', onGiveUp: () => { const given = sessions.get(id); if (given) void end(given); } });
      } catch (err) {
        quota.release(principal);
        throw err;
      }
      const init = messages.find((m) => m.kind === 'request' && m.method === 'initialize') as Extract<Classified, { kind: 'request' }>;
      s = new HttpSession(id, principal, session, negotiateVersion(init.params.protocolVersion));
      sessions.set(id, s);
    } else {
      s = lookup(req, res, principal);
      if (!s) return;
      if (batch && !versionFeatures(s.version).batches) {
        return refuseBody(res, `Invalid request: JSON-RPC batch arrays are not accepted in ${s.version}; send one message per POST`);
      }
    }
    const session = s;
    // Each request id is in flight on one POST at a time: a reused one is answered here, on this POST,
    // and never reaches the core, so the request already using it (and its POST) is untouched.
    const requests = new Set<string>();
    const delivered: (string | number)[] = [];
    const refusedHere: string[] = [];
    let toolCall = false;
    /** Each message that goes on, as the session's reading of a frame of its own. */
    const deliver: ReadFrame[] = [];
    for (const [i, m] of messages.entries()) {
      if (m.kind === 'request') {
        const key = idKey(m.id);
        if (requests.has(key) || session.inFlight(key)) {
          refusedHere.push(errorLine(m.id, ErrorCode.InvalidRequest, `Invalid request: id ${JSON.stringify(m.id)} is already used in this session by a request in flight (or by one whose POST closed before its answer); use a new id`));
          continue;
        }
        requests.add(key);
        delivered.push(m.id);
        if (m.method === 'tools/call') toolCall = true;
      }
      deliver.push({ batch: false, messages: [m], values: [raw[i]] });
    }
    const toCore = () => {
      // A batch reaches the core one message at a time (the core would handle it so, in order): the ids
      // refused here are simply left out, and each message is its own turn of the session's actor.
      if (!batch) {
        if (deliver.length === 1) session.session.receiveFrame({ kind: 'line', text: body }, deliver[0]);
        return;
      }
      for (const m of deliver) session.session.receiveFrame({ kind: 'line', text: JSON.stringify(m.values[0]) }, m);
    };
    if (requests.size === 0) {
      toCore();
      if (refusedHere.length === 0) {
        res.writeHead(202).end();
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json', ...session.replyHeaders });
      res.end(batch ? `[${refusedHere.join(',')}]` : refusedHere[0]);
      return;
    }
    // Tool calls may stream progress and questions to the person, so their reply may become SSE; the rest plain JSON.
    const exchange = new Exchange(res, requests, toolCall ? 'sse' : 'json', batch, session.replyHeaders, session.events, refusedHere);
    session.addExchange(exchange);
    res.on('close', () => {
      if (exchange.finished) return;
      exchange.abandon();
      session.removeExchange(exchange);
      // The client went away mid-request: cancel what it was waiting for (only what this POST sent).
      for (const id of delivered) {
        session.session.receiveFrame({ kind: 'line', text: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'the HTTP client disconnected' } }) });
      }
    });
    // A refused initialize leaves no session behind.
    if (opening) exchange.onDone((answers) => { if (answers.every((a) => a.isError === true)) void end(session); });
    toCore();
  };

  /** A body the transport will not pass on: 400, with a JSON-RPC error saying why. */
  const refuseBody = (res: ServerResponse, message: string) => {
    res.writeHead(400, { 'Content-Type': 'application/json' });
    res.end(errorLine(null, ErrorCode.InvalidRequest, message));
  };

  const get = (req: IncomingMessage, res: ServerResponse, principal: Principal) => {
    if (!String(req.headers.accept ?? '').includes('text/event-stream')) {
      refuse(res, 406, 'Not Acceptable: GET /mcp opens an event stream; Accept must list text/event-stream');
      return;
    }
    const s = lookup(req, res, principal);
    if (!s) return;
    const stream = new SseStream(res, { 'Mcp-Session-Id': s.id });
    const last = header(req, 'last-event-id');
    if (last) for (const e of s.events.after(last) ?? []) stream.send(e.id, e.data);
    s.addStandalone(stream);
    res.on('close', () => s.removeStandalone(stream));
  };

  const end = async (s: HttpSession) => {
    if (!sessions.delete(s.id)) return;
    quota.release(s.principal);
    s.closeStreams();
    await app.closeSession(s.session);
  };

  const server: Server = createServer((req, res) => {
    const pathname = pathOf(req.url);
    if (pathname === '/health' && req.method === 'GET') {
      const bad = checkHostAndOrigin(options.origin, req.headers.host, req.headers.origin);
      if (bad) return refuse(res, 403, `Forbidden: ${bad}`);
      const health = app.health();
      res.writeHead(200, { 'Content-Type': 'application/json' });
      // How busy the server is tells one caller about the others: only to callers the operator knows.
      if (!healthIsPublic && options.tokens.resolve(req.headers.authorization)?.kind !== 'token') return void res.end(JSON.stringify({ status: health.status }));
      res.end(JSON.stringify({ ...health, httpSessions: sessions.size, webSockets: sockets.size }));
      return;
    }
    if (observerRoutes.handle(req, res, pathname)) return;
    if (pathname !== '/mcp') return refuse(res, 404, 'Not Found: the MCP endpoint is /mcp');
    const principal = admit(req, res);
    if (!principal) return;
    const fail = (err: unknown) => {
      logger.log('error', 'HTTP request failed', { method: req.method, error: (err as Error).stack ?? String(err) });
      if (!res.headersSent) refuse(res, 500, 'Internal Server Error');
      else res.end();
    };
    switch (req.method) {
      case 'POST': return void post(req, res, principal).catch(fail);
      case 'GET': return get(req, res, principal);
      case 'DELETE': {
        const s = lookup(req, res, principal);
        if (!s) return;
        void end(s).then(() => res.writeHead(200).end(), fail);
        return;
      }
      default:
        res.writeHead(405, { Allow: 'GET, POST, DELETE' }).end();
    }
  });

  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxMessageBytes,
    handleProtocols: (protocols) => (protocols.has('mcp') ? 'mcp' : false),
  });

  server.keepAliveTimeout = HTTP_KEEP_ALIVE_MS;
  // Node's rule: the time allowed for a request's headers must exceed the keep-alive timeout.
  server.headersTimeout = HTTP_KEEP_ALIVE_MS + 1000;
  server.on('upgrade', (req, socket, head) => {
    const reject = (status: number, text: string) => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    if (pathOf(req.url) !== '/mcp') return reject(404, 'Not Found');
    if (checkHostAndOrigin(options.origin, req.headers.host, req.headers.origin)) return reject(403, 'Forbidden');
    const principal = options.tokens.resolve(req.headers.authorization);
    if (principal === null || (options.requireAuth && principal.kind === 'anonymous')) return reject(401, 'Unauthorized');
    if (!accepting) return reject(503, 'Service Unavailable');
    const offered = String(req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
    if (!offered.includes('mcp')) return reject(400, 'Bad Request');
    const refused = quota.acquire(principal);
    if (refused) return reject(refused.status, refused.status === 429 ? 'Too Many Requests' : 'Service Unavailable');
    // The slot is the socket's from here: given back when the socket closes, upgraded or not.
    socket.once('close', () => quota.release(principal));
    wss.handleUpgrade(req, socket, head, (ws) => void serveSocket(ws, principal));
  });

  /** Frames a WebSocket may send while its session is still opening (they are held, then handled in order). */
  const WS_EARLY_FRAMES = 1000;

  const serveSocket = async (ws: WebSocket, principal: Principal) => {
    sockets.add(ws);
    // Listen before the session exists: `ws` drops messages nobody listens to, and a client sends its
    // initialize as soon as the socket opens. Frames that arrive while the session opens wait here.
    let session: Session | null = null;
    const early: string[] = [];
    let closed = false;
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        ws.send(errorLine(null, ErrorCode.InvalidRequest, 'Invalid request: send JSON-RPC messages as text frames'));
        return;
      }
      if (session) session.receiveFrame({ kind: 'line', text: data.toString() });
      else if (early.length < WS_EARLY_FRAMES) early.push(data.toString());
      else ws.close(1013, `more than ${WS_EARLY_FRAMES} messages before the session opened; try again later`);
    });
    let alive = true;
    ws.on('pong', () => (alive = true));
    const ping = setInterval(() => {
      if (!alive) return ws.terminate();
      alive = false;
      ws.ping();
    }, WS_PING_INTERVAL_MS);
    ping.unref();
    ws.on('close', () => {
      closed = true;
      clearInterval(ping);
      sockets.delete(ws);
      if (session) void app.closeSession(session);
    });
    ws.on('error', (err) => logger.log('warning', 'WebSocket error', { error: err.message }));
    let opened: Session;
    try {
      opened = await app.openSession({
        send: (out) => ws.readyState === ws.OPEN && ws.send(out.line),
        principal,
        transport: 'websocket',
        // Its requests have been answered with why (the frames are queued ahead of the close).
        onGiveUp: () => ws.close(1011, 'the session was given up: its actor kept crashing; open a new one'),
      });
    } catch (err) {
      logger.log('error', 'could not open a WebSocket session', { error: (err as Error).message });
      ws.close(1011, 'the server could not open a session');
      return;
    }
    if (closed) {
      void app.closeSession(opened);
      return;
    }
    session = opened;
    for (const text of early.splice(0)) opened.receiveFrame({ kind: 'line', text });
  };

  const reaper = setInterval(() => {
    const now = Date.now();
    for (const s of sessions.values()) if (!s.busy && now - s.lastSeen > idleMs) void end(s);
  }, Math.min(60_000, idleMs));
  reaper.unref();

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${shownHost}:${port}/mcp`,
    port,
    sessions: total,
    async close(graceMs = 5000) {
      accepting = false;
      clearInterval(reaper);
      observerRoutes.close();
      server.close();
      const deadline = Date.now() + graceMs;
      while (Date.now() < deadline && [...sessions.values()].some((s) => s.session.inFlight > 0)) await new Promise((r) => setTimeout(r, 50));
      await Promise.all([...sessions.values()].map(end));
      for (const ws of sockets) ws.close(1001, 'server shutting down');
      server.closeAllConnections();
    },
  };
}

/**
 * The session's `send`, built outside `post()`: a closure made there would share its context and keep
 * the initialize request, its response and body alive for the whole session (~2-3 KB each, measured).
 */
function routeTo(sessions: ReadonlyMap<string, HttpSession>, id: string): (out: Outgoing) => void {
  return (out) => sessions.get(id)?.route(out);
}

/** The path of a request target: origin-form (`/mcp?x`) without parsing a URL, absolute-form through URL. */
function pathOf(target: string | undefined): string {
  if (target === undefined) return '/';
  if (!target.startsWith('/')) return new URL(target, 'http://localhost').pathname;
  const q = target.indexOf('?');
  return q === -1 ? target : target.slice(0, q);
}

/**
 * The messages of a POST body, each classified as the core classifies it, or the 400 body that refuses
 * the whole POST. A POST must be one JSON-RPC object or a non-empty batch of at most MAX_BATCH_LENGTH
 * objects, every one of them a valid message: whatever the core could only answer with an error whose id
 * is null is answered here, on the POST that sent it, and the core never sees any of that POST.
 */
function messagesOf(parsed: unknown): { messages: readonly Classified[]; raw: readonly unknown[] } | { refusal: string } {
  const batch = Array.isArray(parsed);
  const raw: unknown[] = batch ? parsed : [parsed];
  if (batch && raw.length === 0) return { refusal: errorLine(null, ErrorCode.InvalidRequest, 'Invalid request: an empty batch') };
  if (raw.length > MAX_BATCH_LENGTH) {
    return { refusal: errorLine(null, ErrorCode.InvalidRequest, `Invalid request: a batch of ${raw.length} messages exceeds MAX_BATCH_LENGTH (${MAX_BATCH_LENGTH}); send at most ${MAX_BATCH_LENGTH} per batch`) };
  }
  // Batch elements are handed on re-serialised, and a recursive JSON.stringify must never meet a value
  // deep enough to overflow; the core refuses anything this deep anyway (a single message reaches it as
  // the body's own text, and is refused there with its id).
  if (batch && raw.some((m) => nestsDeeperThan(m, MAX_JSON_DEPTH))) {
    return { refusal: errorLine(null, ErrorCode.InvalidRequest, `Invalid request: a batch element nests deeper than MAX_JSON_DEPTH (${MAX_JSON_DEPTH}) levels (nothing in this batch was run)`) };
  }
  const { messages } = readParsed(parsed);
  const invalid = messages.filter((m): m is Extract<Classified, { kind: 'invalid' }> => m.kind === 'invalid');
  if (invalid.length === 0) return { messages, raw };
  const errors = invalid.map((m) => errorLine(m.id, ErrorCode.InvalidRequest, `Invalid request: ${m.reason}${batch ? ' (nothing in this batch was run)' : ''}`));
  return { refusal: batch ? `[${errors.join(',')}]` : (errors[0] as string) };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function samePrincipal(a: Principal, b: Principal): boolean {
  if (a.kind !== b.kind) return false;
  return a.kind !== 'token' || (b.kind === 'token' && a.name === b.name);
}

/** Resolves with the body, or null when it passes `limit` bytes (the rest is discarded). */
function readBody(req: IncomingMessage, limit: number): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) over = true;
      else chunks.push(c);
    });
    req.on('end', () => resolve(over ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
