// `subscriptions/listen` (2026-07-28): a request that stays in flight as a stream of change notifications
// until the client cancels it. super-pi's tool, prompt and resource lists never change (server/discover
// says `listChanged: false`), so a stream carries `resources/updated` for transcripts of the caller's own
// conversations and, for a request that declared the Tasks extension, `notifications/tasks` for the
// caller's own tasks (`notifications.taskIds`, SEP-2663): the DetailedTask `tasks/get` would answer, once
// per change of status. The acknowledgment is the stream's first message and names what is honoured:
// the requested transcript URIs (as the client spelled them; spellings of one are matched by conversation)
// and task ids the store says are the caller's (another principal's is
// left out exactly as a missing one is); each named task's current state follows it at once, so a task
// that changed between its creation and the listen is not missed. Each notification carries the listen
// request's id in `_meta` (META_SUBSCRIPTION_ID) and goes out as related to that request, so an HTTP
// stream carries it. A legacy (2025) session has no such method.

import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { declaresTasks } from '../client-capabilities.ts';
import type { StoredTask } from '../effects.ts';
import { isRecord, META_SUBSCRIPTION_ID } from '../era.ts';
import { ErrorCode, type Params } from '../jsonrpc.ts';
import { notice, type Outgoing } from '../outgoing.ts';
import { transcriptConversation } from '../resources.ts';
import type { ConnectionState, ListenedTask, Pending } from '../state.ts';
import { addPending, fail, type Step } from '../step.ts';
import { detailedTask, undeclared } from './tasks.ts';
import { MAX_LISTEN_TASK_IDS, MAX_LISTEN_URIS, MAX_SUBSCRIPTION_URI_LENGTH, MAX_TASK_ID_LENGTH } from '../../limits.ts';

type Listen = Extract<Pending, { kind: 'listen' }>;

/** The acknowledgment that opens a stream: what it will carry (list changes never: the lists are fixed). */
function acknowledged(id: RequestId, uris: readonly string[], taskIds: readonly string[]): Outgoing {
  const notifications = { ...(uris.length > 0 ? { resourceSubscriptions: [...uris] } : {}), ...(taskIds.length > 0 ? { taskIds: [...taskIds] } : {}) };
  return notice('notifications/subscriptions/acknowledged', { _meta: { [META_SUBSCRIPTION_ID]: id }, notifications }, id);
}

/** `notifications.taskIds`, each once, or why it is refused (-32602). */
function taskIdsOf(filter: Record<string, unknown>): string[] | { problem: string } {
  const requested = filter.taskIds ?? [];
  if (!Array.isArray(requested) || requested.some((t) => typeof t !== 'string' || t.length === 0 || t.length > MAX_TASK_ID_LENGTH)) {
    return { problem: `Invalid params: notifications.taskIds must be an array of task ids (non-empty strings of at most MAX_TASK_ID_LENGTH, ${MAX_TASK_ID_LENGTH}, characters)` };
  }
  if (requested.length > MAX_LISTEN_TASK_IDS) {
    return { problem: `Invalid params: notifications.taskIds names ${requested.length} tasks, more than MAX_LISTEN_TASK_IDS (${MAX_LISTEN_TASK_IDS}); open several streams` };
  }
  return [...new Set(requested as string[])];
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
  // Bounded as resources/subscribe bounds its uri: a stream's spellings are held until the store answers.
  const long = (requested as string[]).findIndex((u) => u.length > MAX_SUBSCRIPTION_URI_LENGTH);
  if (long !== -1) {
    return fail(state, id, ErrorCode.InvalidParams, `Invalid params: notifications.resourceSubscriptions[${long}] is longer than MAX_SUBSCRIPTION_URI_LENGTH (${MAX_SUBSCRIPTION_URI_LENGTH}) characters`);
  }
  const taskIds = taskIdsOf(filter);
  if (!Array.isArray(taskIds)) return fail(state, id, ErrorCode.InvalidParams, taskIds.problem);
  // Task status notifications belong to the Tasks extension: asking for them without declaring it is -32021.
  if (taskIds.length > 0 && !declaresTasks(state)) return undeclared(state, id, 'subscriptions/listen with notifications.taskIds');
  // Only transcripts change; any other URI (the workspace, the loadout, a page of a transcript, an unknown
  // one) is not honoured. Spellings of one transcript's URI are one transcript: the first is kept, and the
  // stream names it as the client spelled it.
  const spelled = new Map<string, string>();
  for (const uri of requested as string[]) {
    const conversation = transcriptConversation(uri);
    if (conversation !== null && !spelled.has(conversation)) spelled.set(conversation, uri);
  }
  const conversations = [...spelled.keys()];
  const nothing = conversations.length === 0 && taskIds.length === 0;
  const added = addPending(state, { kind: 'listen', requestId: id, uris: nothing ? [] : [...spelled.values()], tasks: [], acked: nothing });
  if (nothing) return { state: added.state, replies: [acknowledged(id, [], [])], effects: [] };
  return { state: added.state, replies: [], effects: [{ kind: 'watchTranscripts', ticket: added.ticket, conversationIds: conversations, taskIds }] };
}

