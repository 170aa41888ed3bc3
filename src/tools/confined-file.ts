// The one way a file of the workspace is opened on a caller's behalf (tools, resources, completion, undo
// snapshots, git status). A name is only a question; the answer is checked on the descriptor that will be
// used: resolved inside the root, opened without following a last-component link and without blocking (a
// FIFO or device cannot hang a thread), fstat'ed — regular files only — before a byte is read, bounded in
// size, and, on Linux, the descriptor's real path (/proc/self/fd/N) must lie inside the root, so a directory
// swapped for a symlink between resolution and open is caught. Writes are atomic (temporary file, fsync,
// rename) and, on Linux, made inside a directory descriptor that was checked the same way.
//
// Other platforms (no /proc/self/fd): after opening, the path is resolved again and the descriptor's device
// and inode must equal what that resolution names; a write's create and rename still go by path, so there a
// swap in the microseconds between the check and the rename can misplace a write. Linux is the platform the
// full guarantee is made for.
//
// Reads are written as file-system steps (./fs-steps.ts) so the synchronous driver (a connection actor
// reading a small file inline) and the asynchronous one run the same checks; writes are asynchronous only.

import { randomBytes } from 'node:crypto';
import { closeSync, constants, type Dirent, fstatSync, openSync, readdirSync, type Stats } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, opendir, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { ToolError } from './contract.ts';
import { errnoCode, fsError, type FsWording } from './fs-errors.ts';
import {
  closeStep, descriptorOf, type FsSteps, fstatStep, lstatStep, type OpenFile, openStep, readlinkStep, readStep, runAsync, runSync,
} from './fs-steps.ts';
import { formatSize } from './truncate.ts';
import { isInside, namesDirectory, resolveInWorkspace, resolveWithStats } from './workspace.ts';

/** Prefix of the temporary files an atomic write makes beside its target; one left by a crash is recognisable by it. */
export const TEMP_FILE_PREFIX = '.superpi-tmp-';

/** O_NOFOLLOW: resolution already followed every link, so a link here was swapped in since. O_NONBLOCK: a FIFO cannot hang us. */
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
const DIRECTORY_FLAGS = constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
const READ_CHUNK_BYTES = 64 * 1024;

/** How a confined operation names what it does in its messages. */
export interface ConfinedWording extends FsWording {
  /** Completes "only regular files can be …": 'read', 'edited', 'written'. */
  readonly usedAs?: string;
}

/** A file opened for reading and checked: its descriptor, its real path, and fstat of that descriptor. */
export interface OpenedFile {
  readonly file: OpenFile;
  readonly real: string;
  readonly stats: Stats;
}

/**
 * Opens `userPath` for reading, every check made (see the header). Refusals are ToolErrors; a failed
 * system call keeps its errno error as `cause` (so a caller can tell ENOENT from the rest).
 */
export function* openConfined(workspace: string, userPath: string, wording: ConfinedWording = {}): FsSteps<OpenedFile> {
  const { real, stats: seen } = yield* resolveWithStats(workspace, userPath);
  // Refuse what is visibly not a file before opening it: opening some devices has effects of its own.
  if (seen !== null) refuseNonRegular(seen, userPath, wording);
  let file: OpenFile;
  try {
    file = yield* openStep(real, READ_FLAGS);
  } catch (err) {
    throw fsError(err, userPath, 'read', wording);
  }
  try {
    const stats = yield* fstatStep(file);
    refuseNonRegular(stats, userPath, wording);
    yield* checkDescriptor(workspace, file, real, stats, userPath);
    return { file, real, stats };
  } catch (err) {
    yield* closeStep(file);
    throw err;
  }
}

/** Reads an opened file whole, refusing one larger than `maxBytes` (the size on the descriptor, and what is actually read). */
export function* readWhole(opened: OpenedFile, shown: string, maxBytes: number): FsSteps<Buffer> {
  if (opened.stats.size > maxBytes) throw tooLarge(shown, opened.stats.size, maxBytes);
  const parts: Buffer[] = [];
  let total = 0;
  for (;;) {
    // One byte beyond the bound is enough to know the file grew past it.
    const buf = Buffer.allocUnsafe(Math.min(READ_CHUNK_BYTES, maxBytes + 1 - total));
    const n = yield* readStep(opened.file, buf);
    if (n === 0) break;
    total += n;
    if (total > maxBytes) throw tooLarge(shown, total, maxBytes);
    parts.push(buf.subarray(0, n));
  }
  return Buffer.concat(parts, total);
}

