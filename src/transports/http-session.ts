// One Streamable HTTP session: routes each line the session's actor sends to where the client can read
// it — the POST that carried the request it answers, that POST's SSE stream for its progress, else the
// standalone GET stream (whose events are kept for replay after a reconnect).

import type { ServerResponse } from 'node:http';
import { idKey, responseIdOf } from '../mcp/jsonrpc.ts';
import type { Principal } from '../mcp/state.ts';
import type { Session } from '../runtime/session.ts';
import { EventLog, SseStream } from './sse-stream.ts';

/**
 * How long a POST that may stream (it carries a tools/call) waits before it opens its SSE stream when it
 * has nothing to send yet. A call answered sooner gets one plain JSON reply (the spec lets the server
 * choose JSON or SSE per POST): no stream, no keep-alive timer, one write. A progress notification or a
 * question for the person opens the stream at once; a long silent call gets its stream (and keep-alive
 * comments) after this long, well before any client or proxy gives up waiting for headers.
 */
export const SSE_OPEN_AFTER_MS = 1000;

/** A POST waiting for the replies to its requests. */
export class Exchange {
  readonly requests: Set<string>;
  readonly #res: ServerResponse;
  /** May this POST's reply become an SSE stream (it carries a tools/call)? */
  readonly #mayStream: boolean;
  #sse: SseStream | null = null;
  #opener: NodeJS.Timeout | null = null;
  /** Responses not yet written: the JSON body, or what the stream sends first when it opens. */
  readonly #replies: string[] = [];
  readonly #batch: boolean;
  readonly #headers: Readonly<Record<string, string>>;
  readonly #events: EventLog;
  #onDone: ((answers: readonly string[]) => void) | null = null;
  #answered: string[] | null = null;
  #finished = false;

  constructor(res: ServerResponse, requests: Set<string>, mode: 'json' | 'sse', batch: boolean, headers: Readonly<Record<string, string>>, events: EventLog) {
    this.#res = res;
    this.requests = requests;
    this.#batch = batch;
    this.#headers = headers;
    this.#events = events;
    this.#mayStream = mode === 'sse';
    if (this.#mayStream) this.#opener = setTimeout(() => this.#openStream(), SSE_OPEN_AFTER_MS);
  }

  /** Called once, with every response line, when the last request is answered. */
  onDone(callback: (answers: readonly string[]) => void): void {
    this.#onDone = callback;
    this.#answered = [];
  }

  get finished(): boolean {
    return this.#finished;
  }

  /** A notification or server request related to this POST: sent on its stream, opened now if need be. */
  push(line: string): boolean {
    if (!this.#mayStream || this.#finished) return false;
    const sse = this.#sse ?? this.#openStream();
    if (!sse?.open) return false;
    sse.send(this.#events.nextId(), line);
    return true;
  }

  /** A response to one of this POST's requests. */
  answer(key: string, line: string): void {
    this.requests.delete(key);
    this.#answered?.push(line);
    if (this.#sse) this.#sse.send(this.#events.nextId(), line);
    else this.#replies.push(line);
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
    const sse = new SseStream(this.#res, this.#headers);
    this.#sse = sse;
    for (const line of this.#replies) sse.send(this.#events.nextId(), line);
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
    if (this.#sse) {
      this.#sse.end();
      return;
    }
    const body = this.#batch ? `[${this.#replies.join(',')}]` : (this.#replies[0] ?? '');
    this.#res.writeHead(200, { 'Content-Type': 'application/json', ...this.#headers });
    this.#res.end(body);
  }
}

/**
 * One HTTP session on the main thread. An idle session is most of what a server holds, so what only
 * requests in flight and open streams need is created with them and let go when they end.
 */
export class HttpSession {
  readonly id: string;
  readonly principal: Principal;
  readonly session: Session;
  readonly events = new EventLog();
  /** The headers of every reply on this session's POSTs (one object, not one per request). */
  readonly replyHeaders: Readonly<Record<string, string>>;
  lastSeen = Date.now();
  /** POSTs waiting for answers, oldest first; null when there are none. */
  #exchanges: Exchange[] | null = null;
  /** Open GET streams, oldest first; null when there are none. */
  #standalone: SseStream[] | null = null;
  /** progressToken → the exchange whose request carried it; null when no request in flight carried one. */
  #progressOwners: Map<string, Exchange> | null = null;

  constructor(id: string, principal: Principal, session: Session) {
    this.id = id;
    this.principal = principal;
    this.session = session;
    this.replyHeaders = { 'Mcp-Session-Id': id };
  }

  get busy(): boolean {
    return this.#exchanges !== null || (this.#standalone?.some((s) => s.open) ?? false);
  }

  addExchange(exchange: Exchange, progressTokens: (string | number)[]): void {
    (this.#exchanges ??= []).push(exchange);
    if (progressTokens.length === 0) return;
    const owners = (this.#progressOwners ??= new Map());
    for (const t of progressTokens) owners.set(JSON.stringify(t), exchange);
  }

  removeExchange(exchange: Exchange): void {
    this.#exchanges = without(this.#exchanges, exchange);
    const owners = this.#progressOwners;
    if (owners === null) return;
    for (const [t, ex] of owners) if (ex === exchange) owners.delete(t);
    if (owners.size === 0) this.#progressOwners = null;
  }

  addStandalone(stream: SseStream): void {
    (this.#standalone ??= []).push(stream);
  }

  removeStandalone(stream: SseStream): void {
    this.#standalone = without(this.#standalone, stream);
  }

  /** Every line the session sends comes through here. */
  route(line: string): void {
    const id = responseIdOf(line);
    const exchanges = this.#exchanges;
    if (id !== undefined) {
      const key = idKey(id);
      if (exchanges !== null) {
        for (const ex of exchanges) {
          if (ex.requests.has(key)) {
            ex.answer(key, line);
            if (ex.finished) this.removeExchange(ex);
            return;
          }
        }
      }
      return; // its POST is gone (the client disconnected); the request was cancelled
    }
    if (this.#progressOwners !== null && line.startsWith('{"jsonrpc":"2.0","method":"notifications/progress"')) {
      const token = (JSON.parse(line) as { params?: { progressToken?: unknown } }).params?.progressToken;
      const owner = this.#progressOwners.get(JSON.stringify(token));
      if (owner?.push(line)) return;
    }
    // Server requests (elicitation) and other notifications: the newest POST that may stream, else the GET stream.
    if (exchanges !== null) for (let i = exchanges.length - 1; i >= 0; i--) if ((exchanges[i] as Exchange).push(line)) return;
    const eventId = this.events.nextId();
    this.events.remember(eventId, line);
    const streams = this.#standalone ?? [];
    for (let i = streams.length - 1; i >= 0; i--) {
      const stream = streams[i] as SseStream;
      if (stream.open) return stream.send(eventId, line);
    }
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
