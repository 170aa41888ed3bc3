// A frame of a transport read once, on the thread that received it: parsed, and each message in it
// classified as the core classifies it. The main thread learns from this what it must know before the
// core has seen a line (the requests it carries, for crash recovery, shutdown and duplicate ids); it never
// reads a JSON-RPC message any other way. The core, on its worker, parses the text itself; on this
// thread (stdio) it is handed this parse instead (connection/parsed-lines.ts).

import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { type Classified, classify } from './jsonrpc.ts';
import { nestsDeeperThan } from './limits.ts';
import { parseMessageText } from './meta-cache.ts';
import { MAX_BATCH_LENGTH, MAX_JSON_DEPTH } from '../limits.ts';

/** The messages of one frame, each with its parsed value (a batch element is handed on alone after a crash). */
export interface ReadFrame {
  readonly batch: boolean;
  /**
   * The messages the core will handle one by one, in order: none for a batch it refuses whole (empty, or
   * longer than MAX_BATCH_LENGTH: one error with id null answers it).
   */
  readonly messages: readonly Classified[];
  /** The parsed value of each of `messages`, at the same index. */
  readonly values: readonly unknown[];
}

/** Reads a line of text; null when it is not JSON (the core answers it with a parse error, id null). */
export function readFrame(text: string): ReadFrame | null {
  let parsed: unknown;
  try {
    parsed = parseMessageText(text);
  } catch {
    // Not JSON: nothing in it names a request; the core answers -32700 with id null.
    return null;
  }
  return readParsed(parsed);
}

/** As `readFrame`, for a value the transport has already parsed (HTTP reads a POST's body to answer on it). */
export function readParsed(parsed: unknown): ReadFrame {
  if (!Array.isArray(parsed)) return { batch: false, messages: [classify(parsed)], values: [parsed] };
  const values = parsed.length > MAX_BATCH_LENGTH ? [] : parsed;
  return { batch: true, messages: values.map(classify), values };
}

/** The request a `notifications/cancelled` names, if the message is one. */
export function cancelledRequest(msg: Classified): RequestId | undefined {
  if (msg.kind !== 'notification' || msg.method !== 'notifications/cancelled') return undefined;
  const target = msg.params.requestId;
  return typeof target === 'string' || typeof target === 'number' ? target : undefined;
}

/** A request's progress token (`params._meta.progressToken`), if it has one. */
export function progressTokenOf(msg: Extract<Classified, { kind: 'request' }>): string | number | undefined {
  const meta = msg.params._meta;
  const token = typeof meta === 'object' && meta !== null ? (meta as { progressToken?: unknown }).progressToken : undefined;
  return typeof token === 'string' || typeof token === 'number' ? token : undefined;
}

/**
 * The text of one parsed message (a batch's element handed on as a line of its own, a batch rewritten), never
 * throwing. JSON.parse reads nesting of any depth, but JSON.stringify recurses and overflows the stack on a
 * few thousand levels (a 20 KB line of brackets threw out of the session and ended the process). A message
 * nesting past MAX_JSON_DEPTH is refused by the core for its kind, id and method alone (handle.ts `tooDeep`),
 * so it is written as a stand-in the core refuses the same way: its scalar members as they are, each object
 * or array member replaced by an empty one nested just past the limit.
 */
export function messageText(value: unknown): string {
  if (!nestsDeeperThan(value, MAX_JSON_DEPTH)) return JSON.stringify(value);
  if (Array.isArray(value)) return JSON.stringify([nestedLike(value)]);
  const standIn: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value as Record<string, unknown>)) {
    // defineProperty, not assignment: a `__proto__` member stays a member.
    Object.defineProperty(standIn, key, { value: typeof member === 'object' && member !== null ? nestedLike(member) : member, enumerable: true, writable: true, configurable: true });
  }
  return JSON.stringify(standIn);
}

/** An empty array or object like `like`, nested MAX_JSON_DEPTH levels (so a member of a message passes the limit). */
function nestedLike(like: object): unknown {
  const array = Array.isArray(like);
  let nest: unknown = array ? [] : {};
  for (let depth = 1; depth < MAX_JSON_DEPTH; depth++) nest = array ? [nest] : { _: nest };
  return nest;
}
