// Why a child stopped, as OTP names it. Every way an actor can end (returned, was stopped, was
// killed, threw, its worker died or hung) is one of these four, and a supervisor decides on them alone.

export type ExitReason =
  | { readonly kind: 'normal' }
  | { readonly kind: 'shutdown' }
  | { readonly kind: 'killed' }
  | { readonly kind: 'crash'; readonly cause: unknown };

/** The child finished its work and returned. */
export const normal: ExitReason = Object.freeze({ kind: 'normal' });
/** The child stopped because it was asked to (`ChildHandle.stop()`). */
export const shutdown: ExitReason = Object.freeze({ kind: 'shutdown' });
/** The child was terminated without a chance to clean up (`ChildHandle.kill()`). */
export const killed: ExitReason = Object.freeze({ kind: 'killed' });

/** The child failed: `cause` is what was thrown (usually an Error, kept as is for its stack and `cause`). */
export function crash(cause: unknown): ExitReason {
  return { kind: 'crash', cause };
}

/**
 * True for the exits a `transient` child is restarted after: a crash, or a kill (a kill means the
 * child did not stop on its own terms). `normal` and `shutdown` are orderly.
 */
export function isAbnormal(reason: ExitReason): boolean {
  return reason.kind === 'crash' || reason.kind === 'killed';
}

/** How many `cause` links `describeExit` follows; a cycle or a deep chain must not make a log line unbounded. */
const MAX_CAUSE_DEPTH = 5;

/** A one-line human description, e.g. `crash: Error: boom (caused by: Error: disk full)`. */
export function describeExit(reason: ExitReason): string {
  switch (reason.kind) {
    case 'normal':
      return 'normal exit';
    case 'shutdown':
      return 'shutdown';
    case 'killed':
      return 'killed';
    case 'crash':
      return `crash: ${describeCause(reason.cause)}`;
  }
}

/** A thrown value as one line: `Error: boom (caused by: Error: disk full)`, following `cause` links. */
export function describeCause(cause: unknown): string {
  const parts: string[] = [];
  let current: unknown = cause;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && current !== undefined; depth++) {
    parts.push(describeOne(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(' (caused by: ') + ')'.repeat(parts.length - 1);
}

function describeOne(value: unknown): string {
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch (error) {
    // Not serialisable (a cycle, a BigInt): String() still names it, and the log line must not throw.
    return `${String(value)} (unserialisable: ${error instanceof Error ? error.message : String(error)})`;
  }
}
