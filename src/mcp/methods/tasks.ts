// The 2026-07-28 Tasks extension (SEP-2663) for `harness_task`: `tasks/get`, `tasks/update`, `tasks/cancel`
// (only for a request that declared the extension, else -32021), and the answers their effects bring back:
// the `CreateTaskResult` of a task started detached, the DetailedTask read from the store, the cancel ack.
// The task id is the conversation id, so any node answers from the store (docs/tasks-extension.md).

import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { CreatedTask, StoredTask, TaskAnswer } from '../effects.ts';
import { confirmationRequest } from '../confirmation.ts';
import { isSampled, readPersonAnswer } from '../round-trip.ts';
import { canElicitForm, declaresTasks, TASKS_EXTENSION } from '../client-capabilities.ts';
import { isRecord, META_SERVER_INFO, ModernErrorCode } from '../era.ts';
import { ErrorCode, type Params } from '../jsonrpc.ts';
import { answer } from '../outgoing.ts';
import type { ConnectionState } from '../state.ts';
import { addPending, fail, reply, type Step } from '../step.ts';
import { toolResult } from './tools.ts';
import { MAX_INPUT_RESPONSES, MAX_TASK_ID_LENGTH, TASK_POLL_INTERVAL_MS } from '../../limits.ts';

/** What `server/discover` lists under `capabilities.extensions`. */
export const serverExtensions = (): Record<string, object> => ({ [TASKS_EXTENSION]: {} });

