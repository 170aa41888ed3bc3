// The command's V8 code cache: the bundle (one CommonJS file) is compiled with `vm.Script` from the bytes
// V8 saved after an earlier start, instead of parsed and compiled again (~15 ms of the ~60 ms super-pi
// adds to Node's own start). Node 20 has no public code-cache API for ES modules, which is why the
// command is bundled as CommonJS. The cache is an optimisation only: absent, unreadable, rejected by V8,
// or in a directory others can write, it is not used and the bundle is compiled as usual.
//
// Loaded before the bundle, so it imports Node built-ins only (nothing from the rest of src/).

import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';

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
/**
 * Bits that, set on the cache directory or file, mean another user could have written it: V8 does not
 * defend against crafted cache data, so such a cache is never read (and never written).
 */
export const FOREIGN_WRITE_BITS = 0o022;
/**
 * How long after the first reply the cache is written: past a host's first exchanges (initialize,
 * tools/list, a first call), so creating it (a few ms of CPU) delays none of them, and it holds the code
 * those exchanges compiled. Short enough that a host probing the server for a second still leaves one.
 */
export const CODE_CACHE_WRITE_DELAY_MS = 200;

/** `$SUPERPI_HOME/cache` (relative: against the current directory), else `~/.super-pi/cache`. */
export function codeCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env[HOME_ENV];
  const home = fromEnv !== undefined && fromEnv !== '' ? path.resolve(fromEnv) : path.join(os.homedir(), DEFAULT_HOME_DIR);
  return path.join(home, CODE_CACHE_DIR_NAME);
}

export function codeCacheEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[CODE_CACHE_ENV] !== 'off';
}

/** sha256 of the bundle's text, shortened: names the cache, so a new build never meets an old cache. */
export function bundleHash(source: string): string {
  return createHash('sha256').update(source).digest('hex').slice(0, 16);
}

/** One file per bundle, Node version and architecture: V8's code is valid for exactly one of each. */
export function codeCacheFileName(hash: string, nodeVersion = process.version, arch = process.arch): string {
  return `super-pi-${hash}-${nodeVersion}-${arch}.v8cache`;
}

/** Whether the cache was written, or why not. */
export type CacheOutcome = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** What `runBundle` hands the bundle, and what the command calls once its first reply is out. */
export interface CodeCacheHandle {
  /** The cache read and accepted by V8. */
  readonly used: boolean;
  /** Why no cache was used (absent, unreadable, foreign-writable, rejected, turned off); null when used. */
  readonly skipped: string | null;
  /** Writes the cache if this start did not use one (atomically, once); never throws. */
  save(): CacheOutcome;
}

/** The calling user's id, or null where there is none (Windows): ownership is then not checked. */
function currentUid(): number | null {
  return typeof process.getuid === 'function' ? process.getuid() : null;
}

/** Why a file or directory with this owner and mode must not be trusted, or null. */
export function foreignWritable(stat: { uid: number; mode: number }, uid: number | null = currentUid()): string | null {
  if (uid !== null && stat.uid !== uid) return `owned by uid ${stat.uid}, not ${uid}`;
  if ((stat.mode & FOREIGN_WRITE_BITS) !== 0) return `writable by others (mode ${(stat.mode & 0o777).toString(8)})`;
  return null;
}

/**
 * The cache bytes, or why there are none. Opened once and checked on that descriptor: the directory
 * and the file must be the user's and writable by no one else.
 */
/**
 * The largest cache file read: a real one is about 0.5 MB (the bundle's compiled functions); anything
 * much larger is not one of ours, and is skipped rather than read into memory at every start.
 */
export const MAX_CODE_CACHE_BYTES = 32 * 1024 * 1024;

export function readCodeCache(dir: string, file: string): { data: Buffer } | { skipped: string } {
  const untrusted = untrustedDir(dir);
  if (untrusted) return { skipped: untrusted };
  let fd: number;
  try {
    // Non-blocking: opening a FIFO put where the cache should be would otherwise wait for a writer.
    fd = openSync(path.join(dir, file), constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    return { skipped: `no cache file (${(err as NodeJS.ErrnoException).code ?? String(err)})` };
  }
  try {
    const stat = fstatSync(fd);
    const unsafe = foreignWritable(stat);
    if (unsafe) return { skipped: `the cache file is ${unsafe}` };
    if (!stat.isFile()) return { skipped: 'the cache is not a regular file' };
    if (stat.size > MAX_CODE_CACHE_BYTES) return { skipped: `the cache file is larger than ${MAX_CODE_CACHE_BYTES} bytes` };
    return { data: readFileSync(fd) };
  } catch (err) {
    return { skipped: `the cache file cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})` };
  } finally {
    closeSync(fd);
  }
}

/** Why the cache directory cannot be used (missing, unreadable, or writable by another user), or null. */
export function untrustedDir(dir: string): string | null {
  let fd: number;
  try {
    fd = openSync(dir, 'r');
  } catch (err) {
    return `no cache directory (${(err as NodeJS.ErrnoException).code ?? String(err)})`;
  }
  try {
    const unsafe = foreignWritable(fstatSync(fd));
    return unsafe ? `the cache directory ${dir} is ${unsafe}` : null;
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes `data` as `dir/file`: the directory made (owner only) if missing and refused if others can
 * write it; a temporary file in it, renamed over the old one, so a start never reads half a cache.
 */
export function writeCodeCache(dir: string, file: string, data: Buffer): CacheOutcome {
  let tmp: string | null = null;
  try {
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
  /** The bundle's sha256 prefix when the build computed it; else computed here from the text. */
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
  const enabled = codeCacheEnabled(env);
  const dir = codeCacheDir(env);
  const name = codeCacheFileName(options.hash ?? bundleHash(source));
  const read = enabled ? readCodeCache(dir, name) : { skipped: `${CODE_CACHE_ENV}=off` };
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
  let saved = false;
  const cache: CodeCacheHandle = {
    used,
    skipped,
    save: () => {
      if (!enabled) return { ok: false, reason: `${CODE_CACHE_ENV}=off` };
      if (used) return { ok: false, reason: 'this start used the cache' };
      if (saved) return { ok: false, reason: 'already written' };
      saved = true;
      const written = writeCodeCache(dir, name, script.createCachedData());
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
