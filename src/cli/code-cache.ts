// The command's V8 code cache: the bundle (one CommonJS file) is compiled with `vm.Script` from the bytes
// V8 saved after an earlier start, instead of parsed and compiled again (~15 ms of the ~60 ms super-pi
// adds to Node's own start). Node 20 has no public code-cache API for ES modules, which is why the
// command is bundled as CommonJS. The cache is an optimisation only: absent, unreadable, rejected by V8,
// compiled from another source, or reached through a path someone else could change (trusted-path.ts), it
// is not used and the bundle is compiled as usual. V8 checks a cache against its source's length only, so
// each cache file starts with a header holding the sha256 of the source it was compiled from, compared with
// the running bundle's (computed by the build, so a start does not hash 1.4 MB).
//
// Loaded before the bundle, so it imports Node built-ins only (nothing from the rest of src/ but trusted-path.ts).

import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';
import { foreignWritable, untrustedPath } from './trusted-path.ts';

export { FOREIGN_WRITE_BITS, foreignWritable } from './trusted-path.ts';

/** Set to `off` to neither read nor write the code cache. */
export const CODE_CACHE_ENV = 'SUPERPI_CODE_CACHE';
/**
 * The home the conversation store uses too (`src/store/location.ts`, `storeHome`): repeated here, as
 * this file runs before the bundle and must not load the store's code. A test checks the two agree.
 */
export const HOME_ENV = 'SUPERPI_HOME';
export const DEFAULT_HOME_DIR = '.super-pi';
/** The cache directory inside the home. */
export const CODE_CACHE_DIR_NAME = 'cache';
/** Mode of the cache directory (and of the home) when this module creates them: owner only. */
export const CODE_CACHE_DIR_MODE = 0o700;
/** Mode of a cache file: owner read/write. */
export const CODE_CACHE_FILE_MODE = 0o600;
/** What a super-pi cache file starts with, before the sha256 (32 bytes) of the source it was compiled from. */
export const CODE_CACHE_MAGIC = Buffer.from('super-pi v8 cache 1\n', 'latin1');
/** The header: the magic, then the source's sha256. */
export const CODE_CACHE_HEADER_BYTES = CODE_CACHE_MAGIC.length + 32;
/**
 * How long after the first reply the cache is written: past a host's first exchanges (initialize,
 * tools/list, a first call), so creating it (a few ms of CPU) delays none of them, and it holds the code
 * those exchanges compiled. Short enough that a host probing the server for a second still leaves one.
 */
export const CODE_CACHE_WRITE_DELAY_MS = 200;

/**
 * `$SUPERPI_HOME/cache` (relative: against the current directory — but then not used, see
 * `codeCacheRefusal`), else `~/.super-pi/cache`.
 */
export function codeCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env[HOME_ENV];
  const home = fromEnv !== undefined && fromEnv !== '' ? path.resolve(fromEnv) : path.join(os.homedir(), DEFAULT_HOME_DIR);
  return path.join(home, CODE_CACHE_DIR_NAME);
}

export function codeCacheEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[CODE_CACHE_ENV] !== 'off';
}

/**
 * Why the environment rules the code cache out, or null: a relative SUPERPI_HOME means a directory that
 * depends on where the server was started — a cloned repository could ship a cache there. The store still
 * opens there (it holds data, not code); the cache is off, with this as the warning.
 */
export function codeCacheRefusal(env: NodeJS.ProcessEnv = process.env): string | null {
  const home = env[HOME_ENV];
  if (home !== undefined && home !== '' && !path.isAbsolute(home)) return `${HOME_ENV} is a relative path (${home}); the code cache is only used under an absolute one`;
  return null;
}

/** sha256 of the bundle's text (hex): its first 16 digits name the cache, all of it heads the cache file. */
export function bundleHash(source: string): string {
  return createHash('sha256').update(source).digest('hex');
}

/** One file per bundle, Node version and architecture: V8's code is valid for exactly one of each. */
export function codeCacheFileName(hash: string, nodeVersion = process.version, arch = process.arch): string {
  return `super-pi-${hash.slice(0, 16)}-${nodeVersion}-${arch}.v8cache`;
}

/** The cache file's bytes: the header (for the source whose sha256 is `hash`) and V8's data. */
export function codeCacheFile(hash: string, data: Buffer): Buffer {
  return Buffer.concat([CODE_CACHE_MAGIC, Buffer.from(hash, 'hex'), data]);
}

