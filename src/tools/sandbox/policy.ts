// The `bash` sandbox policy as plain data: what a command may write, what it must not see, which network
// it reaches and which environment variables pass; the flags' parsers; the policy in force for this process.

import os from 'node:os';
import path from 'node:path';
import { parseEgressAllowList } from './egress-allow.ts';

/** `none`: a network namespace of its own (not even the host's loopback); `host`: the host's; `allow`: only these hosts, through the egress proxy. */
export type NetworkPolicy = { readonly kind: 'none' } | { readonly kind: 'host' } | { readonly kind: 'allow'; readonly hosts: readonly string[] };

export interface SandboxPolicy {
  readonly network: NetworkPolicy;
  /** Absolute paths hidden besides the defaults (`--bash-hide`). */
  readonly hide: readonly string[];
  /** Absolute paths writable besides the workspace and the private /tmp (`--bash-writable`). */
  readonly writable: readonly string[];
  /** Default-hidden paths made visible again (`--bash-reveal`); a path given here and under it is not hidden. */
  readonly reveal: readonly string[];
  /** Environment variables passed besides BASE_ENV_NAMES (`--bash-env`). */
  readonly env: readonly string[];
  /** The server's own state: its home (store, code cache), the tokens file, a store file kept elsewhere. */
  readonly serverState: readonly string[];
}

/**
 * Credential stores under the user's home, hidden by default: keys, cloud and cluster credentials,
 * registry and package tokens, password stores, browser profiles and shell histories (which hold
 * pasted secrets), and the server's default home.
 */
export const DEFAULT_HIDDEN_IN_HOME: readonly string[] = [
  '.ssh', '.gnupg', '.aws', '.azure', '.config/gcloud', '.kube', '.docker', '.netrc', '.pgpass', '.my.cnf', '.npmrc',
  '.yarnrc', '.yarnrc.yml', '.pypirc', '.git-credentials', '.config/git/credentials', '.config/gh', '.config/hub',
  '.cargo/credentials', '.cargo/credentials.toml', '.gem/credentials', '.terraform.d', '.vault-token', '.config/op',
  '.password-store', '.local/share/keyrings', '.mozilla', '.config/google-chrome', '.config/chromium',
  '.bash_history', '.zsh_history', '.psql_history', '.mysql_history', '.python_history', '.node_repl_history',
  '.super-pi',
];

/**
 * System paths hidden by default: password hashes, host keys, and sockets a command could reach with the
 * network off (a Unix socket is a file: Docker's is root on the host, the per-user runtime directory holds
 * agent sockets, D-Bus and the database servers answer the local user).
 */
export const DEFAULT_HIDDEN_SYSTEM: readonly string[] = [
  '/etc/shadow', '/etc/gshadow', '/etc/shadow-', '/etc/gshadow-', '/etc/sudoers', '/etc/sudoers.d',
  '/run/user', '/run/docker.sock', '/var/run/docker.sock', '/run/containerd', '/run/podman', '/run/dbus',
  '/var/run/dbus', '/run/postgresql', '/var/run/postgresql', '/run/mysqld', '/var/run/mysqld',
];

/** Host private keys in /etc/ssh (`ssh_host_*_key`), hidden by default; the public halves stay. */
export const HOST_KEY_DIR = '/etc/ssh';
export const HOST_KEY_NAME = /^ssh_host_.*_key$/;

/** Variables a command gets from the server's environment without being named; LC_* too. */
export const BASE_ENV_NAMES: readonly string[] = ['PATH', 'HOME', 'LANG', 'TERM', 'USER', 'LOGNAME', 'SHELL', 'TZ', 'TMPDIR'];

export class SandboxPolicyError extends Error {
  override readonly name = 'SandboxPolicyError';
}

