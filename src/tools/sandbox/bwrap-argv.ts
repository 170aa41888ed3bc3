// Turns a resolved sandbox (what is writable, hidden, reachable) into bubblewrap's argument list: pure
// data in, argv out, so each policy has a golden test and the real-process tests prove what it means.

import path from 'node:path';
import { BASH_SHM_MAX_BYTES, BASH_TMP_MAX_BYTES } from '../../limits.ts';
import type { NetworkPolicy } from './policy.ts';

/** One mount over the read-only root: a hidden directory (an empty read-only tmpfs), a hidden file (`/dev/null`, unreadable), or a writable bind. */
export type SandboxMount =
  | { readonly kind: 'hide-dir'; readonly path: string }
  | { readonly kind: 'hide-file'; readonly path: string }
  | { readonly kind: 'writable'; readonly path: string };

/** The egress proxy as injected data (src/tools/sandbox/egress.ts makes it): its socket, the bridge to run inside, the variables that point tools at it. */
export interface EgressSeam {
  readonly socketPath: string;
  /** The real path on the host of the Node binary the bridge runs, bound read-only at EGRESS_NODE_IN_SANDBOX. */
  readonly bridgeNode: string;
  /** The bridge's command inside the sandbox: its program is EGRESS_NODE_IN_SANDBOX. */
  readonly bridgeArgv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

export interface SandboxSpec {
  readonly bwrap: string;
  /** Running as root: capabilities are dropped explicitly (an unprivileged bwrap drops them itself). */
  readonly root: boolean;
  readonly workspace: string;
  readonly mounts: readonly SandboxMount[];
  readonly network: NetworkPolicy;
  readonly egress?: EgressSeam;
}

/** Where the egress socket appears inside the sandbox: on the private /tmp, where bwrap can make the mount point. */
export const EGRESS_SOCKET_IN_SANDBOX = '/tmp/.super-pi-egress.sock';

/**
 * Where the bridge's Node binary appears inside the sandbox, beside the socket. The server's Node may live
 * where the sandbox shows nothing (under /tmp, behind the private one; under $SUPERPI_HOME, the server's
 * temp directory or a --bash-hide path), so that one file is bound here, read-only, and nothing around it.
 */
export const EGRESS_NODE_IN_SANDBOX = '/tmp/.super-pi-node';

/** What of the sandbox's own /proc writes to the host's kernel, bound read-only over it (from the host's /proc). */
export const PROC_READ_ONLY: readonly string[] = ['/proc/sys', '/proc/sysrq-trigger'];

/**
 * bwrap's arguments up to `--` (the caller appends the program). Order matters: the root read-only, a fresh
 * /dev, /proc and /tmp, then the mounts from the shallowest path to the deepest, so a workspace under /tmp
 * is bound after the private /tmp and a hidden path inside a writable one is hidden after it is bound; at
 * equal depth a hide comes last, so it wins.
 */
export function bwrapArgv(spec: SandboxSpec): string[] {
  const argv = [
    spec.bwrap,
    // A user namespace in which no further one can be made, no capabilities: nothing inside can unmount
    // what hides a path, or build a namespace of its own to do it (bwrap, unshare, mount all fail).
    '--unshare-user', '--disable-userns',
    ...(spec.root ? ['--cap-drop', 'ALL'] : []),
    '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try',
    ...(spec.network.kind === 'host' ? [] : ['--unshare-net']),
    // Killed with the server; a session of its own, so no terminal can be pushed input (TIOCSTI).
    '--die-with-parent', '--new-session',
    '--ro-bind', '/', '/',
    // /dev, /dev/shm and /tmp are tmpfs: memory no process owns. Each is bounded (or read-only), so a command
    // cannot hold half the host's RAM in each, which the OOM killer would take back by ending the server.
    '--dev', '/dev',
    '--size', String(BASH_SHM_MAX_BYTES), '--tmpfs', '/dev/shm',
    '--remount-ro', '/dev',
    '--proc', '/proc',
    // The kernel checks a sysctl write against the host's uid 0, not a capability: a server running as root
    // runs commands as that uid, so a writable /proc/sys is a write to the host (kernel.core_pattern names a
    // program the kernel runs as root, outside every namespace). bwrap means to cover these but may not.
    ...PROC_READ_ONLY.flatMap((p) => ['--ro-bind-try', p, p]),
    '--size', String(BASH_TMP_MAX_BYTES), '--tmpfs', '/tmp',
  ];
  const mounts: SandboxMount[] = [{ kind: 'writable', path: spec.workspace }, ...spec.mounts];
  const rank = (m: SandboxMount): number => (m.kind === 'writable' ? 0 : 1);
  const depth = (p: string): number => p.split(path.sep).filter((s) => s !== '').length;
  mounts.sort((a, b) => depth(a.path) - depth(b.path) || rank(a) - rank(b) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const m of mounts) {
    if (m.kind === 'writable') argv.push('--bind', m.path, m.path);
    else if (m.kind === 'hide-dir') argv.push('--tmpfs', m.path, '--remount-ro', m.path);
    else argv.push('--ro-bind', '/dev/null', m.path);
  }
  if (spec.network.kind === 'allow' && spec.egress !== undefined) {
    // Last, so no mount above covers them; on the private /tmp, which is still writable to bwrap here.
    argv.push('--bind', spec.egress.socketPath, EGRESS_SOCKET_IN_SANDBOX, '--ro-bind', spec.egress.bridgeNode, EGRESS_NODE_IN_SANDBOX);
  }
  argv.push('--chdir', spec.workspace, '--');
  return argv;
}
