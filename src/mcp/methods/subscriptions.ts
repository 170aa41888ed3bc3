// A 2025 session's resource subscriptions (`resources/subscribe` / `unsubscribe`): a bounded table kept in
// its checkpoint, one URI per transcript (spellings of one transcript's URI are matched by its conversation), and the node's watch of each transcript, which the runtime holds for the session while
// it is subscribed (a 2026-07-28 listen on the same session counts its own watches: transcript-watch.ts).

import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { Effect } from '../effects.ts';
import { ErrorCode, type Params } from '../jsonrpc.ts';
import { parseTranscriptUri, transcriptConversation } from '../resources.ts';
import type { ConnectionState, Pending } from '../state.ts';
import { addPending, fail, reply, type Step } from '../step.ts';
import { MAX_SESSION_SUBSCRIPTIONS, MAX_SUBSCRIPTION_URI_LENGTH } from '../../limits.ts';

type PendingSubscribe = Extract<Pending, { kind: 'subscribe' }>;

/**
 * Transcripts of the principal's conversations (from any connection, before a restart too) can be
 * subscribed to; whether it is one is the store's answer (`watchTranscript`), asked the same way for
 * another principal's conversation as for none. Anything else is not found.
 */
export function subscribe(state: ConnectionState, id: RequestId, params: Params): Step {
  const uri = params.uri;
  if (typeof uri !== 'string') return fail(state, id, ErrorCode.InvalidParams, 'resources/subscribe needs params.uri (a string)');
  if (uri.length > MAX_SUBSCRIPTION_URI_LENGTH) {
    return fail(state, id, ErrorCode.InvalidParams, `Invalid params: the uri is longer than MAX_SUBSCRIPTION_URI_LENGTH (${MAX_SUBSCRIPTION_URI_LENGTH}) characters`);
  }
  const ref = parseTranscriptUri(uri);
  if (ref === null) return fail(state, id, ErrorCode.ResourceNotFound, `Resource not found: ${uri}`, { uri });
  if ('problem' in ref) return fail(state, id, ErrorCode.InvalidParams, ref.problem);
  if (ref.afterSeq !== null) {
    return fail(state, id, ErrorCode.InvalidParams, 'Invalid params: subscribe to the transcript\'s own URI (superpi://conversation/{id}/transcript), not one page of it (?after=)');
  }
  const { conversationId } = ref;
  // Subscriptions being looked up hold their place, so two new ones in flight cannot both take the last.
  // A transcript is one place under any spelling of its URI.
  const held = new Set(state.subscriptions.map(transcriptConversation));
  for (const p of state.pending.values()) if (p.kind === 'subscribe') held.add(p.conversationId);
  if (!held.has(conversationId) && held.size >= MAX_SESSION_SUBSCRIPTIONS) {
    return fail(state, id, ErrorCode.InvalidParams, `This session is subscribed to MAX_SESSION_SUBSCRIPTIONS (${MAX_SESSION_SUBSCRIPTIONS}) resources; unsubscribe from one to subscribe to another`);
  }
  const added = addPending(state, { kind: 'subscribe', requestId: id, uri, conversationId });
  return { state: added.state, replies: [], effects: [{ kind: 'watchTranscript', ticket: added.ticket, conversationId }] };
}

/**
 * The store found the conversation the principal's (the runtime watches it now): the session is subscribed,
 * under the URI as this subscribe spelled it (its updates name it so); an earlier spelling of the same
 * transcript's URI is replaced, not kept beside it.
 */
export function subscribed(state: ConnectionState, pending: PendingSubscribe): Step {
  const { uri, conversationId } = pending;
  if (state.subscriptions.includes(uri)) return reply(state, pending.requestId, {});
  const others = state.subscriptions.filter((u) => transcriptConversation(u) !== conversationId);
  return reply({ ...state, subscriptions: [...others, uri] }, pending.requestId, {});
}

/**
 * The session is no longer subscribed to the transcript, under whichever spelling of its URI it subscribed;
 * the node's watch of it is released once nothing else of the session's 2025 side needs it.
 */
export function unsubscribe(state: ConnectionState, id: RequestId, params: Params): Step {
  const uri = params.uri;
  if (typeof uri !== 'string') return fail(state, id, ErrorCode.InvalidParams, 'resources/unsubscribe needs params.uri (a string)');
  const conversationId = transcriptConversation(uri);
  const kept = state.subscriptions.filter((u) => u !== uri && (conversationId === null || transcriptConversation(u) !== conversationId));
  if (kept.length === state.subscriptions.length) return reply(state, id, {});
  const next = { ...state, subscriptions: kept };
  return reply(next, id, {}, released(next, conversationId));
}

/** The URI the session subscribed to the conversation's transcript under, if it did. */
export function subscribedUri(state: ConnectionState, conversationId: string): string | undefined {
  return state.subscriptions.find((u) => transcriptConversation(u) === conversationId);
}

/**
 * A subscribe cancelled while the store is asked: its lookup may already have made the watch (its answer
 * would be dropped), so it is released unless the session still needs it. Effects to add to the cancel's.
 */
export function subscribeCancelled(state: ConnectionState, pending: PendingSubscribe): Effect[] {
  return released(state, pending.conversationId);
}

/**
 * Releases the session's subscription watch of `conversationId` when none of its subscriptions (under any
 * spelling of the URI) and no subscribe still being looked up names it. A listen stream's own watch of
 * the same transcript is counted apart by the runtime and stays.
 */
function released(state: ConnectionState, conversationId: string | null): Effect[] {
  if (conversationId === null) return [];
  if (subscribedUri(state, conversationId) !== undefined) return [];
  for (const p of state.pending.values()) if (p.kind === 'subscribe' && p.conversationId === conversationId) return [];
  return [{ kind: 'unwatchTranscript', conversationId }];
}
