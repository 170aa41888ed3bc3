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

export class HttpSession {
  readonly id: string;
  readonly principal: Principal;
  readonly session: Session;
  readonly events = new EventLog();
  /** The headers of every reply on this session's POSTs (one object, not one per request). */
  readonly replyHeaders: Readonly<Record<string, string>>;
  lastSeen = Date.now();
  readonly #exchanges = new Set<Exchange>();
  readonly #standalone = new Set<SseStream>();
  /** progressToken → the exchange whose request carried it. */
  readonly #progressOwners = new Map<string, Exchange>();

  constructor(id: string, principal: Principal, session: Session) {
    this.id = id;
    this.principal = principal;
    this.session = session;
    this.replyHeaders = { 'Mcp-Session-Id': id };
  }

  get busy(): boolean {
    return this.#exchanges.size > 0 || [...this.#standalone].some((s) => s.open);
  }

  addExchange(exchange: Exchange, progressTokens: (string | number)[]): void {
    this.#exchanges.add(exchange);
    for (const t of progressTokens) this.#progressOwners.set(JSON.stringify(t), exchange);
  }

  removeExchange(exchange: Exchange): void {
    this.#exchanges.delete(exchange);
    for (const [t, ex] of this.#progressOwners) if (ex === exchange) this.#progressOwners.delete(t);
  }

  addStandalone(stream: SseStream): void {
    this.#standalone.add(stream);
  }

  removeStandalone(stream: SseStream): void {
    this.#standalone.delete(stream);
  }

  /** Every line the session sends comes through here. */
  route(line: string): void {
    const id = responseIdOf(line);
    if (id !== undefined) {
      const key = idKey(id);
      for (const ex of this.#exchanges) {
        if (ex.requests.has(key)) {
          ex.answer(key, line);
          if (ex.finished) this.removeExchange(ex);
          return;
        }
      }
      return; // its POST is gone (the client disconnected); the request was cancelled
    }
    if (line.startsWith('{"jsonrpc":"2.0","method":"notifications/progress"')) {
      const token = (JSON.parse(line) as { params?: { progressToken?: unknown } }).params?.progressToken;
      const owner = this.#progressOwners.get(JSON.stringify(token));
      if (owner?.push(line)) return;
    }
    // Server requests (elicitation) and other notifications: a streaming POST, else the GET stream.
    for (const ex of [...this.#exchanges].reverse()) if (ex.push(line)) return;
    const eventId = this.events.nextId();
    this.events.remember(eventId, line);
    const stream = [...this.#standalone].reverse().find((s) => s.open);
    stream?.send(eventId, line);
  }

  closeStreams(): void {
    for (const s of this.#standalone) s.end();
    this.#standalone.clear();
  }
}
