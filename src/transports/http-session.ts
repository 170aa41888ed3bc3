// One Streamable HTTP session: routes each message the session sends to where the client can read it — by
// what the core says it answers (`inReplyTo`: the POST that carried that request) or belongs to
// (`relatedTo`: that POST's SSE stream, for progress and questions), else the newest POST that may stream,
// else the standalone GET stream (whose events are kept for replay after a reconnect). The text of a
// message is never read here.

import type { ReplyTarget } from './web-reply.ts';
import { idKey } from '../mcp/jsonrpc.ts';
import type { Outgoing } from '../mcp/outgoing.ts';
import type { ProtocolVersion } from '../mcp/version.ts';
import type { HostedSession } from './session-host.ts';
import { EventLog, type EventIds, SseStream } from './sse-stream.ts';
import { defaultKeepAlive, type KeepAlive } from './sse-keepalive.ts';
import { requestStream, STANDALONE_STREAM } from '../store/session-events.ts';
import { ABANDONED_IDS_KEPT, MAX_GET_STREAMS_PER_SESSION, SSE_OPEN_AFTER_MS } from '../limits.ts';


/** A POST waiting for the replies to its requests. */
export class Exchange {
  readonly requests: Set<string>;
  readonly #res: ReplyTarget;
  /** May this POST's reply become an SSE stream (it carries a tools/call)? */
  readonly #mayStream: boolean;
  #sse: SseStream | null = null;
  #opener: NodeJS.Timeout | null = null;
  /** Responses not yet written: the JSON body, or what the stream sends first when it opens. */
  readonly #replies: string[] = [];
  readonly #batch: boolean;
  readonly #headers: Readonly<Record<string, string>>;
  readonly #ids: EventIds;
  readonly #keepAlive: KeepAlive;
  /** This POST's stream in the session's event log: named by its first request, whose answer ends it. */
  readonly #stream: string;
  #onDone: ((answers: readonly Outgoing[]) => void) | null = null;
  /** The status of a JSON reply, from its answers (a 2026-07-28 POST's follows its error code); else 200. */
  #status: ((answers: readonly Outgoing[]) => number) | null = null;
  #answered: Outgoing[] | null = null;
  #finished = false;

