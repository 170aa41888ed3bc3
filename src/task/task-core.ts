// The agent loop of a harness task as a pure state machine: the transcript so far and one event in
// (the model's reply, a tool's outcome, a stop), the next state and the actions out (append an entry,
// ask the model, run a tool, report progress, finish). No I/O: the task actor on a scheduler worker runs
// this core, and its host on the main thread carries the actions out — exactly as the connection actor
// runs the protocol core.
//
// A task is resumable by construction: `resumeTask(setup, entries)` rebuilds the state from the durable
// transcript alone, so a restarted task actor continues from the last durable entry. A tool call that was
// started but has no result is re-run when the tool is idempotent, else recorded as interrupted (and the
// model is told so). Every step is appended before the next begins, and nothing is appended twice.

import type { HarnessId } from '../harness/ids.ts';
import { harnessById } from '../harness/catalog.ts';
import { decideTool } from '../harness/policy.ts';
import { checkToolArguments } from '../mcp/arguments.ts';
import { describeCall } from '../mcp/confirmation.ts';
import { nestsDeeperThan } from '../mcp/limits.ts';
import type { ChatMessage, ToolCall } from '../model/types.ts';
import type { Entry, EntryType } from '../store/store.ts';
import { toolCatalog } from '../tools/catalog.ts';
import type { ToolOutcome } from '../tools/contract.ts';
import { isToolName } from '../tools/definition.ts';
import { type BeforeImage, type FileSnapshot, isBeforeImage } from './file-snapshot.ts';
import { MAX_JSON_DEPTH, MAX_RESULT_CHARS, MAX_TOOL_CALLS_PER_TURN, TASK_HISTORY_MAX_BYTES } from '../limits.ts';

export type TaskStatus = 'completed' | 'failed' | 'cancelled';

/** harness_task's structuredContent (a live run's answer and one rebuilt from the store): a completed task's text is the model's answer. */
export function taskStructured(conversationId: string, harness: string, status: TaskStatus | 'running' | 'interrupted', text: string, turns: number, toolCalls: number): Record<string, unknown> {
  const said = status === 'completed' ? { answer: text } : { message: text };
  return { conversation_id: conversationId, harness, status, turns, tool_calls: toolCalls, ...said };
}

/** The answer of a task that stopped before it finished: why, and how to continue it. */
export const interruptedText = (conversationId: string, message: string): string =>
  `The task was interrupted: ${message}. Its transcript is kept; continue it with conversation_id ${conversationId}.`;

/** What does not change while a task runs (it is passed again to every incarnation of the actor). */
export interface TaskSetup {
  readonly conversationId: string;
  readonly harness: HarnessId;
  readonly maxTurns: number;
  /** The local (stdio) user, whose host confirms tool calls itself: `ask` is allowed. */
  readonly local: boolean;
  /** An anonymous remote caller without the operator's opt-in: write, edit and bash are refused. */
  readonly forbidWrites: boolean;
  /** The client declared elicitation, so `ask` can become a question to the person. */
  readonly canConfirm: boolean;
}

export type TaskAction =
  /** Append an entry to the conversation (durably, before any later action runs). */
  | { readonly a: 'append'; readonly type: EntryType; readonly payload: Record<string, unknown> }
  | { readonly a: 'progress'; readonly progress: number; readonly total: number; readonly message: string }
  /** Ask the model; answer with a `model` or `modelFailed` event. */
  | { readonly a: 'model'; readonly turn: number; readonly messages: readonly ChatMessage[] }
  /**
   * Run one tool call (asking the person first when `confirm` is set); answer with a `tool` event. With
   * `snapshot`, the host appends the file's before-image before the tool runs — unless `stored` carries
   * the one a crashed run of this same call already made durable, which is then the true original.
   */
  | { readonly a: 'tool'; readonly call: ToolCall; readonly confirm?: string; readonly snapshot: boolean; readonly stored?: BeforeImage }
  /** The task is over: set the conversation's status and answer the harness_task call. */
  | { readonly a: 'finish'; readonly status: TaskStatus; readonly text: string; readonly isError: boolean; readonly turns: number; readonly toolCalls: number };

export type TaskEvent =
  | { readonly e: 'model'; readonly text: string; readonly toolCalls: readonly ToolCall[]; readonly stopReason: string }
  | { readonly e: 'modelFailed'; readonly message: string }
  | { readonly e: 'tool'; readonly id: string; readonly outcome: ToolOutcome; readonly snapshot?: FileSnapshot }
  /** Cancellation or the wall-time limit: `why` is recorded and returned. */
  | { readonly e: 'stop'; readonly why: string };

