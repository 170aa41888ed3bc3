// Finds, once per server, how this machine can bound a `bash` command (see bounds.ts for the order): reads
// /proc/self/cgroup and /proc/self/mountinfo, checks what this process may write, and for a delegated
// cgroup v2 moves the server's own processes into a leaf so that its cgroup may have bounded children (the
// "no internal processes" rule). Sweeps the cgroups a crashed server left. Holds the limits in force.

import { constants, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { access, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BASH_MAX_MEMORY_BYTES, BASH_MAX_PROCESSES, BASH_MEMORY_HOST_DIVISOR } from '../../limits.ts';
import { type CommandRlimits, findExecutable, SYSTEM_BIN_DIRS } from '../bash-isolation.ts';
import { errnoCode } from '../fs-errors.ts';
import { type BoundsFacts, type BoundsMechanism, boundsReport, type BoundsReport, chooseBoundsMechanism, type Cgroup1Facts, type CommandLimits, defaultMemoryBytes } from './bounds.ts';
import { COMMAND_CGROUP_PREFIX, sweepStaleCommandCgroups } from './command-cgroup.ts';
import type { LaunchCgroup } from './spare.ts';

/** One line of /proc/self/mountinfo that is a cgroup file system: where it is mounted, its root, its options. */
export interface CgroupMount {
  readonly mountPoint: string;
  readonly root: string;
  readonly fsType: 'cgroup' | 'cgroup2';
  /** Super options: for v1 the controllers (`rw,pids`, `rw,cpu,cpuacct`). */
  readonly options: readonly string[];
}

/** mountinfo's octal escapes (`\040` for a space) undone. */
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/** The cgroup mounts in a /proc/self/mountinfo text. */
export function parseCgroupMounts(mountinfo: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (left === undefined || right === undefined) continue;
    const fields = left.split(' ');
    const [fsType, , superOptions] = right.split(' ');
    if ((fsType !== 'cgroup' && fsType !== 'cgroup2') || fields[3] === undefined || fields[4] === undefined) continue;
    mounts.push({ mountPoint: unescape(fields[4]), root: unescape(fields[3]), fsType, options: (superOptions ?? '').split(',') });
  }
  return mounts;
}

/** /proc/self/cgroup: the path of this process's cgroup per hierarchy (`''` for v2's, else the controller list). */
export function parseProcCgroup(text: string): Map<string, string> {
  const byHierarchy = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line);
    if (m !== null) byHierarchy.set(m[1] as string, m[2] as string);
  }
  return byHierarchy;
}

/** The directory of cgroup `cgroupPath` under a mount, or null when the mount does not show it. */
function dirUnder(mount: CgroupMount, cgroupPath: string): string | null {
  const rel = path.posix.relative(mount.root, cgroupPath);
  if (rel.startsWith('..')) return null;
  return path.join(mount.mountPoint, rel);
}

async function writable(...files: string[]): Promise<boolean> {
  for (const file of files) {
    if (!(await access(file, constants.W_OK).then(() => true, () => false))) return false;
  }
  return true;
}

async function cgroup1Facts(mounts: readonly CgroupMount[], own: Map<string, string>, controller: string): Promise<Cgroup1Facts | null> {
  const mount = mounts.find((m) => m.fsType === 'cgroup' && m.options.includes(controller));
  const entry = [...own].find(([hierarchy]) => hierarchy.split(',').includes(controller));
  if (mount === undefined || entry === undefined) return null;
  const ownDir = dirUnder(mount, entry[1]);
  return ownDir === null ? null : { ownDir, writable: await writable(ownDir) };
}

/** What this machine offers, read from /proc and the cgroup file systems. */
export async function gatherBoundsFacts(): Promise<BoundsFacts> {
  const read = (file: string): Promise<string> => readFile(file, 'utf8').catch(() => '');
  const mounts = parseCgroupMounts(await read('/proc/self/mountinfo'));
  const own = parseProcCgroup(await read('/proc/self/cgroup'));
  let cgroup2: BoundsFacts['cgroup2'] = null;
  const v2Mount = mounts.find((m) => m.fsType === 'cgroup2');
  const v2Path = own.get('');
  const v2Dir = v2Mount === undefined || v2Path === undefined ? null : dirUnder(v2Mount, v2Path);
  if (v2Dir !== null) {
    const controllers = (await read(path.join(v2Dir, 'cgroup.controllers'))).trim().split(/\s+/).filter((c) => c !== '');
    cgroup2 = { ownDir: v2Dir, controllers, writable: await writable(v2Dir, path.join(v2Dir, 'cgroup.procs'), path.join(v2Dir, 'cgroup.subtree_control')) };
  }
  return {
    uid: process.getuid?.() ?? null,
    kernel: os.release(),
    cgroup2,
    cgroup1: { pids: await cgroup1Facts(mounts, own, 'pids'), memory: await cgroup1Facts(mounts, own, 'memory') },
    prlimit: await findExecutable('prlimit', SYSTEM_BIN_DIRS),
  };
}