/**
 * The store said which of a stream's transcripts and tasks are the caller's: the stream is acknowledged for
 * those, and each task's current state goes out right after the acknowledgment.
 */
export function listenWatched(state: ConnectionState, ticket: number, pending: Listen, found: readonly string[], tasks: readonly StoredTask[] = []): Step {
  const uris = pending.uris.filter((u) => found.includes(transcriptConversation(u) ?? ''));
  const listened: ListenedTask[] = tasks.map((t) => ({ taskId: t.taskId, sent: null }));
  const pendingNow = new Map(state.pending);
  pendingNow.set(ticket, { ...pending, uris, tasks: listened, acked: true });
  let next: ConnectionState = { ...state, pending: pendingNow };
  const replies = [acknowledged(pending.requestId, uris, listened.map((t) => t.taskId))];
  for (const task of tasks) {
    const step = listenTaskUpdates(next, task);
    next = step.state;
    replies.push(...step.replies);
  }
  return { state: next, replies, effects: [] };
}

/**
 * `notifications/resources/updated` on every acknowledged stream that named the conversation's transcript,
 * each tagged with its listen id and naming the URI as that stream spelled it.
 */
export function listenUpdates(state: ConnectionState, conversationId: string): Outgoing[] {
  const out: Outgoing[] = [];
  for (const p of state.pending.values()) {
    if (p.kind !== 'listen' || !p.acked) continue;
    const uri = p.uris.find((u) => transcriptConversation(u) === conversationId);
    if (uri === undefined) continue;
    out.push(notice('notifications/resources/updated', { _meta: { [META_SUBSCRIPTION_ID]: p.requestId }, uri }, p.requestId));
  }
  return out;
}

/**
 * `notifications/tasks` (the DetailedTask) on every acknowledged stream that named the task and was not
 * last sent this status (for a parked task, this status with these input requests: `heard`): the runtime
 * may report a task more often than it changes (every transcript entry may be one), and a stream hears
 * each change once.
 */
export function listenTaskUpdates(state: ConnectionState, task: StoredTask): { state: ConnectionState; replies: Outgoing[] } {
  const replies: Outgoing[] = [];
  let pending: Map<number, Pending> | null = null;
  const detailed = detailedTask(state, task);
  for (const [ticket, p] of state.pending) {
    if (p.kind !== 'listen' || !p.acked) continue;
    const at = p.tasks.findIndex((t) => t.taskId === task.taskId);
    const sent = heard(detailed);
    if (at < 0 || p.tasks[at]?.sent === sent) continue;
    pending ??= new Map(state.pending);
    pending.set(ticket, { ...p, tasks: p.tasks.map((t, i) => (i === at ? { taskId: t.taskId, sent } : t)) });
    replies.push(notice('notifications/tasks', { _meta: { [META_SUBSCRIPTION_ID]: p.requestId }, ...detailed }, p.requestId));
  }
  return { state: pending === null ? state : { ...state, pending }, replies };
}

/**
 * What a stream has heard of a task, to tell a change from a repeat: its status, and while it waits
 * `input_required` the keys of its input requests too — an answer to some of several questions leaves
 * the status as it was and takes its key away (docs/tasks-extension.md, partial fulfilment).
 */
function heard(detailed: Record<string, unknown>): string {
  const status = String(detailed.status);
  const requests = detailed.inputRequests;
  return status === 'input_required' && isRecord(requests) ? `${status} ${Object.keys(requests).join(' ')}` : status;
}