export interface TaskState {
  readonly setup: TaskSetup;
  /** The model-facing history, this run included. */
  readonly messages: readonly ChatMessage[];
  /** Characters of `messages` (texts, and tool calls as JSON): bounded by TASK_HISTORY_MAX_BYTES before each model turn. */
  readonly chars: number;
  /** Model calls begun in this run. */
  readonly turn: number;
  /** Tool calls begun in this run. */
  readonly toolCalls: number;
  /** Calls of the latest model message not yet started. */
  readonly queue: readonly ToolCall[];
  /** What the task waits for: a model reply, a tool's outcome (`running`), or nothing (finished). */
  readonly waiting: 'model' | 'tool' | 'done';
  readonly running: ToolCall | null;
  /** The latest model message had no tool calls: its text is the final answer. */
  readonly answered: string | null;
}

export interface TaskStep {
  readonly state: TaskState;
  readonly actions: readonly TaskAction[];
}

/** Entry payloads as the core writes them (read back on resume). */
interface Payload {
  text?: string;
  toolCalls?: ToolCall[];
  id?: string;
  name?: string;
  isError?: boolean;
  message?: string;
  status?: TaskStatus;
}

const INTERRUPTED = 'Error: this call was interrupted before it returned (the task was restarted after a crash); its effect is unknown. Check before you repeat it.';

/** Re-running after a crash is safe only for tools that declare themselves idempotent. */
export function isIdempotent(tool: string): boolean {
  return isToolName(tool) && toolCatalog[tool].annotations?.idempotentHint === true;
}

/**
 * The state of a task from its transcript: the run that the last `user` entry began, continued from its
 * last durable entry. The host appends that `user` entry (the prompt) before the first actor starts.
 */
export function resumeTask(setup: TaskSetup, entries: readonly Entry[]): TaskStep {
  let runStart = -1;
  for (let i = entries.length - 1; i >= 0; i--) if (entries[i]?.type === 'user') { runStart = i; break; }
  if (runStart < 0) throw new Error(`conversation ${setup.conversationId} has no prompt to run`);
  const history = historyOf(entries.slice(0, runStart));
  const run = entries.slice(runStart);
  const messages: ChatMessage[] = [...history, { role: 'user', content: (run[0]?.payload as Payload).text ?? '' }];
  let turn = 0;
  let toolCalls = 0;
  let lastModel: Payload | null = null;
  const started = new Set<string>();
  const resolved = new Set<string>();
  const beforeImages = new Map<string, BeforeImage>();
  for (const entry of run.slice(1)) {
    const p = entry.payload as Payload;
    switch (entry.type) {
      case 'file_snapshot':
        if (isBeforeImage(entry.payload) && !beforeImages.has(entry.payload.id)) beforeImages.set(entry.payload.id, entry.payload);
        break;
      case 'model':
        turn++;
        lastModel = p;
        messages.push(assistant(p.text ?? '', p.toolCalls ?? []));
        break;
      case 'tool_call':
        toolCalls++;
        started.add(p.id ?? '');
        break;
      case 'tool_result':
      case 'tool_interrupted':
        resolved.add(p.id ?? '');
        messages.push({ role: 'tool', content: entry.type === 'tool_interrupted' ? INTERRUPTED : toolText(p), toolCallId: p.id ?? '' });
        break;
      case 'final':
        return finished({ setup, messages, turn, toolCalls }, 'completed', p.text ?? '', false);
      case 'error':
        return finished({ setup, messages, turn, toolCalls }, p.status ?? 'failed', p.message ?? 'the task failed', true);
      default:
        break;
    }
  }
  const base: TaskState = { setup, messages, chars: messages.reduce((n, m) => n + charsOf(m), 0), turn, toolCalls, queue: [], waiting: 'model', running: null, answered: null };
  if (lastModel === null) return advance(base, []);
  const calls = lastModel.toolCalls ?? [];
  if (calls.length === 0) return advance({ ...base, answered: lastModel.text ?? '' }, []);
  const actions: TaskAction[] = [];
  let state = base;
  const queue: ToolCall[] = [];
  for (const call of calls) {
    if (resolved.has(call.id)) continue;
    if (!started.has(call.id)) {
      queue.push(call);
      continue;
    }
    // Started, no result: it was running when the task died.
    if (queue.length === 0 && isIdempotent(call.name)) {
      // Re-run in place (its tool_call entry stands; only its result will be appended).
      const rerun = dispatch(state, call, actions, beforeImages.get(call.id));
      if (rerun.waiting === 'tool') {
        return { state: { ...rerun, queue: calls.filter((c) => !resolved.has(c.id) && !started.has(c.id)) }, actions };
      }
      state = rerun;
      continue;
    }
    actions.push({ a: 'append', type: 'tool_interrupted', payload: { id: call.id, name: call.name, text: INTERRUPTED } });
    state = withMessage(state, { role: 'tool', content: INTERRUPTED, toolCallId: call.id });
  }
  return advance({ ...state, queue }, actions);
}

