// Where a `bash` command runs so that every process it starts can be found and killed: on Linux, a
// bubblewrap sandbox (its own PID namespace among others, see sandbox/bwrap-argv.ts), else a PID namespace of
// its own (when the namespace's first process dies the kernel kills everything in it, escaped
// `setsid`/`nohup`/double-forked children included); elsewhere, or where namespaces are refused, the
// command's process group, which a process leaves by calling setsid. Chosen once per server by a probe.

import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import path from 'node:path';
import { bwrapArgv } from './sandbox/bwrap-argv.ts';

export type BashIsolation =
  /** The OS sandbox: `bwrap` found in SYSTEM_BIN_DIRS and able to build one here. */
  | { readonly kind: 'bubblewrap'; readonly bwrap: string; readonly root: boolean }
  | {
    readonly kind: 'pid-namespace';
    /** Why there is no sandbox (bwrap absent or refused). */
    readonly reason: string;
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
 * The probe's sandbox: every namespace and flag a command's sandbox uses, so a kernel or bwrap that refuses
 * one of them is found at start, not at the first command.
 */
function probeSandboxArgv(bwrap: string, root: boolean): string[] {
  return bwrapArgv({ bwrap, root, workspace: '/tmp', mounts: [], network: { kind: 'none' } });
}

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
  if (process.platform !== 'linux') return { kind: 'process-group', reason: `no sandbox: bubblewrap and PID namespaces are Linux only (this is ${process.platform})` };
  const sh = (await findExecutable('sh', SYSTEM_BIN_DIRS)) ?? '/bin/sh';
  const isRoot = process.getuid?.() === 0;
  const bwrap = await findExecutable('bwrap', SYSTEM_BIN_DIRS);
  let noSandbox: string;
  if (bwrap === null) {
    noSandbox = `bwrap (bubblewrap) was not found in ${SYSTEM_BIN_DIRS.join(', ')}`;
  } else {
    // bwrap's own init is PID 1 of the sandbox: the command is PID 2.
    const failure = await runsAsPid(probeSandboxArgv(bwrap, isRoot), sh, '2');
    if (failure === null) return { kind: 'bubblewrap', bwrap, root: isRoot };
    noSandbox = `bwrap could not build a sandbox: ${failure}`;
  }
  const unshare = await findExecutable('unshare', SYSTEM_BIN_DIRS);
  if (unshare === null) return { kind: 'process-group', reason: `${noSandbox}; unshare (util-linux) was not found in ${SYSTEM_BIN_DIRS.join(', ')}` };
  const setpriv = await findExecutable('setpriv', SYSTEM_BIN_DIRS);
  const attempts = isRoot ? [NAMESPACE_FLAGS, USER_NAMESPACE_FLAGS] : [USER_NAMESPACE_FLAGS];
  const failures: string[] = [];
  for (const flags of attempts) {
    const launcher = [...(setpriv === null ? [] : [setpriv, '--pdeathsig', 'KILL']), unshare, ...flags];
    const failure = await runsAsPid(launcher, sh, '1');
    if (failure === null) {
      return { kind: 'pid-namespace', reason: noSandbox, launcher, userNamespace: flags === USER_NAMESPACE_FLAGS, diesWithServer: setpriv !== null };
    }
    failures.push(`unshare ${flags.join(' ')}: ${failure}`);
  }
  return { kind: 'process-group', reason: `${noSandbox}; ${failures.join('; ')}` };
}

/** One line for the log and the README's wording: what is in force and what it does not cover. */
export function describeIsolation(isolation: BashIsolation): string {
  if (isolation.kind === 'bubblewrap') {
    return `bubblewrap sandbox (${isolation.bwrap}): writes only in the workspace and a private /tmp, the server's state and credential stores hidden, the network as --bash-network says; every process a command starts is killed with it, also when the server is killed`;
  }
  if (isolation.kind === 'process-group') {
    return `process group (a process that calls setsid escapes it and is not killed), because ${isolation.reason}`;
  }
  const how = `no sandbox (${isolation.reason}); ${isolation.userNamespace ? 'PID namespace inside a user namespace' : 'PID namespace'}`;
  return isolation.diesWithServer
    ? `${how}: every process a command starts is killed with it, also when the server is killed`
    : `${how}: every process a command starts is killed with it, but not when the server is SIGKILLed (setpriv was not found)`;
}

/** `/health`'s `bashSandbox`: the sandbox in force, or none and why. */
export function sandboxReport(isolation: BashIsolation): { readonly kind: 'bubblewrap' | 'none'; readonly reason?: string } {
  return isolation.kind === 'bubblewrap' ? { kind: 'bubblewrap' } : { kind: 'none', reason: isolation.reason };
}

