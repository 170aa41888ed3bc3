// `initialize`: version negotiation, capabilities, and the connection's harness.

import type { ClientCapabilities, Icon, Implementation, InitializeResult, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { harnessById } from '../../harness/catalog.ts';
import { harnessIds, isHarnessId } from '../../harness/ids.ts';
import { loadout } from '../../harness/policy.ts';
import { ErrorCode, type Params } from '../jsonrpc.ts';
import { type ConnectionState, effectiveHarness } from '../state.ts';
import { followsRoots } from '../roots.ts';
import { initializeAnswer } from '../outgoing.ts';
import { fail, type Step } from '../step.ts';
import { negotiateVersion, type ProtocolVersion, versionFeatures } from '../version.ts';
import { MAX_CLIENT_CAPABILITIES_BYTES, MAX_CLIENT_INFO_STRING_LENGTH } from '../../limits.ts';

/** `serverInfo.description` (2025-11-25): what a host shows beside the server's name. */
export const SERVER_DESCRIPTION = 'Coding-agent tools and harnesses for one workspace: read, write, edit, bash, grep, find, ls and harness tasks.';

/** `serverInfo.icons` (2025-11-25): one small SVG as a data URI, so a host shows it without fetching anything. */
export const SERVER_ICON: Icon = {
  src: `data:image/svg+xml,${encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1f2937"/><text x="16" y="23" font-family="serif" font-size="20" text-anchor="middle" fill="#f9fafb">&#960;</text></svg>')}`,
  mimeType: 'image/svg+xml',
  sizes: ['any'],
};

/** The `_meta` key a client may use at initialize to pick its harness. */
export const HARNESS_META_KEY = 'superpi/harness';

export function initialize(state: ConnectionState, id: RequestId, params: Params): Step {
  if (state.phase !== 'awaiting-initialize') {
    return fail(state, id, ErrorCode.InvalidRequest, 'The session is already initialized; initialize is sent once per session');
  }
  if (typeof params.protocolVersion !== 'string') {
    return fail(state, id, ErrorCode.InvalidParams, 'initialize needs params.protocolVersion (a string such as "2025-06-18")');
  }
  const capabilities = params.capabilities ?? {};
  if (typeof capabilities !== 'object' || capabilities === null || Array.isArray(capabilities)) {
    return fail(state, id, ErrorCode.InvalidParams, 'initialize params.capabilities must be an object');
  }
  // Kept for the session's lifetime and in every checkpoint: bounded (the depth is bounded for every message).
  const capabilitiesBytes = JSON.stringify(capabilities).length;
  if (capabilitiesBytes > MAX_CLIENT_CAPABILITIES_BYTES) {
    return fail(state, id, ErrorCode.InvalidParams, `initialize params.capabilities are ${capabilitiesBytes} bytes of JSON, more than MAX_CLIENT_CAPABILITIES_BYTES (${MAX_CLIENT_CAPABILITIES_BYTES})`);
  }
  const clientInfo = keptClientInfo(params.clientInfo);
  if (typeof clientInfo === 'string') return fail(state, id, ErrorCode.InvalidParams, clientInfo);
  const meta = isRecord(params._meta) ? params._meta : undefined;
  // An own property only: `_meta` is caller input, and its prototype is not the caller's choice.
  const chosen = meta && Object.hasOwn(meta, HARNESS_META_KEY) ? meta[HARNESS_META_KEY] : undefined;
  if (chosen !== undefined && !isHarnessId(chosen)) {
    return fail(state, id, ErrorCode.InvalidParams, `Unknown harness ${JSON.stringify(chosen)} in _meta["${HARNESS_META_KEY}"]; known harnesses: ${harnessIds.join(', ')}`);
  }
  const version = negotiateVersion(params.protocolVersion);
  const features = versionFeatures(version);
  const next: ConnectionState = {
    ...state,
    phase: 'ready',
    protocolVersion: version,
    clientCapabilities: capabilities as ClientCapabilities,
    clientInfo,
    harness: chosen ?? null,
  };
  const harness = harnessById(effectiveHarness(next));
  const result: InitializeResult = {
    protocolVersion: version,
    capabilities: {
      tools: { listChanged: false },
      prompts: { listChanged: false },
      resources: { subscribe: true, listChanged: false },
      logging: {},
      ...(features.completions ? { completions: {} } : {}),
    },
    serverInfo: serverImplementation(state, version),
    instructions: serverInstructions(next),
  };
  // Not `reply`: initialize is a legacy request (never shaped for 2026-07-28), and its answer names the
  // version it negotiated beside the line, for the observer.
  return {
    state: next,
    replies: [initializeAnswer(id, result, version)],
    effects: [{ kind: 'log', level: 'debug', message: 'initialize', data: { requestedVersion: params.protocolVersion, negotiatedVersion: version, harness: harness.id } }],
  };
}

/** `serverInfo` as the given revision carries it (initialize, and `server/discover` with the newest fields). */
export function serverImplementation(state: ConnectionState, version: ProtocolVersion): Implementation {
  const features = versionFeatures(version);
  return {
    name: state.config.server.name,
    version: state.config.server.version,
    ...(features.titles ? { title: 'Super-Pi' } : {}),
    ...(features.implementationDescription ? { description: SERVER_DESCRIPTION } : {}),
    ...(features.icons ? { icons: [SERVER_ICON] } : {}),
  };
}

/** The `instructions` a host gives its model: the workspace, the harness and its tools. */
export function serverInstructions(state: ConnectionState): string {
  const harness = harnessById(effectiveHarness(state));
  const where = followsRoots(state) ? `the client's root (its first folder; until it is known, ${state.config.workspace})` : `the workspace ${state.config.workspace}`;
  return `Super-Pi serves ${where} under the ${harness.id} harness (${harness.description}) ` +
    `Its tools: ${loadout(harness).join(', ')}. Paths are relative to the workspace; nothing outside it can be read or written. ` +
    'Read the resource superpi://workspace for an overview and superpi://loadout for what each tool may do here.';
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * What the session keeps of `clientInfo`: name, version and title, each bounded; null when it is not an
 * Implementation (it is informational, so a missing one is no error). A string: why it is refused.
 */
export function keptClientInfo(v: unknown, where = 'initialize params.clientInfo'): Implementation | null | string {
  if (!isRecord(v) || typeof v.name !== 'string' || typeof v.version !== 'string') return null;
  const kept: Implementation = typeof v.title === 'string' ? { name: v.name, version: v.version, title: v.title } : { name: v.name, version: v.version };
  for (const [field, text] of Object.entries(kept)) {
    if (typeof text === 'string' && text.length > MAX_CLIENT_INFO_STRING_LENGTH) {
      return `${where}.${field} is ${text.length} characters, more than MAX_CLIENT_INFO_STRING_LENGTH (${MAX_CLIENT_INFO_STRING_LENGTH})`;
    }
  }
  return kept;
}
