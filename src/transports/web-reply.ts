// A reply to a web-standard Request, written the way the Streamable HTTP code decides it (status and headers, then
// one body or a stream of SSE events) and read as a web-standard `Response`: `response` resolves with a
// plain body when the reply ends before anything was streamed, else with a `ReadableStream` body at the
// first streamed write. The node:http adapter (or any other server) writes that Response to the wire.

/** What the Streamable HTTP code writes its replies to: a ServerResponse-shaped subset. */
export interface ReplyTarget {
  writeHead(status: number, headers: Readonly<Record<string, string>>): unknown;
  /** Sends the status and headers now: the body is a stream that has not written yet. */
  flushHeaders(): void;
  write(chunk: string): unknown;
  end(chunk?: string): unknown;
  /** The client went away: nothing written reaches it. */
  readonly destroyed: boolean;
  /** The status and headers have been sent (a stream began). */
  readonly headersSent: boolean;
  /** What was written has not left yet (a `write` said so, no 'drain' since): a keep-alive comment is not added. */
  readonly writableNeedDrain: boolean;
  /** Bytes written and not yet taken by the client's connection: an SSE stream is ended past its backlog limit. */
  readonly writableLength: number;
  /** Ends the reply at once, unsent bytes dropped: the client left too much unread. */
  destroy(): unknown;
  /** The connection a node:http reply is written to (the node's output budget counts it); none for a web-standard reply. */
  readonly socket?: object | null;
  /** 'close': the reply ended or the client went away. */
  on(event: 'close', listener: () => void): unknown;
  /** 'drain': what a `write` that returned false held up has been taken (a forwarded reply reads on). */
  once(event: 'drain', listener: () => void): unknown;
}

const encoder = new TextEncoder();

/** The body's queuing strategy counts bytes (its high-water mark; more may be queued, up to the backlog limit). */
export const BODY_HIGH_WATER_BYTES = 16 * 1024;

export class WebReply implements ReplyTarget {
  readonly response: Promise<Response>;
  #resolve!: (response: Response) => void;
  #status = 200;
  #headers: Readonly<Record<string, string>> = {};
  #stream: ReadableStreamDefaultController<Uint8Array> | null = null;
  #destroyed = false;
  #ended = false;
  #onClose: (() => void)[] = [];
  #onDrain: (() => void)[] = [];
  /**
   * The request this replies to, held until the reply closes. A `Request` made with a caller's `signal` follows it
   * through a WeakRef to its own controller (undici): once nothing holds the Request, the collector takes that
   * controller and the caller's abort never reaches `request.signal`, so a stream would stay open for a client
   * long gone, holding its slot under the resumed-stream and session limits.
   */
  #request: object | null;

  constructor(request: object | null = null) {
    this.#request = request;
    this.response = new Promise((resolve) => (this.#resolve = resolve));
  }

  get destroyed(): boolean {
    return this.#destroyed;
  }

  get headersSent(): boolean {
    return this.#stream !== null || this.#ended;
  }

  /** The body's reader has not taken all that was enqueued: a keep-alive comment would only wait behind it. */
  get writableNeedDrain(): boolean {
    return this.writableLength > 0;
  }

  /** Bytes enqueued on the body that its reader has not taken. */
  get writableLength(): number {
    const stream = this.#stream;
    if (stream === null || this.#ended || this.#destroyed) return 0;
    return Math.max(0, BODY_HIGH_WATER_BYTES - (stream.desiredSize ?? BODY_HIGH_WATER_BYTES));
  }

  writeHead(status: number, headers: Readonly<Record<string, string>>): this {
    this.#status = status;
    this.#headers = headers;
    return this;
  }

  flushHeaders(): void {
    this.#open();
  }

  /** False once the body holds its high-water mark unread ('drain' when its reader took some). */
  write(chunk: string): boolean {
    if (this.#ended) return false;
    const stream = this.#open();
    if (stream === null || this.#destroyed) return true;
    stream.enqueue(encoder.encode(chunk));
    return (stream.desiredSize ?? 1) > 0;
  }

  end(chunk?: string): this {
    if (this.#ended) return this;
    this.#ended = true;
    const stream = this.#stream;
    if (stream === null) {
      this.#resolve(new Response(chunk ?? null, { status: this.#status, headers: this.#headers }));
    } else if (!this.#destroyed) {
      if (chunk !== undefined) stream.enqueue(encoder.encode(chunk));
      stream.close();
    }
    this.#closed();
    return this;
  }

  on(_event: 'close', listener: () => void): this {
    this.#onClose.push(listener);
    return this;
  }

  once(_event: 'drain', listener: () => void): this {
    this.#onDrain.push(listener);
    return this;
  }

  /** Ends the body with an error: its reader sees the reply cut, and what was queued is dropped. */
  destroy(): void {
    if (this.#destroyed) return;
    const stream = this.#stream;
    if (stream !== null && !this.#ended) stream.error(new Error('the reply was ended: its client left too much output unread'));
    this.abort();
  }

  /** The client went away (its request's signal aborted, or the reader cancelled the body). */
  abort(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#closed();
  }

  #open(): ReadableStreamDefaultController<Uint8Array> | null {
    if (this.#stream !== null || this.#ended) return this.#stream;
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({
      start: (c) => {
        controller = c;
      },
      // The reader took enough that the body is below its high-water mark.
      pull: () => {
        const waiting = this.#onDrain;
        this.#onDrain = [];
        for (const f of waiting) f();
      },
      cancel: () => this.abort(),
    }, new ByteLengthQueuingStrategy({ highWaterMark: BODY_HIGH_WATER_BYTES }));
    this.#stream = controller;
    this.#resolve(new Response(body, { status: this.#status, headers: this.#headers }));
    return controller;
  }

  #closed(): void {
    this.#request = null;
    const listeners = this.#onClose;
    this.#onClose = [];
    for (const f of listeners) f();
  }
}
