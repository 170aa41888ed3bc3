// Which protocol era a request belongs to, and how a modern (2026-07-28, stateless) answer is shaped.
// Legacy: an `initialize` handshake fixes version and capabilities for the connection. Modern: every
// request names them in `params._meta`, and nothing of one request outlives its answer.

import type { ClientCapabilities, Implementation } from '@modelcontextprotocol/sdk/types.js';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode, type Params } from './jsonrpc.ts';
import type { LogLevel } from './logging-level.ts';
import { answer, answerWith, type Outgoing } from './outgoing.ts';
import { CATALOG_CACHE_TTL_MS, RESOURCE_CACHE_TTL_MS } from '../limits.ts';

/** The modern revisions super-pi speaks, newest first (the legacy ones are in version.ts). */
export const modernVersions = ['2026-07-28'] as const;
export type ModernVersion = (typeof modernVersions)[number];

export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
export const META_LOG_LEVEL = 'io.modelcontextprotocol/logLevel';
/** On every notification of a `subscriptions/listen` stream: the id of the listen request that opened it. */
export const META_SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

/** Error codes the 2026-07-28 revision reserves (-32020 to -32099). */
export const ModernErrorCode = {
  /** An HTTP header (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`) disagrees with the body. */
  HeaderMismatch: -32020,
  /** The request needs a client capability its `_meta` did not declare. */
  MissingRequiredClientCapability: -32021,
  UnsupportedProtocolVersion: -32022,
} as const;

/** What a modern request said about its client: everything the core may know of it, for that request only. */
export interface ModernRequest {
  readonly method: string;
  readonly protocolVersion: ModernVersion;
  readonly clientCapabilities: ClientCapabilities;
  readonly clientInfo: Implementation | null;
  /** `io.modelcontextprotocol/logLevel`; null: no `notifications/message` for this request (a MUST NOT). */
  readonly logLevel: LogLevel | null;
}

export const isModernVersion = (v: unknown): v is ModernVersion =>
  typeof v === 'string' && (modernVersions as readonly string[]).includes(v);

/** A JSON object (not an array, not null). */
export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `params._meta` when it is an object; its keys are read as own properties only (it is caller input). */
export function metaOf(params: Params): Record<string, unknown> | undefined {
  return isRecord(params._meta) ? params._meta : undefined;
}

export function metaField(meta: Record<string, unknown> | undefined, key: string): unknown {
  return meta !== undefined && Object.hasOwn(meta, key) ? meta[key] : undefined;
}

/**
 * A request is modern when its `_meta` names a protocol version (whatever the value: a wrong one gets
 * the modern error, -32022), or when it is `server/discover`, which only the modern era has. Anything
 * else, `initialize` included, is legacy and is handled exactly as before.
 */
export function isModernRequest(method: string, params: Params): boolean {
  if (method === 'server/discover') return true;
  return metaField(metaOf(params), META_PROTOCOL_VERSION) !== undefined;
}

/** Methods 2026-07-28 removed: a modern request for one is an unknown method. */
export const removedInModern: ReadonlySet<string> = new Set(['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe']);

/** Cache hints by method (`CacheableResult`): absent for a method whose answer is not cacheable. */
const cacheTtl: ReadonlyMap<string, number> = new Map([
  ['server/discover', CATALOG_CACHE_TTL_MS],
  ['tools/list', CATALOG_CACHE_TTL_MS],
  ['prompts/list', CATALOG_CACHE_TTL_MS],
  ['resources/templates/list', CATALOG_CACHE_TTL_MS],
  ['resources/list', RESOURCE_CACHE_TTL_MS],
  ['resources/read', RESOURCE_CACHE_TTL_MS],
]);

/**
 * A result as a modern client receives it: `resultType: "complete"`, cache hints where the method has
 * them, and the server named in `_meta` (the spec's SHOULD), beside any `_meta` the result had.
 */
export function shapeModernResult(request: ModernRequest, server: { name: string; version: string }, result: unknown): unknown {
  const ttl = cacheTtl.get(request.method);
  const named = serverInfoMeta(server);
  // Not `{ ...result, resultType, … }`: on Node 20 a key added to an object made by a spread takes V8's
  // slow path (~2 µs and a new hidden class per result); `Object.assign` onto `{}` keeps the fast one.
  // The keys land in the same order (the result's own, `_meta` where the result had it, else last).
  const shaped: Record<string, unknown> = isRecord(result) ? Object.assign({}, result) : {};
  shaped.resultType = 'complete';
  if (ttl !== undefined) {
    shaped.ttlMs = ttl;
    shaped.cacheScope = 'private';
  }
  shaped._meta = isRecord(shaped._meta) ? Object.assign({}, shaped._meta, named) : named;
  return shaped;
}

/**
 * The answer to a modern request, its result shaped as `shapeModernResult` shapes it. A result with no
 * `_meta` or `resultType` of its own, for a method without cache hints (a tool's, most often), gets
 * exactly the members every such answer of this server gets: serialised once and appended to the
 * result's own JSON (the same line, without copying the result and serialising those members per answer).
 */
export function modernAnswer(request: ModernRequest, server: { name: string; version: string }, id: RequestId, result: unknown): Outgoing {
  if (!isRecord(result) || cacheTtl.has(request.method) || Object.hasOwn(result, '_meta') || Object.hasOwn(result, 'resultType')) {
    return answer(id, shapeModernResult(request, server, result));
  }
  return answerWith(id, result, completeMembers(server));
}

/** `"resultType":"complete","_meta":{…}` for `server`, serialised once per server. */
let lastCompleteMembers: { name: string; version: string; json: string } | null = null;

function completeMembers(server: { name: string; version: string }): string {
  if (lastCompleteMembers?.name !== server.name || lastCompleteMembers.version !== server.version) {
    lastCompleteMembers = { name: server.name, version: server.version, json: JSON.stringify({ resultType: 'complete', _meta: serverInfoMeta(server) }).slice(1, -1) };
  }
  return lastCompleteMembers.json;
}

/** The `_meta` naming the server, built once per server (a modern result carries it on every answer). */
let lastServerMeta: { name: string; version: string; meta: Readonly<Record<string, unknown>> } | null = null;

function serverInfoMeta(server: { name: string; version: string }): Readonly<Record<string, unknown>> {
  if (lastServerMeta?.name !== server.name || lastServerMeta.version !== server.version) {
    // Frozen: every modern result of this server shares it, so nothing may write to it.
    const { name, version } = server;
    lastServerMeta = { name, version, meta: Object.freeze({ [META_SERVER_INFO]: Object.freeze({ name, version }) }) };
  }
  return lastServerMeta.meta;
}

/** An error code as a modern client receives it: "resource not found" is -32602 since 2026-07-28. */
export function modernErrorCode(code: number): number {
  return code === ErrorCode.ResourceNotFound ? ErrorCode.InvalidParams : code;
}
