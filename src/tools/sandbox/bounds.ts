// How many processes and how much memory one `bash` command may use, and the kernel mechanism that holds it
// there: pure data in (what the probe found on this machine), a choice out, so each kind of machine has a
// test. The probe that gathers the facts is bounds-probe.ts; the per-command cgroup is command-cgroup.ts.

/** The bounds of one command (`--bash-max-processes`, `--bash-max-memory`). */
export interface CommandLimits {
  readonly maxProcesses: number;
  readonly maxMemoryBytes: number;
}

/** One cgroup v1 hierarchy as this process sees it: its own cgroup's directory, and whether it may make children there. */
export interface Cgroup1Facts {
  readonly ownDir: string;
  readonly writable: boolean;
}

/** What the probe found on this machine. */
export interface BoundsFacts {
  /** The server's uid (null where there is none: not POSIX). */
  readonly uid: number | null;
  /** `os.release()`, e.g. `6.8.0-45-generic`. */
  readonly kernel: string;
  /** The cgroup v2 cgroup this process is in, if a cgroup2 is mounted where it can be found. */
  readonly cgroup2: {
    readonly ownDir: string;
    /** Its `cgroup.controllers`: what it may enable for children. */
    readonly controllers: readonly string[];
    /** Its directory, `cgroup.procs` and `cgroup.subtree_control` are writable to this process (delegated). */
    readonly writable: boolean;
  } | null;
  readonly cgroup1: { readonly pids: Cgroup1Facts | null; readonly memory: Cgroup1Facts | null };
  /** `prlimit` (util-linux) from the fixed system directories, which sets a sandbox's rlimits. */
  readonly prlimit: string | null;
}

export type BoundsMechanism =
  /** A cgroup of its own per command under `parent`, a delegated cgroup v2 whose processes moved to a leaf. */
  | { readonly kind: 'cgroup2'; readonly parent: string }
  /** A cgroup of its own per command in each of the v1 `pids` and `memory` hierarchies, under this process's. */
  | { readonly kind: 'cgroup1'; readonly pids: string; readonly memory: string }
  /**
   * rlimits set inside the sandbox by `prlimit`: RLIMIT_DATA (per process) always, RLIMIT_NPROC when `nproc`
   * (the kernel counts it per user namespace and uid, and each sandbox has its own user namespace).
   */
  | { readonly kind: 'rlimit'; readonly prlimit: string; readonly nproc: boolean; readonly reason: string }
  | { readonly kind: 'none'; readonly reason: string };

/** Since Linux 5.14 RLIMIT_NPROC is counted per (user namespace, uid), not per uid over the whole host. */
export const NPROC_PER_NAMESPACE_SINCE: readonly [number, number] = [5, 14];

/** True when `release` (`uname -r`) is at least major.minor. */
export function kernelAtLeast(release: string, [major, minor]: readonly [number, number]): boolean {
  const m = /^(\d+)\.(\d+)/.exec(release);
  if (m === null) return false;
  const [got, gotMinor] = [Number(m[1]), Number(m[2])];
  return got > major || (got === major && gotMinor >= minor);
}

/**
 * The first mechanism this machine allows, in order: a delegated cgroup v2 with `pids` and `memory`, the
 * v1 `pids` and `memory` hierarchies writable (root), RLIMIT_NPROC in the sandbox's user namespace (not
 * root, kernel ≥ 5.14: root is exempt from RLIMIT_NPROC, and an older kernel would count all the user's
 * processes), RLIMIT_DATA alone; else none.
 */
export function chooseBoundsMechanism(facts: BoundsFacts): BoundsMechanism {
  const why: string[] = [];
  const v2 = facts.cgroup2;
  if (v2 === null) why.push('no cgroup v2 of its own');
  else if (!v2.writable) why.push(`cgroup v2 ${v2.ownDir} is not delegated to this user`);
  else if (!v2.controllers.includes('pids') || !v2.controllers.includes('memory')) why.push(`cgroup v2 ${v2.ownDir} has no pids and memory controllers (it has: ${v2.controllers.join(' ') || 'none'})`);
  else return { kind: 'cgroup2', parent: v2.ownDir };
  const { pids, memory } = facts.cgroup1;
  if (pids === null || memory === null) why.push('no cgroup v1 pids and memory hierarchies');
  else if (!pids.writable || !memory.writable) why.push(`cgroup v1 ${!pids.writable ? pids.ownDir : memory.ownDir} is not writable`);
  else return { kind: 'cgroup1', pids: pids.ownDir, memory: memory.ownDir };
  if (facts.prlimit === null) return { kind: 'none', reason: `${why.join('; ')}; prlimit (util-linux) was not found` };
  if (facts.uid === 0) why.push('RLIMIT_NPROC does not bind root');
  else if (!kernelAtLeast(facts.kernel, NPROC_PER_NAMESPACE_SINCE)) why.push(`kernel ${facts.kernel} counts RLIMIT_NPROC over all the user's processes (per user namespace since ${NPROC_PER_NAMESPACE_SINCE.join('.')})`);
  else return { kind: 'rlimit', prlimit: facts.prlimit, nproc: true, reason: why.join('; ') };
  return { kind: 'rlimit', prlimit: facts.prlimit, nproc: false, reason: why.join('; ') };
}

