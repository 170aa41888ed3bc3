// `initialize`: version negotiation, capabilities, and the connection's harness.

import type { ClientCapabilities, Implementation, InitializeResult, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { harnessById } from '../../harness/catalog.ts';
import { harnessIds, isHarnessId } from '../../harness/ids.ts';
import { loadout } from '../../harness/policy.ts';
import { ErrorCode, type Params } from '../jsonrpc.ts';
import { type ConnectionState, effectiveHarness } from '../state.ts';
import { fail, reply, type Step } from '../step.ts';
import { negotiateVersion, versionFeatures } from '../version.ts';

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
  const meta = params._meta as Record<string, unknown> | undefined;
  const chosen = meta?.[HARNESS_META_KEY];
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
    clientInfo: isImplementation(params.clientInfo) ? params.clientInfo : null,
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
    serverInfo: { name: state.config.server.name, version: state.config.server.version, ...(features.titles ? { title: 'Super-Pi' } : {}) },
    instructions:
      `Super-Pi serves the workspace ${state.config.workspace} under the ${harness.id} harness (${harness.description}) ` +
      `Its tools: ${loadout(harness).join(', ')}. Paths are relative to the workspace; nothing outside it can be read or written. ` +
      'Read the resource superpi://workspace for an overview and superpi://loadout for what each tool may do here.',
  };
  return reply(next, id, result, [{
    kind: 'log', level: 'debug', message: 'initialize',
    data: { requestedVersion: params.protocolVersion, negotiatedVersion: version, harness: harness.id },
  }]);
}

function isImplementation(v: unknown): v is Implementation {
  return typeof v === 'object' && v !== null && typeof (v as Implementation).name === 'string' && typeof (v as Implementation).version === 'string';
}
