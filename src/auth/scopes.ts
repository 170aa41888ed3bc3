// What an OAuth access token's scopes let a principal do: four capabilities (read, write, exec, observe),
// each granted by one configurable scope name, and the capability each MCP message needs.

import type { ToolName } from '../tools/definition.ts';
import { isToolName } from '../tools/definition.ts';
import { toolAnswered } from '../mcp/acting-questions.ts';
import type { Classified } from '../mcp/jsonrpc.ts';

export type Capability = 'read' | 'write' | 'exec' | 'observe';

/** The scope name that grants each capability (`--oauth-scope-read` etc.). */
export type ScopeNames = Readonly<Record<Capability, string>>;

export const DEFAULT_SCOPE_NAMES: ScopeNames = { read: 'mcp:read', write: 'mcp:write', exec: 'mcp:exec', observe: 'mcp:observe' };

/** Every capability: what a static bearer token (no scopes) may do, as before OAuth. */
export const ALL_CAPABILITIES: ReadonlySet<Capability> = new Set(['read', 'write', 'exec', 'observe']);

/** Which capability a tool call needs: reading tools read, writing tools write, running a program or a task executes. */
const TOOL_CAPABILITY: Readonly<Record<ToolName, Capability>> = {
  read: 'read', grep: 'read', find: 'read', ls: 'read',
  write: 'write', edit: 'write',
  bash: 'exec', harness_task: 'exec',
};

/** The tool whose calls become Tasks-extension tasks (mcp/methods/tools.ts `startTool`). */
const TASK_TOOL: ToolName = 'harness_task';

/** The capabilities a token's `scope` claim (space-separated, RFC 6749 §3.3) grants; unknown scopes grant nothing. */
export function capabilitiesOf(scope: unknown, names: ScopeNames): ReadonlySet<Capability> {
  const granted = new Set<Capability>();
  if (typeof scope !== 'string') return granted;
  const held = new Set(scope.split(' ').filter((s) => s !== ''));
  for (const c of ALL_CAPABILITIES) if (held.has(names[c])) granted.add(c);
  return granted;
}

/**
 * The capability one MCP message needs: a tools/call of a writing tool `write`, of bash or harness_task
 * `exec`; a `tasks/update` what the tool that makes tasks needs (harness_task, the only one: `exec`),
 * as its answers let the task go on acting — run the very call its person was asked about; an answer
 * (no `method`: a response, or something the core will refuse) what answering `id` lets happen
 * (`answerCapability`); anything else (initialize, lists, reads, `tasks/get`, `tasks/cancel`,
 * notifications) `read`. An unknown tool name needs `read`: the core answers it as unknown, and nothing runs.
 */
export function capabilityFor(method: string | undefined, params: unknown, id?: unknown): Capability {
  if (method === undefined) return answerCapability(id);
  if (method === 'tasks/update') return TOOL_CAPABILITY[TASK_TOOL];
  if (method !== 'tools/call') return 'read';
  const name = typeof params === 'object' && params !== null ? (params as { name?: unknown }).name : undefined;
  return isToolName(name) ? TOOL_CAPABILITY[name] : 'read';
}

/** `capabilityFor` of a message the transport has already read (mcp/jsonrpc.ts `classify`). */
export function capabilityOf(m: Classified): Capability {
  if (m.kind === 'request' || m.kind === 'notification') return capabilityFor(m.method, m.params);
  return capabilityFor(undefined, undefined, 'id' in m ? m.id : undefined);
}

/**
 * What answering the server's request `id` needs. A 2025 confirmation (`elicitation/create` under an `ask`
 * rule) or a legacy task's question or model turn lets a tool call go on — the answer is the yes that
 * runs it — so it needs what that call needs: write's confirmation `write`, bash's `exec`. The id names
 * the tool (mcp/acting-questions.ts), and one naming none is treated as the most demanding (`exec`).
 * An answer to anything else (`roots/list`, a ping, no request of ours) needs `read`.
 */
export function answerCapability(id: unknown): Capability {
  const tool = toolAnswered(id);
  if (tool === undefined) return 'read';
  return tool === 'unknown' ? 'exec' : TOOL_CAPABILITY[tool];
}

/**
 * The capability every MCP path needs at its door (each POST, GET and DELETE of `/mcp`, each WebSocket
 * upgrade): a token without it is refused there, before any session, slot or stream is taken.
 */
export const DOOR_CAPABILITY: Capability = 'read';

/** The capabilities whose scopes an MCP host asks for: what its sessions use. Observing is the operator's. */
const HOST_CAPABILITIES: readonly Capability[] = ['read', 'write', 'exec'];

/**
 * The scopes a server advertises (`scopes_supported`, RFC 9728), in capability order: the host's, never
 * the observe scope. An MCP host asks for every scope offered there (the SDK does), so offering it made
 * every user of a provider that grants what is asked an observer of every principal's sessions and
 * transcripts; the operator asks for it by name.
 */
export function scopesSupported(names: ScopeNames): string[] {
  return HOST_CAPABILITIES.map((c) => names[c]);
}