/** Whether the cache was written, or why not. */
export type CacheOutcome = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** What `runBundle` hands the bundle, and what the command calls once its first reply is out. */
export interface CodeCacheHandle {
  /** The cache read and accepted by V8. */
  readonly used: boolean;
  /** Why no cache was used (absent, unreadable, foreign-writable, rejected, turned off); null when used. */
  readonly skipped: string | null;
  /** Why the cache is refused on the ground of trust (a path others could change, a relative home): worth a warning. */
  readonly distrusted: string | null;
  /** Writes the cache if this start did not use one (atomically, once); never throws. */
  save(): CacheOutcome;
}

/**
 * The largest cache file read: a real one is about 0.5 MB (the bundle's compiled functions); anything
 * much larger is not one of ours, and is skipped rather than read into memory at every start.
 */
export const MAX_CODE_CACHE_BYTES = 32 * 1024 * 1024;

/**
 * V8's cache data, or why there is none. The directory's path is checked from the root (untrustedDir),
 * the file opened without following a symlink and checked on that descriptor (the user's, writable by no
 * one else), and its header must name `hash`, the running bundle's sha256.
 */
export function readCodeCache(dir: string, file: string, hash: string): { data: Buffer } | { skipped: string; distrusted?: true } {
  const untrusted = untrustedPath(dir);
  if (untrusted) return untrusted.missing ? { skipped: untrusted.why } : { skipped: untrusted.why, distrusted: true };
  let fd: number;
  try {
    // Non-blocking: opening a FIFO put where the cache should be would otherwise wait for a writer.
    fd = openSync(path.join(dir, file), constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOFOLLOW ?? 0));
  } catch (err) {
    return { skipped: `no cache file (${(err as NodeJS.ErrnoException).code ?? String(err)})` };
  }
  try {
    const stat = fstatSync(fd);
    const unsafe = foreignWritable(stat);
    if (unsafe) return { skipped: `the cache file is ${unsafe}`, distrusted: true };
    if (!stat.isFile()) return { skipped: 'the cache is not a regular file' };
    if (stat.size > MAX_CODE_CACHE_BYTES) return { skipped: `the cache file is larger than ${MAX_CODE_CACHE_BYTES} bytes` };
    return checkHeader(readFileSync(fd), hash);
  } catch (err) {
    return { skipped: `the cache file cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})` };
  } finally {
    closeSync(fd);
  }
}

/** V8's data after a header naming `hash`, or why the file is not a cache of this bundle. */
function checkHeader(bytes: Buffer, hash: string): { data: Buffer } | { skipped: string } {
  if (bytes.length < CODE_CACHE_HEADER_BYTES || !bytes.subarray(0, CODE_CACHE_MAGIC.length).equals(CODE_CACHE_MAGIC)) {
    return { skipped: 'the cache file has no super-pi header (written by something else, or damaged)' };
  }
  const compiledFrom = bytes.subarray(CODE_CACHE_MAGIC.length, CODE_CACHE_HEADER_BYTES).toString('hex');
  if (compiledFrom !== hash) return { skipped: `the cache was compiled from another source (sha256 ${compiledFrom.slice(0, 16)}…, the running bundle's is ${hash.slice(0, 16)}…)` };
  return { data: bytes.subarray(CODE_CACHE_HEADER_BYTES) };
}

/**
 * Why the cache directory cannot be used, or null: missing, or its path is relative, goes through a
 * symbolic link or a directory another user could change (trusted-path.ts).
 */
export function untrustedDir(dir: string): string | null {
  return untrustedPath(dir)?.why ?? null;
}

/**
 * Writes `data` as `dir/file`: the directory made (owner only) if missing and refused if others can
 * write it; a temporary file in it, renamed over the old one, so a start never reads half a cache.
 */
export function writeCodeCache(dir: string, file: string, data: Buffer): CacheOutcome {
  let tmp: string | null = null;
  try {
    // Checked before anything is created too: mkdir would follow a symlinked component and create there.
    const before = untrustedPath(dir, { allowMissing: true });
    if (before) return { ok: false, reason: before.why };
    mkdirSync(dir, { recursive: true, mode: CODE_CACHE_DIR_MODE });
    const untrusted = untrustedDir(dir);
    if (untrusted) return { ok: false, reason: untrusted };
    tmp = path.join(dir, `.${file}.${process.pid}.tmp`);
    // `wx`: a file already at the temporary name (left by a crash, or planted) is not written through.
    writeFileSync(tmp, data, { mode: CODE_CACHE_FILE_MODE, flag: 'wx' });
    renameSync(tmp, path.join(dir, file));
    tmp = null;
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: `cannot write the code cache in ${dir}: ${(err as NodeJS.ErrnoException).code ?? String(err)}` };
  } finally {
    if (tmp !== null) removeQuietly(tmp);
  }
}

