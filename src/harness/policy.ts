// The permission decision: a pure function of harness, tool and (for writing tools) the resolved path.

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
  const where = match.under === '.' ? 'the workspace' : match.under;
  return { verdict: match.verdict, rule: `${harness.id}: ${tool} under ${where} is ${describe(match.verdict)} (${match.why})` };
}

/** The tools a harness can use at all (its rule is not a blanket deny), in catalogue order. */
export function loadout(harness: Harness): ToolName[] {
  return toolNames.filter((t) => harness.policy[t].verdict !== 'deny');
}

function covers(rule: PathRule, relPath: string): boolean {
  if (rule.under === '.') return true;
  return relPath === rule.under || relPath.startsWith(`${rule.under}/`);
}

function describe(v: Verdict): string {
  return v === 'allow' ? 'allowed' : v === 'deny' ? 'denied' : 'allowed after the person confirms';
}
