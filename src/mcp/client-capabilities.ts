// What the client said it can do, read one way for every caller in the core: may the server ask it a
// form question (`elicitation/create` in form mode), may it ask it for a completion (sampling).

import type { ConnectionState } from './state.ts';
import { versionFeatures } from './version.ts';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The client may be sent a form elicitation. Before 2025-11-25 declaring `elicitation` at all means forms;
 * from 2025-11-25 a client names its modes (`form`, `url`), and an empty `elicitation: {}` still means form
 * only. A client that declares URL mode alone is never sent a form: the spec makes that a MUST NOT.
 */
export function canElicitForm(state: ConnectionState): boolean {
  const declared: unknown = state.clientCapabilities.elicitation;
  if (declared === undefined || declared === null) return false;
  const features = versionFeatures(state.protocolVersion ?? '2025-06-18');
  if (!features.elicitation) return false;
  if (!features.elicitationModes || !isRecord(declared)) return true;
  const hasForm = Object.hasOwn(declared, 'form');
  const hasUrl = Object.hasOwn(declared, 'url');
  return hasForm || !hasUrl;
}

/** The client declared sampling (`sampling/createMessage` may be sent to it). */
export function canSample(state: ConnectionState): boolean {
  return state.clientCapabilities.sampling !== undefined;
}

/** The Tasks extension's id (SEP-2663), under `capabilities.extensions` of `server/discover` and of a request's `clientCapabilities`. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/**
 * A 2026-07-28 request declared the Tasks extension in its `clientCapabilities.extensions` (a 2025
 * session never does: its tasks are another, unbuilt, protocol). Read as caller input: own keys only.
 */
export function declaresTasks(state: ConnectionState): boolean {
  if (state.modern === undefined) return false;
  const extensions: unknown = (state.clientCapabilities as Record<string, unknown>).extensions;
  return isRecord(extensions) && Object.hasOwn(extensions, TASKS_EXTENSION) && isRecord(extensions[TASKS_EXTENSION]);
}
