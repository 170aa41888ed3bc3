// The harness_task agent loop: model → tool calls under the harness's permission policy → results →
// model …, every step appended to the durable store before the next begins, until the model answers
// without tool calls, the turn limit, the wall-time limit, or cancellation.

import { harnessById } from '../harness/catalog.ts';
import type { HarnessId } from '../harness/ids.ts';
import { decideTool, loadout } from '../harness/policy.ts';
import type { ChatMessage, ModelProvider, ToolCall, ToolSpec } from '../model/types.ts';
import { ModelError } from '../model/types.ts';
import type { ConversationStore, Entry, EntryType } from '../store/store.ts';
import { toolCatalog } from '../tools/catalog.ts';
import { ToolError, type ToolOutcome, type ToolProgress } from '../tools/contract.ts';
import { isToolName, type ToolName } from '../tools/definition.ts';
import { currentContent, type FileSnapshot } from './undo.ts';

/** Model turns a task may take unless `max_turns` says fewer. */
export const DEFAULT_MAX_TURNS = 25;
/** Wall time of one task. */
export const DEFAULT_TASK_WALL_MS = 15 * 60_000;
/** Characters of one tool result sent back to the model (the tools already truncate at 50 KB). */
const MAX_RESULT_CHARS = 60_000;

/** Appends an entry to the task's conversation. */
type EntryWriter = (type: EntryType, payload: unknown) => void;

export interface TaskInput {
  readonly harness: HarnessId;
  readonly prompt: string;
  readonly conversationId?: string;
  readonly maxTurns?: number;
  /** The store's owner key: the caller's principal. */
  readonly principal: string;
  /** True for the local (stdio) user, whose host confirms tool calls itself: `ask` is allowed. */
  readonly local: boolean;
  /** An anonymous remote caller without the operator's opt-in: write, edit and bash are refused inside its tasks too. */
  readonly forbidWrites: boolean;
  readonly sessionId: string;
}

export interface TaskDeps {
  readonly store: ConversationStore;
  readonly provider: ModelProvider;
  readonly workspace: string;
  readonly executeTool: (tool: ToolName, args: Record<string, unknown>, harness: HarnessId, ctx: { workspace: string; signal: AbortSignal }) => Promise<ToolOutcome>;
  readonly signal: AbortSignal;
  readonly onProgress?: (p: ToolProgress) => void;
  readonly wallMs?: number;
  /** Called after every entry appended to the conversation (for transcript subscriptions). */
  readonly onAppend?: (conversationId: string) => void;
  /** Asks the person (elicitation) when the policy says `ask`; absent: the client cannot be asked. */
  readonly confirm?: (message: string) => Promise<boolean>;
}

/** Runs (or continues) a conversation; the outcome is harness_task's tool result. */
export async function runAgentTask(input: TaskInput, deps: TaskDeps): Promise<ToolOutcome> {
  const { store } = deps;
  const harness = harnessById(input.harness);
  let messages: ChatMessage[] = [];
  let conversation;
  if (input.conversationId) {
    conversation = store.getConversation(input.conversationId, input.principal);
    if (!conversation) throw new ToolError(`conversation ${input.conversationId} not found`);
    if (conversation.harness !== input.harness) throw new ToolError(`conversation ${input.conversationId} runs under ${conversation.harness}, not ${input.harness}`);
    messages = rebuildMessages(store.entries(conversation.id, input.principal) ?? []);
  } else {
    conversation = store.createConversation({ principal: input.principal, sessionId: input.sessionId, harness: input.harness, title: input.prompt.slice(0, 80) });
  }
  const id = conversation.id;
  /** Every entry goes through here: durable first, then subscribers hear of it. */
  const record: EntryWriter = (type, payload) => {
    store.append(id, type, payload);
    deps.onAppend?.(id);
  };
  store.setStatus(id, 'running');
  record('user', { text: input.prompt });
  messages.push({ role: 'user', content: input.prompt });

  const tools: ToolSpec[] = loadout(harness).filter((t) => t !== 'harness_task')
    .map((t) => ({ name: t, description: toolCatalog[t].description, inputSchema: toolCatalog[t].inputSchema }));
  const maxTurns = Math.min(input.maxTurns ?? DEFAULT_MAX_TURNS, DEFAULT_MAX_TURNS * 8);
  const deadline = AbortSignal.timeout(deps.wallMs ?? DEFAULT_TASK_WALL_MS);
  const signal = AbortSignal.any([deps.signal, deadline]);
  let toolCalls = 0;

  const finish = (status: 'completed' | 'failed' | 'cancelled', text: string, turns: number, isError: boolean): ToolOutcome => {
    store.setStatus(id, status);
    return { text, isError, structured: { conversation_id: id, harness: harness.id, status, turns, tool_calls: toolCalls } };
  };

  for (let turn = 1; turn <= maxTurns; turn++) {
    if (signal.aborted) return stopped(turn - 1);
    deps.onProgress?.({ progress: turn, total: maxTurns, message: `turn ${turn}: asking the model` });
    let reply;
    try {
      reply = await deps.provider.complete({ system: harness.systemPrompt, messages, tools, signal });
    } catch (err) {
      if (signal.aborted) return stopped(turn - 1);
      const message = err instanceof ModelError ? err.message : `the model call failed: ${(err as Error).message}`;
      record('error', { message });
      return finish('failed', message, turn - 1, true);
    }
    record('model', { text: reply.text, toolCalls: reply.toolCalls, stopReason: reply.stopReason });
    messages.push({ role: 'assistant', content: reply.text, ...(reply.toolCalls.length > 0 ? { toolCalls: reply.toolCalls } : {}) });
    if (reply.toolCalls.length === 0) {
      record('final', { text: reply.text });
      return finish('completed', reply.text, turn, false);
    }
    for (const call of reply.toolCalls) {
      if (signal.aborted) return stopped(turn);
      toolCalls++;
      deps.onProgress?.({ progress: turn, total: maxTurns, message: `turn ${turn}: ${call.name}` });
      record('tool_call', { id: call.id, name: call.name, arguments: call.arguments });
      const outcome = await runCall(call, input, deps, signal, record);
      const text = outcome.text.length > MAX_RESULT_CHARS ? `${outcome.text.slice(0, MAX_RESULT_CHARS)}\n[result cut at ${MAX_RESULT_CHARS} characters]` : outcome.text;
      record('tool_result', { id: call.id, name: call.name, text, isError: outcome.isError === true });
      messages.push({ role: 'tool', content: outcome.isError ? `Error: ${text}` : text, toolCallId: call.id });
    }
  }
  record('error', { message: `stopped after ${maxTurns} turns without a final answer` });
  return finish('failed', `The task stopped after ${maxTurns} turns (max_turns) without a final answer; continue it with conversation_id ${id}.`, maxTurns, true);

  function stopped(turns: number): ToolOutcome {
    const why = deadline.aborted ? `the task passed its wall time of ${(deps.wallMs ?? DEFAULT_TASK_WALL_MS) / 1000} s` : 'the task was cancelled';
    record('error', { message: why });
    return finish('cancelled', `Stopped: ${why}.`, turns, true);
  }
}

