// `tools/list` and `tools/call`: the harness's loadout, argument validation, the permission decision,
// and the `runTool` effect whose result becomes the reply.

import type { CallToolResult, RequestId, Tool } from '@modelcontextprotocol/sdk/types.js';
import { harnessById } from '../../harness/catalog.ts';
import { type Caller, callerLoadout, decideForCaller } from '../../harness/policy.ts';
import type { ToolOutcome } from '../../tools/contract.ts';
import { toolCatalog } from '../../tools/catalog.ts';
import { isToolName, type ToolName } from '../../tools/definition.ts';
import { checkToolArguments } from '../arguments.ts';
import { canElicitForm, canSample } from '../client-capabilities.ts';
import { confirmationRequest, describeCall, isAllowed } from '../confirmation.ts';
import { ErrorCode, type Params } from '../jsonrpc.ts';
import { question } from '../outgoing.ts';
import { listReply } from './list-reply.ts';
import { chosenWorkspace, type ConnectionState, effectiveHarness } from '../state.ts';
import { addPending, fail, reply, type Step } from '../step.ts';
import { versionFeatures } from '../version.ts';
import { MAX_REQUEST_ID_LENGTH, MAX_SESSION_CONVERSATIONS } from '../../limits.ts';

export function listTools(state: ConnectionState, id: RequestId, params: Params): Step {
  const features = versionFeatures(state.protocolVersion ?? '2025-06-18');
  // Only what this caller may actually call: a host shown a tool assumes it can use it.
  const tools = callerLoadout(harnessById(effectiveHarness(state)), callerOf(state)).map((name): Tool => {
    const def = toolCatalog[name];
    const tool: Tool = { name: def.name, description: def.description, inputSchema: def.inputSchema };
    if (features.titles) tool.title = def.title;
    if (features.annotations) tool.annotations = def.annotations;
    if (features.structuredContent && def.outputSchema) tool.outputSchema = def.outputSchema;
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
  if (name === 'harness_task' && conversationsHeld(state) >= MAX_SESSION_CONVERSATIONS) {
    return fail(state, id, ErrorCode.InvalidParams, `This session has started MAX_SESSION_CONVERSATIONS (${MAX_SESSION_CONVERSATIONS}) conversations; open a new session to start more`);
  }
  const decision = decideForCaller(harnessById(effectiveHarness(state)), name, callerOf(state));
  if (decision.verdict === 'deny') return reply(state, id, toolError(decision.refusal));
  const typedArgs = args as Record<string, unknown>;
  if (decision.verdict === 'ask') return askPerson(state, id, name, typedArgs, decision.rule, progressToken);
  return startTool(state, id, name, typedArgs, progressToken);
}

export function startTool(state: ConnectionState, id: RequestId, tool: ToolName, args: Record<string, unknown>, progressToken?: string | number): Step {
  const added = addPending(state, progressToken === undefined ? { kind: 'tool', requestId: id, tool } : { kind: 'tool', requestId: id, tool, progressToken });
  const client = { sampling: canSample(state), elicitation: canElicitForm(state) };
  return { state: added.state, replies: [], effects: [{ kind: 'runTool', ticket: added.ticket, requestId: id, tool, args, harness: effectiveHarness(state), client, ...chosenWorkspace(state) }] };
}

function askPerson(state: ConnectionState, id: RequestId, tool: ToolName, args: Record<string, unknown>, rule: string, progressToken?: string | number): Step {
  const outgoingId = `superpi-confirm-${state.nextTicket}`;
  const added = addPending(state, { kind: 'confirm', requestId: id, tool, args, outgoingId, ...(progressToken === undefined ? {} : { progressToken }) });
  const ask = question(outgoingId, 'elicitation/create', confirmationRequest(`Super-Pi wants to ${describeCall(tool, args)}\n(${rule})`), id);
  return { state: added.state, replies: [ask], effects: [] };
}

/** The person's answer to a confirmation: accept with allow=true runs the tool; anything else refuses it. */
export function confirmationAnswered(state: ConnectionState, ticket: number, answer: unknown, error?: { message: string }): Step {
  const pending = state.pending.get(ticket);
  if (!pending || pending.kind !== 'confirm') return { state, replies: [], effects: [] };
  const rest = new Map(state.pending);
  rest.delete(ticket);
  const base: ConnectionState = { ...state, pending: rest };
  const a = answer as { action?: unknown; content?: { allow?: unknown } } | undefined;
  if (!error && isAllowed(a)) {
    return startTool(base, pending.requestId, pending.tool, pending.args, pending.progressToken);
  }
  const why = error ? `the confirmation request failed: ${error.message}` : a?.action === 'accept' ? 'the person did not allow it' : `the person answered "${String(a?.action ?? 'nothing')}"`;
  return reply(base, pending.requestId, toolError(`Not run: ${pending.tool} needs the person's confirmation and ${why}`));
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

/** Conversations the session lists, and harness tasks in flight that will each add one. */
function conversationsHeld(state: ConnectionState): number {
  let held = state.conversations.length;
  for (const p of state.pending.values()) if ((p.kind === 'tool' || p.kind === 'confirm') && p.tool === 'harness_task') held++;
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
