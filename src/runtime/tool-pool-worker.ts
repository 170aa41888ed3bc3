// Runs inside a tool-pool thread (a "dirty scheduler"): one tool body per task. Abort and deadline are
// enforced from outside — piscina stops the whole thread — which is what preempts a runaway regex.

import type { HarnessId } from '../harness/ids.ts';
import type { ToolOutcome } from '../tools/contract.ts';
import type { ToolName } from '../tools/definition.ts';
import { runTool } from './tool-runner.ts';

export interface PooledToolTask {
  readonly tool: ToolName;
  readonly args: Record<string, unknown>;
  readonly harness: HarnessId;
  readonly workspace: string;
}

// The thread is terminated on abort, so the body's own signal never needs to fire.
const never = new AbortController().signal;

export default function runPooledTool(task: PooledToolTask): Promise<ToolOutcome> {
  return runTool(task.tool, task.args, task.harness, { workspace: task.workspace, signal: never });
}