/** Reads at most `maxBytes` from the start of an opened file (an excerpt): never more, whatever its size. */
export function* readHead(opened: OpenedFile, maxBytes: number): FsSteps<Buffer> {
  const buf = Buffer.allocUnsafe(maxBytes);
  let total = 0;
  while (total < maxBytes) {
    const n = yield* readStep(opened.file, buf.subarray(total));
    if (n === 0) break;
    total += n;
  }
  return buf.subarray(0, total);
}

/** Opens, reads whole (bounded) and closes: the confined readFile. */
export function* readConfined(workspace: string, userPath: string, maxBytes: number, wording: ConfinedWording = {}): FsSteps<{ bytes: Buffer; opened: OpenedFile }> {
  const opened = yield* openConfined(workspace, userPath, wording);
  try {
    return { bytes: yield* readWhole(opened, userPath, maxBytes), opened };
  } finally {
    yield* closeStep(opened.file);
  }
}

/** readConfined with the asynchronous driver. */
export function readConfinedFile(workspace: string, userPath: string, maxBytes: number, wording: ConfinedWording = {}): Promise<{ bytes: Buffer; opened: OpenedFile }> {
  return runAsync(readConfined(workspace, userPath, maxBytes, wording));
}

/** True when a confined operation failed because the file (or a directory on its path) does not exist. */
export function isMissing(err: unknown): boolean {
  const code = errnoCode(err instanceof ToolError ? err.cause : err);
  return code === 'ENOENT';
}

/**
 * For the search tools, which enumerate real paths themselves: opens `absolute` (already inside the root)
 * for reading with the same flags and descriptor checks, synchronously. Null when it is not a regular
 * file, cannot be opened, or is not where its name said (they skip such a file rather than fail).
 */
export function openRegularFileSync(workspace: string, absolute: string): { fd: number; stats: Stats } | null {
  let fd: number;
  try {
    fd = openSync(absolute, READ_FLAGS);
  } catch (err) {
    if (errnoCode(err) !== undefined) return null;
    throw err;
  }
  let keep = false;
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return null;
    const where = runSync(procPath(fd));
    if (where !== null && !isInside(workspace, where)) return null;
    keep = true;
    return { fd, stats };
  } finally {
    if (!keep) closeSync(fd);
  }
}

/** A directory's entries, and those of them whose name is not UTF-8 (see nameIsUtf8). */
export interface ListedDirectory {
  readonly entries: Dirent[];
  readonly notUtf8: ReadonlySet<Dirent>;
}

/** Only a name holding U+FFFD, what Node decodes a byte that is not UTF-8 to, can be one. */
const mayNotBeUtf8 = (name: string): boolean => name.includes('\uFFFD');

/**
 * Whether a listed name, as Node decoded it, still names an entry of directory `dir` (a path that names
 * the checked descriptor). A name whose bytes are not UTF-8 is decoded with U+FFFD for each bad byte,
 * and that decoding names no entry (or, if one has exactly that name, another one): no tool can name it.
 */
function* nameIsUtf8(dir: string, name: string): FsSteps<boolean> {
  try {
    yield* lstatStep(`${dir}/${name}`);
    return true;
  } catch (err) {
    const code = errnoCode(err);
    // ENAMETOOLONG: each bad byte decodes to three, so the decoding can be longer than a name may be.
    if (code === 'ENOENT' || code === 'ENAMETOOLONG') return false;
    // Anything else says nothing about the name; it is shown as it was listed.
    if (code !== undefined) return true;
    throw err;
  }
}

/**
 * For the tree walk: the entries of directory `absolute` (already inside the root), listed through a
 * descriptor checked like a file's, synchronously. Null when it cannot be opened as a directory or is not
 * inside the workspace (a directory swapped for a symlink mid-walk): the walk skips it.
 */
