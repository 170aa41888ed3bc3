// The protocol core: `handleMcpLine(line, state)` and `handleEffectResult(result, state)`.
// Pure: no I/O, no timers, no awaits. Lines in; out, messages that say what they answer (outgoing.ts) and
// effects named for the runtime to run.

import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { actingQuestionId } from './acting-questions.ts';
import type { Effect, EffectResult } from './effects.ts';
import { type Classified, ErrorCode, classify, idKey, type Params, reusedIdMessage } from './jsonrpc.ts';
import { isLogLevel, passes } from './logging-level.ts';
import { complete, completion } from './methods/completion.ts';
import { initialize } from './methods/initialize.ts';
import { listen, listenTaskUpdates, listenUpdates, listenWatched } from './methods/listen.ts';
import { getPrompt, listPrompts } from './methods/prompts.ts';
import { subscribe, subscribeCancelled, subscribed, subscribedUri, unsubscribe } from './methods/subscriptions.ts';
import { conversationListed } from './methods/conversation-list.ts';
import { listResourceTemplates, listResources, readResource, renderWorkspace, staticResources, transcriptPage } from './methods/resources.ts';
import { callTool, confirmationAnswered, confirmationConsumed, listTools, toolResult } from './methods/tools.ts';
import { cancelTask, getTask, taskCancelled, taskCreated, taskRead, taskUpdated, updateTask } from './methods/tasks.ts';
import { isModernRequest } from './era.ts';
import { handleModernEffectResult, handleModernRequest } from './modern.ts';
import { notice, type Outgoing, question } from './outgoing.ts';
import { transcriptConversation } from './resources.ts';
import type { RoundTrip } from './request-state.ts';
import { playTaskAsk, playTurn } from './round-trip.ts';
import type { ConnectionState, Pending } from './state.ts';
import { addPending, fail, removePending, reply, silent, type Step } from './step.ts';
import { versionFeatures } from './version.ts';
import { canElicitForm, canSample } from './client-capabilities.ts';
import { nestsDeeperThan } from './limits.ts';
import { keptMetaNesting, parseMessageText } from './meta-cache.ts';
import { askRoots, dropHeld, holdForRoots, rootsAnswered, rootsChecked, rootsWaitOver, takeHeld, waitsForRoots } from './roots.ts';
import { MAX_BATCH_LENGTH, MAX_JSON_DEPTH, MAX_REQUESTS_IN_FLIGHT } from '../limits.ts';

export type { Step } from './step.ts';
export type { Outgoing } from './outgoing.ts';
export type { RoundTrip, StateSealer } from './request-state.ts';

type RequestHandler = (state: ConnectionState, id: RequestId, params: Params) => Step;

// A Map, never an object literal: a method name is caller input, and `toString` or `__proto__` must not
// find Object.prototype's members (that crashed the connection actor).
const requestHandlers: ReadonlyMap<string, RequestHandler> = new Map<string, RequestHandler>([
  ['tools/list', listTools],
  ['tools/call', callTool],
  ['prompts/list', listPrompts],
  ['prompts/get', getPrompt],
  ['resources/list', listResources],
  ['resources/read', readResource],
  ['resources/templates/list', listResourceTemplates],
  ['completion/complete', complete],
  ['logging/setLevel', setLevel],
  ['resources/subscribe', subscribe],
  ['resources/unsubscribe', unsubscribe],
  ['subscriptions/listen', listen],
]);

/** A 2026-07-28 request's handlers: the same, and the Tasks extension's methods (a 2025 session has none of them). */
const modernHandlers: ReadonlyMap<string, RequestHandler> = new Map<string, RequestHandler>([
  ...requestHandlers,
  ['tasks/get', getTask],
  ['tasks/update', updateTask],
  ['tasks/cancel', cancelTask],
]);

/** The part of a batch not handled yet: handed back to `continueBatch` once the caller has yielded its thread. */
export interface BatchRest {
  readonly items: readonly unknown[];
  readonly next: number;
}

/** A step that may leave part of a batch for later (`rest`), so one batch cannot hold a thread for long. */
export type SlicedStep = Step & { readonly rest?: BatchRest };

