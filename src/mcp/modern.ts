// A modern (2026-07-28) request, handled statelessly: its context is read from its own `_meta`, the
// legacy method handlers run against a transient view of the connection built from that context, and
// the connection keeps only the bookkeeping of work in flight (tickets), never the request's context.

import type { ClientCapabilities, Implementation, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { Effect, EffectResult } from './effects.ts';
import {
  META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION, type ModernRequest, ModernErrorCode,
  isModernVersion, metaField, metaOf, modernVersions, removedInModern,
} from './era.ts';
import { ErrorCode, type Params } from './jsonrpc.ts';
import { isLogLevel, type LogLevel, logLevels, passes } from './logging-level.ts';
import { isKeptMeta } from './meta-cache.ts';
import { keptClientInfo, serverImplementation, serverInstructions } from './methods/initialize.ts';
import { serverExtensions } from './methods/tasks.ts';
import { notice, type Outgoing } from './outgoing.ts';
import type { RoundTrip } from './request-state.ts';
import type { ConnectionState } from './state.ts';
import { fail, reply, type Step } from './step.ts';
import { LATEST_VERSION, supportedVersions } from './version.ts';
import { MAX_CLIENT_CAPABILITIES_BYTES, MAX_REQUESTS_IN_FLIGHT } from '../limits.ts';

type RequestHandler = (state: ConnectionState, id: RequestId, params: Params) => Step;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Reads the request's context from `_meta` (the HTTP transport runs it first too, to answer a bad envelope 400). An array: the error to answer with, as [code, message, data].
 * A missing `_meta` or version is -32602 (the request is malformed); a version we do not speak is -32022
 * (the client may retry with one of `data.supported`). `server/discover` is no exception: it carries
 * `_meta` like every modern request.
 */
export function readModernContext(method: string, params: Params): ModernRequest | [number, string, unknown?] {
  const meta = metaOf(params);
  // The `_meta` read last, when it is a kept parse (meta-cache.ts: the same frozen object for every line that
  // carries the same text): it reads as it read then. Saves the checks, the capabilities' JSON and the client
  // info's comparison, ~1k instructions of every modern request (BENCHMARKS.md, wt/perf3).
  const last = lastContext;
  if (last !== null && last.meta === meta && meta !== undefined && isKeptMeta(meta)) {
    // The same record as the last request's when the method is the same too (it is never written): one
    // allocation fewer per request of a client that repeats a call.
    if (last.request.method === method) return last.request;
    const request: ModernRequest = { method, protocolVersion: modernVersions[0], clientCapabilities: last.clientCapabilities, clientInfo: last.clientInfo, logLevel: last.logLevel };
    lastContext = { meta, capabilitiesJson: last.capabilitiesJson, clientCapabilities: last.clientCapabilities, clientInfo: last.clientInfo, logLevel: last.logLevel, request };
    return request;
  }
  if (meta === undefined) return [ErrorCode.InvalidParams, `Invalid params: a ${modernVersions[0]} request needs params._meta (an object)`];
  const version = metaField(meta, META_PROTOCOL_VERSION);
  if (version === undefined) return [ErrorCode.InvalidParams, `Invalid params: a ${modernVersions[0]} request needs _meta["${META_PROTOCOL_VERSION}"]`];
  if (!isModernVersion(version)) {
    return [ModernErrorCode.UnsupportedProtocolVersion, 'Unsupported protocol version', { supported: [...modernVersions], requested: version }];
  }
  const declared = metaField(meta, META_CLIENT_CAPABILITIES);
  if (!isRecord(declared)) {
    return [ErrorCode.InvalidParams, `Invalid params: a ${modernVersions[0]} request needs _meta["${META_CLIENT_CAPABILITIES}"] (an object)`];
  }
  const json = JSON.stringify(declared);
  const bytes = json.length;
  if (bytes > MAX_CLIENT_CAPABILITIES_BYTES) {
    return [ErrorCode.InvalidParams, `Invalid params: _meta["${META_CLIENT_CAPABILITIES}"] is ${bytes} bytes of JSON, more than MAX_CLIENT_CAPABILITIES_BYTES (${MAX_CLIENT_CAPABILITIES_BYTES})`];
  }
  const info = metaField(meta, META_CLIENT_INFO);
  const logLevel = metaField(meta, META_LOG_LEVEL);
  if (logLevel !== undefined && !isLogLevel(logLevel)) {
    return [ErrorCode.InvalidParams, `Invalid params: _meta["${META_LOG_LEVEL}"] must be one of ${logLevels.join(', ')}`];
  }
  // A client sends the same context with every request: the last one read is reused when this one's
  // capabilities (as JSON text) and client info are the same, so a request allocates only its own record.
  if (last !== null && last.capabilitiesJson === json && sameClientInfo(last.clientInfo, info)) {
    const request: ModernRequest = { method, protocolVersion: modernVersions[0], clientCapabilities: last.clientCapabilities, clientInfo: last.clientInfo, logLevel: logLevel ?? null };
    lastContext = { meta, capabilitiesJson: json, clientCapabilities: last.clientCapabilities, clientInfo: last.clientInfo, logLevel: logLevel ?? null, request };
    return request;
  }
  const clientInfo = keptClientInfo(info, `_meta["${META_CLIENT_INFO}"]`);
  if (typeof clientInfo === 'string') return [ErrorCode.InvalidParams, `Invalid params: ${clientInfo}`];
  const request: ModernRequest = { method, protocolVersion: modernVersions[0], clientCapabilities: declared as ClientCapabilities, clientInfo, logLevel: logLevel ?? null };
  lastContext = { meta, capabilitiesJson: json, clientCapabilities: request.clientCapabilities, clientInfo, logLevel: request.logLevel, request };
  return request;
}

/**
 * The context of the last modern request read on this thread, and the `_meta` it was read from. Its objects
 * are never written (the core does not change its input), so another request with the same text may share them.
 */
let lastContext: {
  readonly meta: Record<string, unknown>;
  readonly capabilitiesJson: string;
  readonly clientCapabilities: ClientCapabilities;
  readonly clientInfo: Implementation | null;
  readonly logLevel: LogLevel | null;
  /** The record the last request was answered with (its `method` is that request's). */
  readonly request: ModernRequest;
} | null = null;

/** Would `keptClientInfo(given)` keep exactly `kept`? (Only for a `kept` it already checked.) */
function sameClientInfo(kept: Implementation | null, given: unknown): boolean {
  if (!isRecord(given) || typeof given.name !== 'string' || typeof given.version !== 'string') return kept === null;
  return kept !== null && kept.name === given.name && kept.version === given.version && kept.title === (typeof given.title === 'string' ? given.title : undefined);
}

/**
 * The connection as a modern request sees it: features of the newest legacy revision (a subset of
 * what 2026-07-28 carries), the request's own capabilities and log level, the configured harness.
 * Every field written out rather than spread: built twice per call, it was a tenth of a modern call's
 * server time as a spread (BENCHMARKS.md); the `Required` type makes a new field of the state a
 * compile error here until it is listed.
 */
function viewFor(state: ConnectionState, request: ModernRequest, roundTrip?: RoundTrip): ConnectionState {
  const view: Required<Omit<ConnectionState, 'roundTrip'>> & Pick<ConnectionState, 'roundTrip'> = {
    config: state.config, phase: 'ready', protocolVersion: LATEST_VERSION, clientCapabilities: request.clientCapabilities,
    clientInfo: request.clientInfo, harness: null, logLevel: request.logLevel,
    pending: state.pending, nextTicket: state.nextTicket, conversations: state.conversations, subscriptions: state.subscriptions,
    root: state.root, rootsAsked: state.rootsAsked, rootsRound: state.rootsRound, rootsWaiting: state.rootsWaiting, rootsHeld: state.rootsHeld,
    modern: request, roundTrip,
  };
  return view;
}

/**
 * Back to the connection's own context after a step run in a modern view: its era fields are restored,
 * the work the step registered is marked modern, and its log records go to the client only as the
 * request's own `logLevel` says (never by the connection's `logging/setLevel`).
 */
function restore(connection: ConnectionState, view: ConnectionState, id: RequestId | null, request: ModernRequest, step: Step): Step {
  // Work the step registered is already marked modern (addPending reads the view's `modern`).
  const s = step.state;
  // A step that left the view as it was leaves the connection as it was (the same object: nothing to copy).
  const state: ConnectionState = s === view ? connection : {
    config: s.config, phase: connection.phase, protocolVersion: connection.protocolVersion,
    clientCapabilities: connection.clientCapabilities, clientInfo: connection.clientInfo,
    harness: connection.harness, logLevel: connection.logLevel,
    pending: s.pending, nextTicket: s.nextTicket, conversations: s.conversations, subscriptions: s.subscriptions,
    root: s.root, rootsAsked: s.rootsAsked, rootsRound: s.rootsRound, rootsWaiting: s.rootsWaiting, rootsHeld: s.rootsHeld,
  } satisfies Required<Omit<ConnectionState, 'modern' | 'roundTrip'>>;
  if (!hasLog(step.effects)) return { state, replies: step.replies, effects: step.effects };
  const logs: Outgoing[] = [];
  const effects: Effect[] = step.effects.map((e) => {
    if (e.kind !== 'log') return e;
    if (request.logLevel !== null && passes(e.level, request.logLevel)) {
      const data = { level: e.level, logger: 'super-pi', data: { message: e.message, ...e.data } };
      logs.push(id === null ? notice('notifications/message', data) : notice('notifications/message', data, id));
    }
    // Not `{ ...e, toClient: false }`: a key added to a spread's copy is V8's slow path on Node 20 (step.ts).
    return Object.assign({}, e, { toClient: false });
  });
  return { state, replies: logs.length === 0 ? step.replies : [...step.replies, ...logs], effects };
}

function hasLog(effects: readonly Effect[]): boolean {
  for (const e of effects) if (e.kind === 'log') return true;
  return false;
}

/** Handles one modern request (era.ts `isModernRequest`); `handlers` are the core's method handlers. */
export function handleModernRequest(
  state: ConnectionState, id: RequestId, method: string, params: Params, handlers: ReadonlyMap<string, RequestHandler>, roundTrip?: RoundTrip,
): Step {
  const context = readModernContext(method, params);
  if (Array.isArray(context)) return fail(state, id, context[0], context[1], context[2]);
  const view = viewFor(state, context, roundTrip);
  if (method === 'server/discover') return restore(state, view, id, context, discover(view, id));
  const handler = removedInModern.has(method) ? undefined : handlers.get(method);
  if (!handler) return restore(state, view, id, context, fail(view, id, ErrorCode.MethodNotFound, `Method not found: ${method} (not in ${context.protocolVersion})`));
  if (state.pending.size >= MAX_REQUESTS_IN_FLIGHT) {
    return restore(state, view, id, context, fail(view, id, ErrorCode.ServerBusy, `Server busy: this connection already has MAX_REQUESTS_IN_FLIGHT (${MAX_REQUESTS_IN_FLIGHT}) requests in flight; wait for some to finish`));
  }
  return restore(state, view, id, context, handler(view, id, params));
}

/** Folds an effect result into work a modern request started, in that request's view. */
export function handleModernEffectResult(
  result: EffectResult, state: ConnectionState, request: ModernRequest, fold: (result: EffectResult, state: ConnectionState) => Step, roundTrip?: RoundTrip,
): Step {
  const work = state.pending.get('ticket' in result ? result.ticket : -1);
  const id = work !== undefined && work.kind !== 'outgoing' ? work.requestId : null;
  const view = viewFor(state, request, roundTrip);
  return restore(state, view, id, request, fold(result, view));
}

/** `server/discover`: both eras' versions, the capabilities, who the server is, and its instructions. */
function discover(view: ConnectionState, id: RequestId): Step {
  return reply(view, id, {
    supportedVersions: [...modernVersions, ...supportedVersions],
    capabilities: {
      tools: { listChanged: false },
      prompts: { listChanged: false },
      resources: { subscribe: true, listChanged: false },
      completions: {},
      logging: {},
      extensions: serverExtensions(),
    },
    serverInfo: serverImplementation(view, LATEST_VERSION),
    instructions: serverInstructions(view),
  }, [{ kind: 'log', level: 'debug', message: 'server/discover', data: { client: view.clientInfo?.name ?? null } }]);
}
