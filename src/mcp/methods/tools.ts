// `tools/list` and `tools/call`: the harness's loadout, argument validation, the permission decision,
// and the `runTool` effect whose result becomes the reply.

import type { CallToolResult, RequestId, Tool } from '@modelcontextprotocol/sdk/types.js';
import { harnessById } from '../../harness/catalog.ts';
import { isHarnessId } from '../../harness/ids.ts';
import { asksInsideTask, type Caller, callerLoadout, decideForCaller } from '../../harness/policy.ts';
import type { ToolOutcome } from '../../tools/contract.ts';
import { toolCatalog } from '../../tools/catalog.ts';
import { isToolName, type ToolName } from '../../tools/definition.ts';
import { checkToolArguments } from '../arguments.ts';
import { canElicitForm, canSample, declaresTasks } from '../client-capabilities.ts';
import type { Effect, TaskRounds } from '../effects.ts';
import { ErrorCode, type Params } from '../jsonrpc.ts';
import { argumentsDigest } from '../request-state.ts';
import { confirmationNeeded, type HeldCall, playInputRequired, readPersonAnswer, readRetry, type Spend } from '../round-trip.ts';
import { listReply } from './list-reply.ts';
import { type ConnectionState, effectiveHarness, type Pending } from '../state.ts';
import { addPending, fail, reply, type Step } from '../step.ts';
import { versionFeatures } from '../version.ts';
import { MAX_REQUEST_ID_LENGTH, MAX_SESSION_CONVERSATIONS } from '../../limits.ts';

type ToolWork = Extract<Pending, { kind: 'tool' }>;

export function listTools(state: ConnectionState, id: RequestId, params: Params): Step {
  const features = versionFeatures(state.protocolVersion ?? '2025-06-18');
  // Only what this caller may actually call: a host shown a tool assumes it can use it.
  const tools = callerLoadout(harnessById(effectiveHarness(state)), callerOf(state)).map((name): Tool => {
    const def = toolCatalog[name];
    const tool: Tool = { name: def.name, description: def.description, inputSchema: def.inputSchema };
    if (features.titles) tool.title = def.title;
    if (features.annotations) tool.annotations = def.annotations;
    if (features.structuredContent && def.outputSchema) tool.outputSchema = def.outputSchema;
    // A 2026-07-28 client may run it as a task (Tasks extension, methods/tasks.ts); a 2025 session is not told:
    // the 2025-11-25 experimental tasks this field also announces are not served.
    if (state.modern !== undefined && name === 'harness_task') tool.execution = { taskSupport: 'optional' };
    return tool;
  });
  return listReply(state, id, 'tools', tools, params.cursor);
}

export function callTool(state: ConnectionState, id: RequestId, params: Params): Step {
  const name = params.name;
  if (typeof name !== 'string') return fail(state, id, ErrorCode.InvalidParams, 'tools/call needs params.name (a string)');
  if (!isToolName(name)) return fail(state, id, ErrorCode.InvalidParams, `Unknown tool: ${name}`);
  const args = params.arguments ?? {};
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return reply(state, id, toolError(`Invalid arguments for ${name}: tools/call params.arguments must be an object`));
  }
  // SEP-1303 (2025-11-25), for every version: arguments that do not fit the schema are a tool error the
  // model reads and corrects, not a protocol error a host shows as "an error occurred".
  const checked = checkToolArguments(name, args);
  if (!checked.ok) return reply(state, id, toolError(`Invalid arguments for ${name}: ${checked.message}`));
  const progressToken = progressTokenOf(params);
  if (typeof progressToken === 'string' && progressToken.length > MAX_REQUEST_ID_LENGTH) {
    return fail(state, id, ErrorCode.InvalidParams, `_meta.progressToken is longer than MAX_REQUEST_ID_LENGTH (${MAX_REQUEST_ID_LENGTH}) characters`);
  }
  // A 2025 session's bound: a 2026-07-28 request keeps no conversation in the session that serves it (handle.ts).
  if (name === 'harness_task' && state.modern === undefined && conversationsHeld(state) >= MAX_SESSION_CONVERSATIONS) {
    return fail(state, id, ErrorCode.InvalidParams, `This session has started MAX_SESSION_CONVERSATIONS (${MAX_SESSION_CONVERSATIONS}) conversations; open a new session to start more`);
  }
  const call: HeldCall = { tool: name, args: args as Record<string, unknown>, ...(progressToken === undefined ? {} : { progressToken }) };
  // A 2026-07-28 retry's state is checked before anything runs, whatever the rule says now: a forged or
  // stale state is always the caller's error, never a run and never silently ignored.
  const retry = readRetry(state, params, call);
  if (retry !== undefined && 'problem' in retry) return fail(state, id, ErrorCode.InvalidParams, retry.problem);
  const decision = decideForCaller(harnessById(effectiveHarness(state)), name, callerOf(state));
  if (decision.verdict === 'deny') return reply(state, id, toolError(decision.refusal));
  // A model turn's state is sealed only for a call that already ran: its rule is not asked again.
  if (retry !== undefined && 'turn' in retry) return startTool(state, id, name, call.args, progressToken, { ...retry.turn, answer: retry.answer });
  // Nor is a question's from inside a task: the person's answer goes to the call the task waits at.
  if (retry !== undefined && 'ask' in retry) return startTool(state, id, name, call.args, progressToken, { ...retry.ask, person: retry.person });
  // A confirmation's state is the person's answer whatever the rule says now (a local caller that stopped
  // declaring elicitation is allowed outright): its no runs nothing and its yes is spent once, never ignored.
  if (retry !== undefined) return resumeCall(state, id, call, retry.answer, undefined, retry.spend);
  if (decision.verdict === 'allow') return startTool(state, id, name, call.args, progressToken);
  return playInputRequired(state, id, confirmationNeeded(call, decision.rule), (why) => reply(state, id, toolError(`Not run: ${name} needs the person's confirmation and ${why}`)));
}

