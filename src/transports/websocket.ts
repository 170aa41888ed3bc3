// MCP over WebSocket (subprotocol `mcp`) on the same port and path as Streamable HTTP: one socket, one
// session of the server's registry (`SessionHost`), one JSON-RPC message per text frame. The upgrade is
// admitted with the same Host/Origin, bearer-token and door-scope checks as a POST (a token without
// `mcp:read` is the 403 insufficient_scope, and takes nothing), and takes its quota slot before
// the handshake; the socket closing ends the session, and the session ending closes the socket. Reading
// stops while the session's unhandled input or the socket's unread output is over budget (socket-flow.ts).

import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { guarded } from '../log/guarded.ts';
import { ErrorCode, errorLine } from '../mcp/jsonrpc.ts';
import type { Principal } from '../mcp/state.ts';
import { type Admitted, BearerAuthority, isAuthRefusal } from '../auth/bearer-authority.ts';
import { scopeRefusal } from './scoped-frames.ts';
import { onTokenExpiry } from './token-expiry.ts';
import { checkHostAndOrigin } from './origin.ts';
import { type HostedSession, isRefusal, type SessionSlot } from './session-host.ts';
import { SendTimeout } from './send-timeout.ts';
import type { OutputBudget } from './output-budget.ts';
import { principalName, webSocketBacklog } from './backlog-sources.ts';
import { type FlowEvent, type FlowLimits, SocketFlow } from './socket-flow.ts';
import type { StreamableHttpOptions } from './streamable-http.ts';
import { HTTP_SEND_TIMEOUT_MS, MAX_INPUT_BACKLOG_BYTES, MAX_OUTPUT_BACKLOG_BYTES, WS_EARLY_FRAMES, WS_OUTPUT_PAUSE_BYTES, WS_PING_INTERVAL_MS } from '../limits.ts';

/** How the transport tells a live client from a dead or stalled one. */
export interface Liveness {
  /** A socket whose client takes none of its queued output this long is closed (`--send-timeout`). Default HTTP_SEND_TIMEOUT_MS. */
  readonly sendTimeoutMs: number;
  /** A ping this often; an idle socket that missed a pong is closed. Default WS_PING_INTERVAL_MS. */
  readonly pingIntervalMs: number;
}

/** The same admission and limits as Streamable HTTP on the same port, the socket's flow budgets and its liveness. */
export type WebSocketTransportOptions = StreamableHttpOptions & Partial<FlowLimits> & Partial<Liveness> & { readonly outputBudget?: OutputBudget };

export class WebSocketTransport {
  readonly #options: WebSocketTransportOptions;
  readonly #wss: WebSocketServer;
  readonly #sockets = new Set<WebSocket>();
  /** Each open session's socket, by the session's id: the idle reaper closes it saying why. */
  readonly #bySession = new Map<string, WebSocket>();
  readonly #limits: FlowLimits;
  readonly #liveness: Liveness;
  /** Every socket's output: one whose client takes none of it for the send timeout is destroyed. */
  readonly #sendTimeout: SendTimeout;
  #accepting = true;
  readonly #auth: BearerAuthority;

