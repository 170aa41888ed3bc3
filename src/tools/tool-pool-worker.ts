// Runs inside a tool-pool thread (a "dirty scheduler"): one tool body per task. Abort and deadline are
// enforced from outside — piscina stops the whole thread — which is what preempts a runaway search.

import { readlinkSync } from 'node:fs';
import os from 'node:os';
import type { HarnessId } from '../harness/ids.ts';
import type { ToolOutcome } from './contract.ts';
import type { ToolName } from './definition.ts';
import { planEdit } from './edit.ts';
import type { EditArgs, EditPlan, EditRefused } from './edit-plan.ts';
import { runTool } from './tool-runner.ts';
import { captureThreadOutput } from '../log/thread-console.ts';

// Piscina makes its threads without `stdout: true, stderr: true`, so Node pipes a pooled thread's console to the
// process's own streams: its stdout into the protocol (stdio), and both past the log's bound, held by the main
// thread for a host that does not read stderr. Whatever runs here and writes (a library's console.log, a
// process warning) goes to the main thread's bounded log instead (log/thread-output.ts; ToolPool forwards it).
captureThreadOutput();

/** A whole tool call, run here. */
export interface PooledToolTask {
  readonly kind: 'tool';
  readonly tool: ToolName;
  readonly args: Record<string, unknown>;
  readonly harness: HarnessId;
  readonly workspace: string;
}

/** The deciding half of an `edit` of a large file (read and match); the calling thread writes the result. */
export interface PooledEditPlan {
  readonly kind: 'edit-plan';
  readonly args: EditArgs;
  readonly workspace: string;
}

export type PooledTask = PooledToolTask | PooledEditPlan;
export type PooledResult = ToolOutcome | EditPlan | EditRefused;

/** Niceness of a pool thread: dirty work yields the cores to the main thread and the scheduler threads. */
export const TOOL_THREAD_NICE = 10;

// On Linux a thread has its own priority: lowering this one's keeps a pathological grep or a 50 MB read
// from making the main thread (every session's I/O) wait for a core. Elsewhere this is skipped.
try {
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isSafeInteger(tid) && tid > 0) os.setPriority(tid, TOOL_THREAD_NICE);
} catch {
  // No /proc (not Linux) or not permitted: the thread keeps the process's priority.
}

// The thread is terminated on abort, so the body's own signal never needs to fire.
const never = new AbortController().signal;

export default function runPooledTool(task: PooledTask): Promise<PooledResult> {
  if (task.kind === 'edit-plan') return planEdit(task.args, task.workspace);
  return runTool(task.tool, task.args, task.harness, { workspace: task.workspace, signal: never });
}
