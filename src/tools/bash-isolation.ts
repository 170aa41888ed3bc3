// Where a `bash` command runs so that every process it starts can be found and killed: on Linux, a PID
// namespace of its own (when the namespace's first process dies the kernel kills everything in it, escaped
// `setsid`/`nohup`/double-forked children included); elsewhere, or where namespaces are refused, the
// command's process group, which a process leaves by calling setsid. Chosen once per server by a probe.

import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import path from 'node:path';

export type BashIsolation =
  | {
    readonly kind: 'pid-namespace';
    /** The programs and flags that run before the shell: `[setpriv --pdeathsig KILL] unshare ...`. */
    readonly launcher: readonly string[];
    /** Not root: a user namespace maps the caller to root inside, which PID namespaces need. */
    readonly userNamespace: boolean;
    /** `setpriv` was found: the namespace is killed with the server even when the server is SIGKILLed. */
    readonly diesWithServer: boolean;
  }
  | { readonly kind: 'process-group'; readonly reason: string };

/** How long the start-up probe of `unshare` may take before namespaces are taken as unavailable. */
export const ISOLATION_PROBE_TIMEOUT_MS = 5000;

/**
 * Where `unshare` and `setpriv` (util-linux) are looked for. Fixed system directories, not PATH: a PATH
 * entry that the workspace or a caller can write to must not choose the program that confines commands.
 */
export const SYSTEM_BIN_DIRS: readonly string[] = ['/usr/bin', '/bin', '/usr/sbin', '/sbin'];

/**
 * Prefix (any case) of the server's own environment variables — model API keys, bearer tokens, its
 * configuration. A command is never given them: a caller allowed to run `bash` is not thereby allowed to
 * read the operator's credentials.
 */
export const SERVER_ENV_PREFIX = 'SUPERPI_';

/** The namespaces, as root; `--kill-child` kills the namespace when `unshare` itself dies. */
const NAMESPACE_FLAGS = ['--pid', '--fork', '--kill-child', '--mount-proc'];
/** The same for a user without CAP_SYS_ADMIN: a user namespace first, in which it is root. */
const USER_NAMESPACE_FLAGS = ['--user', '--map-root-user', ...NAMESPACE_FLAGS];

let chosen: Promise<BashIsolation> | undefined;
let known: BashIsolation | null = null;

/** The isolation in force: probed on the first call, then the same answer for the life of the process. */
export function bashIsolation(): Promise<BashIsolation> {
  chosen ??= probeBashIsolation().then((isolation) => (known = isolation));
  return chosen;
}

/** The isolation in force if the probe has answered, for reports that cannot wait (health); else null. */
export function knownBashIsolation(): BashIsolation | null {
  return known;
}

/** Replaces the isolation in force (tests use it to run the process-group fallback on Linux too). */
export function useBashIsolation(isolation: BashIsolation): void {
  known = isolation;
  chosen = Promise.resolve(isolation);
}

/**
 * Tries a PID namespace as the current user (root: plainly; otherwise inside a user namespace) by running
 * `sh -c 'echo $$'` in it: the shell must see itself as PID 1. Anything else falls back to the process group.
 */
export async function probeBashIsolation(): Promise<BashIsolation> {
  if (process.platform !== 'linux') return { kind: 'process-group', reason: `PID namespaces are Linux only (this is ${process.platform})` };
  const unshare = await findExecutable('unshare', SYSTEM_BIN_DIRS);
  if (unshare === null) return { kind: 'process-group', reason: `unshare (util-linux) was not found in ${SYSTEM_BIN_DIRS.join(', ')}` };
  const sh = (await findExecutable('sh', SYSTEM_BIN_DIRS)) ?? '/bin/sh';
  const setpriv = await findExecutable('setpriv', SYSTEM_BIN_DIRS);
  const isRoot = process.getuid?.() === 0;
  const attempts = isRoot ? [NAMESPACE_FLAGS, USER_NAMESPACE_FLAGS] : [USER_NAMESPACE_FLAGS];
  const failures: string[] = [];
  for (const flags of attempts) {
    const launcher = [...(setpriv === null ? [] : [setpriv, '--pdeathsig', 'KILL']), unshare, ...flags];
    const failure = await runsAsPidOne(launcher, sh);
    if (failure === null) {
      return { kind: 'pid-namespace', launcher, userNamespace: flags === USER_NAMESPACE_FLAGS, diesWithServer: setpriv !== null };
    }
    failures.push(`unshare ${flags.join(' ')}: ${failure}`);
  }
  return { kind: 'process-group', reason: failures.join('; ') };
}

/** One line for the log and the README's wording: what is in force and what it does not cover. */
export function describeIsolation(isolation: BashIsolation): string {
  if (isolation.kind === 'process-group') {
    return `process group (a process that calls setsid escapes it and is not killed), because ${isolation.reason}`;
  }
  const how = isolation.userNamespace ? 'PID namespace inside a user namespace' : 'PID namespace';
  return isolation.diesWithServer
    ? `${how}: every process a command starts is killed with it, also when the server is killed`
    : `${how}: every process a command starts is killed with it, but not when the server is SIGKILLed (setpriv was not found)`;
}

/** The program and arguments that run `command` with `shell` under `isolation`. */
export function commandLine(isolation: BashIsolation, shell: string, command: string): { file: string; args: string[] } {
  const argv = isolation.kind === 'pid-namespace' ? [...isolation.launcher, shell, '-c', command] : [shell, '-c', command];
  return { file: argv[0] as string, args: argv.slice(1) };
}

/** The server's environment without its own variables (see SERVER_ENV_PREFIX). */
export function commandEnvironment(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || name.toUpperCase().startsWith(SERVER_ENV_PREFIX)) continue;
    out[name] = value;
  }
  return out;
}

/** The first executable `name` in `dirs` (absolute directories only), else null. */
export async function findExecutable(name: string, dirs: readonly string[]): Promise<string | null> {
  for (const dir of dirs) {
    // A relative entry would depend on the server's cwd, not on anything the operator chose.
    if (!path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, name);
    // Any failure (absent, not executable) means "not this one": the next directory is tried.
    if (await access(candidate, constants.X_OK).then(() => true, () => false)) return candidate;
  }
  return null;
}

/** Null when `sh` run through `launcher` sees itself as PID 1; else why not. */
function runsAsPidOne(launcher: readonly string[], sh: string): Promise<string | null> {
  const [file, ...args] = [...launcher, sh, '-c', 'echo $$'];
  return new Promise((resolve) => {
    execFile(file as string, args, { timeout: ISOLATION_PROBE_TIMEOUT_MS, env: { PATH: SYSTEM_BIN_DIRS.join(':') } }, (err, stdout, stderr) => {
      if (err !== null) resolve(`${err.message.split('\n')[0]}${stderr.trim() === '' ? '' : ` (${stderr.trim().split('\n')[0]})`}`);
      else if (stdout.trim() !== '1') resolve(`the shell saw itself as PID ${stdout.trim()}, not 1`);
      else resolve(null);
    });
  });
}