/** One tool call under the harness policy; a denial or a bad call is a result the model reads. */
async function runCall(call: ToolCall, input: TaskInput, deps: TaskDeps, signal: AbortSignal, record: EntryWriter): Promise<ToolOutcome> {
  if (call.parseError) return { text: call.parseError, isError: true };
  if (!isToolName(call.name) || call.name === 'harness_task') return { text: `There is no tool "${call.name}" in this task.`, isError: true };
  const decision = decideTool(harnessById(input.harness), call.name);
  if (decision.verdict === 'deny') return { text: `Denied by harness policy: ${decision.rule}`, isError: true };
  if (input.forbidWrites && (call.name === 'write' || call.name === 'edit' || call.name === 'bash')) {
    return { text: `Denied by remote policy: anonymous remote callers cannot use ${call.name}, inside a task either`, isError: true };
  }
  if (decision.verdict === 'ask' && !input.local) {
    // A local host confirms the harness_task call itself; a remote caller is asked call by call.
    if (!deps.confirm) return { text: `Denied: ${decision.rule}; this client cannot be asked (no elicitation), so the call is refused`, isError: true };
    const what = call.name === 'bash' ? `run the command: ${String(call.arguments.command)}` : `use ${call.name} with ${JSON.stringify(call.arguments).slice(0, 300)}`;
    let allowed: boolean;
    try {
      allowed = await deps.confirm(`A ${input.harness} task wants to ${what}\n(${decision.rule})`);
    } catch (err) {
      return { text: `Not run: the person could not be asked (${(err as Error).message})`, isError: true };
    }
    if (!allowed) return { text: `Not run: the person did not allow ${call.name}`, isError: true };
  }
  try {
    const snapshotted = input.harness === 'super-pi-code' && (call.name === 'write' || call.name === 'edit');
    const target = String(call.arguments.path);
    const before = snapshotted ? await currentContent(deps.workspace, target) : null;
    const outcome = await deps.executeTool(call.name, call.arguments, input.harness, { workspace: deps.workspace, signal });
    if (snapshotted && !outcome.isError) {
      const snapshot: FileSnapshot = { path: target, before, after: await currentContent(deps.workspace, target) };
      record('file_snapshot', snapshot);
    }
    return outcome;
  } catch (err) {
    if (err instanceof ToolError) return { text: err.message, isError: true };
    throw err;
  }
}

/**
 * The model-facing history of a stored conversation. A tool call recorded without a result (the task
 * was stopped in between) gets an "interrupted" result, so the history stays well-formed.
 */
function rebuildMessages(entries: Entry[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  let open: ToolCall[] = [];
  const closeOpen = () => {
    for (const call of open) messages.push({ role: 'tool', content: 'Error: this call was interrupted before it returned; its effect is unknown.', toolCallId: call.id });
    open = [];
  };
  for (const e of entries) {
    if (e.type === 'user' || e.type === 'model') closeOpen();
    const p = e.payload as { text?: string; toolCalls?: ToolCall[]; id?: string; isError?: boolean };
    if (e.type === 'user') messages.push({ role: 'user', content: p.text ?? '' });
    else if (e.type === 'model') {
      messages.push({ role: 'assistant', content: p.text ?? '', ...(p.toolCalls && p.toolCalls.length > 0 ? { toolCalls: p.toolCalls } : {}) });
      open = [...(p.toolCalls ?? [])];
    } else if (e.type === 'tool_result') {
      open = open.filter((c) => c.id !== p.id);
      messages.push({ role: 'tool', content: p.isError ? `Error: ${p.text ?? ''}` : (p.text ?? ''), toolCallId: p.id ?? '' });
    }
  }
  closeOpen();
  return messages;
}
