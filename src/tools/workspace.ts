// Workspace confinement: every path a tool touches resolves, symlinks and all, inside the workspace root.
// Comparison is by path components (so `/ws-evil` is not inside `/ws`), and symlinks are resolved
// one component at a time, dangling ones included, so a link cannot lead a write or read outside.

import type { Stats } from 'node:fs';
import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';
import { ToolError } from './contract.ts';
import { type FsSteps, lstatStep, readlinkStep, runAsync, runSync } from './fs-steps.ts';
import { MAX_SYMLINK_HOPS } from '../limits.ts';

/** True when `candidate` is `root` itself or lies below it (component-wise, not by string prefix). */
export function isInside(root: string, candidate: string): boolean {
  // Both canonical (what realpath and /proc/self/fd give): a component-wise prefix is the answer, and
  // path.relative's two resolves need not run (every confined open asks this of its descriptor's path).
  if (isCanonicalAbsolute(root) && isCanonicalAbsolute(candidate)) {
    return root === '/' || candidate === root || (candidate.startsWith(root) && candidate.charCodeAt(root.length) === 0x2f);
  }
  return relativeInside(root, candidate) !== null;
}

/** A `//`, or a `.` or `..` component: what path.resolve would change in an absolute path. */
const NOT_CANONICAL = /\/\/|\/\.\.?(?:\/|$)/;

/** An absolute POSIX path that path.resolve leaves as it is: no empty, `.` or `..` component, no trailing `/` (but `/` itself). */
export function isCanonicalAbsolute(p: string): boolean {
  if (path.sep !== '/' || p.charCodeAt(0) !== 0x2f) return false;
  return p.length === 1 || (p.charCodeAt(p.length - 1) !== 0x2f && !NOT_CANONICAL.test(p));
}

/** `candidate` relative to `root` ('' for the root itself) when it is inside, else null. */
function relativeInside(root: string, candidate: string): string | null {
  const rel = path.relative(root, candidate);
  if (rel === '') return rel;
  if (path.isAbsolute(rel)) return null;
  return rel !== '..' && !rel.startsWith(`..${path.sep}`) ? rel : null;
}

/** The configured workspace cannot be served (missing, not a directory): a start-up error. */
export class WorkspaceError extends Error {
  override readonly name = 'WorkspaceError';
}

/** Resolves the configured workspace directory to its real path; it must exist and be a directory. */
export async function openWorkspace(dir: string): Promise<string> {
  const abs = path.resolve(dir);
  let real: string;
  try {
    real = await realpath(abs);
  } catch (cause) {
    throw new WorkspaceError(`workspace ${abs} does not exist`, { cause });
  }
  const info = await lstat(real);
  if (!info.isDirectory()) throw new WorkspaceError(`workspace ${abs} is not a directory`);
  return real;
}

/**
 * Resolves `userPath` (relative to the workspace, or absolute) to a real path inside `workspace`.
 * The path need not exist (for `write`); every existing component is resolved through its symlinks,
 * and the result — and every step on the way — must stay inside the workspace.
 */
export function resolveInWorkspace(workspace: string, userPath: string): Promise<string> {
  return runAsync(resolveSteps(workspace, userPath));
}

/** The same resolution with synchronous system calls, for a thread that reads a small file inline. */
export function resolveInWorkspaceSync(workspace: string, userPath: string): string {
  return runSync(resolveSteps(workspace, userPath));
}

/** The resolution itself, as file-system steps (src/tools/fs-steps.ts), for either driver or a larger body. */
export function* resolveSteps(workspace: string, userPath: string): FsSteps<string> {
  return (yield* resolveWithStats(workspace, userPath)).real;
}

/** What resolution learnt: the real path, and its lstat when its last step read one (null otherwise). */
export interface Resolved {
  readonly real: string;
  /** The real path's own lstat: it is not a symbolic link, so this is what stat would say. */
  readonly stats: Stats | null;
}