/**
 * The first process of every command, between the launcher and the command's shell: it starts the egress
 * bridge in the background if one is given, reads the command from fd 4 (so a sandbox can be built before
 * its command is known: see sandbox/spare.ts), starts the shell in the background and waits for it. A line on fd 3 (the
 * server's stop) freezes the shell first, so it starts nothing more (no command after `;`, `||`, a
 * newline, whatever it traps), then sends SIGTERM to every other process of the sandbox (`-1`: all but
 * the namespace's init) or of the process group (`0`); a shell whose SIGTERM is fatal dies of it even
 * frozen. The server's SIGKILL follows after KILL_GRACE_MS. It ignores SIGTERM itself only once the shell
 * is started, so the shell does not inherit the ignoring. Only builtins: no program is looked up.
 * Arguments: $0 the shell, $1 the kill target, then the bridge.
 */
export const STOPPER_SCRIPT = [
  't=$1; shift',
  // The bridge first, and waited for: it prints one line once it listens (or ends without one if it cannot),
  // so the command never races it. In a sandbox built ahead this wait is over before the command arrives.
  'if [ $# -gt 0 ]; then ("$@" </dev/null 2>/dev/null 3<&- 4<&- &) | { read -r _; }; fi',
  'c= l=',
  'while IFS= read -r l <&4; do c="$c$l',
  '"; done',
  'c="$c$l"',
  'exec 4<&-',
  '"$0" -c "$c" 3<&- &',
  'p=$!',
  "trap '' TERM",
  '{ read -r _ <&3 && kill -STOP $p && kill -TERM $t; } </dev/null >/dev/null 2>&1 &',
  'exec 3<&-',
  // Quiet: a shell killed by its SIGTERM is the stop's doing, not output of the command.
  'wait $p 2>/dev/null',
].join('\n');

/** The sandbox of one command: bwrap's arguments up to `--` and the egress bridge to start inside, if any. */
export interface SandboxArgs {
  readonly bwrapArgv: readonly string[];
  readonly bridgeArgv?: readonly string[];
}

/** rlimits `prlimit` sets on the command's first process, inside its namespaces (bounds.ts): soft and hard alike. */
export interface CommandRlimits {
  readonly prlimit: string;
  /** RLIMIT_NPROC, or null where it would count the user's processes outside the command too. */
  readonly nproc: number | null;
  readonly dataBytes: number;
}

/**
 * `prlimit` before the stopper: set inside the sandbox, after bwrap made its user namespace, so RLIMIT_NPROC
 * counts the processes of that namespace only (set on bwrap, the kernel would also check the user's count
 * over the whole host against it). The hard limit too: nothing in the sandbox may raise it again.
 */
function rlimitArgv(rlimits: CommandRlimits | undefined, inUserNamespace: boolean): string[] {
  if (rlimits === undefined) return [];
  const nproc = rlimits.nproc !== null && inUserNamespace ? [`--nproc=${rlimits.nproc}:${rlimits.nproc}`] : [];
  return [rlimits.prlimit, ...nproc, `--data=${rlimits.dataBytes}:${rlimits.dataBytes}`, '--'];
}

/**
 * The program and arguments that run a command with `shell` under `isolation`, through STOPPER_SCRIPT
 * (run by `sh`, the command written to fd 4, the stop line to fd 3); `sandbox` is required under bubblewrap;
 * `rlimits` where no cgroup bounds the command.
 */
export function commandLine(isolation: BashIsolation, sh: string, shell: string, sandbox?: SandboxArgs, rlimits?: CommandRlimits): { file: string; args: string[] } {
  const inNamespace = isolation.kind !== 'process-group';
  const inUserNamespace = isolation.kind === 'bubblewrap' || (isolation.kind === 'pid-namespace' && isolation.userNamespace);
  const stopper = [...rlimitArgv(rlimits, inUserNamespace), sh, '-c', STOPPER_SCRIPT, shell, inNamespace ? '-1' : '0', ...(sandbox?.bridgeArgv ?? [])];
  let argv: string[];
  if (isolation.kind === 'bubblewrap') {
    if (sandbox === undefined) throw new Error('a bubblewrap command line needs its sandbox arguments');
    argv = [...sandbox.bwrapArgv, ...stopper];
  } else if (isolation.kind === 'pid-namespace') {
    argv = [...isolation.launcher, ...stopper];
  } else {
    argv = stopper;
  }
  return { file: argv[0] as string, args: argv.slice(1) };
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

/** Null when `sh` run through `launcher` sees itself as PID `pid`; else why not. */
function runsAsPid(launcher: readonly string[], sh: string, pid: string): Promise<string | null> {
  const [file, ...args] = [...launcher, sh, '-c', 'echo $$'];
  return new Promise((resolve) => {
    execFile(file as string, args, { timeout: ISOLATION_PROBE_TIMEOUT_MS, env: { PATH: SYSTEM_BIN_DIRS.join(':') } }, (err, stdout, stderr) => {
      if (err !== null) resolve(`${err.message.split('\n')[0]}${stderr.trim() === '' ? '' : ` (${stderr.trim().split('\n')[0]})`}`);
      else if (stdout.trim() !== pid) resolve(`the shell saw itself as PID ${stdout.trim()}, not ${pid}`);
      else resolve(null);
    });
  });
}
