// Output flow control for a stream transport (stdio): a line is written only while the stream accepts
// more; otherwise it waits, in order, for 'drain', and the input is paused so no new request adds to it.

import type { Readable, Writable } from 'node:stream';
import { MAX_OUTPUT_BACKLOG_BYTES } from '../limits.ts';


/**
 * Writes lines to stdout as fast as the host reads them: when `write` says the stream is full, later
 * lines wait here for 'drain' (in order), and the input is paused so no new request adds to them.
 */
export class Backpressure {
  readonly #output: Writable;
  readonly #input: Readable;
  readonly #maxBacklogBytes: number;
  readonly #backlog: string[] = [];
  #backlogBytes = 0;
  #waiting = false;
  #open = true;
  #reading = true;
  #idle: (() => void)[] = [];

  constructor(output: Writable, input: Readable, maxBacklogBytes = MAX_OUTPUT_BACKLOG_BYTES) {
    this.#output = output;
    this.#input = input;
    this.#maxBacklogBytes = maxBacklogBytes;
    output.on('error', () => {
      // The host went away (EPIPE): nothing more can be delivered, so stop writing.
      this.#close();
    });
  }

  send(text: string): void {
    if (!this.#open) return;
    if (this.#waiting) {
      this.#backlogBytes += Buffer.byteLength(text);
      if (this.#backlogBytes > this.#maxBacklogBytes) return this.#close();
      this.#backlog.push(text);
      return;
    }
    if (!this.#output.write(text)) this.#wait();
  }

  /** The output is full: lines wait for 'drain' and the input is paused. */
  get full(): boolean {
    return this.#waiting;
  }

  /** The transport is ending: the input stays as it is (a paused one is not resumed). */
  stopReading(): void {
    this.#reading = false;
  }

  /** Resolves once the backlog and what was written have been handed to the system, or after `ms`. */
  flush(ms: number): Promise<void> {
    if (!this.#open) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      const written = () => {
        if (this.#open) this.#output.write('', done);
        else done();
      };
      if (this.#waiting) this.#idle.push(written);
      else written();
    });
  }

  #wait(): void {
    this.#waiting = true;
    if (this.#reading) this.#input.pause();
    this.#output.once('drain', () => this.#drained());
  }

  #drained(): void {
    this.#waiting = false;
    while (this.#open && this.#backlog.length > 0) {
      const text = this.#backlog.shift() as string;
      this.#backlogBytes -= Buffer.byteLength(text);
      if (!this.#output.write(text)) return this.#wait();
    }
    if (this.#reading && this.#open) this.#input.resume();
    const idle = this.#idle;
    this.#idle = [];
    for (const f of idle) f();
  }

  #close(): void {
    this.#open = false;
    this.#backlog.length = 0;
    this.#backlogBytes = 0;
    if (this.#reading && this.#input.isPaused()) this.#input.resume();
    const idle = this.#idle;
    this.#idle = [];
    for (const f of idle) f();
  }
}