export function listDirectorySync(workspace: string, absolute: string): ListedDirectory | null {
  let fd: number;
  try {
    fd = openSync(absolute, DIRECTORY_FLAGS);
  } catch (err) {
    if (errnoCode(err) !== undefined) return null;
    throw err;
  }
  try {
    const where = runSync(procPath(fd));
    if (where !== null && !isInside(workspace, where)) return null;
    const dir = where === null ? absolute : `/proc/self/fd/${fd}`;
    const entries = readdirSync(dir, { withFileTypes: true });
    const notUtf8 = new Set<Dirent>();
    for (const e of entries) if (mayNotBeUtf8(e.name) && !runSync(nameIsUtf8(dir, e.name))) notUtf8.add(e);
    return { entries, notUtf8 };
  } catch (err) {
    if (errnoCode(err) !== undefined) return null;
    throw err;
  } finally {
    closeSync(fd);
  }
}

function refuseNonRegular(stats: Stats, shown: string, wording: ConfinedWording): void {
  if (stats.isDirectory()) {
    throw new FileRefusedError(wording.isDirectory ? wording.isDirectory(shown) : `${shown} is a directory, not a file`, 'directory');
  }
  if (!stats.isFile()) {
    throw new FileRefusedError(`${shown} is not a regular file (device, socket or pipe); only regular files can be ${wording.usedAs ?? 'read'}`, 'not-regular');
  }
}

/** Why the confined path refused a file it could open: what it is, where it led, or its size. */
export type RefusalReason = 'directory' | 'not-regular' | 'escaped' | 'too-large';

/** A refusal of the confined path (as opposed to a failed system call, whose ToolError has the errno error as cause). */
export class FileRefusedError extends ToolError {
  readonly reason: RefusalReason;
  constructor(message: string, reason: RefusalReason) {
    super(message);
    this.reason = reason;
  }
}

function tooLarge(shown: string, size: number, maxBytes: number): ToolError {
  return new FileRefusedError(`${shown} is larger than ${formatSize(maxBytes)} (${formatSize(size)}); refused`, 'too-large');
}

function escaped(shown: string): ToolError {
  return new FileRefusedError(`${shown} led outside the workspace when it was opened (a directory on its path was swapped for a symbolic link); refused`, 'escaped');
}

/** The descriptor must be the file its name resolved to, inside the workspace (see the header for the two methods). */
function* checkDescriptor(workspace: string, file: OpenFile, real: string, stats: Stats, shown: string): FsSteps<void> {
  const where = yield* procPath(file);
  if (where !== null) {
    if (!isInside(workspace, where)) throw escaped(shown);
    return;
  }
  yield* checkIdentity(workspace, real, stats, shown);
}

/**
 * The check where there is no /proc (exported for its test): the name, resolved again now, must still
 * name this very file — the device and inode of the descriptor (`stats`, from fstat).
 */
export function* checkIdentity(workspace: string, real: string, stats: Stats, shown: string): FsSteps<void> {
  const again = yield* resolveWithStats(workspace, real);
  const now = again.stats ?? (yield* lstatStep(again.real));
  if (now.dev !== stats.dev || now.ino !== stats.ino) throw escaped(shown);
}

/** The real path of an open descriptor from /proc/self/fd (Linux); null where there is no /proc. */
function* procPath(file: OpenFile): FsSteps<string | null> {
  if (process.platform !== 'linux') return null;
  try {
    return yield* readlinkStep(`/proc/self/fd/${descriptorOf(file)}`);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return null;
    throw err;
  }
}

// ---- writes ----

/** A directory opened and checked to be inside the workspace; `prefix` names it for calls that take a path. */
interface Anchor {
  readonly handle: FileHandle;
  /** `/proc/self/fd/N` on Linux (the opened directory itself, whatever its name now names), else its real path. */
  readonly prefix: string;
}

/** Directory entries one read of a listing asks the kernel for: a batch, then a turn of the event loop. */
const LISTING_BATCH_ENTRIES = 512;

/**
 * Hands each entry of directory `real` (a resolved path inside the workspace) to `visit`, read through its
 * checked descriptor (a directory swapped for a symlink after resolution cannot make it list another one)
 * a batch at a time: the directory is never held whole, so one of millions of names (workspace content)
 * neither fills the heap nor holds the thread; the caller keeps only what it will show. `nameIsUtf8` is
 * false for a name whose bytes are not UTF-8 (see nameIsUtf8). Stops with the signal's reason once
 * `signal` aborts.
 */
