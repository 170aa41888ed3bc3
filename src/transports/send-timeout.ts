// The send timeout of HTTP connections (nginx's `send_timeout`): a connection holding reply bytes in the
// process that its client took none of for HTTP_SEND_TIMEOUT_MS is destroyed. node:http keeps a reply's
// unsent bytes for as long as the connection stays open, finished reply or not, and neither the SSE
// backlog bound (open streams only) nor any session limit counts a finished one. One timer sweeps every
// connection a quarter timeout apart; a connection costs an entry in a Map, and its check is three reads.

import type { Socket } from 'node:net';
import type { Clock } from '../time/clock.ts';
import { HTTP_SEND_TIMEOUT_MS } from '../limits.ts';

/** Sweeps per timeout: a stalled connection is closed at most a quarter timeout late. */
const SWEEPS_PER_TIMEOUT = 4;

/** What the sweep last saw of one connection. */
interface Progress {
  /** Bytes whose write has completed (taken by the system): it grows while the client reads. */
  taken: number;
  /** Bytes of the write under way that the system has not taken yet: it falls while the client reads. */
  queued: number;
  /** When either last moved, or the connection last had nothing waiting, on the clock. */
  since: number;
}

export class SendTimeout {
  readonly #timeoutMs: number;
  readonly #clock: Clock;
  readonly #onTimeout: (bytes: number) => void;
  /** Every watched connection, by its socket (not keyed by input: one entry per accepted connection). */
  readonly #sockets = new Map<Socket, Progress>();
  #timer: unknown = null;

  /** `onTimeout`: a connection was destroyed with `bytes` its client had not taken. */
  constructor(clock: Clock, onTimeout: (bytes: number) => void, timeoutMs: number = HTTP_SEND_TIMEOUT_MS) {
    if (!Number.isFinite(timeoutMs) || timeoutMs < 1) throw new RangeError(`the send timeout must be at least 1 ms, not ${timeoutMs}`);
    this.#clock = clock;
    this.#onTimeout = onTimeout;
    this.#timeoutMs = timeoutMs;
  }

  /** Connections watched (the timer runs while there is one). */
  get size(): number {
    return this.#sockets.size;
  }

  /** Watches an accepted connection until it closes. */
  watch(socket: Socket): void {
    this.#sockets.set(socket, { taken: taken(socket), queued: queued(socket), since: this.#clock.now() });
    socket.once('close', () => this.forget(socket));
    this.#timer ??= this.#clock.setInterval(() => this.#sweep(), Math.max(1, this.#timeoutMs / SWEEPS_PER_TIMEOUT), { unref: true });
  }

  /** No longer an HTTP connection (upgraded to a WebSocket, which bounds its own output), or closed. */
  forget(socket: Socket): void {
    if (!this.#sockets.delete(socket) || this.#sockets.size > 0) return;
    this.stop();
  }

  /** Stops the sweep (the server is closing). */
  stop(): void {
    if (this.#timer === null) return;
    this.#clock.clearInterval(this.#timer);
    this.#timer = null;
  }

  #sweep(): void {
    const now = this.#clock.now();
    for (const [socket, progress] of this.#sockets) {
      const waiting = socket.writableLength;
      const done = taken(socket);
      const left = queued(socket);
      const moved = done !== progress.taken || left < progress.queued;
      progress.taken = done;
      progress.queued = left;
      if (waiting === 0 || moved) {
        progress.since = now;
        continue;
      }
      if (now - progress.since < this.#timeoutMs) continue;
      this.forget(socket);
      try {
        socket.destroy();
        this.#onTimeout(waiting);
      } catch {
        // Forgotten already; the other connections are still swept (a throw here would end the process).
      }
    }
  }
}

/**
 * What is left of the write under way (libuv's write queue, which falls with every partial write): node
 * hands a stalled socket's backlog to the system as one write, so its completion alone would say nothing
 * until the whole backlog had left, and a slow reader of a large one would look stalled.
 */
function queued(socket: Socket): number {
  return (socket as unknown as { readonly _handle?: { readonly writeQueueSize?: number } | null })._handle?.writeQueueSize ?? 0;
}

/**
 * The connection's writes that have completed: those written minus those still waiting. A string still
 * waiting counts its characters there but its bytes in `bytesWritten`, so a new non-ASCII write may read
 * as progress; a stalled connection that is still being written to is an open SSE stream, which the
 * output backlog bounds (MAX_OUTPUT_BACKLOG_BYTES). With nothing new written the figure is exact.
 */
function taken(socket: Socket): number {
  return (socket.bytesWritten ?? 0) - socket.writableLength;
}
