// Looks a policy's paths up on disk, per command: a hidden path is hidden where it really is (a link to
// ~/.ssh hides its target), as a directory or a file; what does not exist is skipped, and is read-only anyway.
// Synchronous on purpose: some sixty lookups of mostly absent paths take well under a millisecond as
// system calls, but 7-12 ms as round trips through libuv's thread pool, which was most of a sandbox's cost.

import { lstatSync, readdirSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { secretFilesRead } from '../../auth/secret-files.ts';
import { errnoCode } from '../fs-errors.ts';
import type { SandboxMount } from './bwrap-argv.ts';
import { hiddenCandidates, HOST_KEY_DIR, HOST_KEY_NAME, type SandboxPolicy } from './policy.ts';

/** Inside `dir` or `dir` itself. */
function within(p: string, dir: string): boolean {
  return p === dir || p.startsWith(dir.endsWith(path.sep) ? dir : `${dir}${path.sep}`);
}

/** The real path, or null when nothing is there (or it cannot be reached, which hides it as well). */
function real(p: string): string | null {
  // Most candidates are absent: asked without an exception (building one per path costs more than the call).
  if (lstatSync(p, { throwIfNoEntry: false }) === undefined) return null;
  try {
    return realpathSync.native(p);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES' || code === 'ELOOP') return null;
    throw err;
  }
}

function hostKeys(): string[] {
  try {
    return readdirSync(HOST_KEY_DIR).filter((n) => HOST_KEY_NAME.test(n)).map((n) => path.join(HOST_KEY_DIR, n));
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return [];
    throw err;
  }
}

/**
 * The mounts over the read-only root for `policy` in `workspace` (the workspace's own bind is bwrapArgv's).
 * A hidden path under /tmp is left out unless it is inside a writable path: the sandbox's /tmp is a new,
 * empty one.
 */
export function resolveMounts(policy: SandboxPolicy, workspace: string): SandboxMount[] {
  const mounts: SandboxMount[] = [];
  const writable = [workspace];
  for (const p of policy.writable) {
    const r = real(p);
    if (r === null || r === '/') continue;
    writable.push(r);
    mounts.push({ kind: 'writable', path: r });
  }
  const seen = new Set<string>();
  // The files the server read secrets from are hidden whatever --bash-reveal says, as the host keys are.
  for (const candidate of [...hiddenCandidates(policy), ...hostKeys(), ...secretFilesRead()]) {
    const r = real(candidate);
    if (r === null || seen.has(r)) continue;
    seen.add(r);
    if (within(r, '/tmp') && !writable.some((w) => within(r, w))) continue;
    // Hiding the workspace (or a parent of it) would leave nothing to work on: the workspace wins.
    if (within(workspace, r)) continue;
    const info = lstatSync(r);
    mounts.push({ kind: info.isDirectory() ? 'hide-dir' : 'hide-file', path: r });
  }
  return mounts;
}
