// Whether a directory may hold code this user runs (the V8 code cache): reached from the file-system
// root through real directories only, none of which another user could change. Node built-ins only:
// it runs before the command's bundle is loaded (see code-cache.ts).

import { lstatSync } from 'node:fs';
import path from 'node:path';

/**
 * Bits that, set on a directory or file, mean another user could have written it: V8 does not defend
 * against crafted cache data, so such a cache is never read (and never written).
 */
export const FOREIGN_WRITE_BITS = 0o022;
/**
 * The sticky bit (as on /tmp): in such a directory an entry can be renamed or removed by its owner only,
 * so others writing it cannot swap the next directory of the path, whose own owner is then checked.
 */
export const STICKY_BIT = 0o1000;
/** The owner whose directories every path goes through (/, /home): root. */
const ROOT_UID = 0;

/** The calling user's id, or null where there is none (Windows): ownership is then not checked. */
export function currentUid(): number | null {
  return typeof process.getuid === 'function' ? process.getuid() : null;
}

/** Why a file or directory with this owner and mode must not be trusted, or null. */
export function foreignWritable(stat: { uid: number; mode: number }, uid: number | null = currentUid()): string | null {
  if (uid !== null && stat.uid !== uid) return `owned by uid ${stat.uid}, not ${uid}`;
  if ((stat.mode & FOREIGN_WRITE_BITS) !== 0) return `writable by others (mode ${(stat.mode & 0o777).toString(8)})`;
  return null;
}

/**
 * Why an ancestor directory (any directory of the path above the last) could be changed by another
 * user, or null: it must be the user's or root's, and writable by no one else unless it is sticky.
 */
export function untrustedAncestor(stat: { uid: number; mode: number }, uid: number | null = currentUid()): string | null {
  if (uid !== null && stat.uid !== uid && stat.uid !== ROOT_UID) return `owned by uid ${stat.uid}, neither ${uid} nor root`;
  if ((stat.mode & FOREIGN_WRITE_BITS) !== 0 && (stat.mode & STICKY_BIT) === 0) return `writable by others (mode ${(stat.mode & 0o777).toString(8)}) and not sticky`;
  return null;
}

export interface TrustOptions {
  /**
   * A directory of the path that does not exist yet (or a file where one should be) ends the check
   * without a refusal: it is about to be created, owner only (or the creation fails and says why).
   */
  readonly allowMissing?: boolean;
  readonly uid?: number | null;
}

/** Why a path is not trusted; `missing`: only because a directory of it does not exist (yet). */
export interface PathRefusal {
  readonly why: string;
  readonly missing: boolean;
}

/**
 * Why `dir` cannot be trusted to hold code, or null. Every component from the root is looked at with
 * `lstat` (never followed): a symbolic link anywhere is refused — `~/.super-pi` linked into a cloned
 * repository would otherwise make the repository's files the cache — as is a relative path (its meaning
 * depends on the directory the server was started in, which may be a repository shipping a cache).
 * Ancestors: see `untrustedAncestor`; the directory itself: the user's, writable by no one else.
 */
export function untrustedPath(dir: string, options: TrustOptions = {}): PathRefusal | null {
  const refuse = (why: string): PathRefusal => ({ why, missing: false });
  if (!path.isAbsolute(dir)) return refuse(`${dir} is a relative path (it would depend on the directory the server starts in)`);
  const uid = options.uid === undefined ? currentUid() : options.uid;
  const { root } = path.parse(dir);
  const parts = path.normalize(dir).slice(root.length).split(path.sep).filter((p) => p !== '');
  let at = root;
  for (let i = -1; i < parts.length; i++) {
    if (i >= 0) at = path.join(at, parts[i] as string);
    let stat;
    try {
      stat = lstatSync(at);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? String(err);
      if (code === 'ENOENT' && options.allowMissing) return null;
      return { why: `no cache directory (${code} at ${at})`, missing: code === 'ENOENT' || code === 'ENOTDIR' };
    }
    if (stat.isSymbolicLink()) return refuse(`${at} is a symbolic link (a cache is trusted only through real directories)`);
    if (!stat.isDirectory()) return options.allowMissing ? null : { why: `no cache directory (${at} is not a directory)`, missing: true };
    const last = i === parts.length - 1;
    const unsafe = last ? foreignWritable(stat, uid) : untrustedAncestor(stat, uid);
    if (unsafe) return refuse(last ? `the cache directory ${at} is ${unsafe}` : `${at}, on the way to the cache directory, is ${unsafe}`);
  }
  return null;
}
