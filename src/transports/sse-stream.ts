// One Server-Sent Events stream: unique event ids per session, keep-alive comments so idle streams
// survive proxies, and a bounded replay buffer for a client that reconnects with Last-Event-ID.

import type { ReplyTarget } from './web-reply.ts';
import { SSE_KEEPALIVE_MS, SSE_REPLAY_EVENTS } from '../limits.ts';


/** Per-session event ids and the replay buffer of the session's standalone (GET) stream. */
export class EventLog {
  #next = 1;
  /** Created with the first event to remember: most sessions never send one on their GET stream. */
  #buffer: { id: string; data: string }[] | null = null;

  nextId(): string {
    return String(this.#next++);
  }

  remember(id: string, data: string): void {
    const buffer = (this.#buffer ??= []);
    buffer.push({ id, data });
    if (buffer.length > SSE_REPLAY_EVENTS) buffer.shift();
  }

  /** Events after `lastEventId`, or null when that id is no longer (or never was) in the buffer. */
  after(lastEventId: string): { id: string; data: string }[] | null {
    const buffer = this.#buffer ?? [];
    const i = buffer.findIndex((e) => e.id === lastEventId);
    return i === -1 ? null : buffer.slice(i + 1);
  }
}

export class SseStream {
  readonly #res: ReplyTarget;
  readonly #keepAlive: NodeJS.Timeout;
  #open = true;

  constructor(res: ReplyTarget, headers: Record<string, string> = {}) {
    this.#res = res;
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache, no-transform', Connection: 'keep-alive', ...headers });
    res.flushHeaders();
    this.#keepAlive = setInterval(() => this.#write(': keep-alive\n\n'), SSE_KEEPALIVE_MS);
    this.#keepAlive.unref();
    res.on('close', () => this.#closed());
  }

  get open(): boolean {
    return this.#open;
  }

  send(id: string, data: string): void {
    this.#write(`id: ${id}\nevent: message\ndata: ${data}\n\n`);
  }

  end(): void {
    if (!this.#open) return;
    this.#closed();
    this.#res.end();
  }

  #write(chunk: string): void {
    if (this.#open) this.#res.write(chunk);
  }

  #closed(): void {
    this.#open = false;
    clearInterval(this.#keepAlive);
  }
}
