// Effects a connection actor runs itself, on its own scheduler thread, because they finish in
// microseconds: `read` of a small file, with synchronous system calls. The actor feeds the result straight
// back into the core and emits only the final reply — no crossing to the main thread and back, no libuv
// round trips. The core stays pure: the actor is simply the effect runner for these effects. Everything
// else (larger reads, every other tool, the store) goes to the owner as before.
//
// Cancellation keeps its meaning: an inline read is over before the actor handles its next message, so a
// `notifications/cancelled` for it finds nothing in flight — as for any call that finished first.

import type { Effect, EffectResult } from '../mcp/effects.ts';
import { handleEffectResult, type Step } from '../mcp/handle.ts';
import { ToolError } from '../tools/contract.ts';
import { type ReadArgs, readSmallFileSync } from '../tools/read.ts';

/**
 * Largest file a connection actor reads inline. Above it the read goes to the owner (the main thread, or
 * the tool pool past 1 MiB) with its deadline and cancellation. At this size a synchronous read and the
 * line scan take well under a millisecond, so the other actors sharing the thread barely notice.
 */
export const INLINE_READ_BYTES = 256 * 1024;

/**
 * The result of `effect` when this thread can produce it at once, else null (the owner runs it). Arguments
 * reached here validated against the tool's schema by the core, as they reach the tool runner.
 */
export function runInline(effect: Effect, workspace: string): EffectResult | null {
  if (effect.kind !== 'runTool' || effect.tool !== 'read') return null;
  let outcome;
  try {
    outcome = readSmallFileSync(effect.args as unknown as ReadArgs, effect.workspace ?? workspace, INLINE_READ_BYTES);
  } catch (err) {
    if (err instanceof ToolError) return { kind: 'toolDone', ticket: effect.ticket, outcome: { text: err.message, isError: true } };
    // Not a refusal the model should read: the owner runs the call the usual way and reports what happens.
    return null;
  }
  return outcome === null ? null : { kind: 'toolDone', ticket: effect.ticket, outcome };
}

/** Told of each call run inline: its tool, harness, whether it failed, and how long it took (ms). */
export type InlineCallSink = (tool: string, harness: string, isError: boolean, ms: number) => void;

/**
 * Runs the step's inline effects and folds their results back into the core, in order, until only effects
 * for the owner remain: the step the actor would have produced had the owner run them all at once.
 * `onCall`, when given, is told of each call run here.
 */
export function settleInline(step: Step, workspace: string, onCall?: InlineCallSink): Step {
  if (!step.effects.some((e) => e.kind === 'runTool')) return step;
  let state = step.state;
  const replies = [...step.replies];
  const remaining: Effect[] = [];
  const queue = [...step.effects];
  for (let effect = queue.shift(); effect !== undefined; effect = queue.shift()) {
    const started = performance.now();
    const result = runInline(effect, workspace);
    if (result === null) {
      remaining.push(effect);
      continue;
    }
    if (onCall && effect.kind === 'runTool' && result.kind === 'toolDone') onCall(effect.tool, effect.harness, result.outcome.isError === true, performance.now() - started);
    const folded = handleEffectResult(result, state);
    state = folded.state;
    replies.push(...folded.replies);
    queue.push(...folded.effects);
  }
  return { state, replies, effects: remaining };
}
