// `subscriptions/listen` (2026-07-28): a request that stays in flight as a stream of change notifications
// until the client cancels it. super-pi's tool, prompt and resource lists never change (server/discover
// says `listChanged: false`), so the only notifications a stream can carry are `resources/updated` for
// transcripts of the caller's own conversations. The acknowledgment is the stream's first message and
// names what is honoured: the requested transcript URIs the store says are the caller's (another
// principal's conversation is left out exactly as a missing one is). Each notification carries the listen
// request's id in `_meta` (META_SUBSCRIPTION_ID) and goes out as related to that request, so an HTTP
// stream carries it. A legacy (2025) session has no such method.

import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { isRecord, META_SUBSCRIPTION_ID } from '../era.ts';
import { ErrorCode, type Params } from '../jsonrpc.ts';
import { notice, type Outgoing } from '../outgoing.ts';
import { parseTranscriptUri, transcriptUri } from '../resources.ts';
import type { ConnectionState, Pending } from '../state.ts';
import { addPending, fail, type Step } from '../step.ts';
import { MAX_LISTEN_URIS } from '../../limits.ts';

type Listen = Extract<Pending, { kind: 'listen' }>;

/** The acknowledgment that opens a stream: what it will carry (list changes never: the lists are fixed). */
function acknowledged(id: RequestId, uris: readonly string[]): Outgoing {
  const notifications = uris.length > 0 ? { resourceSubscriptions: [...uris] } : {};
  return notice('notifications/subscriptions/acknowledged', { _meta: { [META_SUBSCRIPTION_ID]: id }, notifications }, id);
}

export function listen(state: ConnectionState, id: RequestId, params: Params): Step {
  if (state.modern === undefined) {
    return fail(state, id, ErrorCode.MethodNotFound, 'Method not found: subscriptions/listen (a 2026-07-28 method; this session speaks an earlier version: use resources/subscribe)');
  }
  const filter = params.notifications ?? {};
  if (!isRecord(filter)) return fail(state, id, ErrorCode.InvalidParams, 'Invalid params: subscriptions/listen needs params.notifications (an object)');
  const requested = filter.resourceSubscriptions ?? [];
  if (!Array.isArray(requested) || requested.some((u) => typeof u !== 'string')) {
    return fail(state, id, ErrorCode.InvalidParams, 'Invalid params: notifications.resourceSubscriptions must be an array of resource URIs (strings)');
  }
  if (requested.length > MAX_LISTEN_URIS) {
    return fail(state, id, ErrorCode.InvalidParams, `Invalid params: notifications.resourceSubscriptions names ${requested.length} URIs, more than MAX_LISTEN_URIS (${MAX_LISTEN_URIS}); open several streams`);
  }
  // Only transcripts change; any other URI (the workspace, the loadout, an unknown one) is not honoured.
  const conversations = [...new Set((requested as string[]).map(parseTranscriptUri).filter((c): c is string => c !== null))];
  const added = addPending(state, { kind: 'listen', requestId: id, uris: [], acked: conversations.length === 0 });
  if (conversations.length === 0) return { state: added.state, replies: [acknowledged(id, [])], effects: [] };
  return { state: added.state, replies: [], effects: [{ kind: 'watchTranscripts', ticket: added.ticket, conversationIds: conversations }] };
}

/** The store said which of a stream's transcripts are the caller's: the stream is acknowledged for those. */
export function listenWatched(state: ConnectionState, ticket: number, pending: Listen, found: readonly string[]): Step {
  const uris = found.map(transcriptUri);
  const pendingNow = new Map(state.pending);
  pendingNow.set(ticket, { ...pending, uris, acked: true });
  return { state: { ...state, pending: pendingNow }, replies: [acknowledged(pending.requestId, uris)], effects: [] };
}

/** `notifications/resources/updated` on every acknowledged stream that named `uri`, each tagged with its listen id. */
export function listenUpdates(state: ConnectionState, uri: string): Outgoing[] {
  const out: Outgoing[] = [];
  for (const p of state.pending.values()) {
    if (p.kind !== 'listen' || !p.acked || !p.uris.includes(uri)) continue;
    out.push(notice('notifications/resources/updated', { _meta: { [META_SUBSCRIPTION_ID]: p.requestId }, uri }, p.requestId));
  }
  return out;
}
