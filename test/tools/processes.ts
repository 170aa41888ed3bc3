// What the process-tree tests share: a unique marker to put in a command line (`sleep 300.<random>`), and
// a scan of /proc for live processes that carry it. PIDs a command prints cannot be used: inside a PID
// namespace they are the namespace's numbers, not this process's. Not a *.test.ts file.

import { randomInt } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';

/** How long a test waits for processes to disappear after the call or server that owned them ended. */
export const GONE_WITHIN_MS = 5000;

/** A `sleep` duration no other process on the machine has in its command line: 300.<random digits>. */
export function uniqueSleep(): string {
  return `300.${randomInt(1e9, 1e10)}`;
}

/** PIDs of live (not zombie) processes whose command line has `arg` as one of its arguments. */
export function processesWith(arg: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let cmdline: string;
    let stat: string;
    try {
      cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch (err) {
      // The process ended between the listing and the read.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ESRCH') continue;
      throw err;
    }
    const state = stat.slice(stat.lastIndexOf(')') + 2).charAt(0);
    if (state === 'Z' || state === 'X') continue;
    if (cmdline.split('\0').includes(arg)) found.push(Number(name));
  }
  return found;
}

/** Polls until no process carries `arg` (true) or `withinMs` passes (false). */
export async function allGone(arg: string, withinMs = GONE_WITHIN_MS): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (processesWith(arg).length === 0) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return processesWith(arg).length === 0;
}

/** Polls until at least `count` processes carry `arg`; throws after `withinMs`. */
export async function atLeast(arg: string, count: number, withinMs = 10_000): Promise<number[]> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const pids = processesWith(arg);
    if (pids.length >= count) return pids;
    if (Date.now() > deadline) throw new Error(`expected ${count} processes with "${arg}", found ${pids.length}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Cleanup after a failed test: SIGKILLs, by PID, whatever still carries `arg` (only this test's markers). */
export function killLeftovers(arg: string): void {
  for (const pid of processesWith(arg)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
  }
}

/**
 * A command that starts `sleep <arg>` every way a process can leave its parent's process group or be
 * orphaned — setsid, a double fork, nohup, disown — and waits until the four are running (so a test that
 * finds none afterwards knows they existed), then prints "started". With `foreground`, it goes on with a
 * fifth `sleep <arg>` in the foreground, so the command itself keeps running; else it ends there.
 */
export function escapingCommand(arg: string, foreground: boolean): string {
  return [
    `setsid sleep ${arg} & (sleep ${arg} &) ; nohup sleep ${arg} >/dev/null 2>&1 & sleep ${arg} & disown`,
    `for i in $(seq 100); do [ "$(pgrep -c -f '^sleep ${arg}$')" -ge 4 ] && break; sleep 0.05; done`,
    `[ "$(pgrep -c -f '^sleep ${arg}$')" -ge 4 ] || { echo 'not started'; exit 1; }`,
    'echo started',
    ...(foreground ? [`sleep ${arg}`] : []),
  ].join('\n');
}