/**
 * A task that cannot go on from its transcript (its history is past TASK_HISTORY_MAX_BYTES, task-history.ts):
 * it records why, as an `error` entry, and fails with that message. Nothing of the transcript is needed.
 */
export function refuseTask(setup: TaskSetup, why: string): TaskStep {
  const state: TaskState = { setup, messages: [], chars: 0, turn: 0, toolCalls: 0, queue: [], waiting: 'done', running: null, answered: null };
  return { state, actions: [{ a: 'append', type: 'error', payload: { message: why, status: 'failed' } }, finish(state, 'failed', why, true)] };
}

/** The transcript entry (an `error` entry's payload) that says why a task was stopped, by its run or by a cross-node cancel. */
export function cancelledEntry(why: string): { message: string; status: 'cancelled' } {
  return { message: why, status: 'cancelled' };
}

/** One event in; events that do not fit the state (a late result) change nothing. */
export function stepTask(state: TaskState, event: TaskEvent): TaskStep {
  if (state.waiting === 'done') return { state, actions: [] };
  switch (event.e) {
    case 'stop': {
      const actions: TaskAction[] = [{ a: 'append', type: 'error', payload: cancelledEntry(event.why) }];
      return { state: { ...state, waiting: 'done' }, actions: [...actions, finish(state, 'cancelled', `Stopped: ${event.why}.`, true)] };
    }
    case 'modelFailed': {
      if (state.waiting !== 'model') return { state, actions: [] };
      const actions: TaskAction[] = [{ a: 'append', type: 'error', payload: { message: event.message, status: 'failed' } }];
      return { state: { ...state, waiting: 'done' }, actions: [...actions, finish(state, 'failed', event.message, true)] };
    }
    case 'model': {
      if (state.waiting !== 'model') return { state, actions: [] };
      if (event.toolCalls.length > MAX_TOOL_CALLS_PER_TURN) {
        const message = `the model asked for ${event.toolCalls.length} tool calls in one turn, more than MAX_TOOL_CALLS_PER_TURN (${MAX_TOOL_CALLS_PER_TURN}), so none was run`;
        return stepTask(state, { e: 'modelFailed', message });
      }
      const calls = uniqueCallIds(event.toolCalls, state.messages).map(shallowArguments);
      const actions: TaskAction[] = [{ a: 'append', type: 'model', payload: { text: event.text, toolCalls: calls, stopReason: event.stopReason } }];
      const next: TaskState = { ...withMessage(state, assistant(event.text, calls)), queue: calls, answered: calls.length === 0 ? event.text : null };
      return advance(next, actions);
    }
    case 'tool': {
      if (state.waiting !== 'tool' || state.running?.id !== event.id) return { state, actions: [] };
      const call = state.running;
      const actions: TaskAction[] = [];
      if (event.snapshot) actions.push({ a: 'append', type: 'file_snapshot', payload: { ...event.snapshot, id: call.id } });
      const next = recordResult({ ...state, running: null }, call, event.outcome, actions);
      return advance(next, actions);
    }
  }
}

/**
 * The turn's calls, each with an id no other call of the conversation has: the model's ids are its own text,
 * and it may repeat one (a compatible server numbering each turn's calls from 1, a model told to by what it
 * read). Results, a resume and a parked task's answers pair with their call by id, so a repeated id would let
 * one call take another's result or the person's answer to another's question. A repeat becomes `<id>-<n>`
 * (the first n free), recorded so in the transcript, which the provider is sent back consistently.
 */
export function uniqueCallIds(calls: readonly ToolCall[], messages: readonly ChatMessage[]): ToolCall[] {
  const taken = new Set<string>();
  for (const m of messages) for (const c of m.toolCalls ?? []) taken.add(c.id);
  return calls.map((call) => {
    let id = call.id;
    for (let n = 2; taken.has(id); n++) id = `${call.id}-${n}`;
    taken.add(id);
    return id === call.id ? call : { ...call, id };
  });
}

