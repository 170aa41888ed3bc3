// Where the operator's log goes: stderr, through a bounded queue that never blocks the main thread.
// Measured on Node 20, 22 and 24 on Linux (docs/limits.md, `LOG_QUEUE_MAX_BYTES`): Node writes a stderr
// pipe or socket asynchronously while its descriptor is non-blocking, so a host that never reads it had
// every record kept in the process's memory, without end; and a terminal, or a pipe a child process made
// blocking again (libuv makes a child's inherited stdio blocking, and the description is shared: tsx's
// esbuild service does it to `npx tsx examples/stdio.ts`), is written synchronously, so a reader that
// stops blocks the whole server at its next log line. Here the descriptor is put in non-blocking mode
// before each write (one fcntl; libuv then queues what the reader has not taken) — each, not once per
// stream: the flag belongs to the file description every process given this stderr shares, and any of
// them spawning a child with it inherited clears it again, at any time (measured on Node 20: a thread
// started from source through tsx spawns esbuild and leaves our stderr blocking), and records are written
// only while the stream holds fewer than LOG_QUEUE_MAX_BYTES characters not yet taken; past it they are
// dropped and counted, and once the stream has drained one line says how many. A file is written
// synchronously by Node and never holds anything back: nothing is dropped there.

import { LOG_QUEUE_MAX_BYTES } from '../limits.ts';

/** What the sink needs of a stream: process.stderr is one. */
export interface QueuedStream {
  write(text: string): unknown;
  readonly writableLength: number;
  /** Past this many queued characters a write returns false and 'drain' follows: the queue may not stop below it. */
  readonly writableHighWaterMark?: number;
  once(event: 'drain', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  /** A pipe's, socket's or terminal's libuv handle (none for a file, nor in a worker thread). */
  readonly _handle?: { setBlocking?: (blocking: boolean) => number } | null;
}

export class BoundedSink {
  readonly #stream: QueuedStream;
  readonly #maxBytes: number;
  readonly #clock: () => Date;
  /** Records dropped since the queue was last full: while any are, every record is (the line saying so comes first). */
  #dropped = 0;
  #broken = false;

  constructor(stream: QueuedStream, maxBytes: number = LOG_QUEUE_MAX_BYTES, clock: () => Date = () => new Date()) {
    this.#stream = stream;
    // A drop waits for 'drain', which node emits only for a queue that reached the stream's high-water mark.
    this.#maxBytes = Math.max(maxBytes, stream.writableHighWaterMark ?? 0);
    this.#clock = clock;
    // A reader that went away (EPIPE) ends the log, not the process.
    stream.on('error', () => (this.#broken = true));
  }

  /** Records dropped and not yet reported. */
  get dropped(): number {
    return this.#dropped;
  }

  /**
   * `count` records were lost before they reached the queue (a thread's output the main thread did not take
   * in time): counted with the queue's own drops while it is dropping (one line says both), else `line` says so now.
   */
  lost(count: number, line: string): void {
    if (this.#broken || count <= 0) return;
    // Its line dropped for a full queue is `count` records dropped, not one: the queue's report says them all.
    this.#enqueue(line, count);
  }

  write(text: string): void {
    this.#enqueue(text, 1);
  }

  /** Writes `text`, which stands for `records` records, or drops and counts them all. */
  #enqueue(text: string, records: number): void {
    if (this.#broken) return;
    if (this.#dropped > 0) return void (this.#dropped += records);
    const queued = this.#stream.writableLength;
    if (queued === 0 || queued + text.length <= this.#maxBytes) {
      this.#stream._handle?.setBlocking?.(false);
      return void this.#stream.write(text);
    }
    // Full: this record and the next are dropped until the stream has taken everything it holds.
    this.#dropped = records;
    this.#stream.once('drain', () => this.#report());
  }

  #report(): void {
    const n = this.#dropped;
    this.#dropped = 0;
    if (this.#broken) return;
    this.#stream._handle?.setBlocking?.(false);
    this.#stream.write(`${this.#clock().toISOString()} super-pi warning: ${n} log record${n === 1 ? ' was' : 's were'} dropped: stderr was not read while ${this.#maxBytes} characters of log waited for it (LOG_QUEUE_MAX_BYTES) {"dropped":${n}}\n`);
  }
}

let shared: BoundedSink | null = null;

/** The process's stderr sink, made once: every logger of the process writes through it, so they share one queue. */
export function stderrSink(): BoundedSink {
  shared ??= new BoundedSink(process.stderr as QueuedStream);
  return shared;
}
