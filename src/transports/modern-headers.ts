// The 2026-07-28 Streamable HTTP headers that repeat the body (`MCP-Protocol-Version`, `Mcp-Method`,
// `Mcp-Name`): an intermediary routes by them, so a request that omits one or disagrees with the body is
// refused (-32020, HTTP 400), and the answer's HTTP status follows its JSON-RPC error code.

import { isModernRequest, META_PROTOCOL_VERSION, metaField, metaOf, ModernErrorCode } from '../mcp/era.ts';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { type Classified, ErrorCode, errorLine, type Params } from '../mcp/jsonrpc.ts';
import { nestsDeeperThan } from '../mcp/limits.ts';
import { keptNesting } from '../mcp/meta-cache.ts';
import { readModernContext } from '../mcp/modern.ts';
import type { Outgoing } from '../mcp/outgoing.ts';
import { MAX_JSON_DEPTH } from '../limits.ts';

/** The body field `Mcp-Name` repeats, by method (SEP-2243; the Tasks extension, SEP-2663, adds its methods' `taskId`). */
const nameField: ReadonlyMap<string, string> = new Map([
  ['tools/call', 'name'], ['prompts/get', 'name'], ['resources/read', 'uri'],
  ['tasks/get', 'taskId'], ['tasks/update', 'taskId'], ['tasks/cancel', 'taskId'],
]);

const BASE64_PREFIX = '=?base64?';
const BASE64_SUFFIX = '?=';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * A header value as the client meant it: surrounding whitespace is not part of it (RFC 9110 §5.5), and a
 * value the client could not send as visible ASCII comes wrapped as `=?base64?…?=` (UTF-8 inside).
 * Null: a wrapper whose content is not valid base64 of valid UTF-8.
 */
export function decodeHeaderValue(raw: string): string | null {
  const value = raw.trim();
  if (!value.startsWith(BASE64_PREFIX) || !value.endsWith(BASE64_SUFFIX) || value.length < BASE64_PREFIX.length + BASE64_SUFFIX.length) return value;
  const encoded = value.slice(BASE64_PREFIX.length, value.length - BASE64_SUFFIX.length);
  if (!BASE64.test(encoded)) return null;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(encoded, 'base64'));
  } catch (err) {
    if (err instanceof TypeError) return null; // not UTF-8: the header names nothing the body can hold
    throw err;
  }
}

/**
 * Why the headers of a modern request's POST disagree with its body, or null when they agree. Each of
 * `MCP-Protocol-Version` and `Mcp-Method` is required on every request, and `Mcp-Name` whenever the body
 * has the field it repeats: a router that reads headers only must never see a different request than the
 * server runs.
 */
export function headerMismatch(header: (name: string) => string | undefined, method: string, params: Params): string | null {
  const version = header('mcp-protocol-version')?.trim();
  const declared = metaField(metaOf(params), META_PROTOCOL_VERSION);
  if (version === undefined) return 'Header mismatch: a 2026-07-28 request needs the MCP-Protocol-Version header';
  if (declared !== undefined && version !== declared) {
    return `Header mismatch: MCP-Protocol-Version is ${JSON.stringify(version)} but the request's _meta names ${shown(declared)}`;
  }
  const named = header('mcp-method')?.trim();
  if (named === undefined) return `Header mismatch: a 2026-07-28 request needs the Mcp-Method header (${JSON.stringify(method)})`;
  if (named !== method) return `Header mismatch: Mcp-Method is ${JSON.stringify(named)} but the body's method is ${JSON.stringify(method)}`;
  const field = nameField.get(method);
  if (field === undefined) return null;
  const body = params[field];
  const raw = header('mcp-name');
  if (raw === undefined) {
    return typeof body === 'string' ? `Header mismatch: a ${method} request needs the Mcp-Name header (its params.${field})` : null;
  }
  const name = decodeHeaderValue(raw);
  if (name === null) return 'Header mismatch: Mcp-Name is wrapped as =?base64?…?= but is not base64 of UTF-8 text';
  if (name !== body) return `Header mismatch: Mcp-Name is ${JSON.stringify(name)} but the body's params.${field} is ${shown(body)}`;
  return null;
}

/** A body value named in a mismatch: a string as JSON, anything else by its type (it may nest past any stack). */
function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || value === undefined) return String(value);
  return Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * What a 2026-07-28 POST is refused with before any session sees it: headers that disagree with the body
 * (-32020), then an envelope the core would refuse (-32602 for a missing `_meta` field, -32022 for a version
 * we do not speak), each as HTTP 400, the request's id echoed. Null: the request goes on to the core.
 */
export function refuseModernPost(header: (name: string) => string | undefined, id: RequestId, method: string, params: Params): { status: number; body: string } | null {
  const mismatch = headerMismatch(header, method, params);
  if (mismatch !== null) return { status: 400, body: errorLine(id, ModernErrorCode.HeaderMismatch, mismatch) };
  // Read here on the main thread, before the core's own depth check: the envelope's recursive JSON.stringify
  // (the capabilities' size) must never meet a value deep enough to overflow. The params sit one level
  // below the message, which the core bounds at MAX_JSON_DEPTH.
  if (nestsDeeperThan(params, MAX_JSON_DEPTH - 1, keptNesting(params._meta))) {
    return { status: 400, body: errorLine(id, ErrorCode.InvalidParams, `Invalid params: the message nests deeper than MAX_JSON_DEPTH (${MAX_JSON_DEPTH}) levels of objects and arrays`) };
  }
  const context = readModernContext(method, params);
  if (Array.isArray(context)) return { status: 400, body: errorLine(id, context[0], context[1], context[2]) };
  return null;
}

/**
 * What a POST carrying 2026-07-28 requests is refused with before any session sees it, whether or not it
 * names a session (`refuseModernPost` for its one request): a session id is no way round the headers, since a
 * router that reads them must never see another request than the server runs. A modern request in a batch
 * is refused whole (400, -32600): the headers describe one request, and 2026-07-28 has no batches here.
 * Null: no modern request, or one whose headers and envelope agree.
 */
export function refuseModernMessages(header: (name: string) => string | undefined, messages: readonly Classified[], batch: boolean): { status: number; body: string } | null {
  const modern = messages.filter((m): m is Extract<Classified, { kind: 'request' }> => m.kind === 'request' && isModernRequest(m.method, m.params));
  const only = modern[0];
  if (only === undefined) return null;
  if (batch) {
    const message = 'Invalid request: a 2026-07-28 request cannot be sent in a JSON-RPC batch (its MCP-Protocol-Version, Mcp-Method and Mcp-Name headers describe one request); send it alone in its POST (nothing in this batch was run)';
    return { status: 400, body: errorLine(null, ErrorCode.InvalidRequest, message) };
  }
  return refuseModernPost(header, only.id, only.method, only.params);
}

/**
 * The HTTP status of a 2026-07-28 POST's JSON answer from the core: 404 for an unknown (or removed)
 * method, 400 for a capability the request did not declare; any other error a handler returns stays in
 * the body of a 200, as the spec's status table asks (it maps envelope errors only, refused above).
 */
export function modernHttpStatus(answers: readonly Outgoing[]): number {
  const code = answers.length === 1 ? answers[0]?.errorCode : undefined;
  if (code === ErrorCode.MethodNotFound) return 404;
  if (code === ModernErrorCode.MissingRequiredClientCapability) return 400;
  return 200;
}
