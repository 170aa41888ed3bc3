// The cgroup of one `bash` command: made with its bounds (pids.max, the memory limit) before the command's
// first process starts, entered by that process before it execs the sandbox (ENTER_CGROUP_SCRIPT: there is
// no moment the command runs outside it), read once the command has ended (did it reach a bound?) and
// removed. The sandbox unshares its cgroup namespace (bwrap --unshare-cgroup-try): it sees its cgroup as
// the root, and cannot leave it or raise its bounds (the files belong to the server's user outside).

import { mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { errnoCode } from '../fs-errors.ts';
import type { BoundsMechanism, CommandLimits } from './bounds.ts';

/** The name of every cgroup super-pi makes: then the server's pid, then a sequence number (or `server`, its own leaf under cgroup v2). */
export const COMMAND_CGROUP_PREFIX = 'super-pi-bash-';

/** How often, and how far apart, removing a command's cgroup is tried while its last processes are still being reaped (the call waits this long at most). */
const REMOVE_ATTEMPTS = 40;
const REMOVE_RETRY_MS = 25;
/** Then in the background, on a loaded machine: once a second for a minute. */
const LINGER_ATTEMPTS = 60;
const LINGER_RETRY_MS = 1000;
/** At the server's stop: 5 s in all. */
const STOP_ATTEMPTS = 200;

export interface CommandCgroup {
  readonly version: 1 | 2;
  /** v2: the one cgroup; v1: the command's cgroup in the pids hierarchy, then in the memory one. */
  readonly dirs: readonly string[];
  readonly limits: CommandLimits;
}

/** What the kernel did to a command at its bounds: forks it refused, processes its OOM killer ended. */
export interface BoundsReached {
  readonly refusedForks: number;
  readonly oomKills: number;
}

/**
 * The first program of a bounded launch, run by the system's `sh` with the cgroup.procs files as arguments
 * up to `--`, then the launch: it writes its own pid into each (so every process it and the sandbox start is
 * in the command's cgroup) and execs the launch, or exits 125 without running it. Only builtins.
 */
export const ENTER_CGROUP_SCRIPT = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"';

let sequence = 0;

/** The cgroups made and not yet removed (closeOpenCgroups removes them at the server's stop). */
const open = new Set<CommandCgroup>();

/** Makes a command's cgroup under `mechanism` with `limits` written in; throws (and leaves nothing) if the kernel refuses. */
export function openCommandCgroup(mechanism: Extract<BoundsMechanism, { kind: 'cgroup1' | 'cgroup2' }>, limits: CommandLimits): CommandCgroup {
  sequence += 1;
  const name = `${COMMAND_CGROUP_PREFIX}${process.pid}-${sequence}`;
  const cgroup: CommandCgroup = mechanism.kind === 'cgroup2'
    ? { version: 2, dirs: [path.join(mechanism.parent, name)], limits }
    : { version: 1, dirs: [path.join(mechanism.pids, name), path.join(mechanism.memory, name)], limits };
  const made: string[] = [];
  try {
    for (const dir of cgroup.dirs) {
      mkdirSync(dir);
      made.push(dir);
    }
    const [first, second] = cgroup.dirs as [string, string | undefined];
    const memoryDir = second ?? first;
    writeFileSync(path.join(first, 'pids.max'), String(limits.maxProcesses));
    if (cgroup.version === 2) {
      writeFileSync(path.join(memoryDir, 'memory.max'), String(limits.maxMemoryBytes));
      // Swap counts as memory: a command pushed out to swap would still be paid for by the host.
      writeOptional(path.join(memoryDir, 'memory.swap.max'), '0');
    } else {
      writeFileSync(path.join(memoryDir, 'memory.limit_in_bytes'), String(limits.maxMemoryBytes));
      writeOptional(path.join(memoryDir, 'memory.memsw.limit_in_bytes'), String(limits.maxMemoryBytes));
    }
  } catch (err) {
    for (const dir of made.reverse()) rmdirSync(dir);
    throw err;
  }
  open.add(cgroup);
  return cgroup;
}

/** A bound file the kernel may not have (no swap accounting): its absence is not an error. */
function writeOptional(file: string, value: string): void {
  try {
    writeFileSync(file, value);
  } catch (err) {
    if (errnoCode(err) !== 'ENOENT') throw err;
  }
}

/** The argv that runs `launch` inside `cgroup`: ENTER_CGROUP_SCRIPT by `sh`, a program path the server chose. */
export function enterCgroupArgv(sh: string, cgroup: CommandCgroup, launch: readonly string[]): string[] {
  return [sh, '-c', ENTER_CGROUP_SCRIPT, 'sh', ...cgroup.dirs.map((d) => path.join(d, 'cgroup.procs')), '--', ...launch];
}

/** `key value` lines (pids.events, memory.events, memory.oom_control): the value of `key`, 0 when absent or unreadable. */
function counter(file: string, key: string): number {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return 0;
    throw err;
  }
  for (const line of text.split('\n')) {
    const [k, v] = line.trim().split(/\s+/);
    if (k === key) return Number(v) || 0;
  }
  return 0;
}