  /**
   * `refused`: answers already decided by the transport (a reused id), sent with the core's answers.
   * `keepAlive`: what writes comments on its stream while it is idle (default: the process's, SSE_KEEPALIVE_MS).
   */
  constructor(res: ReplyTarget, requests: Set<string>, mode: 'json' | 'sse', batch: boolean, headers: Readonly<Record<string, string>>, ids: EventIds, refused: readonly string[] = [], keepAlive: KeepAlive = defaultKeepAlive()) {
    this.#res = res;
    this.#keepAlive = keepAlive;
    this.#replies.push(...refused);
    this.requests = requests;
    this.#batch = batch;
    this.#headers = headers;
    this.#ids = ids;
    this.#stream = requestStream(requests.values().next().value ?? '');
    this.#mayStream = mode === 'sse';
    if (this.#mayStream) this.#opener = setTimeout(() => this.#openStream(), SSE_OPEN_AFTER_MS);
  }

  /** Called once, with every response, when the last request is answered. */
  onDone(callback: (answers: readonly Outgoing[]) => void): void {
    this.#onDone = callback;
    this.#answered ??= [];
  }

  /** Takes the status of the JSON reply from its answers (an SSE reply has sent 200 already). */
  statusFrom(status: (answers: readonly Outgoing[]) => number): void {
    this.#status = status;
    this.#answered ??= [];
  }

  get finished(): boolean {
    return this.#finished;
  }

  /**
   * A notification or server request for this POST's stream, opened now if need be; false if it cannot
   * stream. A stream kept in the store takes it even once its client went: the client may resume it.
   */
  push(line: string): boolean {
    if (!this.#mayStream || this.#finished) return false;
    const sse = this.#sse ?? this.#openStream();
    if (sse === null || (!sse.open && !this.resumable)) return false;
    this.#ids.emit(this.#stream, line, false, (id) => sse.send(id, line));
    return true;
  }

  /**
   * Can the client resume this POST's stream (GET with Last-Event-ID, on any node)? Only a stream kept in
   * the store, once open (its priming event sent): its client going away is then no cancellation (as
   * MCP asks), and what follows is kept for the resumed stream.
   */
  get resumable(): boolean {
    return this.#ids.durable && this.#sse !== null;
  }

  /** A response to one of this POST's requests. */
  answer(key: string, out: Outgoing): void {
    this.requests.delete(key);
    this.#answered?.push(out);
    const sse = this.#sse;
    if (sse) this.#ids.emit(this.#stream, out.line, this.requests.size === 0, (id) => sse.send(id, out.line));
    else this.#replies.push(out.line);
    if (this.requests.size === 0) this.#finish();
  }

  /** The client went away: nothing more is written. */
  abandon(): void {
    this.#finished = true;
    this.#cancelOpener();
  }

  #openStream(): SseStream | null {
    this.#cancelOpener();
    if (this.#finished || this.#res.destroyed) return null;
    const sse = new SseStream(this.#res, this.#headers, this.#keepAlive);
    this.#sse = sse;
    // A stream kept in the store opens with a priming event (an id, no data): a client whose connection
    // drops before the answer can then resume it, on any node, with GET and Last-Event-ID.
    if (this.#ids.durable) this.#ids.emit(this.#stream, '', false, (id) => sse.send(id, ''));
    const last = this.#replies.length - 1;
    for (const [i, line] of this.#replies.entries()) this.#ids.emit(this.#stream, line, i === last && this.requests.size === 0, (id) => sse.send(id, line));
    this.#replies.length = 0;
    return sse;
  }

  #cancelOpener(): void {
    if (this.#opener === null) return;
    clearTimeout(this.#opener);
    this.#opener = null;
  }

  #finish(): void {
    this.#finished = true;
    this.#cancelOpener();
    if (this.#answered) this.#onDone?.(this.#answered);
    const sse = this.#sse;
    if (sse) {
      this.#ids.afterWrites(() => sse.end());
      return;
    }
    const body = this.#batch ? `[${this.#replies.join(',')}]` : (this.#replies[0] ?? '');
    this.#res.writeHead(this.#status?.(this.#answered ?? []) ?? 200, { 'Content-Type': 'application/json', ...this.#headers });
    this.#res.end(body);
    // Its bytes may stay on the connection while the client does not read: the node's budget counts them.
    this.#keepAlive.backlog.budget?.noteConnection(this.#res.socket);
  }
}

/**
 * The HTTP side of one session (its POSTs waiting, its GET streams); the session itself is the
 * registry's. An idle session is most of what a server holds, so what only
 * requests in flight and open streams need is created with them and let go when they end.
 */
export class HttpSession implements EventIds {
  readonly id: string;
  /** The session in the server's registry (its id is this one's). */
  readonly session: HostedSession;
  /** The version `initialize` negotiated: it decides whether this session's POSTs may be batches. */
  readonly version: ProtocolVersion;
  /** The standalone stream's replay buffer, when the ids are this process's (made with the first event or replay: an idle session has none). */
  #events: EventLog | null = null;
  /** Where this session's SSE events get their ids (and, on a PostgreSQL store, are kept); null: `events`. */
  readonly #ids: EventIds | null;
  /** The headers of every reply on this session's POSTs (one object, not one per request). */
  readonly replyHeaders: Readonly<Record<string, string>>;
  /** Opened for one 2026-07-28 request, whose client is never told a session id (kept in the stateless pool). */
  readonly stateless: boolean;
  /** POSTs waiting for answers, oldest first; null when there are none. */
  #exchanges: Exchange[] | null = null;
  /** Open GET streams, oldest first; null when there are none. */
  #standalone: SseStream[] | null = null;
  /**
   * Request id key → the POST that carried it and waits for its answer; null when none is in flight.
   * An id is in flight on one POST at a time (a second POST reusing it is refused before it reaches the
   * core), so a message's `inReplyTo` or `relatedTo` names exactly one exchange.
   */
  #inFlight: Map<string, Exchange> | null = null;
  /**
   * Ids of requests whose POST closed before their answer (oldest first): a late answer to one of them
   * must not reach a later POST that reused the id, so the id stays taken until that answer comes (it
   * may never: a cancelled request is not answered — MCP forbids reusing an id in a session anyway).
   */
  #abandoned: Set<string> | null = null;

  /** `ids`: default this process's counter, with the GET stream's events kept in `events` for replay. */
  /** `stateless`: opened for one 2026-07-28 request, whose client is never told a session id. */
  constructor(id: string, session: HostedSession, version: ProtocolVersion, ids?: EventIds, stateless = false) {
    this.id = id;
    // The replay buffer gives this process's ids itself (one object, not two, per session).
    this.#ids = ids ?? null;
    this.session = session;
    this.version = version;
    this.replyHeaders = stateless ? {} : { 'Mcp-Session-Id': id };
    this.stateless = stateless;
  }

  get events(): EventLog {
    return (this.#events ??= new EventLog());
  }

  get ids(): EventIds {
    return this.#ids ?? this.events;
  }

  // EventIds, for this session's POSTs: their events take ids from `ids`, which an idle session never makes.
  get durable(): boolean {
    return this.#ids?.durable ?? false;
  }

  emit(stream: string, data: string, ends: boolean, write: (id: string | null) => void): void {
    this.ids.emit(stream, data, ends, write);
  }

  afterWrites(f: () => void): void {
    this.ids.afterWrites(f);
  }

  get busy(): boolean {
    return this.#exchanges !== null || (this.#standalone?.some((s) => s.open) ?? false);
  }

  /** Is a request with this id key waiting for its answer, on some POST or after its POST closed? */
  inFlight(key: string): boolean {
    return (this.#inFlight?.has(key) ?? false) || (this.#abandoned?.has(key) ?? false);
  }

  addExchange(exchange: Exchange): void {
    (this.#exchanges ??= []).push(exchange);
    const inFlight = (this.#inFlight ??= new Map());
    for (const key of exchange.requests) inFlight.set(key, exchange);
  }

  removeExchange(exchange: Exchange): void {
    this.#exchanges = without(this.#exchanges, exchange);
    const inFlight = this.#inFlight;
    if (inFlight !== null) {
      for (const key of exchange.requests) {
        if (inFlight.get(key) !== exchange) continue;
        inFlight.delete(key);
        this.#abandon(key);
      }
      if (inFlight.size === 0) this.#inFlight = null;
    }
  }

  #abandon(key: string): void {
    const abandoned = (this.#abandoned ??= new Set());
    abandoned.add(key);
    // Bounded: past the limit the oldest is forgotten (its answer, if it ever comes, is then routed by id).
    if (abandoned.size > ABANDONED_IDS_KEPT) abandoned.delete(abandoned.values().next().value as string);
  }

  addStandalone(stream: SseStream): void {
    const streams = (this.#standalone ??= []);
    streams.push(stream);
    // Only the newest is written to: past the limit the oldest goes, with whatever it had not sent.
    while (streams.length > MAX_GET_STREAMS_PER_SESSION) (streams.shift() as SseStream).drop();
  }

  removeStandalone(stream: SseStream): void {
    this.#standalone = without(this.#standalone, stream);
  }

  /** Every message the session sends comes through here. */
  route(out: Outgoing): void {
    if (out.inReplyTo !== undefined) {
      const key = idKey(out.inReplyTo);
      const ex = this.#inFlight?.get(key);
      if (ex === undefined) {
        // Its POST is gone (the client disconnected): the answer is dropped, and the id is free again.
        if (this.#abandoned?.delete(key) && this.#abandoned.size === 0) this.#abandoned = null;
        return;
      }
      this.#inFlight?.delete(key);
      ex.answer(key, out);
      if (ex.finished) this.removeExchange(ex);
      return;
    }
    if (out.relatedTo !== undefined) {
      // Progress and questions of a request go on its own POST's stream, or (its POST cannot stream or is
      // gone) on the GET stream: never on another request's POST.
      if (this.#inFlight?.get(idKey(out.relatedTo))?.push(out.line)) return;
      return this.#toStandalone(out.line);
    }
    // Messages of no request (log records, resource updates): the newest POST that may stream, else the
    // GET stream. (Errors with id null never come this way from a POST's messages: the transport answers
    // every message the core could not read on its POST itself, before the core sees it — see streamable-http.ts.)
    const exchanges = this.#exchanges;
    if (exchanges !== null) for (let i = exchanges.length - 1; i >= 0; i--) if ((exchanges[i] as Exchange).push(out.line)) return;
    this.#toStandalone(out.line);
  }

  /**
   * On the newest open GET stream, remembered for a client that reconnects with Last-Event-ID (in the
   * store's log, or this process's buffer).
   */
  #toStandalone(line: string): void {
    this.ids.emit(STANDALONE_STREAM, line, false, (eventId) => {
      if (eventId !== null && !this.ids.durable) this.events.remember(eventId, line);
      const streams = this.#standalone ?? [];
      for (let i = streams.length - 1; i >= 0; i--) {
        const stream = streams[i] as SseStream;
        if (stream.open) return stream.send(eventId, line);
      }
    });
  }

  closeStreams(): void {
    const streams = this.#standalone;
    this.#standalone = null;
    for (const s of streams ?? []) s.end();
  }
}

/** `list` without `item`; null rather than an empty list, so an idle session holds no array. */
function without<T>(list: T[] | null, item: T): T[] | null {
  if (list === null) return null;
  const i = list.indexOf(item);
  if (i !== -1) list.splice(i, 1);
  return list.length === 0 ? null : list;
}
