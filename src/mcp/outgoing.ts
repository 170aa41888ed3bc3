// What the core sends, with its routing: the request a message answers (`inReplyTo`) or belongs to
// (`relatedTo`). Transports and the session route by these fields and never read a line to learn them;
// the builders here are the only way the core makes a line, so the fields always agree with the text.

import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { errorLine, notificationLine, requestLine, resultLine } from './jsonrpc.ts';

export interface Outgoing {
  /** One JSON-RPC message, serialised (without its newline). */
  readonly line: string;
  /** The client request this response or error answers; absent for an error with id null (no request is named). */
  readonly inReplyTo?: RequestId;
  /** The client request this notification or server-to-client request belongs to (its progress, a question it asks). */
  readonly relatedTo?: RequestId;
  /** Set on an error response: a transport that must know whether a request failed (an HTTP initialize) need not read the line. */
  readonly isError?: true;
  /** The JSON-RPC error code of an error response: a 2026-07-28 HTTP answer takes its status from it (404 for -32601, 400 for bad params). */
  readonly errorCode?: number;
  /** On the answer to `initialize`: the version it negotiated (the observer shows it without reading the line). */
  readonly negotiated?: string;
  /**
   * On an error with id null that refuses a whole batch: the ids of the requests in it. JSON-RPC answers a
   * refused batch with that one error, so they are answered, and no longer in flight (the session stops
   * counting them, and their ids are free again).
   */
  readonly settles?: readonly RequestId[];
}

/** The result of request `id`. */
export const answer = (id: RequestId, result: unknown): Outgoing => ({ line: resultLine(id, result), inReplyTo: id });

/**
 * The result of request `id` with `members` appended: JSON object members, already serialised
 * (`"k":v,…`, no braces), that many answers share, so they are serialised once rather than per answer.
 * `result` is a plain object (its JSON ends with `}`); the members must not repeat any of its keys.
 */
export function answerWith(id: RequestId, result: Record<string, unknown>, members: string): Outgoing {
  const line = resultLine(id, result);
  // The line ends with the result's closing brace and the message's; an empty result (`{}`) takes no comma.
  const empty = line.charCodeAt(line.length - 3) === 0x7b;
  return { line: `${line.slice(0, -2)}${empty ? '' : ','}${members}}}`, inReplyTo: id };
}

/** The answer to `initialize`, which negotiated `version`. */
export const initializeAnswer = (id: RequestId, result: unknown, version: string): Outgoing =>
  ({ line: resultLine(id, result), inReplyTo: id, negotiated: version });

/** An error answering request `id`, or (id null) a message whose id could not be known. */
export function refusal(id: RequestId | null, code: number, message: string, data?: unknown): Outgoing {
  const line = errorLine(id, code, message, data);
  return id === null ? { line, isError: true, errorCode: code } : { line, inReplyTo: id, isError: true, errorCode: code };
}

/** A notification, on behalf of request `relatedTo` when it belongs to one. */
export function notice(method: string, params: unknown, relatedTo?: RequestId): Outgoing {
  const line = notificationLine(method, params);
  return relatedTo === undefined ? { line } : { line, relatedTo };
}

/** A request of the server's own (`id` in the server's id space) made on behalf of client request `relatedTo`. */
export const question = (id: RequestId, method: string, params: unknown, relatedTo: RequestId): Outgoing =>
  ({ line: requestLine(id, method, params), relatedTo });

/** A request of the server's own that belongs to no client request (it asks for the session, e.g. `roots/list`). */
export const ownQuestion = (id: string, method: string, params: unknown): Outgoing => ({ line: requestLine(id, method, params) });
