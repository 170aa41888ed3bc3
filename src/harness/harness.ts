// What a harness is, as data: a description, a system prompt, a tool loadout and a permission policy.

import type { ToolName } from '../tools/definition.ts';
import type { HarnessId } from './ids.ts';

export type Verdict = 'allow' | 'ask' | 'deny';

/** A rule on the workspace-relative path a writing tool touches; the first that matches decides. */
export interface PathRule {
  /** Workspace-relative POSIX directory or file; matches itself and everything below it. `.` is the root. */
  readonly under: string;
  /** `under` also matches at any depth (`.git` covers `sub/.git/hooks/x`): for names that mean the same wherever they sit. */
  readonly anyDepth?: boolean;
  readonly verdict: 'allow' | 'deny';
  readonly why: string;
}

export interface ToolRule {
  readonly verdict: Verdict;
  readonly why: string;
  /** Only for tools that write a path (`write`, `edit`); checked on the resolved path. */
  readonly paths?: readonly PathRule[];
}

export interface PromptArgumentSpec {
  readonly name: string;
  readonly description: string;
  readonly required: boolean;
  /** How `completion/complete` fills this argument. */
  readonly completes?: 'path' | 'harness';
}

export interface Harness {
  readonly id: HarnessId;
  readonly title: string;
  readonly description: string;
  readonly systemPrompt: string;
  /** Every tool has a rule; the loadout is the tools whose rule is not `deny`. */
  readonly policy: Readonly<Record<ToolName, ToolRule>>;
  /** The harness's prompt: its arguments, and the argument that carries the work itself. */
  readonly prompt: { readonly description: string; readonly arguments: readonly PromptArgumentSpec[]; readonly subject: string };
}
