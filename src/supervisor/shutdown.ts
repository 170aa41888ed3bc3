// The shutdown protocol for one child: how a supervisor stops an incarnation according to its
// `shutdown` setting (brutal_kill / ms then kill / infinity), and what the child's exit was.

import type { ChildHandle, Shutdown } from './child-spec.ts';
import type { Clock } from './clock.ts';
import { crash, type ExitReason } from './exit-reason.ts';

export interface ShutdownOutcome {
  /** How the child actually exited: `shutdown` or `killed` when it obeyed, anything else is worth reporting. */
  readonly reason: ExitReason;
  /** True when the child ignored `stop()` for its whole shutdown time and was killed. */
  readonly timedOut: boolean;
}

/** A child's exit as a promise that never rejects: a rejection is read as a crash. */
export function exitOf(handle: ChildHandle): Promise<ExitReason> {
  return handle.exited.then(
    (reason) => reason,
    (cause: unknown) => crash(cause),
  );
}

/**
 * - `brutal_kill`: `kill()` and wait for the exit.
 * - a number: `stop()`, and `kill()` if the child has not exited after that many ms.
 * - `infinity`: `stop()` and wait as long as it takes (for supervisors, whose subtree needs it).
 * A child that already exited settles at once. `stop()` or `kill()` throwing breaks the ChildHandle
 * contract: a throwing `stop()` is followed by `kill()`; a throwing `kill()` ends the wait with a
 * crash carrying the error, because nothing else can end that child.
 */
export async function shutdownHandle(handle: ChildHandle, mode: Shutdown, clock: Clock): Promise<ShutdownOutcome> {
  const exited = exitOf(handle);
  if (mode === 'brutal_kill') return { reason: await killAndWait(handle, exited), timedOut: false };
  try {
    handle.stop();
  } catch (error) {
    return { reason: await killAndWait(handle, exited, error), timedOut: false };
  }
  if (mode === 'infinity') return { reason: await exited, timedOut: false };

  let timer: unknown;
  const deadline = new Promise<'timeout'>((resolve) => {
    timer = clock.setTimeout(() => resolve('timeout'), mode);
  });
  const first = await Promise.race([exited, deadline]);
  clock.clearTimeout(timer);
  if (first !== 'timeout') return { reason: first, timedOut: false };
  return { reason: await killAndWait(handle, exited), timedOut: true };
}

async function killAndWait(handle: ChildHandle, exited: Promise<ExitReason>, stopError?: unknown): Promise<ExitReason> {
  try {
    handle.kill();
  } catch (error) {
    return crash(new Error('ChildHandle.kill() threw; the child may still be running', { cause: stopError === undefined ? error : new AggregateError([stopError, error]) }));
  }
  return exited;
}
