// Sandboxes built ahead of their command: building one (namespaces, mounts) is most of what a sandboxed
// `bash` costs, so after each command a spare is started for the next one with the same launch, and it
// waits, built, for its command on fd 4 (STOPPER_SCRIPT). Each spare serves one command: a command
// still gets a PID namespace and a /tmp of its own, shared with nothing.

import { type ChildProcess, spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import { MAX_SPARE_SANDBOXES, SPARE_SANDBOX_MAX_AGE_MS } from '../../limits.ts';
import type { BoundsMechanism, CommandLimits } from './bounds.ts';
import { closeCommandCgroup, type CommandCgroup, enterCgroupArgv, openCommandCgroup } from './command-cgroup.ts';
import { stdioWithoutInherited } from './inherited-fds.ts';

/** What a command is spawned as: the program, its arguments, its environment and working directory. */
export interface Launch {
  readonly file: string;
  readonly args: readonly string[];
  readonly env: Record<string, string>;
  readonly cwd: string;
  /** A cgroup of its own for each process launched (bounds.ts); the same for every launch of a server, so not part of a spare's key. */
  readonly cgroup?: LaunchCgroup;
}

/** What makes each launched process's cgroup: the mechanism in force, the bounds, and the system `sh` that enters it. */
export interface LaunchCgroup {
  readonly mechanism: Extract<BoundsMechanism, { kind: 'cgroup1' | 'cgroup2' }>;
  readonly limits: CommandLimits;
  readonly sh: string;
}

interface Spare {
  readonly child: ChildProcess;
  readonly bornAt: number;
  /** Ends the spare once it is too old to be used, so none waits for ever. */
  readonly expiry: NodeJS.Timeout;
}

/** At most one spare per launch, MAX_SPARE_SANDBOXES in all (the oldest goes first). */
const spares = new Map<string, Spare>();

function keyOf(launch: Launch): string {
  return JSON.stringify([launch.file, launch.args, launch.env, launch.cwd]);
}

/** The cgroup of each launched process that has one, until it is closed. */
const cgroups = new WeakMap<ChildProcess, CommandCgroup>();

/**
 * fd 3 (stop) and fd 4 (the command) are pipes from the server; stdin is /dev/null, and so is every
 * descriptor the server inherited without close-on-exec (see inherited-fds.ts): a command gets no other.
 */
function spawnLaunch(launch: Launch): ChildProcess {
  const stdio = stdioWithoutInherited(['ignore', 'pipe', 'pipe', 'pipe', 'pipe'] as const);
  if (launch.cgroup === undefined) return spawn(launch.file, [...launch.args], { cwd: launch.cwd, detached: true, env: launch.env, stdio });
  // Made before the process starts, entered by it before it execs the launch: nothing runs outside it.
  const cgroup = openCommandCgroup(launch.cgroup.mechanism, launch.cgroup.limits);
  const [file, ...args] = enterCgroupArgv(launch.cgroup.sh, cgroup, [launch.file, ...launch.args]);
  let child: ChildProcess;
  try {
    child = spawn(file as string, args, { cwd: launch.cwd, detached: true, env: launch.env, stdio });
  } catch (err) {
    void closeCommandCgroup(cgroup).catch(() => undefined);
    throw err;
  }
  cgroups.set(child, cgroup);
  return child;
}

/** The cgroup `child` was launched in (bash.ts reads its counters, then closes it: closeCommandCgroup). */
export function launchedCgroup(child: ChildProcess): CommandCgroup | undefined {
  return cgroups.get(child);
}

/** Removes an unused spare's cgroup once its processes are gone (in the background: nobody waits on a spare). */
function closeSpareCgroup(child: ChildProcess): void {
  const cgroup = cgroups.get(child);
  if (cgroup === undefined) return;
  cgroups.delete(child);
  void closeCommandCgroup(cgroup).catch(() => undefined);
}

/** The child's handles, held (the loop waits for them) or not (a waiting spare must not keep the server alive). */
function hold(child: ChildProcess, held: boolean): void {
  for (const handle of [child, ...child.stdio.slice(1)] as (ChildProcess | Socket | null)[]) {
    if (handle === null) continue;
    if (held) handle.ref();
    else handle.unref();
  }
}

function discard(key: string, spare: Spare): void {
  clearTimeout(spare.expiry);
  if (spares.get(key) === spare) spares.delete(key);
  // SIGKILL to its group: a spare has run nothing, and in its namespace nothing else lives.
  if (spare.child.pid !== undefined && spare.child.exitCode === null && spare.child.signalCode === null) {
    try {
      process.kill(-spare.child.pid, 'SIGKILL');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
  }
  closeSpareCgroup(spare.child);
}

/**
 * A child running `launch`, waiting for its command on fd 4: a spare built for this very launch (young
 * enough: the paths it hides were looked up when it was built) if there is one, else a new one.
 */
export function launchCommand(launch: Launch, now: number = Date.now()): ChildProcess {
  const key = keyOf(launch);
  const spare = spares.get(key);
  let child: ChildProcess | null = null;
  if (spare !== undefined) {
    spares.delete(key);
    clearTimeout(spare.expiry);
    if (spare.child.exitCode === null && spare.child.signalCode === null && now - spare.bornAt <= SPARE_SANDBOX_MAX_AGE_MS) {
      child = spare.child;
      hold(child, true);
    } else {
      discard(key, spare);
    }
  }
  return child ?? spawnLaunch(launch);
}

/**
 * Starts a spare for the next command with `launch`, unless one waits already. Called once a command has
 * ended: the spare is built while the caller reads the result, not on the cores the command runs on.
 */
export function keepSpare(launch: Launch, now: number = Date.now()): void {
  const key = keyOf(launch);
  if (spares.has(key)) return;
  while (spares.size >= MAX_SPARE_SANDBOXES) {
    const [oldestKey, oldest] = spares.entries().next().value as [string, Spare];
    discard(oldestKey, oldest);
  }
  let child: ChildProcess;
  try {
    child = spawnLaunch(launch);
  } catch {
    // No spare (its cgroup could not be made, say): the next command builds its own and meets the error itself.
    return;
  }
  const spare: Spare = { child, bornAt: now, expiry: setTimeout(() => discard(key, spare), SPARE_SANDBOX_MAX_AGE_MS) };
  spare.expiry.unref();
  hold(child, false);
  // A spare that fails or dies before it is used is dropped; the next command builds its own sandbox.
  child.once('error', () => discard(key, spare));
  child.once('exit', () => {
    if (spares.get(key) !== spare) return;
    spares.delete(key);
    clearTimeout(spare.expiry);
    closeSpareCgroup(child);
  });
  for (const stream of child.stdio.slice(1)) stream?.on('error', () => discard(key, spare));
  spares.set(key, spare);
}

/** The PID of the spare waiting for `launch`, if one is (tests). */
export function sparePid(launch: Launch): number | undefined {
  return spares.get(keyOf(launch))?.child.pid;
}

/** How many spares wait (tests). */
export function spareCount(): number {
  return spares.size;
}

/** Ends every spare (tests; a server's spares die with it anyway: bwrap --die-with-parent). */
export function discardSpares(): void {
  for (const [key, spare] of [...spares]) discard(key, spare);
}
