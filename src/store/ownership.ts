// Who runs a `running` conversation, and whether that runner is still there. Today the owner is a
// process; with several nodes a lease (owner node, expiry, fencing epoch) replaces this module, and the
// store keeps asking the same two questions: "who am I" and "is this owner alive".

import { readFileSync } from 'node:fs';
import os from 'node:os';

/** The one place that decides ownership; the store records `self` and asks `isAlive` at open. */
export interface Ownership {
  /** The owner key this process writes on the conversations it runs. */
  readonly self: string;
  /**
   * False only when the owner is known to be gone. An owner this process cannot check (another host, an
   * unknown format) counts as alive: marking a live task interrupted would let two processes run it.
   */
  isAlive(owner: string): boolean;
}

const PREFIX = 'process:v1:';

/** The parts of a process owner key: where it ran, its pid, and when it started (to tell pid reuse). */
export interface ProcessIdentity {
  readonly host: string;
  readonly pid: number;
  /**
   * Linux: `<boot id>/<start time in clock ticks since boot>`, which no later process with the same pid
   * shares. Elsewhere '' (no cheap way to read it): a reused pid then keeps a dead owner's conversation
   * `running` until that other process ends — never the other way round.
   */
  readonly start: string;
}

export function encodeOwner(id: ProcessIdentity): string {
  return `${PREFIX}${JSON.stringify([id.host, id.pid, id.start])}`;
}

/** The identity in an owner key, or null when it is not a process owner key (e.g. '' from before owners were recorded). */
export function decodeOwner(owner: string): ProcessIdentity | null {
  if (!owner.startsWith(PREFIX)) return null;
  let value: unknown;
  try {
    value = JSON.parse(owner.slice(PREFIX.length));
  } catch {
    // A damaged key: nothing can be said about its process.
    return null;
  }
  if (!Array.isArray(value) || value.length !== 3) return null;
  const [host, pid, start] = value as unknown[];
  if (typeof host !== 'string' || typeof pid !== 'number' || !Number.isSafeInteger(pid) || pid <= 0 || typeof start !== 'string') return null;
  return { host, pid, start };
}

/** How the liveness of a process is probed; injected so tests need not spawn and kill processes. */
export interface ProcessProbe {
  readonly host: string;
  /** True when a process with this pid exists (`kill(pid, 0)`: ESRCH means none; EPERM means one we may not signal). */
  exists(pid: number): boolean;
  /** Its start marker (see `ProcessIdentity.start`), or '' when it cannot be read. */
  startOf(pid: number): string;
}

export const systemProbe: ProcessProbe = {
  host: os.hostname(),
  exists(pid) {
    try {
      process.kill(pid, 0);
      return true;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'EPERM';
    }
  },
  startOf(pid) {
    if (process.platform !== 'linux') return '';
    try {
      const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Field 22 (starttime); the command name (field 2) may hold spaces and parentheses, so count from its end.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = fields[19];
      return ticks === undefined ? '' : `${bootId}/${ticks}`;
    } catch (err) {
      // The process ended between the two reads, or /proc is not mounted: no marker.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
      throw err;
    }
  },
};

/** Ownership by process: this process's identity, and a liveness check of others through `probe`. */
export function processOwnership(probe: ProcessProbe = systemProbe, pid: number = process.pid): Ownership {
  const self = encodeOwner({ host: probe.host, pid, start: probe.startOf(pid) });
  return {
    self,
    isAlive(owner) {
      if (owner === self) return true;
      // Written before owners were recorded (schema < 3): the process that ran it predates this upgrade.
      if (owner === '') return false;
      const id = decodeOwner(owner);
      if (id === null || id.host !== probe.host) return true;
      if (!probe.exists(id.pid)) return false;
      // The pid is taken: by the owner, or by a later process that reused it.
      if (id.start === '') return true;
      const now = probe.startOf(id.pid);
      return now === '' || now === id.start;
    },
  };
}