export async function eachConfinedEntry(
  workspace: string, real: string, shown: string, visit: (entry: Dirent, nameIsUtf8: boolean) => void,
  options: { wording?: FsWording; signal?: AbortSignal } = {},
): Promise<void> {
  const wording = options.wording ?? {};
  const anchor = await anchorDirectory(workspace, real, shown, 'read directory', wording);
  try {
    const dir = await opendir(anchor.prefix, { bufferSize: LISTING_BATCH_ENTRIES }).catch((err: unknown) => {
      throw fsError(err, shown, 'read directory', wording);
    });
    try {
      for (;;) {
        options.signal?.throwIfAborted();
        const entry = await dir.read().catch((err: unknown) => {
          throw fsError(err, shown, 'read directory', wording);
        });
        if (entry === null) break;
        visit(entry, !mayNotBeUtf8(entry.name) || (await runAsync(nameIsUtf8(anchor.prefix, entry.name))));
      }
    } finally {
      await dir.close().catch((err: unknown) => {
        // Closed already (the iteration ended it) is fine; anything else is a real failure.
        if ((err as NodeJS.ErrnoException).code !== 'ERR_DIR_CLOSED') throw err;
      });
    }
  } finally {
    await anchor.handle.close();
  }
}

/** Opens directory `real` (inside the workspace) and checks the descriptor; see the header. */
async function anchorDirectory(workspace: string, real: string, shown: string, action = 'open the directory of', wording: FsWording = {}): Promise<Anchor> {
  const handle = await open(real, DIRECTORY_FLAGS).catch((err: unknown) => {
    throw fsError(err, shown, action, wording);
  });
  try {
    const where = await runAsync(procPath(handle));
    if (where !== null) {
      if (!isInside(workspace, where)) throw escaped(shown);
      return { handle, prefix: `/proc/self/fd/${handle.fd}` };
    }
    const stats = await handle.stat();
    const again = await resolveInWorkspace(workspace, real);
    const now = await lstat(again);
    if (now.dev !== stats.dev || now.ino !== stats.ino) throw escaped(shown);
    return { handle, prefix: real };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/**
 * Makes the missing directories of `dir` (a real path inside the workspace) one at a time, each inside the
 * checked descriptor of its parent, and returns the anchor of `dir`.
 */
async function anchorCreatingParents(workspace: string, dir: string, shown: string): Promise<Anchor> {
  const missing: string[] = [];
  let existing = dir;
  for (;;) {
    const info = await lstat(existing).catch((err: unknown) => {
      if (errnoCode(err) === 'ENOENT') return null;
      throw fsError(err, shown, 'inspect the directories of', {});
    });
    if (info !== null) {
      if (!info.isDirectory()) {
        throw new ToolError(`Cannot create the parent directory of ${shown}: a file is in the way of one of its directories`);
      }
      break;
    }
    missing.unshift(path.basename(existing));
    existing = path.dirname(existing);
  }
  let anchor = await anchorDirectory(workspace, existing, shown);
  for (const name of missing) {
    try {
      await mkdir(path.join(anchor.prefix, name), 0o777).catch((err: unknown) => {
        if (errnoCode(err) === 'EEXIST') return;
        throw fsError(err, shown, 'create the parent directory of', {});
      });
      const next = await anchorDirectory(workspace, path.join(anchor.prefix, name), shown).catch(async (err: unknown) => {
        if (errnoCode(err instanceof ToolError ? err.cause : err) === 'ENOTDIR' || errnoCode(err instanceof ToolError ? err.cause : err) === 'ELOOP') {
          throw new ToolError(`Cannot create the parent directory of ${shown}: a file is in the way of one of its directories`, { cause: err });
        }
        throw err;
      });
      await anchor.handle.close();
      anchor = next;
    } catch (err) {
      await anchor.handle.close();
      throw err;
    }
  }
  return anchor;
}

export interface WriteOptions {
  readonly wording?: ConfinedWording;
  /** Mode for a file that does not exist yet, before the umask; an existing file keeps its own. */
  readonly newFileMode?: number;
}

/**
 * Replaces (or creates) `userPath` with `content`, atomically: a temporary file beside it (O_EXCL, an
 * unpredictable name starting with TEMP_FILE_PREFIX) is written, fsync'ed, given the old file's mode, and
 * renamed over the target; then the directory is fsync'ed. After a crash the target holds the old content
 * or the new, never a mix. A hard link's other names keep the old content: the workspace's name now
 * names a new file. Returns the real path written.
 */
export async function writeConfinedFile(workspace: string, userPath: string, content: string | Buffer, options: WriteOptions = {}): Promise<string> {
  const wording = options.wording ?? {};
  if (namesDirectory(userPath)) {
    throw new ToolError(`Not a directory: ${userPath} (a path ending in '/' names a directory; give the path of a file)`);
  }
  const { real, stats: existing } = await runAsync(resolveWithStats(workspace, userPath));
  if (existing !== null) refuseNonRegular(existing, userPath, { ...wording, usedAs: wording.usedAs ?? 'written' });
  if (real === workspace) {
    throw new FileRefusedError(wording.isDirectory ? wording.isDirectory(userPath) : `${userPath} is the workspace directory itself`, 'directory');
  }

  const anchor = await anchorCreatingParents(workspace, path.dirname(real), userPath);
  try {
    const temp = path.join(anchor.prefix, `${TEMP_FILE_PREFIX}${randomBytes(12).toString('hex')}`);
    const target = path.join(anchor.prefix, path.basename(real));
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);
    const handle = await open(temp, flags, options.newFileMode ?? 0o666).catch((err: unknown) => {
      throw fsError(err, userPath, 'write', wording);
    });
    let renamed = false;
    try {
      await handle.writeFile(content);
      // The mode of the file as it is now: the one resolution saw may be stale by a rename or chmod.
      const current = await lstat(target).catch((err: unknown) => {
        if (errnoCode(err) === 'ENOENT') return null;
        throw fsError(err, userPath, 'inspect', wording);
      });
      if (current !== null) {
        refuseNonRegular(current, userPath, { ...wording, usedAs: wording.usedAs ?? 'written' });
        await handle.chmod(current.mode & 0o7777);
      }
      await handle.sync();
      await rename(temp, target).catch((err: unknown) => {
        throw fsError(err, userPath, 'write', wording);
      });
      renamed = true;
    } catch (err) {
      throw err instanceof ToolError ? err : fsError(err, userPath, 'write', wording);
    } finally {
      await handle.close();
      if (!renamed) await removeTemp(temp);
    }
    await syncDirectory(anchor.handle);
    return real;
  } finally {
    await anchor.handle.close();
  }
}

/** Removes `userPath` (a regular file or symlink inside the workspace) inside its checked directory; false when it was already gone. */
export async function removeConfinedFile(workspace: string, userPath: string): Promise<boolean> {
  const { real, stats } = await runAsync(resolveWithStats(workspace, userPath));
  if (stats === null) return false;
  if (stats.isDirectory()) throw new ToolError(`${userPath} is a directory; refused`);
  const anchor = await anchorDirectory(workspace, path.dirname(real), userPath);
  try {
    await unlink(path.join(anchor.prefix, path.basename(real))).catch((err: unknown) => {
      if (errnoCode(err) === 'ENOENT') return;
      throw fsError(err, userPath, 'remove', {});
    });
    await syncDirectory(anchor.handle);
    return true;
  } finally {
    await anchor.handle.close();
  }
}

/** Removes a temporary file that was not renamed into place; one already gone is fine. */
async function removeTemp(temp: string): Promise<void> {
  await unlink(temp).catch((err: unknown) => {
    if (errnoCode(err) !== 'ENOENT') throw err;
  });
}

/** Makes the rename durable. File systems that cannot fsync a directory (EINVAL) have no such step to take. */
async function syncDirectory(handle: FileHandle): Promise<void> {
  await handle.sync().catch((err: unknown) => {
    if (errnoCode(err) !== 'EINVAL' && errnoCode(err) !== 'ENOTSUP') throw err;
  });
}