/** The resolution, keeping the final lstat so a body need not stat the same path again. */
export function* resolveWithStats(workspace: string, userPath: string): FsSteps<Resolved> {
  if (typeof userPath !== 'string' || userPath.length === 0) throw new ToolError('path must be a non-empty string');
  if (userPath.includes('\0')) throw new ToolError('path must not contain NUL bytes');
  const expanded = userPath.startsWith('@') ? userPath.slice(1) : userPath;
  const rel = isPlainRelative(expanded) ? expanded : relativeInside(workspace, path.resolve(workspace, expanded));
  if (rel === null) {
    throw new ToolError(`path ${userPath} is outside the workspace ${workspace}; only paths inside it can be used`);
  }
  const hops = { count: 0 };
  const resolved = yield* resolveComponents(workspace, rel, hops, userPath);
  // path.resolve drops a trailing '/', which would let `a.txt/` name the file a.txt; POSIX says ENOTDIR.
  if (namesDirectory(userPath) && resolved.stats !== null && !resolved.stats.isDirectory()) {
    throw new ToolError(`Not a directory: ${userPath} (a path ending in '/' names a directory, and ${userPath.replace(/\/+$/, '')} is a file)`);
  }
  return resolved;
}

/** The caller's path ends in '/', so it can only name a directory (a file there is ENOTDIR, as in POSIX). */
export function namesDirectory(userPath: string): boolean {
  return userPath.endsWith('/') || userPath.endsWith('/.');
}

/** Resolves `rel` (inside `workspace`, as relativeInside gives it) one component at a time. */
function* resolveComponents(workspace: string, rel: string, hops: { count: number }, shown: string): FsSteps<Resolved> {
  const parts = rel === '' ? [] : rel.split(path.sep);
  let current = workspace;
  let stats: Stats | null = null;
  for (let i = 0; i < parts.length; i++) {
    const next = joinName(current, parts[i] as string);
    let info;
    try {
      info = yield* lstatStep(next);
    } catch (err) {
      if (isNotFound(err)) {
        // Nothing below here exists, so nothing below here can be a symlink.
        return { real: path.join(next, ...parts.slice(i + 1)), stats: null };
      }
      throw new ToolError(`cannot resolve ${shown}: ${(err as Error).message}`, { cause: err });
    }
    if (info.isSymbolicLink()) {
      if (++hops.count > MAX_SYMLINK_HOPS) throw new ToolError(`path ${shown} has too many levels of symbolic links`);
      let link: string;
      try {
        link = yield* readlinkStep(next);
      } catch (err) {
        // It was a link a moment ago (lstat said so) and is not now: the path is being changed under us.
        throw new ToolError(`path ${shown} changed while it was being resolved; refused (try again)`, { cause: err });
      }
      const target = relativeInside(workspace, path.resolve(current, link));
      if (target === null) {
        throw new ToolError(`path ${shown} is a symbolic link that leads outside the workspace; refused`);
      }
      const resolved = yield* resolveComponents(workspace, target, hops, shown);
      current = resolved.real;
      stats = resolved.stats;
      if (!isInside(workspace, current)) {
        throw new ToolError(`path ${shown} is a symbolic link that leads outside the workspace; refused`);
      }
    } else {
      current = next;
      stats = info;
    }
  }
  return { real: current, stats };
}

/**
 * A relative path of plain names on a POSIX system ('a/b.txt': no empty, '.' or '..' component, no
 * leading '/'): resolved against any directory it names that directory's entry, so it is its own path
 * relative to the workspace, and path.resolve and path.relative need not run (every read asks).
 */
export function isPlainRelative(p: string): boolean {
  if (path.sep !== '/' || p.length === 0 || p.charCodeAt(0) === 0x2f) return false;
  let start = 0;
  for (;;) {
    const slash = p.indexOf('/', start);
    const end = slash === -1 ? p.length : slash;
    const length = end - start;
    if (length === 0) return false;
    if (p.charCodeAt(start) === 0x2e && (length === 1 || (length === 2 && p.charCodeAt(start + 1) === 0x2e))) return false;
    if (slash === -1) return true;
    start = slash + 1;
  }
}

/** `path.join(dir, name)` for a normalised absolute `dir` and one plain `name` (a component of a path made relative). */
function joinName(dir: string, name: string): string {
  if (path.sep !== '/') return path.join(dir, name);
  return dir.endsWith('/') ? `${dir}${name}` : `${dir}/${name}`;
}

/** The path as the model should see it: relative to the workspace, `.` for the root. */
export function displayPath(workspace: string, real: string): string {
  const rel = path.relative(workspace, real);
  return rel === '' ? '.' : rel.split(path.sep).join('/');
}

function isNotFound(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