/** Whether the command reached its bounds: forks refused at pids.max, processes the cgroup's OOM killer ended. */
export function boundsReached(cgroup: CommandCgroup): BoundsReached {
  const [first, second] = cgroup.dirs as [string, string | undefined];
  return {
    refusedForks: counter(path.join(first, 'pids.events'), 'max'),
    oomKills: cgroup.version === 2 ? counter(path.join(first, 'memory.events'), 'oom_kill') : counter(path.join(second ?? first, 'memory.oom_control'), 'oom_kill'),
  };
}

/** The pids in a cgroup (as this process's PID namespace numbers them); none once it is gone. */
function members(dir: string): number[] {
  try {
    return readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter((l) => l !== '').map(Number);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return [];
    throw err;
  }
}

/** SIGKILLs everything in the cgroup: at once with cgroup.kill (v2, Linux 5.14), else each member. */
export function killCgroupMembers(cgroup: Pick<CommandCgroup, 'version' | 'dirs'>): void {
  for (const dir of cgroup.dirs) {
    if (cgroup.version === 2) {
      try {
        writeFileSync(path.join(dir, 'cgroup.kill'), '1');
        continue;
      } catch (err) {
        if (errnoCode(err) !== 'ENOENT') throw err;
      }
    }
    for (const pid of members(dir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch (err) {
        if (errnoCode(err) !== 'ESRCH') throw err;
      }
    }
  }
}

/** rmdir that treats "already gone" as done; false while processes remain (EBUSY). */
function removeDir(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT') return true;
    if (code === 'EBUSY') return false;
    throw err;
  }
}

/**
 * Kills what is left of the command in its cgroup and removes the cgroup, retrying while the kernel reaps
 * the last processes. Resolves false if it is still busy after that (the next start's sweep takes it).
 */
export async function closeCommandCgroup(cgroup: CommandCgroup, attempts = REMOVE_ATTEMPTS, retryMs = REMOVE_RETRY_MS, hold = true): Promise<boolean> {
  let left = [...cgroup.dirs];
  for (let attempt = 0; attempt < attempts; attempt++) {
    killCgroupMembers({ version: cgroup.version, dirs: left });
    left = left.filter((dir) => !removeDir(dir));
    if (left.length === 0) {
      open.delete(cgroup);
      return true;
    }
    await delay(retryMs, undefined, { ref: hold });
  }
  return false;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errnoCode(err) !== 'ESRCH';
  }
}

/**
 * Removes the cgroups a server that is no longer running left in `parents` (it crashed before it could):
 * only names with COMMAND_CGROUP_PREFIX and the pid of a process that does not exist; another running
 * server's, and everything else, are left alone. Returns the ones removed.
 */
export function sweepStaleCommandCgroups(parents: readonly string[], version: 1 | 2, alive: (pid: number) => boolean = pidAlive): string[] {
  const removed: string[] = [];
  for (const parent of parents) {
    let names: string[];
    try {
      names = readdirSync(parent, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    } catch (err) {
      if (errnoCode(err) === 'ENOENT' || errnoCode(err) === 'EACCES') continue;
      throw err;
    }
    for (const name of names) {
      const m = new RegExp(`^${COMMAND_CGROUP_PREFIX}(\\d+)-(\\d+|server)$`).exec(name);
      if (m === null) continue;
      const pid = Number(m[1]);
      if (pid === process.pid || alive(pid)) continue;
      const dir = path.join(parent, name);
      // A command's sandbox died with its server (bwrap --die-with-parent); whatever is left of it goes now.
      // A server's own leaf (v2) may hold the processes that started it: those are not ours to kill.
      if (m[2] !== 'server') killCgroupMembers({ version, dirs: [dir] });
      if (removeDir(dir)) removed.push(dir);
    }
  }
  return removed;
}

/** Once the command has ended: what it met of its bounds, read before its cgroup is removed; null without a cgroup. */
export async function settleCommandCgroup(cgroup: CommandCgroup | undefined): Promise<BoundsReached | null> {
  if (cgroup === undefined) return null;
  try {
    return boundsReached(cgroup);
  } finally {
    // Still reaping after that (a loaded machine): removed in the background; the call does not wait for it.
    if (!(await closeCommandCgroup(cgroup))) void closeCommandCgroup(cgroup, LINGER_ATTEMPTS, LINGER_RETRY_MS, false).catch(() => undefined);
  }
}

/**
 * At the server's stop, once calls have ended: kills and removes every cgroup still open (a spare's, a call
 * that did not end), so none is left for the next start's sweep.
 */
export async function closeOpenCgroups(): Promise<void> {
  await Promise.all([...open].map((cgroup) => closeCommandCgroup(cgroup, STOP_ATTEMPTS)));
}