/**
 * A call whose arguments nest deeper than a tool call's may in a message (MAX_JSON_DEPTH) is not run: its
 * arguments become `{}` with a `parseError` the model reads. They are the model's text, parsed without a
 * depth bound; 200,000 levels could not be recorded (the store's JSON.stringify overflows the stack) and left
 * the task `running` until a takeover gave up on it.
 */
function shallowArguments(call: ToolCall): ToolCall {
  if (!nestsDeeperThan(call.arguments, MAX_JSON_DEPTH)) return call;
  return { id: call.id, name: call.name, arguments: {}, parseError: `the arguments of ${call.name} nest deeper than MAX_JSON_DEPTH (${MAX_JSON_DEPTH}) levels of objects and arrays, so the call was not run` };
}

/** Starts the next queued call, or asks the model, or finishes: whatever the state needs next. */
function advance(state: TaskState, actions: TaskAction[]): TaskStep {
  let s = state;
  while (s.queue.length > 0) {
    const [call, ...rest] = s.queue as [ToolCall, ...ToolCall[]];
    s = { ...s, queue: rest, toolCalls: s.toolCalls + 1 };
    actions.push({ a: 'append', type: 'tool_call', payload: { id: call.id, name: call.name, arguments: call.arguments } });
    s = dispatch(s, call, actions);
    if (s.waiting === 'tool') return { state: s, actions };
  }
  const { maxTurns } = s.setup;
  if (s.answered !== null) {
    actions.push({ a: 'append', type: 'final', payload: { text: s.answered } });
    actions.push(finish(s, 'completed', s.answered, false));
    return { state: { ...s, waiting: 'done' }, actions };
  }
  if (s.turn >= maxTurns) {
    const message = `stopped after ${maxTurns} turns without a final answer`;
    actions.push({ a: 'append', type: 'error', payload: { message, status: 'failed' } });
    actions.push(finish(s, 'failed', `The task stopped after ${maxTurns} turns (max_turns) without a final answer; continue it with conversation_id ${s.setup.conversationId}.`, true));
    return { state: { ...s, waiting: 'done' }, actions };
  }
  if (s.chars > TASK_HISTORY_MAX_BYTES) {
    // The bound a task's load applies (task-history.ts), applied as the run grows too: the run holds its
    // history and sends it whole at every turn, and its next load would refuse it anyway.
    const message = `the task's history grew past TASK_HISTORY_MAX_BYTES (${TASK_HISTORY_MAX_BYTES} bytes) while it ran, more than a task sends its model`;
    actions.push({ a: 'append', type: 'error', payload: { message, status: 'failed' } });
    actions.push(finish(s, 'failed', `The task stopped: ${message}. Start a new conversation (harness_task without conversation_id); this one's transcript stays readable as it is.`, true));
    return { state: { ...s, waiting: 'done' }, actions };
  }
  const turn = s.turn + 1;
  actions.push({ a: 'progress', progress: turn, total: maxTurns, message: `turn ${turn}: asking the model` });
  actions.push({ a: 'model', turn, messages: s.messages });
  return { state: { ...s, turn, waiting: 'model' }, actions };
}

/**
 * A call whose tool_call entry is appended: refused on the spot by the policy (its result is appended at
 * once), or handed to the host to run (the state then waits for its outcome).
 */
function dispatch(state: TaskState, call: ToolCall, actions: TaskAction[], stored?: BeforeImage): TaskState {
  const { setup } = state;
  const verdict = verdictOf(setup, call);
  if ('refusal' in verdict) return recordResult(state, call, { text: verdict.refusal, isError: true }, actions);
  actions.push({ a: 'progress', progress: state.turn, total: setup.maxTurns, message: `turn ${state.turn}: ${call.name}` });
  const snapshot = setup.harness === 'super-pi-code' && (call.name === 'write' || call.name === 'edit');
  const confirm = verdict.ask === null ? undefined : confirmText(setup, call, verdict.ask);
  actions.push({ a: 'tool', call, snapshot, ...(confirm === undefined ? {} : { confirm }), ...(snapshot && stored !== undefined ? { stored } : {}) });
  return { ...state, waiting: 'tool', running: call };
}

const confirmText = (setup: TaskSetup, call: ToolCall, rule: string): string => `A ${setup.harness} task wants to ${describeCall(call.name, call.arguments)}\n(${rule})`;

/**
 * The question the person is asked before `call` runs (the `confirm` its `tool` action will carry), or
 * undefined when it runs or is refused without one: so the questions of calls still queued behind the one
 * dispatched can be asked together with it (parked-questions.ts).
 */
export function confirmationOf(setup: TaskSetup, call: ToolCall): string | undefined {
  const verdict = verdictOf(setup, call);
  return 'refusal' in verdict || verdict.ask === null ? undefined : confirmText(setup, call, verdict.ask);
}

