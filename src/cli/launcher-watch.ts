// Notices that the process a host launched has gone when that process was a wrapper, not this server: a
// host runs `npx tsx examples/stdio.ts`, so between it and the server sit npm, a shell and tsx. A SIGTERM
// to npx reaches the shell, which dies without passing it on, and the server — whose stdin the host still
// holds open — would run on. The wrappers are the ancestors that share this process's stdin (the host does
// not: it holds the other end of the pipe); when one of them ends, the server shuts down as on SIGTERM.
// An HTTP server (`npm start`: npm, a shell, tsx) is watched the same way, its stdin being a terminal or
// /dev/null as often as a pipe: there the wrappers are the ancestors sharing its stdin *and* its process
// group (the job), so the user's own shell, in another group, is never taken for one.
// Linux only (/proc); elsewhere nothing is watched.

import { readFile, readlink } from 'node:fs/promises';

/** How often the wrappers are checked. */
export const LAUNCHER_POLL_MS = 500;
/** Ancestors looked at, at most: a launch chain is a handful of processes, never a long one. */
export const MAX_LAUNCHER_DEPTH = 8;

export interface LauncherProcess {
  readonly pid: number;
  /** Start time in clock ticks since boot (/proc/PID/stat field 22): tells a reused PID apart. */
  readonly startTime: string;
}

export interface LauncherWatch {
  /** The wrappers watched, nearest first (empty: the host started this process itself). */
  readonly launchers: readonly LauncherProcess[];
  stop(): void;
}

/**
 * Calls `onGone` once when any wrapper between the host and this process ends (or its PID is reused).
 * Watches nothing when stdin is not a pipe or socket (a terminal: the shell there is the user's, not a
 * wrapper) or when /proc cannot be read.
 */
/**
 * Which ancestors are wrappers: `stdin`, those sharing this process's stdin pipe or socket (a stdio
 * server); `job`, those sharing its stdin whatever it is and its process group (an HTTP server).
 */
export type LauncherScope = 'stdin' | 'job';

export async function watchLauncher(onGone: (launcher: LauncherProcess) => void, pollMs: number = LAUNCHER_POLL_MS, scope: LauncherScope = 'stdin'): Promise<LauncherWatch> {
  const launchers = await findLaunchers(scope);
  if (launchers.length === 0) return { launchers, stop: () => undefined };
  let stopped = false;
  let checking = false;
  const timer = setInterval(() => {
    if (checking || stopped) return;
    checking = true;
    void firstGone(launchers).then((gone) => {
      checking = false;
      if (gone === null || stopped) return;
      stopped = true;
      clearInterval(timer);
      onGone(gone);
    });
  }, pollMs);
  // The watch alone must never keep the process alive.
  timer.unref();
  return {
    launchers,
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}

/** The ancestors, nearest first, whose stdin is this process's stdin (same pipe or socket). */
export async function findLaunchers(scope: LauncherScope = 'stdin'): Promise<LauncherProcess[]> {
  if (process.platform !== 'linux') return [];
  const stdin = await fdTarget('self', 0);
  if (stdin === null) return [];
  if (scope === 'stdin' && !/^(pipe|socket):\[\d+\]$/.test(stdin)) return [];
  const group = scope === 'job' ? (await readStat(process.pid))?.pgrp : undefined;
  if (scope === 'job' && group === undefined) return [];
  const found: LauncherProcess[] = [];
  let pid = process.ppid;
  while (pid > 1 && found.length < MAX_LAUNCHER_DEPTH) {
    if ((await fdTarget(String(pid), 0)) !== stdin) break;
    const stat = await readStat(pid);
    if (stat === null) break;
    if (group !== undefined && stat.pgrp !== group) break;
    found.push({ pid, startTime: stat.startTime });
    pid = stat.ppid;
  }
  return found;
}

async function firstGone(launchers: readonly LauncherProcess[]): Promise<LauncherProcess | null> {
  for (const launcher of launchers) {
    const stat = await readStat(launcher.pid);
    if (stat === null || stat.startTime !== launcher.startTime || stat.state === 'Z' || stat.state === 'X') return launcher;
  }
  return null;
}

/** What /proc/PID/fd/N points to, or null when it cannot be read (gone, not ours). */
async function fdTarget(pid: string, fd: number): Promise<string | null> {
  try {
    return await readlink(`/proc/${pid}/fd/${fd}`);
  } catch (err) {
    if (isUnreadable(err)) return null;
    throw err;
  }
}

async function readStat(pid: number): Promise<{ state: string; ppid: number; pgrp: number; startTime: string } | null> {
  let text: string;
  try {
    text = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch (err) {
    if (isUnreadable(err)) return null;
    throw err;
  }
  // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0] as string, ppid: Number(fields[1]), pgrp: Number(fields[2]), startTime: fields[19] as string };
}

/** ENOENT/ESRCH: the process is gone; EACCES/EPERM: it is another user's; either way, not a wrapper to watch. */
function isUnreadable(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ESRCH' || code === 'EACCES' || code === 'EPERM';
}