/** The default memory bound: BASH_MAX_MEMORY_BYTES, at most the host's RAM over `divisor`. */
export function defaultMemoryBytes(configured: number, hostBytes: number, divisor: number): number {
  return Math.max(1, Math.min(configured, Math.floor(hostBytes / divisor)));
}

/** The bound as a person reads it: `4 GiB`, `64 MiB`. */
export function formatBytesBound(bytes: number): string {
  return bytes % (1024 * 1024 * 1024) === 0 ? `${bytes / (1024 * 1024 * 1024)} GiB` : `${Math.round(bytes / (1024 * 1024))} MiB`;
}

/** One line for the log: what bounds a command, and what does not. */
export function describeBounds(mechanism: BoundsMechanism, limits: CommandLimits): string {
  const procs = `${limits.maxProcesses} processes`;
  const mem = formatBytesBound(limits.maxMemoryBytes);
  if (mechanism.kind === 'cgroup2') return `a cgroup v2 per command under ${mechanism.parent}: at most ${procs} and ${mem} of memory, all its processes together`;
  if (mechanism.kind === 'cgroup1') return `a cgroup per command in ${mechanism.pids} and ${mechanism.memory} (v1): at most ${procs} and ${mem} of memory, all its processes together`;
  if (mechanism.kind === 'rlimit') {
    const nproc = mechanism.nproc ? `at most ${procs} (RLIMIT_NPROC in its user namespace)` : 'NO process bound';
    return `rlimits per command: ${nproc}, ${mem} of data per process (RLIMIT_DATA; no bound on all its processes together), because ${mechanism.reason}. Full bounds: run the server in a delegated cgroup (systemd-run --user --scope -p Delegate=yes ...)`;
  }
  return `NO process or memory bound per command, because ${mechanism.reason}`;
}

/**
 * The bounds in force as /health shows them: the mechanism, and the limits each command gets under it
 * (null: not bounded). No path (a cgroup's, prlimit's): the operator's log names them.
 */
export interface BoundsReport {
  readonly kind: BoundsMechanism['kind'];
  /** Processes (threads included) of one command at once. */
  readonly maxProcesses: number | null;
  /** Bytes of memory: of all a command's processes together (`command`), or of each (`process`: RLIMIT_DATA). */
  readonly maxMemoryBytes: number | null;
  readonly memoryPer?: 'command' | 'process';
  /** Why the bounds are less than a cgroup's. */
  readonly reason?: string;
}

export function boundsReport(mechanism: BoundsMechanism, limits: CommandLimits): BoundsReport {
  const { kind } = mechanism;
  if (kind === 'cgroup2' || kind === 'cgroup1') return { kind, maxProcesses: limits.maxProcesses, maxMemoryBytes: limits.maxMemoryBytes, memoryPer: 'command' };
  if (kind === 'rlimit') return { kind, maxProcesses: mechanism.nproc ? limits.maxProcesses : null, maxMemoryBytes: limits.maxMemoryBytes, memoryPer: 'process', reason: mechanism.reason };
  return { kind, maxProcesses: null, maxMemoryBytes: null, reason: mechanism.reason };
}

/** What the tool result says when a command met its bounds (the kernel's own counts, from its cgroup). */
export function boundsNotices(reached: { readonly refusedForks: number; readonly oomKills: number }, limits: CommandLimits): string[] {
  const notices: string[] = [];
  if (reached.refusedForks > 0) {
    notices.push(`The command reached BASH_MAX_PROCESSES (${limits.maxProcesses} processes): the kernel refused it ${reached.refusedForks} fork${reached.refusedForks === 1 ? '' : 's'}`);
  }
  if (reached.oomKills > 0) {
    notices.push(`Killed: the command used more than BASH_MAX_MEMORY_BYTES (${formatBytesBound(limits.maxMemoryBytes)}): the kernel ended ${reached.oomKills} of its processes`);
  }
  return notices;
}