/**
 * Removes the caches of other builds for this Node version and architecture: a new build (an upgrade, or
 * every `npm run build` in a checkout) would otherwise leave ~0.5 MB behind each time. Caches for other
 * Node versions stay: a user switching between two Nodes keeps one for each.
 */
export function pruneOtherBuilds(dir: string, keep: string, nodeVersion = process.version, arch = process.arch): void {
  const suffix = `-${nodeVersion}-${arch}.v8cache`;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    process.emitWarning(`super-pi: cannot list ${dir}: ${String(err)}`);
    return;
  }
  for (const name of names) if (name !== keep && name.startsWith('super-pi-') && name.endsWith(suffix)) removeQuietly(path.join(dir, name));
}

function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch (err) {
    // The temporary file was never created (the write failed first): nothing to remove.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') process.emitWarning(`super-pi: cannot remove ${file}: ${String(err)}`);
  }
}

/**
 * The bundle's text. The build keeps it ASCII, which reads as Latin-1 without UTF-8 decoding (~1-2 ms
 * less for 1.3 MB); anything else (a bundle built otherwise) is decoded as UTF-8.
 */
function readSource(file: string): string {
  const bytes = readFileSync(file);
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
}

export interface RunBundleOptions {
  /** The bundle's sha256 (hex) when the build computed it; else computed here from the text. */
  readonly hash?: string;
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * Runs a CommonJS bundle as `require` would (same wrapper, `require`, `module`, `__filename`), compiled
 * from the code cache when there is a usable one; returns its `module.exports` and the cache handle.
 */
export function runBundle(file: string, options: RunBundleOptions = {}): { exports: unknown; cache: CodeCacheHandle } {
  const env = options.env ?? process.env;
  const source = readSource(file);
  const refusal = codeCacheRefusal(env);
  const enabled = codeCacheEnabled(env) && refusal === null;
  const dir = codeCacheDir(env);
  const hash = options.hash ?? bundleHash(source);
  const name = codeCacheFileName(hash);
  const read = enabled ? readCodeCache(dir, name, hash) : { skipped: refusal ?? `${CODE_CACHE_ENV}=off`, ...(refusal === null ? {} : { distrusted: true as const }) };
  // Node ≥ 22.1 caches what it compiles itself (the thread bundles): free, and kept in the same private directory.
  const enableCompileCache = (Module as { enableCompileCache?: (dir: string) => unknown }).enableCompileCache;
  if (enabled && enableCompileCache && untrustedDir(dir) === null) enableCompileCache(path.join(dir, 'node'));
  const script = new vm.Script(Module.wrap(source), {
    filename: file,
    ...('data' in read ? { cachedData: read.data } : {}),
    // The bundle may `import()` a module by URL (an actor behaviour from a file): Node's own loader, as for a required file.
    ...(vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER === undefined ? {} : { importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER }),
  });
  const used = 'data' in read && !script.cachedDataRejected;
  const skipped = used ? null : 'skipped' in read ? read.skipped : 'rejected by V8 (another build, Node or flags)';
  const distrusted = 'distrusted' in read && read.distrusted === true ? read.skipped : null;
  let saved = false;
  const cache: CodeCacheHandle = {
    used,
    skipped,
    distrusted,
    save: () => {
      if (!enabled) return { ok: false, reason: refusal ?? `${CODE_CACHE_ENV}=off` };
      if (used) return { ok: false, reason: 'this start used the cache' };
      if (saved) return { ok: false, reason: 'already written' };
      saved = true;
      // The header names the source actually compiled (hashed here, after the first reply, off the start's path).
      const written = writeCodeCache(dir, name, codeCacheFile(bundleHash(source), script.createCachedData()));
      if (written.ok) pruneOtherBuilds(dir, name);
      return written;
    },
  };
  const wrapper = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: Module, filename: string, dirname: string) => void;
  const mod = new Module(file);
  mod.filename = file;
  wrapper.call(mod.exports, mod.exports, createRequire(file), mod, file, path.dirname(file));
  mod.loaded = true;
  return { exports: mod.exports, cache };
}
