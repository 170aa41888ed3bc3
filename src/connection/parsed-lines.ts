// A line's parsed value, handed from the session to a connection actor on the same thread (stdio's
// in-thread scheduler) beside the line itself, so the line is parsed once (STYLE 8). Keyed by the
// message object the session casts: an actor on a worker thread receives a copy, finds nothing here and
// parses the text, as it always did. The text stays the message: it is what a restarted actor is
// redelivered and what crosses threads; the value is only a shortcut to what parsing it gives.

import type { ConnectionMessage } from './connection-actor.ts';

type LineMessage = Extract<ConnectionMessage, { k: 'line' }>;

/** Weak: an entry lives as long as its message (the session keeps that until the actor has handled it). */
const parsedLines = new WeakMap<LineMessage, object>();

/**
 * Notes that `message.line` parses to `value`, one JSON-RPC message (an object, not a batch). Nothing may
 * change `value` afterwards: the core reads it as it would read its own parse of the line, and it never
 * writes its input.
 */
export function rememberParsed(message: LineMessage, value: unknown): void {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) parsedLines.set(message, value);
}

/** The value `rememberParsed` noted for this very message object; undefined when the line must be parsed. */
export function parsedValueOf(message: LineMessage): object | undefined {
  return parsedLines.get(message);
}