/**
 * Handles one raw JSON-RPC message (one line of the transport, without its newline), a whole batch at once.
 * `roundTrip`: the runtime's sealer and the wall-clock time, for 2026-07-28 `requestState`s (round-trip.ts);
 * absent, nothing is sealed and a modern request that needs the person's answer is refused.
 */
export function handleMcpLine(line: string, state: ConnectionState, roundTrip?: RoundTrip): Step {
  return handleMcpLineSliced(line, state, Number.POSITIVE_INFINITY, roundTrip);
}

/**
 * As `handleMcpLine`, but handles at most `sliceLength` elements of a batch; the rest comes back as
 * `rest`, for `continueBatch` after the caller has let other work run.
 */
export function handleMcpLineSliced(line: string, state: ConnectionState, sliceLength: number, roundTrip?: RoundTrip): SlicedStep {
  let parsed: unknown;
  try {
    parsed = parseMessageText(line);
  } catch (err) {
    return fail(state, null, ErrorCode.ParseError, `Parse error: ${(err as Error).message}`);
  }
  if (Array.isArray(parsed)) return handleBatch(parsed, state, sliceLength, roundTrip);
  return withClientLogs(handleMessage(parsed, state, roundTrip));
}

/**
 * Handles one message (not a batch) the caller has already parsed, exactly as `handleMcpLine` handles its
 * text: the session answers a cold start's first requests with it, from the one parse of its frame.
 */
export function handleParsedMessage(value: unknown, state: ConnectionState, roundTrip?: RoundTrip): Step {
  return withClientLogs(handleMessage(value, state, roundTrip));
}

/** Handles the next slice of a batch left by `handleMcpLineSliced`. */
export function continueBatch(rest: BatchRest, state: ConnectionState, sliceLength: number, roundTrip?: RoundTrip): SlicedStep {
  const end = Math.min(rest.items.length, rest.next + Math.max(1, sliceLength));
  // Replies and effects are gathered into one array each: concatenating step by step was quadratic.
  const replies: Outgoing[] = [];
  const effects: Effect[] = [];
  let current = state;
  for (let i = rest.next; i < end; i++) {
    const step = handleMessage(rest.items[i], current, roundTrip);
    current = step.state;
    for (const r of step.replies) replies.push(r);
    for (const e of step.effects) effects.push(e);
  }
  const step = withClientLogs({ state: current, replies, effects });
  return end < rest.items.length ? { ...step, rest: { items: rest.items, next: end } } : step;
}

/** A message the transport could not turn into text: too large, or not UTF-8. Its id is unknowable. */
export function rejectMessage(problem: 'oversized' | 'invalid-utf8', detail: string, state: ConnectionState): Step {
  return problem === 'oversized'
    ? fail(state, null, ErrorCode.InvalidRequest, `Invalid request: ${detail}`)
    : fail(state, null, ErrorCode.ParseError, `Parse error: ${detail}`);
}

/** Log records at or above the level the client set also go to the client as `notifications/message`. */
function withClientLogs(step: Step): Step {
  const threshold = step.state.logLevel;
  if (threshold === null) return step;
  const lines: Outgoing[] = [];
  for (const e of step.effects) {
    if (e.kind === 'log' && e.toClient !== false && passes(e.level, threshold)) {
      lines.push(notice('notifications/message', { level: e.level, logger: 'super-pi', data: { message: e.message, ...e.data } }));
    }
  }
  return lines.length === 0 ? step : { ...step, replies: [...step.replies, ...lines] };
}

function handleBatch(items: unknown[], state: ConnectionState, sliceLength: number, roundTrip?: RoundTrip): SlicedStep {
  if (state.protocolVersion === null || !versionFeatures(state.protocolVersion).batches) {
    const version = state.protocolVersion ?? 'an uninitialized session';
    const refused = fail(state, null, ErrorCode.InvalidRequest, `Invalid request: JSON-RPC batch arrays are not accepted in ${version}; send one message per line`);
    // The one answer its requests get: the session, which noted each as in flight, learns they are answered.
    const settles = idsIn(items);
    return settles.length === 0 ? refused : { ...refused, replies: refused.replies.map((r) => ({ ...r, settles })) };
  }
  if (items.length === 0) return fail(state, null, ErrorCode.InvalidRequest, 'Invalid request: an empty batch');
  if (items.length > MAX_BATCH_LENGTH) {
    return fail(state, null, ErrorCode.InvalidRequest, `Invalid request: a batch of ${items.length} messages exceeds MAX_BATCH_LENGTH (${MAX_BATCH_LENGTH}); send at most ${MAX_BATCH_LENGTH} per batch`);
  }
  // Each element is handled in order; each reply goes out as its own line (tool results arrive later anyway).
  return continueBatch({ items, next: 0 }, state, sliceLength, roundTrip);
}