  constructor(options: WebSocketTransportOptions) {
    this.#options = options;
    this.#auth = options.auth ?? new BearerAuthority({ tokens: options.tokens, requireAuth: options.requireAuth, logger: options.logger });
    this.#limits = {
      maxInputBacklogBytes: options.maxInputBacklogBytes ?? MAX_INPUT_BACKLOG_BYTES,
      outputPauseBytes: options.outputPauseBytes ?? WS_OUTPUT_PAUSE_BYTES,
      maxOutputBacklogBytes: options.maxOutputBacklogBytes ?? MAX_OUTPUT_BACKLOG_BYTES,
    };
    this.#liveness = { sendTimeoutMs: options.sendTimeoutMs ?? HTTP_SEND_TIMEOUT_MS, pingIntervalMs: options.pingIntervalMs ?? WS_PING_INTERVAL_MS };
    this.#sendTimeout = new SendTimeout(options.sessions.clock, (bytes) => {
      options.logger.log('warning', 'WebSocket closed: its client took none of its output for the send timeout', { bytes, limit: this.#liveness.sendTimeoutMs });
    }, this.#liveness.sendTimeoutMs);
    this.#wss = new WebSocketServer({
      noServer: true,
      maxPayload: options.maxMessageBytes,
      handleProtocols: (protocols) => (protocols.has('mcp') ? 'mcp' : false),
    });
  }

  /** New sockets are refused with 503 from now on. */
  stopAccepting(): void {
    this.#accepting = false;
  }

  /** An HTTP upgrade request to `/mcp` (the adapter has checked the path). */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const reject = (status: number, text: string, headers: Readonly<Record<string, string>> = {}) => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}Connection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    catchSocketErrors(socket);
    if (checkHostAndOrigin(this.#options.origin, req.headers.host, req.headers.origin)) return reject(403, 'Forbidden');
    void this.#auth.admitMcp(req.headers.authorization).then(guarded(this.#options.logger, 'WebSocket admission', (admitted: Admitted | ReturnType<BearerAuthority['insufficientScope']>) => {
      if (isAuthRefusal(admitted)) return reject(admitted.status, STATUS_TEXT.get(admitted.status) ?? 'Unauthorized', admitted.headers);
      this.#upgrade(req, socket, head, admitted, reject);
    }, () => reject(500, 'Internal Server Error')), () => reject(500, 'Internal Server Error'));
  }

  #upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, admitted: Admitted, reject: (status: number, text: string, headers?: Readonly<Record<string, string>>) => void): void {
    const { principal } = admitted;
    // The client went while its token was checked: its 'close' has come, so a slot taken now would never
    // be given back.
    if (socket.destroyed) return;
    if (!this.#accepting) return reject(503, 'Service Unavailable');
    const offered = String(req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
    if (!offered.includes('mcp')) return reject(400, 'Bad Request');
    const slot = this.#options.sessions.reserve(principal);
    if (isRefusal(slot)) return reject(slot.status, slot.status === 429 ? 'Too Many Requests' : 'Service Unavailable', slot.headers);
    // The slot is the socket's from here: given back when the socket closes, upgraded or not (and by the
    // registry when the session ends: giving it back twice gives back one).
    socket.once('close', guarded(this.#options.logger, 'WebSocket upgrade close', () => slot.release()));
    // The session is served from a callback of `ws`: a failure closes the socket with 1011.
    this.#wss.handleUpgrade(req, socket, head, guarded(this.#options.logger, 'WebSocket session', (ws: WebSocket) => {
      // The WebSocket listens for the socket's errors from here.
      socket.off('error', dropSocket);
      this.#sendTimeout.watch(socket as Socket);
      return this.#serve(ws, principal, slot, admitted);
    }, serverFault));
  }

  /** Closes every socket (the server is shutting down); their sessions end with them. */
  closeAll(code: number, reason: string): void {
    for (const ws of this.#sockets) ws.close(code, reason);
    this.#sendTimeout.stop();
  }

  /**
   * The session has been idle past `idleMs` (session-reaper.ts: nothing in flight, nothing subscribed,
   * no message): its socket is closed with 1001 saying so, and the session ends now, its slot given back
   * without waiting for the client to answer the close.
   */
  endIdle(session: HostedSession, idleMs: number): void {
    const ws = this.#bySession.get(session.id);
    this.#options.logger.log('info', 'WebSocket session closed: idle past the session idle limit', { session: session.id, limit: idleMs });
    ws?.close(1001, `idle: no message for ${Math.round(idleMs / 1000)} s and nothing in flight (--session-idle)`);
    void this.#options.sessions.close(session.id);
  }

  async #serve(ws: WebSocket, principal: Principal, slot: SessionSlot, admitted: Admitted): Promise<void> {
    const { sessions, logger } = this.#options;
    this.#sockets.add(ws);
    // A socket lives as long as its access token: at `exp` it is closed, and the client reconnects with a fresh one.
    const expiry = admitted.expiresAt === undefined ? null : onTokenExpiry(admitted.expiresAt, () => ws.close(1008, 'the access token expired; reconnect with a fresh one'));
    // Listen before the session exists: `ws` drops messages nobody listens to, and a client sends its
    // initialize as soon as the socket opens. Frames that arrive while the session opens wait here.
    let session: HostedSession | null = null;
    const early: string[] = [];
    let closed = false;
    let sessionId: string | null = null;
    const flow = new SocketFlow(ws, this.#limits, (event: FlowEvent) => {
      if (event.kind === 'overflow') logger.log('warning', 'WebSocket closed: its client left too much output unread', { session: sessionId, bytes: event.bytes, limit: this.#limits.maxOutputBacklogBytes });
      else logger.log('debug', `WebSocket reading ${event.kind}`, { session: sessionId, ...event });
    }, webSocketBacklog(this.#options.outputBudget, ws, logger, () => ({ session: sessionId, principal: principalName(principal) })));
    ws.on('message', guarded(logger, 'WebSocket message', (data: RawData, isBinary: boolean) => {
      if (isBinary) {
        flow.send(errorLine(null, ErrorCode.InvalidRequest, 'Invalid request: send JSON-RPC messages as text frames'));
        return;
      }
      const refused = scopeRefusal(data.toString(), admitted.capabilities, this.#auth);
      if (refused !== null) {
        flow.send(refused);
        return;
      }
      if (session) {
        session.touch();
        session.deliver({ kind: 'line', text: data.toString() });
        flow.delivered();
      } else if (early.length < WS_EARLY_FRAMES) {
        const text = data.toString();
        early.push(text);
        flow.held(text.length);
      } else {
        ws.close(1013, `more than ${WS_EARLY_FRAMES} messages before the session opened; try again later`);
      }
    }, () => serverFault(null, ws)));
    let alive = true;
    let backlogAt = Number.NEGATIVE_INFINITY;
    const { sendTimeoutMs, pingIntervalMs } = this.#liveness;
    ws.on('pong', () => (alive = true));
    const ping = setInterval(() => {
      // A pong waits behind the output queued before its ping, in the process and then in the kernel's
      // buffers, and a paused socket's pong waits unread. So while output is or lately was queued, a slow
      // reader that still takes some is alive however long its pong takes: the send timeout judges it
      // (a client that takes none of its output for that long is destroyed), for as long again after the
      // last backlog, so the tail the kernel holds can be read. The pong judges an idle socket only.
      const now = this.#options.sessions.clock.now();
      if (flow.backlogged()) backlogAt = now;
      if (now - backlogAt < sendTimeoutMs || (flow.paused && flow.progressed())) alive = true;
      if (!alive) return ws.terminate();
      alive = false;
      ws.ping();
    }, pingIntervalMs);
    ping.unref();
    ws.on('close', guarded(logger, 'WebSocket close', () => {
      closed = true;
      clearInterval(ping);
      expiry?.cancel();
      this.#sockets.delete(ws);
      if (session) {
        this.#bySession.delete(session.id);
        return sessions.close(session.id);
      }
    }));
    ws.on('error', guarded(logger, 'WebSocket error', (err: Error) => logger.log('warning', 'WebSocket error', { error: err.message })));
    let opened: HostedSession;
    try {
      opened = await sessions.open({
        principal,
        transport: 'websocket',
        slot,
        send: (out) => flow.send(out.line),
        // Its requests have been answered with why (the frames are queued ahead of the close).
        onGiveUp: () => ws.close(1011, 'the session was given up: its actor kept crashing; open a new one'),
        // Whatever else ended the session (the server shutting down): the socket goes with it.
        onEnded: () => ws.close(1001, 'the session ended'),
        // A subscribed client waits on this socket for its updates: the idle reaper spares it.
        busy: watchedFor,
      });
    } catch (err) {
      logger.log('error', 'could not open a WebSocket session', { error: (err as Error).message });
      ws.close(1011, 'the server could not open a session');
      return;
    }
    if (closed) {
      void sessions.close(opened.id);
      return;
    }
    session = opened;
    sessionId = opened.id;
    this.#bySession.set(opened.id, ws);
    for (const text of early.splice(0)) opened.deliver({ kind: 'line', text });
    flow.attach(opened);
  }
}

const watchedFor = (session: HostedSession): boolean => session.watching();

const STATUS_TEXT = new Map<number, string>([[401, 'Unauthorized'], [403, 'Forbidden'], [431, 'Request Header Fields Too Large'], [503, 'Service Unavailable']]);

/**
 * An upgrade request's socket, from its 'upgrade' event to the handshake: node:http has taken its own
 * 'error' listener off it and `ws` adds one only at the handshake, so a reset meanwhile (while a refusal
 * is written, or the token is checked, a round trip to its issuer) was an uncaught error that ended the
 * process. It is destroyed instead, and its 'close' gives back what it held.
 */
export function catchSocketErrors(socket: Duplex): void {
  if (!socket.listeners('error').includes(dropSocket)) socket.on('error', dropSocket);
}

function dropSocket(this: Duplex): void {
  this.destroy();
}

/** A failure of ours on an open socket: closed with 1011 (internal error), the client may reconnect. */
function serverFault(_error: unknown, ws: WebSocket): void {
  if (ws.readyState === ws.OPEN) ws.close(1011, 'internal error');
}
