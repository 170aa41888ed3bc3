// Where no sandbox can be built, `bash` is the server's user unconfined: a remote caller (HTTP, WebSocket)
// is refused it unless the operator opted in; the local stdio user keeps it (the server warns at start).

import { bashIsolation } from '../bash-isolation.ts';
import type { ToolExecutor } from '../contract.ts';

export const UNSANDBOXED_BASH_REFUSAL = 'Denied by remote policy: this server has no sandbox for bash (see /health bashSandbox), so remote callers cannot run it; the operator may start the server with --unsafe-bash-without-sandbox';

/** `execute` with `bash` refused to a remote caller while the isolation in force is not bubblewrap (unless `unsafe`). */
export function guardUnsandboxedBash(execute: ToolExecutor, remote: boolean, unsafe: boolean): ToolExecutor {
  if (!remote || unsafe) return execute;
  return async (tool, args, harness, ctx) => {
    if (tool === 'bash' && (await bashIsolation()).kind !== 'bubblewrap') return { text: UNSANDBOXED_BASH_REFUSAL, isError: true };
    return execute(tool, args, harness, ctx);
  };
}