/** -32021 (HTTP 400): the method needs the extension, which the request did not declare. */
export function undeclared(state: ConnectionState, id: RequestId, method: string): Step {
  return fail(state, id, ModernErrorCode.MissingRequiredClientCapability,
    `Missing required client capability: ${method} needs the ${TASKS_EXTENSION} extension declared in _meta["io.modelcontextprotocol/clientCapabilities"].extensions`,
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
}

/** `params.taskId`, or why it is refused (-32602). */
function taskIdOf(method: string, params: Params): string | { problem: string } {
  const taskId = params.taskId;
  if (typeof taskId !== 'string' || taskId.length === 0) return { problem: `Invalid params: ${method} needs params.taskId (a non-empty string)` };
  if (taskId.length > MAX_TASK_ID_LENGTH) return { problem: `Invalid params: params.taskId is longer than MAX_TASK_ID_LENGTH (${MAX_TASK_ID_LENGTH}) characters` };
  return taskId;
}

/** The gate, then the id, then the store (`readTask` / `cancelTask`). */
function askStore(state: ConnectionState, id: RequestId, method: 'tasks/get' | 'tasks/cancel', params: Params): Step {
  if (!declaresTasks(state)) return undeclared(state, id, method);
  const taskId = taskIdOf(method, params);
  if (typeof taskId !== 'string') return fail(state, id, ErrorCode.InvalidParams, taskId.problem);
  const added = addPending(state, { kind: 'task', requestId: id, method, taskId });
  const effect = method === 'tasks/get' ? { kind: 'readTask' as const, ticket: added.ticket, taskId, canAsk: canAskInside(state) } : { kind: 'cancelTask' as const, ticket: added.ticket, taskId };
  return { state: added.state, replies: [], effects: [effect] };
}

export const getTask = (state: ConnectionState, id: RequestId, params: Params): Step => askStore(state, id, 'tasks/get', params);

export const cancelTask = (state: ConnectionState, id: RequestId, params: Params): Step => askStore(state, id, 'tasks/cancel', params);

/**
 * `tasks/update` answers the `inputRequests` of an `input_required` task: each answer is read here by the one
 * rule (`readPersonAnswer`: accept with `allow` not unticked is yes), and the runtime gives the one that
 * answers the question the task is parked at to it (task-input.ts). Answers to keys not pending (stale,
 * duplicate, unknown) are acknowledged and change nothing, as SEP-2663 acks them.
 */
export function updateTask(state: ConnectionState, id: RequestId, params: Params): Step {
  if (!declaresTasks(state)) return undeclared(state, id, 'tasks/update');
  const taskId = taskIdOf('tasks/update', params);
  if (typeof taskId !== 'string') return fail(state, id, ErrorCode.InvalidParams, taskId.problem);
  const responses = params.inputResponses;
  if (!isRecord(responses)) return fail(state, id, ErrorCode.InvalidParams, 'Invalid params: tasks/update needs params.inputResponses (an object keyed by the task\'s inputRequests)');
  const keys = Object.keys(responses);
  if (keys.length > MAX_INPUT_RESPONSES) return fail(state, id, ErrorCode.InvalidParams, `Invalid params: params.inputResponses has more than MAX_INPUT_RESPONSES (${MAX_INPUT_RESPONSES}) answers`);
  const answers: TaskAnswer[] = [];
  for (const key of keys) {
    const response = responses[key];
    if (!isRecord(response)) return fail(state, id, ErrorCode.InvalidParams, `Invalid params: inputResponses.${key.slice(0, MAX_TASK_ID_LENGTH)} must be an object (the client's result for that input request)`);
    if (!key.startsWith(SAMPLE_KEY_PREFIX)) answers.push({ key, person: readPersonAnswer(response) });
    else if (isSampled(response)) answers.push({ key, sampled: response });
    else return fail(state, id, ErrorCode.InvalidParams, `Invalid params: inputResponses.${key.slice(0, MAX_TASK_ID_LENGTH)} must be the client's sampling/createMessage result (an object with "content")`);
  }
  const added = addPending(state, { kind: 'task', requestId: id, method: 'tasks/update', taskId });
  return { state: added.state, replies: [], effects: [{ kind: 'updateTask', ticket: added.ticket, taskId, answers, canAsk: canAskInside(state) }] };
}

/** `tasks/update`'s answer: the empty ack (the task's new status is seen by the next `tasks/get`), or -32602 when the task is not the caller's. */
export function taskUpdated(state: ConnectionState, id: RequestId, taskId: string, found: boolean): Step {
  if (!found) return fail(state, id, ErrorCode.InvalidParams, `Invalid params: no task ${taskId} (tasks are the caller's own harness_task conversations)`);
  return reply(state, id, {});
}

/** The keys of a model turn's input request (task-input.ts `inputKey`): their answer is a `CreateMessageResult`. */
const SAMPLE_KEY_PREFIX = 'sample-';

/** The requesting client could be asked from inside a task: a model turn's params offer the tools under `ask`, as its rounds do. */
const canAskInside = (state: ConnectionState): boolean => canElicitForm(state) && state.config.principal.kind !== 'local';

/** A `runTool` run detached: the call's answer is the flat `CreateTaskResult`, no `requestState`, no nested `task`. */
export function taskCreated(state: ConnectionState, id: RequestId, task: CreatedTask): Step {
  const result = {
    resultType: 'task', taskId: task.taskId, status: 'working', createdAt: task.createdAt, lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: task.ttlMs ?? null, pollIntervalMs: TASK_POLL_INTERVAL_MS,
    _meta: { [META_SERVER_INFO]: { name: state.config.server.name, version: state.config.server.version } },
  };
  return { state, replies: [answer(id, result)], effects: [] };
}

/**
 * `tasks/get`'s DetailedTask from what the store holds (and a `notifications/tasks`' params: listen.ts). A
 * `failed` conversation ended at the tool level (the model endpoint's error, `max_turns`), so it is
 * `completed` with an `isError` result, as SEP-2663 keeps `failed` for protocol-level faults: an
 * `interrupted` one (its process died, or it was given up), which answers `error` and no `result`.
 */
export function detailedTask(state: ConnectionState, task: StoredTask): Record<string, unknown> {
  // `ttlMs` as the store holds it (none without `--task-ttl`): a task may be deleted that long after `createdAt`.
  const base = { taskId: task.taskId, createdAt: task.createdAt, lastUpdatedAt: task.lastUpdatedAt, ttlMs: task.ttlMs ?? null, pollIntervalMs: TASK_POLL_INTERVAL_MS };
  const text = task.outcome?.text;
  switch (task.status) {
    case 'running':
      return { ...base, status: 'working' };
    case 'completed':
    case 'failed':
      return { ...base, status: 'completed', result: toolResult(task.outcome ?? { text: 'The task ended without a recorded result.', isError: true }, state) };
    case 'cancelled':
      return { ...base, status: 'cancelled', ...(text === undefined ? {} : { statusMessage: text }) };
    case 'input_required': {
      // The question is read from the transcript; a parked task whose transcript shows none (changed by hand) still says so.
      const question = task.question ?? null;
      if (question === null) return { ...base, status: 'input_required', statusMessage: 'the task waits for input its transcript does not show', inputRequests: {} };
      if ('unshown' in question) return { ...base, status: 'input_required', statusMessage: question.unshown, inputRequests: {} };
      if ('params' in question) return { ...base, status: 'input_required', statusMessage: 'the task waits for a model turn of its client', inputRequests: { [question.key]: { method: 'sampling/createMessage', params: question.params } } };
      // Several calls of one turn are asked at once, one key each; the answered ones are gone (partial fulfilment).
      const inputRequests: Record<string, unknown> = {};
      for (const ask of question.asks) inputRequests[ask.key] = { method: 'elicitation/create', params: confirmationRequest(ask.message) };
      return { ...base, status: 'input_required', statusMessage: asksMessage(question.asks), inputRequests };
    }
    case 'interrupted': {
      const message = text ?? `the task was interrupted; continue it with harness_task conversation_id ${task.taskId}`;
      return { ...base, status: 'failed', statusMessage: message, error: { code: ErrorCode.InternalError, message, data: { conversation_id: task.taskId } } };
    }
  }
}

/** The `statusMessage` of a task parked at its person's questions: the question, or each of several. */
function asksMessage(asks: readonly { readonly message: string }[]): string {
  if (asks.length === 1) return asks[0]?.message ?? '';
  if (asks.length === 0) return 'every question of the task is answered; it resumes at the next tasks/update or when its wait ends';
  return `${asks.length} calls wait for the person's confirmation:\n\n${asks.map((a) => a.message).join('\n\n')}`;
}

/** `tasks/get`'s answer: the DetailedTask, or -32602 for a task that is not the caller's (or none). */
export function taskRead(state: ConnectionState, id: RequestId, taskId: string, task: StoredTask | null): Step {
  if (task === null) return fail(state, id, ErrorCode.InvalidParams, `Invalid params: no task ${taskId} (tasks are the caller's own harness_task conversations)`);
  return reply(state, id, detailedTask(state, task));
}

/** `tasks/cancel`'s answer: the empty ack (also for a task already over), the new status seen by the next `tasks/get`. */
export function taskCancelled(state: ConnectionState, id: RequestId, taskId: string, found: boolean): Step {
  if (!found) return fail(state, id, ErrorCode.InvalidParams, `Invalid params: no task ${taskId} (tasks are the caller's own harness_task conversations)`);
  return reply(state, id, {});
}
