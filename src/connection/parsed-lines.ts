// A line's parsed value, handed from the session to a connection actor on the same thread (stdio's
// in-thread scheduler) beside the line itself, so the line is parsed once (STYLE 8). It rides on the
// message under a symbol key: structured clone copies string keys only, so an actor on a worker thread
// receives the text alone and parses it, as it always did, and nothing extra crosses the thread. The text
// stays the message: it is what a restarted actor is redelivered; the value is only what parsing it gives.
// The session attaches it only while its actor is on its own thread (`ActorRef.sameThread`): otherwise the
// parse would be kept alive, until the actor answers, for nothing. (A WeakMap keyed by the message did the
// same as the symbol, but its entries cost every POST of an HTTP server about 1 µs and GC work.)

import type { ReadFrame } from '../mcp/frame.ts';

export const PARSED: unique symbol = Symbol('the parsed line');

export interface LineMessage {
  readonly k: 'line';
  readonly line: string;
  /** The line parsed, when it is one JSON-RPC message (not a batch); present only on the thread that parsed it. */
  readonly [PARSED]?: object;
}

/**
 * The message for a line the session read as `read`. Nothing may change the parsed value afterwards: the
 * core reads it as it would read its own parse of the line, and it never writes its input.
 */
export function lineMessage(line: string, read: ReadFrame | null): LineMessage {
  const value = read !== null && !read.batch ? read.values[0] : undefined;
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? { k: 'line', line, [PARSED]: value } : { k: 'line', line };
}

/** The parsed value the message carries; undefined when the line must be parsed (a batch, or a copy from another thread). */
export function parsedValueOf(message: LineMessage): object | undefined {
  return message[PARSED];
}
