// Newline-delimited JSON framing as an explicit state machine: accepts input split at any byte,
// enforces the maximum message size inside the parser, and decodes each line as strict UTF-8.

import { DEFAULT_MAX_MESSAGE_BYTES } from '../limits.ts';


export type FrameEvent =
  | { kind: 'line'; text: string }
  /** A line longer than the limit; its bytes were discarded as they arrived. */
  | { kind: 'oversized'; bytes: number; limit: number }
  | { kind: 'invalid-utf8'; bytes: number };

export class LineFramer {
  readonly #maxBytes: number;
  readonly #decoder = new TextDecoder('utf-8', { fatal: true });
  #chunks: Buffer[] = [];
  #length = 0;
  /** Bytes of the current line seen while discarding it (past the limit). */
  #discarded = 0;
  #state: 'collecting' | 'discarding' = 'collecting';

  constructor(maxBytes: number = DEFAULT_MAX_MESSAGE_BYTES) {
    this.#maxBytes = maxBytes;
  }

  /** Feeds a chunk; returns the complete frames it finished, in order. */
  push(chunk: Buffer): FrameEvent[] {
    const events: FrameEvent[] = [];
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl === -1 ? chunk.length : nl;
      this.#take(chunk.subarray(start, end));
      if (nl === -1) break;
      const event = this.#finishLine();
      if (event) events.push(event);
      start = nl + 1;
    }
    return events;
  }

  /** At end of input: an unterminated last line is still a message. */
  end(): FrameEvent[] {
    if (this.#state === 'collecting' && this.#length === 0) return [];
    const event = this.#finishLine();
    return event ? [event] : [];
  }

  #take(part: Buffer): void {
    if (part.length === 0) return;
    if (this.#state === 'discarding') {
      this.#discarded += part.length;
      return;
    }
    // One byte past the limit is still taken: it may be the CR of a CRLF ending, which is not the message's
    // (a message of exactly the limit is a line whichever ending it has; `#finishLine` judges once it knows).
    if (this.#length + part.length > this.#maxBytes + 1) {
      this.#state = 'discarding';
      this.#discarded = this.#length + part.length;
      this.#chunks = [];
      this.#length = 0;
      return;
    }
    this.#chunks.push(part);
    this.#length += part.length;
  }

  #finishLine(): FrameEvent | null {
    if (this.#state === 'discarding') {
      const bytes = this.#discarded;
      this.#state = 'collecting';
      this.#discarded = 0;
      return { kind: 'oversized', bytes, limit: this.#maxBytes };
    }
    let bytes = this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks, this.#length);
    this.#chunks = [];
    this.#length = 0;
    if (bytes.length > 0 && bytes[bytes.length - 1] === 0x0d) bytes = bytes.subarray(0, bytes.length - 1);
    if (bytes.length > this.#maxBytes) return { kind: 'oversized', bytes: bytes.length, limit: this.#maxBytes };
    if (bytes.length === 0) return null;
    let text: string;
    try {
      text = this.#decoder.decode(bytes);
    } catch {
      // The fatal decoder throws only on malformed UTF-8; the message becomes a parse error.
      return { kind: 'invalid-utf8', bytes: bytes.length };
    }
    if (text.trim() === '') return null;
    return { kind: 'line', text };
  }
}