/**
 * Starts a tool body. `resume`: a retry carrying the client model's answer to a task's turn, or the
 * person's answer to a call inside it. A modern client is never sent a server-to-client request: a task
 * runs in round trips (`rounds`) when this node can seal their states and the client declared `sampling`
 * (its model may take the turns) or form elicitation with a remote principal and the task's harness has an
 * `ask` rule (its person may be asked; a task that cannot ask keeps its supervised task actor).
 * The local user is never asked from inside a task, as in the 2025 era: their host confirmed the task.
 */
export function startTool(state: ConnectionState, id: RequestId, tool: ToolName, args: Record<string, unknown>, progressToken?: string | number, resume?: NonNullable<TaskRounds['resume']>): Step {
  const sealer = state.roundTrip?.sealer ?? null;
  const sample = canSample(state);
  const ask = canElicitForm(state) && state.config.principal.kind !== 'local' && isHarnessId(args.harness) && asksInsideTask(harnessById(args.harness));
  const rounds: TaskRounds | undefined = tool === 'harness_task' && state.modern !== undefined && (sample || ask) && sealer !== null && args.undo !== true
    ? { sample, ask, resume: resume ?? null } : undefined;
  if (resume !== undefined && (rounds === undefined || ('answer' in resume ? !sample : !ask))) {
    const [what, declared] = 'answer' in resume ? ['the answer to turn', '"sampling"'] : ['the person\'s answer at turn', 'form "elicitation"'];
    return fail(state, id, ErrorCode.InvalidParams, `Invalid params: ${what} ${resume.turn} of conversation ${resume.conversationId} comes with a request that does not declare ${declared} (or this node has no state key); retry it as the first was sent`);
  }
  // Written key by key, and marked modern here, rather than spread and then copied by addPending to mark it:
  // on Node 20 both are generic copies (CopyDataProperties, SetDataProperties), ~1.3k instructions a modern call.
  const work: { -readonly [K in keyof ToolWork]: ToolWork[K] } = { kind: 'tool', requestId: id, tool };
  if (progressToken !== undefined) work.progressToken = progressToken;
  if (rounds !== undefined && sealer !== null) work.argsDigest = argumentsDigest(sealer, args);
  if (state.modern !== undefined) work.modern = state.modern;
  const added = addPending(state, work);
  const client = { sampling: state.modern === undefined && canSample(state), elicitation: state.modern === undefined && canElicitForm(state) };
  // The Tasks extension (SEP-2663): the runtime may run the task detached and answer `taskCreated` (methods/tasks.ts);
  // a question to the person inside it then parks it `input_required`, answered by `tasks/update`. A retry carrying
  // the person's yes to a confirmation is the call's first start (`resumeCall`), so it becomes a task as a first
  // round does (MRTR then task, `tasks-mrtr-composition`); one carrying a task's turn or question (`resume`)
  // continues the call its round trips began, never a new task.
  const task = tool === 'harness_task' && resume === undefined && args.undo !== true && declaresTasks(state);
  const run: Extract<Effect, { kind: 'runTool' }> = { kind: 'runTool', ticket: added.ticket, requestId: id, tool, args, harness: effectiveHarness(state), client };
  if (state.root !== null) run.workspace = state.root;
  if (rounds) run.rounds = rounds;
  if (task) run.task = true;
  return { state: added.state, replies: [], effects: [run] };
}

