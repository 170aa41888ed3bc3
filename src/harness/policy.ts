// The permission decision: a pure function of harness, tool and (for writing tools) the resolved path,
// and of the caller (its principal's kind, whether it can be asked, the operator's opt-ins).

import type { ToolName } from '../tools/definition.ts';
import { toolNames } from '../tools/definition.ts';
import type { Harness, PathRule, Verdict } from './harness.ts';

export interface Decision {
  readonly verdict: Verdict;
  /** Names the harness and the rule, e.g. `super-pi-planner: write is denied (the planner cannot write)`. */
  readonly rule: string;
}

export function decideTool(harness: Harness, tool: ToolName): Decision {
  const rule = harness.policy[tool];
  return { verdict: rule.verdict, rule: `${harness.id}: ${tool} is ${describe(rule.verdict)} (${rule.why})` };
}

/** For `write`/`edit`: the first path rule whose `under` contains `relPath` decides; none → allowed. */
export function decidePath(harness: Harness, tool: ToolName, relPath: string): Decision {
  const rules = harness.policy[tool].paths ?? [];
  const match = rules.find((r) => covers(r, relPath));
  if (!match) return { verdict: 'allow', rule: `${harness.id}: ${tool} of ${relPath} is allowed` };
  const where = match.under === '.' ? 'the workspace' : match.anyDepth === true ? `any ${match.under}` : match.under;
  return { verdict: match.verdict, rule: `${harness.id}: ${tool} under ${where} is ${describe(match.verdict)} (${match.why})` };
}

/** The tools a harness can use at all (its rule is not a blanket deny), in catalogue order. */
export function loadout(harness: Harness): ToolName[] {
  return toolNames.filter((t) => harness.policy[t].verdict !== 'deny');
}

/** Who calls, as the permission rules see it: the principal's kind, what the client can do, and the operator's opt-ins. */
export interface Caller {
  readonly kind: 'local' | 'token' | 'anonymous';
  /** The client declared elicitation (in a protocol version that has it): an `ask` can become a question. */
  readonly canElicit: boolean;
  /** `--allow-anonymous-writes`: anonymous remote callers may use write, edit and bash. */
  readonly allowAnonymousWrites: boolean;
  /** `--allow-anonymous-tasks`: anonymous remote callers may start harness_task (the operator's model budget). */
  readonly allowAnonymousTasks: boolean;
}

/** What an anonymous remote caller may not use unless the operator opted in (`--allow-anonymous-writes`). */
export const ANONYMOUS_WRITE_TOOLS: ReadonlySet<ToolName> = new Set(['write', 'edit', 'bash']);

/** A caller's verdict on a tool; a deny carries the refusal text a tool call gets (isError). */
export type CallerDecision =
  | { readonly verdict: 'allow' | 'ask'; readonly rule: string }
  | { readonly verdict: 'deny'; readonly rule: string; readonly refusal: string };

/**
 * The one rule of what a caller may call, used by tools/list (a denied tool is not listed), tools/call
 * (a denied tool is a tool error) and the loadout resource: the harness policy, then the remote policy for
 * anonymous callers, then whether an `ask` can be asked: a client that declared elicitation is asked; a
 * local host that did not confirms each call with its user before sending it, so `ask` is already
 * satisfied; a remote client that cannot be asked is refused.
 */
export function decideForCaller(harness: Harness, tool: ToolName, caller: Caller): CallerDecision {
  const base = decideTool(harness, tool);
  if (base.verdict === 'deny') return { verdict: 'deny', rule: base.rule, refusal: `Denied by harness policy: ${base.rule}` };
  if (caller.kind === 'anonymous') {
    if (ANONYMOUS_WRITE_TOOLS.has(tool) && !caller.allowAnonymousWrites) {
      const rule = `remote policy: anonymous remote callers cannot use ${tool}`;
      return { verdict: 'deny', rule, refusal: `Denied by ${rule}; authenticate with a bearer token, or the operator may start the server with --allow-anonymous-writes` };
    }
    if (tool === 'harness_task' && !caller.allowAnonymousTasks) {
      const rule = 'remote policy: anonymous remote callers cannot start harness_task (a task spends the operator\'s model budget)';
      return { verdict: 'deny', rule, refusal: `Denied by ${rule}; authenticate with a bearer token the operator issued (--tokens FILE or SUPERPI_TOKENS), or the operator may start the server with --allow-anonymous-tasks (env SUPERPI_ALLOW_ANONYMOUS_TASKS=1)` };
    }
  }
  if (base.verdict === 'ask' && !caller.canElicit) {
    if (caller.kind === 'local') return { verdict: 'allow', rule: `${base.rule}; the local host confirms each call with its user` };
    return { verdict: 'deny', rule: base.rule, refusal: `Denied by harness policy: ${base.rule}; this client cannot be asked (it did not declare elicitation), so the call is refused` };
  }
  return { verdict: base.verdict, rule: base.rule };
}

/**
 * A task of this harness may reach a call the person must confirm: some tool other than harness_task (which
 * a task never calls) is under `ask`.
 */
export function asksInsideTask(harness: Harness): boolean {
  return toolNames.some((t) => t !== 'harness_task' && harness.policy[t].verdict === 'ask');
}

/** The tools this caller may call at all under `harness`, in catalogue order: what tools/list shows it. */
export function callerLoadout(harness: Harness, caller: Caller): ToolName[] {
  return toolNames.filter((t) => decideForCaller(harness, t, caller).verdict !== 'deny');
}

function covers(rule: PathRule, relPath: string): boolean {
  if (rule.under === '.') return true;
  if (relPath === rule.under || relPath.startsWith(`${rule.under}/`)) return true;
  return rule.anyDepth === true && (relPath.endsWith(`/${rule.under}`) || relPath.includes(`/${rule.under}/`));
}

function describe(v: Verdict): string {
  return v === 'allow' ? 'allowed' : v === 'deny' ? 'denied' : 'allowed after the person confirms';
}