/**
 * Whether the call runs: refused outright (why), or run — after asking the person when `ask` names the
 * rule. A local host confirms the harness_task call itself; a remote caller is asked call by call.
 */
function verdictOf(setup: TaskSetup, call: ToolCall): { refusal: string } | { ask: string | null } {
  if (call.parseError) return { refusal: call.parseError };
  if (!isToolName(call.name) || call.name === 'harness_task') return { refusal: `There is no tool "${call.name}" in this task.` };
  // The model's arguments are checked as a caller's are (tools/call): the tools rely on their schema.
  const checked = checkToolArguments(call.name, call.arguments);
  if (!checked.ok) return { refusal: checked.message };
  const decision = decideTool(harnessById(setup.harness), call.name);
  if (decision.verdict === 'deny') return { refusal: `Denied by harness policy: ${decision.rule}` };
  if (setup.forbidWrites && (call.name === 'write' || call.name === 'edit' || call.name === 'bash')) {
    return { refusal: `Denied by remote policy: anonymous remote callers cannot use ${call.name}, inside a task either` };
  }
  if (decision.verdict !== 'ask' || setup.local) return { ask: null };
  if (!setup.canConfirm) return { refusal: `Denied: ${decision.rule}; this client cannot be asked (no elicitation), so the call is refused` };
  return { ask: decision.rule };
}

function recordResult(state: TaskState, call: ToolCall, outcome: ToolOutcome, actions: TaskAction[]): TaskState {
  const text = outcome.text.length > MAX_RESULT_CHARS ? `${outcome.text.slice(0, MAX_RESULT_CHARS)}\n[result cut at ${MAX_RESULT_CHARS} characters]` : outcome.text;
  const isError = outcome.isError === true;
  actions.push({ a: 'append', type: 'tool_result', payload: { id: call.id, name: call.name, text, isError } });
  return { ...withMessage(state, { role: 'tool', content: toolText({ text, isError }), toolCallId: call.id }), waiting: 'model', running: null };
}

function finish(state: Pick<TaskState, 'turn' | 'toolCalls'>, status: TaskStatus, text: string, isError: boolean): TaskAction {
  return { a: 'finish', status, text, isError, turns: state.turn, toolCalls: state.toolCalls };
}

function finished(s: Pick<TaskState, 'setup' | 'messages' | 'turn' | 'toolCalls'>, status: TaskStatus, text: string, isError: boolean): TaskStep {
  const state: TaskState = { ...s, chars: 0, queue: [], waiting: 'done', running: null, answered: null };
  return { state, actions: [finish(s, status, status === 'cancelled' ? `Stopped: ${text}.` : text, isError)] };
}

/** `state` with `message` appended to its history, and counted. */
function withMessage(state: TaskState, message: ChatMessage): TaskState {
  return { ...state, messages: [...state.messages, message], chars: state.chars + charsOf(message) };
}

const charsOf = (m: ChatMessage): number => m.content.length + (m.toolCalls === undefined ? 0 : JSON.stringify(m.toolCalls).length);

const assistant = (text: string, calls: readonly ToolCall[]): ChatMessage => ({ role: 'assistant', content: text, ...(calls.length > 0 ? { toolCalls: [...calls] } : {}) });
const toolText = (p: Payload): string => (p.isError ? `Error: ${p.text ?? ''}` : (p.text ?? ''));

/**
 * The model-facing history of earlier runs of the conversation. A call recorded without a result (its
 * run was stopped in between) gets an "interrupted" result, so the history stays well-formed.
 */
export function historyOf(entries: readonly Entry[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  let open: ToolCall[] = [];
  const closeOpen = () => {
    for (const call of open) messages.push({ role: 'tool', content: INTERRUPTED, toolCallId: call.id });
    open = [];
  };
  for (const e of entries) {
    if (e.type === 'user' || e.type === 'model') closeOpen();
    const p = e.payload as Payload;
    if (e.type === 'user') messages.push({ role: 'user', content: p.text ?? '' });
    else if (e.type === 'model') {
      messages.push(assistant(p.text ?? '', p.toolCalls ?? []));
      open = [...(p.toolCalls ?? [])];
    } else if (e.type === 'tool_result' || e.type === 'tool_interrupted') {
      open = open.filter((c) => c.id !== p.id);
      messages.push({ role: 'tool', content: e.type === 'tool_interrupted' ? INTERRUPTED : toolText(p), toolCallId: p.id ?? '' });
    }
  }
  closeOpen();
  return messages;
}