/** The ids a batch's elements carry where a reply would name them (a request, or an invalid message whose id was read). */
function idsIn(items: readonly unknown[]): RequestId[] {
  const ids: RequestId[] = [];
  for (const item of items) {
    const m = classify(item);
    if (m.kind === 'request') ids.push(m.id);
    else if (m.kind === 'invalid' && m.id !== null) ids.push(m.id);
  }
  return ids;
}

/** One message (a line, or an element of a batch): bounded in depth first, then classified and handled. */
function handleMessage(raw: unknown, state: ConnectionState, roundTrip?: RoundTrip): Step {
  // A kept `_meta` (a 2026-07-28 client's context, the same frozen value on every request) counts by its known levels.
  if (nestsDeeperThan(raw, MAX_JSON_DEPTH, keptMetaNesting(raw))) return tooDeep(classify(raw), state);
  const msg = classify(raw);
  switch (msg.kind) {
    case 'invalid':
      return fail(state, msg.id, ErrorCode.InvalidRequest, `Invalid request: ${msg.reason}`);
    case 'dropped':
      return silent(state, [{ kind: 'log', level: 'warning', message: msg.reason }]);
    case 'notification':
      return handleNotification(msg.method, msg.params, state);
    case 'response':
      return handleResponse(msg, state);
    case 'request':
      return handleRequest(msg.id, msg.method, msg.params, state, roundTrip);
  }
}

/**
 * A message nesting deeper than MAX_JSON_DEPTH is never kept or handed on (recursive encoders would
 * overflow on it): a request is refused as invalid params, a response answers its question with an
 * error (so nothing waits for it), a notification is dropped.
 */
function tooDeep(msg: Classified, state: ConnectionState): Step {
  const why = `the message nests deeper than MAX_JSON_DEPTH (${MAX_JSON_DEPTH}) levels of objects and arrays`;
  switch (msg.kind) {
    case 'request':
      return fail(state, msg.id, ErrorCode.InvalidParams, `Invalid params: ${why}`);
    case 'response':
      return handleResponse({ kind: 'response', id: msg.id, error: { code: ErrorCode.InvalidParams, message: `the client's answer was refused: ${why}` } }, state);
    case 'notification':
      return silent(state, [{ kind: 'log', level: 'warning', message: `notification ${msg.method} dropped: ${why}` }]);
    case 'dropped':
      return silent(state, [{ kind: 'log', level: 'warning', message: msg.reason }]);
    case 'invalid':
      return fail(state, msg.id, ErrorCode.InvalidRequest, `Invalid request: ${why}`);
  }
}

function handleRequest(id: RequestId, method: string, params: Params, state: ConnectionState, roundTrip?: RoundTrip): Step {
  // Before anything else, ping and initialize included: an answer to a reused id would read, to the
  // client, as the answer to the request in flight under it.
  if (isInFlight(state, id)) {
    return fail(state, id, ErrorCode.InvalidRequest, reusedIdMessage(id));
  }
  if (isModernRequest(method, params)) return handleModernRequest(state, id, method, params, modernHandlers, roundTrip);
  if (method === 'ping') return reply(state, id, {});
  if (method === 'initialize') return initialize(state, id, params);
  if (state.phase !== 'ready') {
    return fail(state, id, ErrorCode.InvalidRequest, `Server not initialized: send initialize before ${method}`);
  }
  const handler = requestHandlers.get(method);
  if (!handler) return fail(state, id, ErrorCode.MethodNotFound, `Method not found: ${method}`);
  if (state.pending.size + state.rootsHeld.length >= MAX_REQUESTS_IN_FLIGHT) {
    return fail(state, id, ErrorCode.ServerBusy, `Server busy: this session already has MAX_REQUESTS_IN_FLIGHT (${MAX_REQUESTS_IN_FLIGHT}) requests in flight; wait for some to finish`);
  }
  if (waitsForRoots(state, method)) return holdForRoots(state, id, method, params);
  return handler(state, id, params);
}

