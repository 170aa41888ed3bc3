// Streamable HTTP (MCP 2025-06-18): POST, GET and DELETE of `/mcp`, served to a web-standard `Request`
// with a `Response` (`handle`), or to any request that can name its headers and read its body with a
// reply written as a ServerResponse writes (`serve`: what the node:http adapter uses, so a POST on the
// hot path builds no Request, AbortSignal, body stream or Response — measured, those cost more than the
// rest of a small call).
// It checks Host/Origin, the bearer token, the protocol version header and the body's size, and maps
// sessions through the server's registry (`SessionHost`): an unknown id, or another principal's, is 404.
// It reads each POST once with the core's own reader (mcp/frame.ts) — so that what the core could only
// answer with id null is answered on its POST, and each request id maps to one POST — and hands that
// reading on with the message; it never interprets a method beyond initialize (opens a session) and
// tools/call (may stream). Replies are routed by what the core says they answer (http-session.ts).
// The node:http adapter (http.ts) passes an IncomingMessage as an `IncomingView` and its ServerResponse
// as the `ReplyTarget`.

import { guarded } from '../log/guarded.ts';
import type { TokenTable } from '../auth/tokens.ts';
import { type Admitted, BearerAuthority, isAuthRefusal } from '../auth/bearer-authority.ts';
import { capabilityOf } from '../auth/scopes.ts';
import type { Logger } from '../log/logger.ts';
import { FORWARDED_BY_HEADER } from '../cluster/forward.ts';
import { storedVersion } from '../cluster/rehydrate.ts';
import type { ClusterSessions, TakenOver } from '../cluster/session-locator.ts';
import { messageText, type ReadFrame } from '../mcp/frame.ts';
import { type Classified, ErrorCode, errorLine, idKey } from '../mcp/jsonrpc.ts';
import { parseMessageText } from '../mcp/meta-cache.ts';
import type { Principal } from '../mcp/state.ts';
import { isSupportedVersion, negotiateVersion, versionFeatures } from '../mcp/version.ts';
import { isModernRequest } from '../mcp/era.ts';
import { modernHttpStatus, refuseModernMessages } from './modern-headers.ts';
import { Exchange, HttpSession } from './http-session.ts';
import { checkHostAndOrigin, type OriginPolicy } from './origin.ts';
import { type HostedSession, isRefusal, type SessionHost } from './session-host.ts';
import type { Refusal } from './session-quota.ts';
import { SseStream, StoredEventIds } from './sse-stream.ts';
import { defaultKeepAlive, type KeepAlive } from './sse-keepalive.ts';
import type { SessionEventFeed } from '../store/session-event-feed.ts';
import { eventPrincipal } from '../store/session-events.ts';
import { ResumedStreams, type ResumedStreamLimits } from './resumed-streams.ts';
import { type ReplyTarget, WebReply } from './web-reply.ts';
import { BodyDropped, type IncomingView, type RequestContext, webView, withBody } from './incoming-view.ts';
import { json, Plain, refuse, refuseBody } from './plain-reply.ts';
import { messagesOf } from './post-body.ts';
import { StatelessPool } from './stateless-pool.ts';
import { endAtExpiry } from './token-expiry.ts';

export type { IncomingView, RequestContext } from './incoming-view.ts';

/** The version assumed when a request has no MCP-Protocol-Version header (as the spec says). */
const ASSUMED_VERSION = '2025-03-26';