/** The person's answer to a legacy confirmation (`elicitation/create`): resumes the call it holds. */
export function confirmationAnswered(state: ConnectionState, ticket: number, answer: unknown, error?: { message: string }): Step {
  const pending = state.pending.get(ticket);
  if (!pending || pending.kind !== 'confirm') return { state, replies: [], effects: [] };
  const rest = new Map(state.pending);
  rest.delete(ticket);
  const call: HeldCall = { tool: pending.tool, args: pending.args, ...(pending.progressToken === undefined ? {} : { progressToken: pending.progressToken }) };
  return resumeCall({ ...state, pending: rest }, pending.requestId, call, answer, error);
}

/**
 * The one rule for an answered confirmation, in both eras: accept (with allow not unticked) runs the call;
 * decline, cancel, no answer, or a failed question refuses it with a tool error saying why. Accepted, the
 * call starts as if first asked: a harness_task whose retry declares the Tasks extension may become a task.
 * A 2026-07-28 yes (`spend`) runs its call once: the store records the state's use first, and only the
 * first use starts it (`confirmationConsumed`). A no has no effect, however often it is sent, so it is not
 * recorded: the same state may still carry a yes.
 */
function resumeCall(state: ConnectionState, id: RequestId, call: HeldCall, answer: unknown, error?: { message: string }, spend?: Spend): Step {
  const person = readPersonAnswer(answer, error);
  if (!person.allowed) return reply(state, id, toolError(`Not run: ${call.tool} needs the person's confirmation and ${person.refusal}`));
  if (spend === undefined) return startTool(state, id, call.tool, call.args, call.progressToken);
  const added = addPending(state, {
    kind: 'consume', requestId: id, tool: call.tool, args: call.args, ...(call.progressToken === undefined ? {} : { progressToken: call.progressToken }),
  });
  return { state: added.state, replies: [], effects: [{ kind: 'consumeConfirmation', ticket: added.ticket, digest: spend.digest, expiresAt: spend.expiresAt }] };
}

/**
 * The store's answer for a retry waiting on its confirmation's use (`pending`, already out of flight): the
 * first use starts the call; any later one is -32602 and runs nothing, saying how to be asked afresh.
 */
export function confirmationConsumed(state: ConnectionState, pending: Extract<Pending, { kind: 'consume' }>, firstUse: boolean): Step {
  if (firstUse) return startTool(state, pending.requestId, pending.tool, pending.args, pending.progressToken);
  return fail(state, pending.requestId, ErrorCode.InvalidParams,
    `Invalid params: requestState was already used: the person's confirmation runs ${pending.tool} once, and it ran (or was started) on an earlier retry; call the tool again without requestState to ask the person afresh`);
}

export function toolResult(outcome: ToolOutcome, state: ConnectionState): CallToolResult {
  const result: CallToolResult = { content: [{ type: 'text', text: outcome.text }, ...(outcome.content ?? [])] };
  if (outcome.structured && versionFeatures(state.protocolVersion ?? '2025-06-18').structuredContent) result.structuredContent = outcome.structured;
  if (outcome.isError) result.isError = true;
  return result;
}

function toolError(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** Conversations the 2025 session lists, and its harness tasks in flight that will each add one (a 2026-07-28 request's add none). */
function conversationsHeld(state: ConnectionState): number {
  let held = state.conversations.length;
  for (const p of state.pending.values()) if ((p.kind === 'tool' || p.kind === 'confirm' || p.kind === 'consume') && p.tool === 'harness_task' && p.modern === undefined) held++;
  return held;
}

/** The caller as the permission rules see it: a pure function of the connection's state. */
export function callerOf(state: ConnectionState): Caller {
  return {
    kind: state.config.principal.kind,
    canElicit: canElicitForm(state),
    allowAnonymousWrites: state.config.allowAnonymousWrites,
    allowAnonymousTasks: state.config.allowAnonymousTasks,
  };
}

export function progressTokenOf(params: Params): string | number | undefined {
  const meta = params._meta as { progressToken?: unknown } | undefined;
  const token = meta?.progressToken;
  return typeof token === 'string' || typeof token === 'number' ? token : undefined;
}