/** Once the client's roots are settled (or waited for long enough), the requests held for them are handled, in order. */
function releaseHeld(step: Step): Step {
  const { state, held } = takeHeld(step.state);
  if (held.length === 0) return step;
  const replies = [...step.replies];
  const effects = [...step.effects];
  let current = state;
  for (const h of held) {
    const next = handleRequest(h.id, h.method, h.params, current);
    current = next.state;
    replies.push(...next.replies);
    effects.push(...next.effects);
  }
  return { state: current, replies, effects };
}

function handleNotification(method: string, params: Params, state: ConnectionState): Step {
  if (method === 'notifications/cancelled') return cancel(state, params);
  // The client's roots may choose the workspace (roots.ts): asked once the session is up, and again on a change.
  if (method === 'notifications/initialized' || method === 'notifications/roots/list_changed') return askRoots(state);
  // progress and unknown notifications need nothing; none gets a reply.
  return silent(state);
}

function handleResponse(msg: Extract<Classified, { kind: 'response' }>, state: ConnectionState): Step {
  if (state.rootsAsked !== null && msg.id === state.rootsAsked) return releaseHeld(rootsAnswered(state, msg));
  for (const [ticket, pending] of state.pending) {
    if (pending.kind === 'confirm' && pending.outgoingId === msg.id) return confirmationAnswered(state, ticket, msg.result, msg.error);
    if (pending.kind === 'outgoing' && pending.outgoingId === msg.id) {
      const answer = msg.error ? { error: { code: msg.error.code, message: msg.error.message } } : { result: msg.result };
      return silent(removePending(state, ticket), [{ kind: 'clientResponse', ticket: pending.owner, key: pending.key, ...answer }]);
    }
  }
  return silent(state, [{ kind: 'log', level: 'debug', message: 'response to no request in flight, ignored', data: { id: msg.id } }]);
}

function cancel(state: ConnectionState, params: Params): Step {
  const requestId = params.requestId;
  if (typeof requestId !== 'string' && typeof requestId !== 'number') return silent(state);
  const unheld = dropHeld(state, requestId);
  if (unheld !== null) return silent(unheld);
  for (const [ticket, pending] of state.pending) {
    if (pending.kind === 'outgoing' || idKey(pending.requestId) !== idKey(requestId)) continue;
    const next = removePending(state, ticket);
    if (pending.kind === 'confirm') {
      // Withdraw the question put to the person; nothing was started.
      return { state: next, replies: [notice('notifications/cancelled', { requestId: pending.outgoingId, reason: 'the tool call was cancelled' }, pending.requestId)], effects: [] };
    }
    return silent(next, pending.kind === 'subscribe' ? [{ kind: 'cancel', ticket }, ...subscribeCancelled(next, pending)] : [{ kind: 'cancel', ticket }]);
  }
  return silent(state);
}

/** Sends a request to the client for work in flight, if the client can answer it; else answers the work at once. */
function askClient(result: Extract<EffectResult, { kind: 'clientRequest' }>, owner: Pending, state: ConnectionState): Step {
  // A modern client is never sent a request of the server's own: its questions go as input_required.
  const able = state.modern === undefined && (result.method === 'sampling/createMessage' ? canSample(state) : canElicitForm(state));
  if (owner.kind !== 'tool' || !able) {
    return silent(state, [{ kind: 'clientResponse', ticket: result.ticket, key: result.key, error: { code: ErrorCode.MethodNotFound, message: `the client did not declare ${result.method === 'sampling/createMessage' ? 'sampling' : 'form elicitation'}` } }]);
  }
  // The id names the owner's tool: answering a task's question or model turn lets that task act (acting-questions.ts).
  const outgoingId = actingQuestionId('ask', owner.tool, state.nextTicket);
  const added = addPending(state, { kind: 'outgoing', owner: result.ticket, key: result.key, outgoingId });
  return { state: added.state, replies: [question(outgoingId, result.method, result.params, owner.requestId)], effects: [] };
}

