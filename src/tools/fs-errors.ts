// The ToolErrors the file tools (read, write, edit, ls) stop with: failed file-system calls and cancellation.
// Kept in one place so that the same failure reads the same to the model whichever tool met it.

import { ToolError } from './contract.ts';

/** The messages that differ by tool; every other failure gets the shared wording. */
export interface FsWording {
  /** Message for a path that does not exist; without it, a missing path gets the generic message. */
  readonly notFound?: (shown: string) => string;
  /** Message for a path that turned out to be a directory (EISDIR); without it, the generic message. */
  readonly isDirectory?: (shown: string) => string;
  /**
   * For tools that open with O_NOFOLLOW, where ELOOP means a symbolic link was swapped in after the path
   * was resolved: how the file was being used ('read', 'written', 'edited'). Without it, the generic message.
   */
  readonly swappedWhile?: string;
}

/**
 * The ToolError for a failed file-system call on `shown` (the path as the caller gave it). `action` completes
 * "cannot … <path>": 'read', 'write', 'open', 'read directory', 'create the parent directory of'.
 */
export function fsError(err: unknown, shown: string, action: string, wording: FsWording = {}): ToolError {
  const code = errnoCode(err);
  const fail = (message: string): ToolError => new ToolError(message, { cause: err });
  if ((code === 'ENOENT' || code === 'ENOTDIR') && wording.notFound) return fail(wording.notFound(shown));
  if (code === 'EACCES' || code === 'EPERM') return fail(`Permission denied: cannot ${action} ${shown}`);
  if (code === 'EISDIR' && wording.isDirectory) return fail(wording.isDirectory(shown));
  if (code === 'ELOOP' && wording.swappedWhile !== undefined) {
    return fail(`${shown} changed into a symbolic link while being ${wording.swappedWhile}; refused`);
  }
  return fail(`Cannot ${action} ${shown}: ${err instanceof Error ? err.message : String(err)}`);
}

/** The errno code (ENOENT, EACCES, …) of a failed system call, or undefined for any other kind of error. */
export function errnoCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || !('code' in err)) return undefined;
  return typeof err.code === 'string' ? err.code : undefined;
}

/** Stops the tool between steps once its call is cancelled or past its deadline. */
export function throwIfCancelled(signal: AbortSignal): void {
  if (signal.aborted) throw new ToolError('cancelled');
}
