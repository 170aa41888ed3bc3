// One Streamable HTTP session: routes each line the session's actor sends to where the client can read
// it — the POST that carried the request it answers, that POST's SSE stream for its progress, else the
// standalone GET stream (whose events are kept for replay after a reconnect).

import type { ServerResponse } from 'node:http';
import { idKey, responseIdOf } from '../mcp/jsonrpc.ts';
import type { Principal } from '../mcp/state.ts';
import type { Session } from '../runtime/session.ts';
import { EventLog, SseStream } from './sse-stream.ts';

/** A POST waiting for the replies to its requests. */
export class Exchange {
  readonly requests: Set<string>;
  readonly #res: ServerResponse;
  readonly #sse: SseStream | null;
  readonly #replies: string[] = [];
  readonly #batch: boolean;
  readonly #headers: Record<string, string>;
  readonly #events: EventLog;
  readonly #answered: string[] = [];
  #onDone: ((answers: readonly string[]) => void) | null = null;
  #finished = false;

  constructor(res: ServerResponse, requests: Set<string>, mode: 'json' | 'sse', batch: boolean, headers: Record<string, string>, events: EventLog) {
    this.#res = res;
    this.requests = requests;
    this.#batch = batch;
    this.#headers = headers;
    this.#events = events;
    this.#sse = mode === 'sse' ? new SseStream(res, headers) : null;
  }

  /** Called once, with every response line, when the last request is answered. */
  onDone(callback: (answers: readonly string[]) => void): void {
    this.#onDone = callback;
  }

  get streaming(): boolean {
    return this.#sse !== null && this.#sse.open;
  }

  get finished(): boolean {
    return this.#finished;
  }

  /** A notification or server request related to this POST (SSE only). */
  push(line: string): boolean {
    if (!this.streaming) return false;
    (this.#sse as SseStream).send(this.#events.nextId(), line);
    return true;
  }

  /** A response to one of this POST's requests. */
  answer(key: string, line: string): void {
    this.requests.delete(key);
    this.#answered.push(line);
    if (this.#sse) this.#sse.send(this.#events.nextId(), line);
    else this.#replies.push(line);
    if (this.requests.size === 0) this.#finish();
  }

  #finish(): void {
    this.#finished = true;
    this.#onDone?.(this.#answered);
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
  lastSeen = Date.now();
  readonly #exchanges = new Set<Exchange>();
  readonly #standalone = new Set<SseStream>();
  /** progressToken → the exchange whose request carried it. */
  readonly #progressOwners = new Map<string, Exchange>();

  constructor(id: string, principal: Principal, session: Session) {
    this.id = id;
    this.principal = principal;
    this.session = session;
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