/** `--bash-network`: `off` (default), `on`, or `allow=HOST,HOST…` (host names, optionally `:port`). */
export function parseNetworkPolicy(raw: string | undefined): NetworkPolicy {
  if (raw === undefined || raw === 'off' || raw === 'none') return { kind: 'none' };
  if (raw === 'on' || raw === 'host') return { kind: 'host' };
  if (raw.startsWith('allow=')) {
    let hosts: string[];
    try {
      hosts = parseEgressAllowList(raw.slice('allow='.length));
    } catch (err) {
      throw new SandboxPolicyError(`--bash-network: ${(err as Error).message}`, { cause: err });
    }
    if (hosts.length === 0) throw new SandboxPolicyError('--bash-network allow= needs at least one host: allow=example.com,registry.npmjs.org');
    return { kind: 'allow', hosts };
  }
  throw new SandboxPolicyError(`--bash-network takes off, on or allow=HOST,HOST…, not "${raw}"`);
}

/** A path flag's values, absolute (relative ones against `cwd`); `/` itself is refused: it would undo the sandbox. */
export function parsePathList(flag: string, values: readonly string[] | undefined, cwd: string): string[] {
  return (values ?? []).map((value) => {
    if (value === '') throw new SandboxPolicyError(`${flag} needs a path`);
    const abs = path.resolve(cwd, value);
    if (abs === path.parse(abs).root) throw new SandboxPolicyError(`${flag} cannot name the root directory`);
    return abs;
  });
}

/** `--bash-env` names: what a shell variable can be called. */
export function parseEnvNames(values: readonly string[] | undefined): string[] {
  return (values ?? []).map((name) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new SandboxPolicyError(`--bash-env: "${name}" is not a variable name`);
    return name;
  });
}

/** The server state a default policy hides: `$SUPERPI_HOME` when set (the default home is in DEFAULT_HIDDEN_IN_HOME). */
export function defaultServerState(env: NodeJS.ProcessEnv = process.env): string[] {
  const home = env.SUPERPI_HOME;
  return home !== undefined && home !== '' ? [path.resolve(home)] : [];
}

export function defaultPolicy(env: NodeJS.ProcessEnv = process.env): SandboxPolicy {
  return { network: { kind: 'none' }, hide: [], writable: [], reveal: [], env: [], serverState: defaultServerState(env) };
}

let inForce: SandboxPolicy | null = null;

/** The policy `bash` applies; the default one until the server sets its own (useSandboxPolicy). */
export function sandboxPolicy(): SandboxPolicy {
  inForce ??= defaultPolicy();
  return inForce;
}

/** Set once by the server at start from its flags (tests set their own). */
export function useSandboxPolicy(policy: SandboxPolicy): void {
  inForce = policy;
}

/**
 * The paths a policy hides before they are looked at on disk: the server's state, the credential stores
 * under `home`, the system list, the server's temp directory (other sessions' full-output files; inside the
 * sandbox /tmp is a private one anyway) and `SSH_AUTH_SOCK`, minus what `reveal` names.
 */
export function hiddenCandidates(policy: SandboxPolicy, home: string = os.homedir(), env: NodeJS.ProcessEnv = process.env, tmpdir: string = os.tmpdir()): string[] {
  const all = [
    ...policy.serverState,
    ...DEFAULT_HIDDEN_IN_HOME.map((rel) => path.join(home, rel)),
    ...DEFAULT_HIDDEN_SYSTEM,
    ...(path.resolve(tmpdir) === '/tmp' ? [] : [path.resolve(tmpdir)]),
    ...(env.SSH_AUTH_SOCK !== undefined && path.isAbsolute(env.SSH_AUTH_SOCK) ? [env.SSH_AUTH_SOCK] : []),
    ...policy.hide,
  ];
  const revealed = (p: string): boolean => policy.reveal.some((r) => p === r || p.startsWith(r.endsWith('/') ? r : `${r}/`));
  // A path the operator asked to hide stays hidden even under a revealed one.
  return [...new Set(all.filter((p) => policy.hide.includes(p) || !revealed(p)))];
}

/** The variables a command gets: BASE_ENV_NAMES, LC_*, and the policy's names; nothing else (no PGPASSWORD, AWS_*, tokens, SUPERPI_*). */
export function allowedEnvironment(names: readonly string[], env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const wanted = new Set([...BASE_ENV_NAMES, ...names]);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (wanted.has(name) || name.startsWith('LC_')) out[name] = value;
  }
  return out;
}