function setLevel(state: ConnectionState, id: RequestId, params: Params): Step {
  if (!isLogLevel(params.level)) {
    return fail(state, id, ErrorCode.InvalidParams, 'logging/setLevel needs params.level: one of debug, info, notice, warning, error, critical, alert, emergency');
  }
  return reply({ ...state, logLevel: params.level }, id, {});
}

function isInFlight(state: ConnectionState, id: RequestId): boolean {
  const key = idKey(id);
  for (const pending of state.pending.values()) if (pending.kind !== 'outgoing' && idKey(pending.requestId) === key) return true;
  return state.rootsHeld.some((h) => idKey(h.id) === key);
}

/** Folds the result of an effect back in: finishes the request it belongs to, or drops it if cancelled. */
export function handleEffectResult(result: EffectResult, state: ConnectionState, roundTrip?: RoundTrip): Step {
  const modern = 'ticket' in result ? state.pending.get(result.ticket)?.modern : undefined;
  if (modern) return withClientLogs(handleModernEffectResult(result, state, modern, foldEffectResult, roundTrip));
  return withClientLogs(foldEffectResult(result, state));
}

function foldEffectResult(result: EffectResult, state: ConnectionState): Step {
  if (result.kind === 'resourceUpdated') {
    // A legacy session's subscription, and every 2026-07-28 listen stream that named the transcript, matched by
    // its conversation (under whichever spelling of the URI each named it, which its notification repeats).
    const conversation = transcriptConversation(result.uri);
    if (conversation === null) return silent(state);
    const replies = listenUpdates(state, conversation);
    const subscribed = subscribedUri(state, conversation);
    if (subscribed !== undefined) replies.unshift(notice('notifications/resources/updated', { uri: subscribed }));
    return replies.length > 0 ? { state, replies, effects: [] } : silent(state);
  }
  if (result.kind === 'taskStatus') {
    const updates = listenTaskUpdates(state, result.task);
    return updates.replies.length > 0 ? { state: updates.state, replies: updates.replies, effects: [] } : silent(state);
  }
  if (result.kind === 'rootsChecked') return releaseHeld(rootsChecked(state, result.round, result.roots));
  if (result.kind === 'rootsWaitOver') return releaseHeld(rootsWaitOver(state, result.round));
  const pending = state.pending.get(result.ticket);
  if (!pending) return silent(state); // cancelled, or already answered: a cancelled call sends no reply
  if (result.kind === 'clientRequest') return askClient(result, pending, state);
  if (result.kind === 'toolProgress') {
    if (pending.kind !== 'tool' || pending.progressToken === undefined) return silent(state);
    const p = result.progress;
    const withMessage = versionFeatures(state.protocolVersion ?? '2025-06-18').progressMessage && p.message !== undefined;
    return {
      state,
      replies: [notice('notifications/progress', {
        progressToken: pending.progressToken, progress: p.progress,
        ...(p.total === undefined ? {} : { total: p.total }), ...(withMessage ? { message: p.message } : {}),
      }, pending.requestId)],
      effects: [],
    };
  }
  if (pending.kind === 'outgoing') return silent(state);
  // A listen stream stays in flight once acknowledged: only a cancel (or the session's end) removes it.
  if (pending.kind === 'listen') {
    if (result.kind === 'transcriptsWatched' && !pending.acked) return listenWatched(state, result.ticket, pending, result.found, result.tasks);
    if (result.kind === 'effectFailed') return fail(removePending(state, result.ticket), pending.requestId, result.code, result.message);
    return silent(state);
  }
  let next = removePending(state, result.ticket);
  // Questions the finished work left open are withdrawn from the books (their answers are not awaited).
  for (const [t, p] of next.pending) if (p.kind === 'outgoing' && p.owner === result.ticket) next = removePending(next, t);
  switch (result.kind) {
    case 'toolDone': {
      // Only a 2025 session lists what it started: a 2026-07-28 request has no session (a pooled one serves all its
      // principal's requests), and its listing is the store's, so its conversation is not kept here.
      const started = pending.kind === 'tool' && pending.tool === 'harness_task' && pending.modern === undefined ? result.outcome.structured?.conversation_id : undefined;
      const after = typeof started === 'string' && !next.conversations.includes(started) ? { ...next, conversations: [...next.conversations, started] } : next;
      return reply(after, pending.requestId, toolResult(result.outcome, after));
    }
    case 'transcript': {
      const uri = pending.kind === 'resource' ? pending.uri : '';
      if (result.jsonl === null) return fail(next, pending.requestId, ErrorCode.ResourceNotFound, `Resource not found: ${uri}`, { uri });
      return reply(next, pending.requestId, transcriptPage(uri, pending.kind === 'resource' ? pending.conversationId : undefined, result.jsonl, result.nextAfterSeq));
    }
    case 'transcriptFound': {
      const uri = pending.kind === 'subscribe' ? pending.uri : '';
      if (!result.found || pending.kind !== 'subscribe') return fail(next, pending.requestId, ErrorCode.ResourceNotFound, `Resource not found: ${uri}`, { uri });
      return subscribed(next, pending);
    }
    case 'conversationList':
      return pending.kind === 'resourceList'
        ? conversationListed(next, pending.requestId, pending.first, result.page, staticResources(next))
        : fail(next, pending.requestId, ErrorCode.InternalError, 'Internal error: a conversation list answered another request');
    case 'conversationCompletions':
      return completion(next, pending.requestId, result.values, result.values.length < result.total, result.total);
    case 'workspaceContext':
      return reply(next, pending.requestId, {
        contents: [{ uri: pending.kind === 'resource' ? pending.uri : '', mimeType: 'text/markdown', text: renderWorkspace(result.context) }],
      });
    case 'pathCompletions':
      return completion(next, pending.requestId, result.values, result.hasMore);
    case 'effectFailed':
      return fail(next, pending.requestId, result.code, result.message);
    case 'confirmationConsumed':
      return pending.kind === 'consume' ? confirmationConsumed(next, pending, result.firstUse) : fail(next, pending.requestId, ErrorCode.InternalError, 'Internal error: a confirmation\'s use answered another request');
    case 'toolInput': {
      const refuse = (why: string) => reply(next, pending.requestId, { content: [{ type: 'text', text: `The task stopped at turn ${result.turn}: ${why}; continue it with conversation_id ${result.conversationId}` }], isError: true });
      if (pending.kind !== 'tool' || pending.argsDigest === undefined) return refuse('its call cannot take a model turn by round trip');
      const turn = { conversationId: result.conversationId, turn: result.turn, seq: result.seq };
      return playTurn(next, pending.requestId, pending.tool, pending.argsDigest, turn, result.params, refuse);
    }
    case 'toolAsk': {
      const refuse = (why: string) => reply(next, pending.requestId, { content: [{ type: 'text', text: `The task stopped at a call that needs the person's confirmation (turn ${result.turn}): ${why}; continue it with conversation_id ${result.conversationId}` }], isError: true });
      if (pending.kind !== 'tool' || pending.argsDigest === undefined) return refuse('its call cannot ask the person by round trip');
      const handle = { conversationId: result.conversationId, turn: result.turn, seq: result.seq };
      return playTaskAsk(next, pending.requestId, pending.tool, pending.argsDigest, handle, result.message, refuse);
    }
    case 'transcriptsWatched':
      return silent(next); // only a listen asks it, and a listen is folded above
    case 'taskCreated':
      return taskCreated(next, pending.requestId, result.task);
    case 'taskRead':
      return pending.kind === 'task' ? taskRead(next, pending.requestId, pending.taskId, result.task) : fail(next, pending.requestId, ErrorCode.InternalError, 'Internal error: a task read answered another request');
    case 'taskCancelled':
      return pending.kind === 'task' ? taskCancelled(next, pending.requestId, pending.taskId, result.found) : fail(next, pending.requestId, ErrorCode.InternalError, 'Internal error: a task cancel answered another request');
    case 'taskUpdated':
      return pending.kind === 'task' ? taskUpdated(next, pending.requestId, pending.taskId, result.found) : fail(next, pending.requestId, ErrorCode.InternalError, 'Internal error: a task update answered another request');
  }
}