/**
 * Under cgroup v2 a cgroup with processes cannot give its children controllers: the server's cgroup's
 * processes (the server, and whatever started it in the same scope) move to a leaf of their own,
 * `super-pi-bash-<pid>-server`, then `pids` and `memory` are enabled for its children.
 */
export function prepareCgroup2(parent: string): void {
  const leaf = path.join(parent, `${COMMAND_CGROUP_PREFIX}${process.pid}-server`);
  const enabled = readFileSync(path.join(parent, 'cgroup.subtree_control'), 'utf8').split(/\s+/);
  if (enabled.includes('pids') && enabled.includes('memory')) return;
  try {
    mkdirSync(leaf);
  } catch (err) {
    if (errnoCode(err) !== 'EEXIST') throw err;
  }
  for (const pid of readFileSync(path.join(parent, 'cgroup.procs'), 'utf8').split('\n').filter((l) => l !== '')) {
    try {
      writeFileSync(path.join(leaf, 'cgroup.procs'), pid);
    } catch (err) {
      // A process that exited meanwhile has nothing to move.
      if (errnoCode(err) !== 'ESRCH') throw err;
    }
  }
  writeFileSync(path.join(parent, 'cgroup.subtree_control'), '+pids +memory');
}

/** Chooses the mechanism from `facts`, prepares it (a v2 leaf), and falls to the next when that fails. */
export function settleMechanism(facts: BoundsFacts, prepare: (parent: string) => void = prepareCgroup2): BoundsMechanism {
  const first = chooseBoundsMechanism(facts);
  if (first.kind !== 'cgroup2') return first;
  try {
    prepare(first.parent);
    return first;
  } catch (err) {
    const next = chooseBoundsMechanism({ ...facts, cgroup2: null });
    const why = `cgroup v2 ${first.parent} could not be set up (${(err as Error).message})`;
    if (next.kind === 'rlimit' || next.kind === 'none') return { ...next, reason: `${why}; ${next.reason}` };
    return next;
  }
}

let chosen: Promise<BoundsMechanism> | undefined;
/** The mechanism once the probe has answered (what /health shows), else null. */
let known: BoundsMechanism | null = null;

/** The mechanism in force: found on the first call (stale cgroups swept then), the same answer after. */
export function boundsMechanism(): Promise<BoundsMechanism> {
  chosen ??= (async (): Promise<BoundsMechanism> => {
    if (process.platform !== 'linux') return { kind: 'none', reason: `bounds need Linux (this is ${process.platform})` };
    const mechanism = settleMechanism(await gatherBoundsFacts());
    try {
      if (mechanism.kind === 'cgroup2') sweepStaleCommandCgroups([mechanism.parent], 2);
      if (mechanism.kind === 'cgroup1') sweepStaleCommandCgroups([mechanism.pids, mechanism.memory], 1);
    } catch {
      // A stale cgroup that cannot be removed now stays for the next start; commands are bounded all the same.
    }
    known = mechanism;
    return mechanism;
  })();
  return chosen;
}

/** The bounds in force as /health shows them, or `not probed yet` before the probe has answered. */
export function knownBounds(): BoundsReport | { readonly kind: 'not probed yet' } {
  return known === null ? { kind: 'not probed yet' } : boundsReport(known, commandLimits());
}

/** Replaces the mechanism in force (tests; undefined: probe again on the next call). */
export function useBoundsMechanism(mechanism: BoundsMechanism | undefined): void {
  chosen = mechanism === undefined ? undefined : Promise.resolve(mechanism);
  known = mechanism ?? null;
}

let limits: CommandLimits | null = null;

/** The defaults: BASH_MAX_PROCESSES, and BASH_MAX_MEMORY_BYTES capped at the host's RAM over BASH_MEMORY_HOST_DIVISOR. */
export function defaultCommandLimits(): CommandLimits {
  return { maxProcesses: BASH_MAX_PROCESSES, maxMemoryBytes: defaultMemoryBytes(BASH_MAX_MEMORY_BYTES, os.totalmem(), BASH_MEMORY_HOST_DIVISOR) };
}

/** The bounds every command gets; the defaults until the server sets its own (useCommandLimits). */
export function commandLimits(): CommandLimits {
  limits ??= defaultCommandLimits();
  return limits;
}

/** Set once by the server at start from `--bash-max-processes` and `--bash-max-memory` (tests set their own). */
export function useCommandLimits(next: Partial<CommandLimits>): void {
  limits = { ...defaultCommandLimits(), ...next };
}

/** How a launch is bounded under the mechanism in force: a cgroup per process launched, or rlimits set inside the sandbox. */
export async function launchBounds(sh: string): Promise<{ cgroup?: LaunchCgroup; rlimits?: CommandRlimits }> {
  const mechanism = await boundsMechanism();
  const { maxProcesses, maxMemoryBytes } = commandLimits();
  if (mechanism.kind === 'cgroup1' || mechanism.kind === 'cgroup2') return { cgroup: { mechanism, limits: commandLimits(), sh } };
  if (mechanism.kind === 'rlimit') return { rlimits: { prlimit: mechanism.prlimit, nproc: mechanism.nproc ? maxProcesses : null, dataBytes: maxMemoryBytes } };
  return {};
}
