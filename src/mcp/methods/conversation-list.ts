// `resources/list` over 2026-07-28: a modern request has no connection whose conversations could be
// listed, so the caller principal's conversations come from the store (effect `listConversations`), a
// page at a time, after the static resources on the first page. The cursor wraps the store's own, bound
// to the principal it was made for: another caller's cursor is refused, as is one not made here.

import type { RequestId, Resource } from '@modelcontextprotocol/sdk/types.js';
import type { EffectResult } from '../effects.ts';
import { ErrorCode } from '../jsonrpc.ts';
import { fromBase64Url, toBase64Url } from '../request-state.ts';
import { transcriptUri } from '../resources.ts';
import { textDepth } from '../text-depth.ts';
import { principalKey } from '../round-trip.ts';
import type { ConnectionState } from '../state.ts';
import { addPending, fail, reply, type Step } from '../step.ts';
import { MAX_LIST_CURSOR_LENGTH, MAX_LISTED_CONVERSATIONS } from '../../limits.ts';

const CURSOR_PREFIX = 'sc1.';
const INVALID_CURSOR = 'Invalid cursor: pass a nextCursor from an earlier page of resources/list, unchanged';

/** A transcript as `resources/list` lists it (both eras: the legacy listing is of the connection's own). */
export function transcriptResource(id: string): Resource {
  return { uri: transcriptUri(id), name: `conversation-${id}`, title: `Transcript of conversation ${id}`, mimeType: 'application/jsonl' };
}

/** Conversations per page: `--page-size`, at most MAX_LISTED_CONVERSATIONS. */
export function listedPerPage(state: ConnectionState): number {
  return Math.min(state.config.pageSize, MAX_LISTED_CONVERSATIONS);
}

/** Asks the store for a page of the caller's conversations; a cursor this caller was not given is -32602 at once. */
export function listStoredConversations(state: ConnectionState, id: RequestId, cursor: unknown): Step {
  let storeCursor: string | undefined;
  if (cursor !== undefined) {
    const opened = openCursor(cursor, principalKey(state.config.principal));
    if (typeof opened !== 'object') return fail(state, id, ErrorCode.InvalidParams, opened);
    storeCursor = opened.store;
  }
  const added = addPending(state, { kind: 'resourceList', requestId: id, first: cursor === undefined });
  const effect = { kind: 'listConversations' as const, ticket: added.ticket, limit: listedPerPage(state), ...(storeCursor === undefined ? {} : { cursor: storeCursor }) };
  return { state: added.state, replies: [], effects: [effect] };
}

/** The page the store answered, as a `resources/list` result: the static resources first on the first page. */
export function conversationListed(
  state: ConnectionState, id: RequestId, first: boolean, page: Extract<EffectResult, { kind: 'conversationList' }>['page'], statics: readonly Resource[],
): Step {
  if (page === 'invalid-cursor') return fail(state, id, ErrorCode.InvalidParams, INVALID_CURSOR);
  const resources = [...(first ? statics : []), ...page.ids.map(transcriptResource)];
  const nextCursor = page.nextCursor === undefined ? undefined : sealCursor(principalKey(state.config.principal), page.nextCursor);
  return reply(state, id, nextCursor === undefined ? { resources } : { resources, nextCursor });
}

/** `sc1.` + base64url of `[principal, store cursor]`: not secret (the caller may read it), only bound. */
export function sealCursor(principal: string, store: string): string {
  return CURSOR_PREFIX + toBase64Url(JSON.stringify([principal, store]));
}

/**
 * The longest cursor `sealCursor` makes for `principal`: the seal of a store cursor of MAX_LIST_CURSOR_LENGTH
 * (ASCII, written as it is in JSON). A longer one was not made here and is refused before it is decoded (a
 * 4 MB cursor took ~250 ms of base64 decoding on the thread that serves the session).
 */
function longestCursor(principal: string): number {
  const bytes = Buffer.byteLength(JSON.stringify([principal, ''])) + MAX_LIST_CURSOR_LENGTH;
  return CURSOR_PREFIX.length + Math.ceil((bytes * 4) / 3);
}

/** The store's cursor inside `cursor`, or why it is refused (an -32602 message). */
function openCursor(cursor: unknown, principal: string): { store: string } | string {
  if (typeof cursor !== 'string' || !cursor.startsWith(CURSOR_PREFIX) || cursor.length > longestCursor(principal)) return INVALID_CURSOR;
  const text = fromBase64Url(cursor.slice(CURSOR_PREFIX.length));
  let value: unknown = null;
  try {
    // A cursor made here is one flat array: anything deeper is refused unparsed (a 4 MiB cursor of brackets took ~0.7 s to parse).
    if (text !== null && textDepth(text, 1) <= 1) value = JSON.parse(text);
  } catch (err) {
    void err; // not JSON: a cursor not made here, refused below
  }
  if (!Array.isArray(value) || value.length !== 2 || typeof value[0] !== 'string' || typeof value[1] !== 'string') return INVALID_CURSOR;
  if (value[0] !== principal) return 'Invalid cursor: it was made for another caller; pass a nextCursor from one of your own pages of resources/list';
  return { store: value[1] };
}
