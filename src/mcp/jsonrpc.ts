// JSON-RPC 2.0 framing for MCP: classifying one parsed message, the error catalogue, reply builders.

import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { MAX_METHOD_LENGTH, MAX_REQUEST_ID_LENGTH } from '../limits.ts';

/** The error catalogue: stable codes, one place. */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** MCP: a resource URI that does not name a resource this caller may see. */
  ResourceNotFound: -32002,
  /** The actor or worker serving the request died before it could answer. */
  RequestAborted: -32010,
  /** A bounded queue was full: the request was refused, not lost. */
  ServerBusy: -32011,
} as const;
export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];

export type Params = Record<string, unknown>;

export type Classified =
  | { kind: 'request'; id: RequestId; method: string; params: Params }
  | { kind: 'notification'; method: string; params: Params }
  | { kind: 'response'; id: RequestId; result?: unknown; error?: { code: number; message: string; data?: unknown } }
  | { kind: 'invalid'; id: RequestId | null; reason: string }
  /** A notification the core drops with a log line: nothing answers a notification, not even a refusal. */
  | { kind: 'dropped'; reason: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isId = (v: unknown): v is RequestId =>
  (typeof v === 'string' && v.length <= MAX_REQUEST_ID_LENGTH) || (typeof v === 'number' && Number.isFinite(v));

/** Classifies one parsed JSON value (not an array) as a JSON-RPC message, or says why it is not one. */
export function classify(msg: unknown): Classified {
  if (!isObject(msg)) return { kind: 'invalid', id: null, reason: 'a JSON-RPC message must be an object' };
  const id = isId(msg.id) ? msg.id : null;
  if (msg.jsonrpc !== '2.0') return { kind: 'invalid', id, reason: 'jsonrpc must be "2.0"' };
  if ('method' in msg) {
    if (typeof msg.method !== 'string' || msg.method.length === 0) return { kind: 'invalid', id, reason: 'method must be a non-empty string' };
    // No method is this long; one that is would be kept, echoed and logged whole.
    if (msg.method.length > MAX_METHOD_LENGTH) {
      const reason = `method is longer than MAX_METHOD_LENGTH (${MAX_METHOD_LENGTH}) characters`;
      return 'id' in msg ? { kind: 'invalid', id, reason } : { kind: 'dropped', reason: `a notification was dropped: its ${reason}` };
    }
    if (msg.params !== undefined && !isObject(msg.params)) return { kind: 'invalid', id, reason: 'params must be an object' };
    const params = (msg.params ?? {}) as Params;
    if (!('id' in msg)) return { kind: 'notification', method: msg.method, params };
    if (!isId(msg.id)) {
      return { kind: 'invalid', id: null, reason: typeof msg.id === 'string' ? `id is longer than MAX_REQUEST_ID_LENGTH (${MAX_REQUEST_ID_LENGTH}) characters` : 'id must be a string or a number' };
    }
    return { kind: 'request', id: msg.id, method: msg.method, params };
  }
  if (isId(msg.id) && ('result' in msg || 'error' in msg)) {
    const error = isObject(msg.error) && typeof msg.error.code === 'number' && typeof msg.error.message === 'string'
      ? { code: msg.error.code, message: msg.error.message, data: msg.error.data }
      : undefined;
    return { kind: 'response', id: msg.id, result: msg.result, ...(error ? { error } : {}) };
  }
  return { kind: 'invalid', id, reason: 'a message needs a method (request or notification) or a result/error (response)' };
}

export function resultLine(id: RequestId, result: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, result });
}

export function errorLine(id: RequestId | null, code: number, message: string, data?: unknown): string {
  const error = data === undefined ? { code, message } : { code, message, data };
  return JSON.stringify({ jsonrpc: '2.0', id, error });
}

export function notificationLine(method: string, params: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', method, params });
}

export function requestLine(id: RequestId, method: string, params: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method, params });
}

/** A key for a request id that keeps `1` and `"1"` apart. */
export function idKey(id: RequestId): string {
  return typeof id === 'number' ? `n:${id}` : `s:${id}`;
}

/** Why a request reusing the id of one in flight is refused (MCP: an id is never reused within a session). */
export function reusedIdMessage(id: RequestId): string {
  return `Invalid request: id ${JSON.stringify(id)} is already used by a request in flight`;
}