export interface StreamableHttpOptions {
  readonly sessions: SessionHost;
  readonly tokens: TokenTable;
  readonly requireAuth: boolean;
  /** Who a bearer token names (static tokens and OAuth, auth/bearer-authority.ts). Default: the static `tokens` alone. */
  readonly auth?: BearerAuthority;
  readonly origin: OriginPolicy;
  readonly maxMessageBytes: number;
  readonly logger: Logger;
  /** On a cluster (a PostgreSQL store, once the node joined): where sessions not held here are. */
  readonly cluster?: () => ClusterSessions | null;
  /**
   * The session event log of a PostgreSQL store (issue 14): every SSE event is kept there before it is
   * written, and a GET with Last-Event-ID is served from it on any node. Absent (SQLite): ids from this
   * process, the GET stream's replay buffer in memory.
   */
  readonly events?: SessionEventFeed;
  /** Resumed streams per session and per principal on this node. Default MAX_RESUMED_STREAMS_PER_SESSION, _PER_PRINCIPAL. */
  readonly resumedStreamLimits?: ResumedStreamLimits;
  /** Writes a comment on every SSE stream idle for its interval. Default: the process's, SSE_KEEPALIVE_MS on the system clock. */
  readonly keepAlive?: KeepAlive;
}

export class StreamableHttp {
  readonly #options: StreamableHttpOptions;
  readonly #host: SessionHost;
  /**
   * The HTTP side of each open HTTP session (its POSTs waiting, its GET streams), by the registry's id.
   * The registry says which sessions are open; an entry here lives exactly as long as the registry's
   * (made when it opens, dropped by its `onEnded`).
   */
  readonly #http = new Map<string, HttpSession>();
  // Every HTTP session's `busy` and `onEnded`, handed its registry entry: one function each, not closures per session.
  readonly #busy = (hosted: HostedSession): boolean => this.#http.get(hosted.id)?.busy ?? false;
  readonly #ended = (hosted: HostedSession): void => {
    const state = this.#http.get(hosted.id);
    if (state?.session !== hosted) return;
    this.#http.delete(hosted.id);
    if (state.stateless) this.#kept?.remove(hosted.principal, state);
    state.closeStreams();
  };
  #accepting = true;
  #resumed: ResumedStreams | null = null;
  /** Sessions being opened here after a takeover, by id: a request for one waits for it rather than find it missing. */
  readonly #opening = new Map<string, Promise<unknown>>();
  /** Sessions kept to serve 2026-07-28 requests, by principal (stateless-pool.ts). */
  #kept: StatelessPool<HttpSession> | null = null;
  get #pool(): StatelessPool<HttpSession> {
    return (this.#kept ??= new StatelessPool(this.#host.clock, (session) => void this.#host.close(session.id), (session, principal) => this.#host.find(session.id, principal) !== undefined));
  }

  readonly #auth: BearerAuthority;
  readonly #keepAlive: KeepAlive;

  constructor(options: StreamableHttpOptions) {
    this.#options = options;
    this.#host = options.sessions;
    this.#keepAlive = options.keepAlive ?? defaultKeepAlive();
    this.#auth = options.auth ?? new BearerAuthority({ tokens: options.tokens, requireAuth: options.requireAuth, logger: options.logger });
  }

  /** New sessions are refused with 503 from now on (the server is shutting down). */
  stopAccepting(): void {
    this.#accepting = false;
    this.#kept?.stop();
  }

  /** One web-standard request to `/mcp`; the client going away is the request's signal aborting. */
  handle(request: Request, _context: RequestContext = {}): Promise<Response> {
    const reply = new WebReply(request);
    onAbort(request.signal, () => reply.abort());
    void this.serve(webView(request), reply);
    return reply.response;
  }

  /** One request to `/mcp`, answered on `target` (a plain reply at once, or a POST's exchange later). Never rejects. */
  async serve(request: IncomingView, target: ReplyTarget): Promise<void> {
    let plain: Plain | null;
    try {
      plain = await this.#route(request, target);
    } catch (err) {
      const lost = target.headersSent || err instanceof BodyDropped ? null : await this.#storeLoss();
      // A body not read to its end (the node's budget, or its client went): a 503 closing the connection.
      if (err instanceof BodyDropped && !target.headersSent) plain = refuse(503, `Service Unavailable: ${err.message}; retry`, { 'Retry-After': '1', Connection: 'close' });
      else if (lost !== null) {
        // The shared store went away under the request: the documented 503, from the first request that finds it.
        this.#options.logger.log('warning', 'HTTP request refused: the conversation store cannot be reached', { method: request.method, error: (err as Error).message });
        plain = refuse(lost.status, lost.message, lost.headers);
      } else {
        this.#options.logger.log('error', 'HTTP request failed', { method: request.method, error: (err as Error).stack ?? String(err) });
        if (target.headersSent) {
          target.end();
          return;
        }
        plain = refuse(500, 'Internal Server Error');
      }
    }
    if (plain !== null) {
      target.writeHead(plain.status, plain.headers);
      target.end(plain.body ?? undefined);
      this.#keepAlive.backlog.budget?.noteConnection(target.socket);
    }
  }

  /** The host's store-loss refusal after a failed request, or null; a failing check is logged and is no refusal. */
  async #storeLoss(): Promise<Refusal | null> {
    try {
      return (await this.#host.storeLoss?.()) ?? null;
    } catch (err) {
      this.#options.logger.log('error', 'the store check after a failed HTTP request failed', { error: (err as Error).message });
      return null;
    }
  }

  async #route(incoming: IncomingView, target: ReplyTarget): Promise<Plain | null> {
    const admitted = await this.#admit(incoming);
    if (admitted instanceof Plain) return admitted;
    const { principal } = admitted;
    const endsAt = admitted.expiresAt === undefined ? undefined : admitted.expiresAt + (this.#auth.oauth?.config.clockSkewSeconds ?? 0);
    if (incoming.method === 'GET' && endsAt !== undefined) endAtExpiry(target, endsAt);
    const here = await this.#elsewhere(incoming, target, principal);
    if ('reply' in here) return here.reply;
    const request = here.view;
    switch (request.method) {
      case 'POST': return this.#post(request, target, principal, admitted, endsAt);
      case 'GET': return this.#get(request, target, principal);
      case 'DELETE': {
        const s = this.#lookup(request, principal);
        if (s instanceof Plain) return s;
        await this.#host.close(s.id);
        return new Plain(200, null);
      }
      default:
        return new Plain(405, null, { Allow: 'GET, POST, DELETE' });
    }
  }

  /** Host/Origin and bearer token (with the door's scope: bearer-authority.ts `admitMcp`): the principal, or the refusal. */
  async #admit(request: IncomingView): Promise<Admitted | Plain> {
    const bad = checkHostAndOrigin(this.#options.origin, header(request, 'host'), header(request, 'origin'));
    if (bad) return refuse(403, `Forbidden: ${bad}`);
    const admitted = await this.#auth.admitMcp(header(request, 'authorization'));
    return isAuthRefusal(admitted) ? refuse(admitted.status, admitted.message, admitted.headers) : admitted;
  }

  /**
   * On a cluster, a request for a session this node does not hold is forwarded to its home or the session
   * is taken over and opened here (cluster/session-locator.ts); a session held here is served only while
   * this node may (its own lease fresh, or re-validated). `view`: serve the request here, as on one node
   * (a POST's body, if it was read, comes with it); `reply`: it is answered (null: already written).
   */
  async #elsewhere(request: IncomingView, target: ReplyTarget, principal: Principal): Promise<{ reply: Plain | null } | { view: IncomingView }> {
    const cluster = this.#options.cluster?.() ?? null;
    const id = header(request, 'mcp-session-id');
    if (cluster === null || id === undefined) return { view: request };
    await this.#opening.get(id);
    if (this.#http.has(id) && this.#host.find(id, principal) !== undefined) {
      const held = await cluster.confirmHeld(id, principal);
      if (held === 'held') return { view: request };
      if (held === 'unknown') {
        const lost = await this.#storeLoss();
        return { reply: lost !== null ? refuse(lost.status, lost.message, lost.headers) : refuse(503, 'Service Unavailable: this node cannot confirm with the store that it still holds the session; retry') };
      }
    }
    if (servedFromEventLog(request)) return { view: request };
    let body: string | null = null;
    if (request.method === 'POST') {
      body = await request.body(this.#options.maxMessageBytes);
      if (body === null) return { reply: refuse(413, `Payload Too Large: the limit is ${this.#options.maxMessageBytes} bytes (--max-message-bytes)`) };
    }
    const view = body === null ? request : withBody(request, body);
    const located = await cluster.locate(id, principal, request, body, target, header(request, FORWARDED_BY_HEADER) !== undefined);
    switch (located.kind) {
      case 'forwarded': return { reply: null };
      case 'unavailable': return { reply: refuse(503, `Service Unavailable: ${located.message}`) };
      case 'missing':
        // Taken over by another request to this node a moment ago: served here once it is open.
        await this.#opening.get(id);
        return { view };
      case 'taken-over': {
        const opening = this.#open(principal, null, located.session);
        this.#opening.set(id, opening);
        const opened = await opening.finally(() => {
          this.#opening.delete(id);
          cluster.opened?.(id);
        });
        return opened instanceof Plain ? { reply: opened } : { view };
      }
    }
  }

  #lookup(request: IncomingView, principal: Principal): HttpSession | Plain {
    const id = header(request, 'mcp-session-id');
    if (!id) return refuse(400, 'Bad Request: Mcp-Session-Id header is required (send initialize first to get one)');
    // Another principal's session is indistinguishable from one that does not exist.
    const hosted = this.#host.find(id, principal);
    const s = hosted === undefined ? undefined : this.#http.get(id);
    if (hosted === undefined || s === undefined) return refuse(404, 'Not Found: unknown or ended session; initialize a new one');
    const version = header(request, 'mcp-protocol-version') ?? ASSUMED_VERSION;
    if (!isSupportedVersion(version)) return refuse(400, `Bad Request: unsupported MCP-Protocol-Version "${version}"`);
    hosted.touch();
    return s;
  }

  async #post(request: IncomingView, target: ReplyTarget, principal: Principal, admitted: Admitted, endsAt: number | undefined): Promise<Plain | null> {
    const accept = header(request, 'accept') ?? '';
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
      return refuse(406, 'Not Acceptable: Accept must list application/json and text/event-stream');
    }
    if (!(header(request, 'content-type') ?? '').includes('application/json')) {
      return refuse(415, 'Unsupported Media Type: Content-Type must be application/json');
    }
    const { maxMessageBytes } = this.#options;
    const body = await request.body(maxMessageBytes);
    if (body === null) return refuse(413, `Payload Too Large: the limit is ${maxMessageBytes} bytes (--max-message-bytes)`);
    let parsed: unknown;
    try {
      parsed = parseMessageText(body);
    } catch (err) {
      return json(400, errorLine(null, ErrorCode.ParseError, `Parse error: ${(err as Error).message}`));
    }
    const batch = Array.isArray(parsed);
    const shape = messagesOf(parsed);
    if ('refusal' in shape) return json(400, shape.refusal);
    const { messages, raw } = shape;
    // What the token's scopes allow is decided per POST, so a host that stepped up is served at once.
    // A refused answer to a confirmation never reaches the core: its question stays pending for a token that may answer it.
    const lacking = messages.map(capabilityOf).find((c) => !admitted.capabilities.has(c));
    if (lacking !== undefined) {
      const r = this.#auth.insufficientScope(lacking);
      return refuse(r.status, r.message, r.headers);
    }
    // initialize opens a session only when the POST names none; with one, it goes to that session's core,
    // which refuses it as it would on stdio ("already initialized") and leaves the session as it was.
    // (A 2026-07-28 `initialize` is no handshake: it is answered -32601 like any removed method.)
    const opening = header(request, 'mcp-session-id') === undefined && messages.some((m) => m.kind === 'request' && m.method === 'initialize' && !isModernRequest(m.method, m.params));
    if (opening && batch) return refuseBody('Invalid request: JSON-RPC batch arrays are not accepted before initialize; send initialize alone');
    // A 2026-07-28 request (one, not a batch) without a session id is served by a session its client
    // never learns the id of, which keeps nothing of the request once it is answered.
    // Every modern request's headers are checked, on a session or not (modern-headers.ts).
    const refused = refuseModernMessages((name) => header(request, name), messages, batch);
    if (refused !== null) return json(refused.status, refused.body);
    const only = !batch && messages.length === 1 ? messages[0] : undefined;
    const stateless = header(request, 'mcp-session-id') === undefined && only?.kind === 'request' && isModernRequest(only.method, only.params);
    let s: HttpSession;
    /** Opened for this request alone, closed once it is answered (a principal whose sessions are not shared). */
    let oneShot = false;
    if (stateless && only?.kind === 'request') {
      // An idle session kept for the principal (stateless-pool.ts), else a new one kept for the next. No
      // `await` between choosing it and the exchange that makes it busy, so no other POST gets it too.
      const shared = this.#host.shareable?.(principal) ?? principal.kind !== 'anonymous';
      const kept = shared ? this.#pool.take(principal, idKey(only.id)) : null;
      if (kept !== null) s = kept;
      else {
        const opened = await this.#open(principal, null, undefined, true);
        if (opened instanceof Plain) return opened;
        if (shared) this.#pool.add(principal, opened);
        s = opened;
        oneShot = !shared;
      }
    } else if (opening) {
      const opened = await this.#open(principal, messages);
      if (opened instanceof Plain) return opened;
      s = opened;
    } else {
      const found = this.#lookup(request, principal);
      if (found instanceof Plain) return found;
      s = found;
      if (batch && !versionFeatures(s.version).batches) {
        return refuseBody(`Invalid request: JSON-RPC batch arrays are not accepted in ${s.version}; send one message per POST`);
      }
    }
    const session = s;
    // Each request id is in flight on one POST at a time: a reused one is answered here, on this POST,
    // and never reaches the core, so the request already using it (and its POST) is untouched.
    const requests = new Set<string>();
    const delivered: (string | number)[] = [];
    const refusedHere: string[] = [];
    let streams = false;
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
        // A listen is a stream by nature: its acknowledgment and notifications, until the client closes it.
        if (m.method === 'tools/call' || m.method === 'subscriptions/listen') streams = true;
        if (m.method === 'subscriptions/listen' && endsAt !== undefined) endAtExpiry(target, endsAt);
      }
      deliver.push({ batch: false, messages: [m], values: [raw[i]] });
    }
    const toCore = () => {
      // A batch reaches the core one message at a time (the core would handle it so, in order): the ids
      // refused here are simply left out, and each message is its own turn of the session's actor.
      if (!batch) {
        if (deliver.length === 1) session.session.deliver({ kind: 'line', text: body }, deliver[0]);
        return;
      }
      for (const m of deliver) session.session.deliver({ kind: 'line', text: messageText(m.values[0]) }, m);
    };
    if (requests.size === 0) {
      toCore();
      if (refusedHere.length === 0) return new Plain(202, null);
      return new Plain(200, batch ? `[${refusedHere.join(',')}]` : (refusedHere[0] as string), { 'Content-Type': 'application/json', ...session.replyHeaders });
    }
    // Tool calls may stream progress and questions to the person, and a listen is a stream: their reply may be SSE; the rest plain JSON.
    const exchange = new Exchange(target, requests, streams ? 'sse' : 'json', batch, session.replyHeaders, session, refusedHere, this.#keepAlive);
    session.addExchange(exchange);
    const abandoned = () => {
      // A stream the client can resume is not given up: its answer goes to the log, for the resumed stream.
      if (exchange.finished || exchange.resumable) return;
      exchange.abandon();
      session.removeExchange(exchange);
      if (oneShot) void this.#host.close(session.id);
      // The client went away mid-request: cancel what it was waiting for (only what this POST sent).
      for (const id of delivered) {
        session.session.deliver({ kind: 'line', text: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'the HTTP client disconnected' } }) });
      }
    };
    target.on('close', guarded(this.#options.logger, 'HTTP reply close', abandoned));
    // A refused initialize leaves no session behind.
    if (opening) exchange.onDone((answers) => { if (answers.every((a) => a.isError === true)) void this.#host.close(session.id); });
    if (oneShot) exchange.onDone(() => void this.#host.close(session.id));
    if (stateless) exchange.statusFrom(modernHttpStatus);
    toCore();
    return null;
  }

  /** A new session for `principal` (its quota slot taken first), or one taken over from another node (`resume`), or the refusal. */
  async #open(principal: Principal, messages: readonly Classified[] | null, resume?: TakenOver, stateless = false): Promise<HttpSession | Plain> {
    if (!this.#accepting) return refuse(503, 'Service Unavailable: the server is shutting down');
    let slot = this.#host.reserve(principal);
    // Sessions kept for modern requests give their slots back before the principal is refused one.
    if (isRefusal(slot) && (this.#kept?.shed(principal) ?? 0) > 0) slot = this.#host.reserve(principal);
    if (isRefusal(slot)) return refuse(slot.status, slot.message, slot.headers);
    const http = this.#http;
    let state: HttpSession | null = null;
    let hosted: HostedSession;
    try {
      hosted = await this.#host.open({
        principal,
        transport: 'http',
        slot,
        // Only while it is this session's HTTP side: the map lets go of it when the session ends.
        send: (out) => { if (state !== null && http.get(state.id) === state) state.route(out); },
        busy: this.#busy,
        ...(resume === undefined ? {} : { resume }),
        ...(stateless ? { stateless: true } : {}),
        onEnded: this.#ended,
      });
    } catch (err) {
      slot.release();
      throw err;
    }
    const init = messages?.find((m) => m.kind === 'request' && m.method === 'initialize') as Extract<Classified, { kind: 'request' }> | undefined;
    const version = resume === undefined ? negotiateVersion(init?.params.protocolVersion) : (storedVersion(resume.bytes) ?? negotiateVersion(undefined));
    // A stateless session's events are not resumable (its client cannot name it): none go to the store.
    const feed = stateless ? undefined : this.#options.events;
    const ids = feed === undefined ? undefined : new StoredEventIds(feed.store, hosted.id, eventPrincipal(principal), (error) => {
      this.#options.logger.log('warning', 'an SSE event could not be kept in the session event log; it is sent without an id (not resumable)', { session: hosted.id, error: error.message });
    });
    state = new HttpSession(hosted.id, hosted, version, ids, stateless);
    http.set(hosted.id, state);
    return state;
  }

  #get(request: IncomingView, target: ReplyTarget, principal: Principal): Plain | null | Promise<Plain | null> {
    if (!(header(request, 'accept') ?? '').includes('text/event-stream')) {
      return refuse(406, 'Not Acceptable: GET /mcp opens an event stream; Accept must list text/event-stream');
    }
    const last = header(request, 'last-event-id');
    const feed = this.#options.events;
    if (last && feed) return this.#resume(request, target, principal, feed, last);
    const s = this.#lookup(request, principal);
    if (s instanceof Plain) return s;
    const stream = new SseStream(target, { 'Mcp-Session-Id': s.id }, this.#keepAlive);
    if (last) for (const e of s.events.after(last) ?? []) stream.send(e.id, e.data);
    s.addStandalone(stream);
    target.on('close', guarded(this.#options.logger, 'HTTP stream close', () => s.removeStandalone(stream)));
    return null;
  }

  /**
   * A stream resumed from the store's session event log, on whichever node the GET landed — the session
   * need not be held here (its home may be another node, or dead): the log's own row says whose it is.
   * The events of the stream that `last` belongs to after `last`, then its later ones as any node
   * appends them (NOTIFY wakes this node), until the event that ends it (a POST's last answer) or
   * until the client goes (the GET stream). Refusals: 400 for an id this session never issued, 404 for
   * another principal's session or one with no log, 409 for an id older than the log keeps
   * (SESSION_EVENTS_KEPT, SESSION_EVENTS_MAX_BYTES, SESSION_EVENTS_MAX_AGE_MS): its events are gone, so the
   * stream cannot be resumed; 429 past the resumed streams a session or a principal may hold on this node
   * (resumed-streams.ts, which reads each session's log once for all of them).
   */
  async #resume(request: IncomingView, target: ReplyTarget, principal: Principal, feed: SessionEventFeed, last: string): Promise<Plain | null> {
    const id = header(request, 'mcp-session-id');
    if (!id) return refuse(400, 'Bad Request: Mcp-Session-Id header is required (send initialize first to get one)');
    const version = header(request, 'mcp-protocol-version') ?? ASSUMED_VERSION;
    if (!isSupportedVersion(version)) return refuse(400, `Bad Request: unsupported MCP-Protocol-Version "${version}"`);
    if (!/^[1-9]\d{0,15}$/.test(last) || !Number.isSafeInteger(Number(last))) return refuse(400, `Bad Request: Last-Event-ID "${last.slice(0, 40)}" is not an event id this server sends`);
    const seq = Number(last);
    const who = eventPrincipal(principal);
    const position = await feed.store.sessionEventPosition(id, who, seq);
    if (position === null) return refuse(404, 'Not Found: unknown or ended session; initialize a new one');
    if (position.kind === 'ahead') return refuse(400, `Bad Request: Last-Event-ID ${seq} was never sent in this session (its last event is ${position.last})`);
    if (position.kind === 'expired') {
      return refuse(409, `Conflict: the events after Last-Event-ID ${seq} are no longer kept (the log keeps a session's last events for a limited time), so this stream cannot be resumed; send the request again`);
    }
    this.#host.find(id, principal)?.touch();
    const open = () => new SseStream(target, { 'Mcp-Session-Id': id }, this.#keepAlive);
    // The client had the stream's last event already: nothing more will come on it.
    if (position.ends) {
      open().end();
      return null;
    }
    const refused = this.#resumedStreams(feed).follow(id, who, position.stream, seq, open);
    return refused === null ? null : refuse(refused.status, refused.message);
  }

  /** The node's resumed streams (made with the first one). */
  #resumedStreams(feed: SessionEventFeed): ResumedStreams {
    return this.#resumed ??= new ResumedStreams({
      feed,
      watchOrphans: (sessionId, principal) => this.#options.cluster?.()?.watchOrphans?.(sessionId, principal) ?? null,
      onError: (sessionId, error) => this.#options.logger.log('warning', 'resumed SSE streams could not read the session event log; they are closed (their clients may resume them again)', { session: sessionId, error: error.message }),
      ...(this.#options.resumedStreamLimits ? { limits: this.#options.resumedStreamLimits } : {}),
    });
  }
}

/**
 * The hook of the session events log: a GET with Last-Event-ID is served on any node from the log
 * (cluster design), never forwarded or taken over for — here it goes to the local lookup.
 */
function servedFromEventLog(request: IncomingView): boolean {
  return request.method === 'GET' && header(request, 'last-event-id') !== undefined;
}

function onAbort(signal: AbortSignal, f: () => void): void {
  if (signal.aborted) f();
  else signal.addEventListener('abort', f, { once: true });
}

function header(request: IncomingView, name: string): string | undefined {
  return request.header(name);
}
