// The server's own hold on a stopped command: the command's shell frozen from outside, by its host PID.
// STOPPER_SCRIPT's listener freezes it from inside, but the listener is a process of the command's user in
// the command's namespace: a command can kill it (or steal its pipe through /proc), and a cancelled `a; b`
// would then run `b` during KILL_GRACE_MS. Found through /proc: the first process down from the launch whose
// arguments are the stopper's, and its first child, the shell (started before the listener).

import { readFileSync } from 'node:fs';
import { errnoCode } from '../fs-errors.ts';

/** How far below the launched process the stopper may be: bwrap → its init → stopper; unshare → stopper; or the stopper itself. */
const MAX_STOPPER_DEPTH = 3;

/** A process's first child, or null (gone, no children, or a kernel without /proc/PID/task/PID/children). */
function firstChild(pid: number): number | null {
  let list: string;
  try {
    list = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8');
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT' || code === 'ESRCH' || code === 'EACCES') return null;
    throw err;
  }
  const first = Number(list.trim().split(' ')[0]);
  return Number.isInteger(first) && first > 0 ? first : null;
}

function argvOf(pid: number): string[] | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT' || code === 'ESRCH' || code === 'EACCES') return null;
    throw err;
  }
}

/**
 * SIGSTOPs the shell of the command launched as `launched`, whose first process runs `stopperScript`
 * (as `sh -c SCRIPT …`). Best effort: where /proc does not tell (not Linux, the command already gone), the
 * listener's freeze and the SIGKILL after the grace remain. True when a shell was frozen.
 */
export function freezeCommandShell(launched: number, stopperScript: string): boolean {
  let pid: number | null = launched;
  for (let depth = 0; pid !== null && depth <= MAX_STOPPER_DEPTH; depth++) {
    // The first match from the top: processes the command starts are all below the stopper.
    if (argvOf(pid)?.[2] === stopperScript) {
      const shell = firstChild(pid);
      if (shell === null) return false;
      try {
        process.kill(shell, 'SIGSTOP');
        return true;
      } catch (err) {
        if (errnoCode(err) === 'ESRCH') return false;
        throw err;
      }
    }
    pid = firstChild(pid);
  }
  return false;
}
