// Where a task taken over from a process that died may go on: only in the directory it ran in (the
// workspace its claimer recorded, `workspaceOf`), and only on a process that serves that directory — never
// in this process's own workspace instead. The recorded directory is data from the store, so it passes the
// checks a client's root passes before a session works in it (connection/root-check.ts, mcp/roots.ts): a
// real directory this process can read, resolved through its symlinks, inside what this process serves.

import { constants } from 'node:fs';
import { access, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { isHarnessId } from '../harness/ids.ts';
import { isInsidePath } from '../mcp/roots.ts';
import { selectModelProvider } from '../model/select.ts';
import type { OrphanVerdict } from '../store/orphan-verdict.ts';
import type { ExpiredTask, TakeoverScope } from '../store/task-lease.ts';
import type { TaskSetup } from './task-core.ts';

/** What a process can continue a taken-over task with. */
export interface TakeoverSite {
  /** The process's configured workspace (a real path, as `openWorkspace` gives it). */
  readonly workspace: string;
  /**
   * Tasks that ran in a directory below `workspace` are served too: a PostgreSQL node that follows its
   * clients' roots, which a remote session may only choose inside the workspace. Else only `workspace`
   * itself (SQLite: processes of other projects share one file, and a local session's root may be any
   * directory, so a root nobody named to this process is not its to serve).
   */
  readonly below: boolean;
  /** A server model is configured: a taken-over task cannot sample the client that started it. */
  readonly model: boolean;
}

/**
 * Where a task goes on, as far as its row tells: `here`, in `root`, once the directory passes `confirmRoot`;
 * `elsewhere`, left for a process that may continue it (one serving its directory, or with a model) until
 * the patience; `nowhere`, no process can (no setup super-pi writes, no directory recorded): interrupted.
 */
export type Placement =
  | { readonly kind: 'here'; readonly root: string }
  | { readonly kind: 'elsewhere'; readonly reason: string }
  | { readonly kind: 'nowhere'; readonly reason: string };

/** The directory the task's claimer ran it in, or null when its setup names none. */
export function workspaceOf(task: Pick<ExpiredTask, 'setup'>): string | null {
  const workspace = (task.setup as { workspace?: unknown } | null)?.workspace;
  return typeof workspace === 'string' && workspace !== '' ? workspace : null;
}

/**
 * The setup of a taken-over task, or why it cannot be continued (it was claimed by a super-pi that kept
 * no setup, or the row was changed by hand). The client is on another node, so nobody can be asked:
 * a call the policy would ask about is refused, as for a client without elicitation.
 */
export function setupOf(task: Pick<ExpiredTask, 'conversationId' | 'harness' | 'setup'>): TaskSetup | string {
  if (!isHarnessId(task.harness)) return `its harness "${task.harness}" is not one this server runs`;
  const s = task.setup;
  if (typeof s !== 'object' || s === null) return 'its claimer kept no setup to continue it with';
  const { maxTurns, local, forbidWrites } = s as Record<string, unknown>;
  if (typeof maxTurns !== 'number' || !Number.isSafeInteger(maxTurns) || maxTurns <= 0 || typeof local !== 'boolean' || typeof forbidWrites !== 'boolean') {
    return 'the setup its claimer kept is not one super-pi writes';
  }
  return { conversationId: task.conversationId, harness: task.harness, maxTurns, local, forbidWrites, canConfirm: false };
}

/** Whether a server model is configured in `env` (SUPERPI_MODEL_URL…). */
export function hasServerModel(env: NodeJS.ProcessEnv): boolean {
  try {
    selectModelProvider({ env });
    return true;
  } catch {
    return false;
  }
}

/** Whether `site` serves the directory `root` (compared by path components, both absolute). */
export function serves(site: TakeoverSite, root: string): boolean {
  return root === site.workspace || (site.below && isInsidePath(site.workspace, root));
}

export function placementOf(task: Pick<ExpiredTask, 'conversationId' | 'harness' | 'setup'>, site: TakeoverSite): Placement {
  const setup = setupOf(task);
  if (typeof setup === 'string') return { kind: 'nowhere', reason: setup };
  const root = workspaceOf(task);
  if (root === null) return { kind: 'nowhere', reason: 'its claimer recorded no directory it ran in' };
  // super-pi records real paths (absolute, resolved): anything else was written by hand, and is no directory to resolve.
  if (path.resolve(root) !== root || root.includes('\0')) return { kind: 'nowhere', reason: 'the directory its claimer recorded is not one super-pi records' };
  if (!serves(site, root)) return { kind: 'elsewhere', reason: `it ran in ${root}, which this process does not serve` };
  if (!site.model) return { kind: 'elsewhere', reason: 'no server model is configured on this process, and the client that started it is gone' };
  return { kind: 'here', root };
}

/**
 * What a process of `site` says of a task whose process died, when it opens a SQLite store: it continues
 * one placed here (its first pass checks the directory on disk), leaves one placed elsewhere to a process
 * that may continue it (until the patience), and lets the store interrupt one nobody can continue.
 */
export function judgeOrphan(task: Pick<ExpiredTask, 'conversationId' | 'harness' | 'setup'>, site: TakeoverSite): OrphanVerdict {
  const placed = placementOf(task, site).kind;
  return placed === 'here' ? 'continue' : placed === 'elsewhere' ? 'leave' : 'interrupt';
}

/** What `expiredTasks` is asked for by a pass of `site`: a process without a model continues nothing, so asks for no workspace. */
export function scopeOf(site: TakeoverSite, patienceMs: number): TakeoverScope {
  return { workspace: site.model ? site.workspace : null, below: site.below, patienceMs };
}

/**
 * The recorded directory checked on disk, as a client's root is: its real path when it is a directory this
 * process can read and enter and that path is still one `site` serves (a symlink below the workspace may
 * point anywhere), else why not.
 */
export async function confirmRoot(root: string, site: TakeoverSite): Promise<{ readonly path: string } | { readonly problem: string }> {
  let real: string;
  try {
    real = await realpath(root);
  } catch (err) {
    return { problem: `it does not exist here (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
  }
  try {
    if (!(await stat(real)).isDirectory()) return { problem: 'it is not a directory' };
    await access(real, constants.R_OK | constants.X_OK);
  } catch (err) {
    return { problem: `it cannot be used (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
  }
  if (!serves(site, real)) return { problem: `it resolves to ${real}, which this process does not serve` };
  return { path: real };
}
