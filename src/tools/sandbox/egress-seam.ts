// Where `bash` finds the egress proxy for `--bash-network allow=…`: the one place the server hands over
// the proxy it started (src/tools/sandbox/egress.ts, per server), as data the sandbox's argv is built from.
// Each running command gets a socket (a door) of the proxy to itself, so the proxy can count its
// connections apart from every other command's.

import os from 'node:os';
import type { Logger } from '../../log/logger.ts';
import { EGRESS_PROXY_PORT } from '../../limits.ts';
import type { EgressSeam } from './bwrap-argv.ts';
import type { NetworkPolicy } from './policy.ts';

/** A socket of the proxy for one command at a time. */
export interface EgressDoor {
  readonly socketPath: string;
  close(): Promise<void>;
}

/** What a running proxy gives commands: the bridge and variables they share, and a door each. */
export interface EgressProvider {
  readonly shared: Omit<EgressSeam, 'socketPath'>;
  openDoor(): Promise<EgressDoor>;
}

/** A command's hold on a door: its seam, and release() once the command (its whole sandbox) has ended. */
export interface EgressLease {
  readonly seam: EgressSeam;
  release(): void;
}

let running: EgressProvider | null = null;
/**
 * Doors no command holds, the last released first: a command's spare sandbox (spare.ts) is built with the
 * door that command had, so the next command takes that door and its launch matches the spare. There are
 * never more doors than commands ran at once.
 */
let idle: EgressDoor[] = [];

/** Set by startEgressFor once the proxy listens, and cleared (null) when it closes it. */
export function useEgress(provider: EgressProvider | null): void {
  for (const door of idle) void door.close();
  idle = [];
  running = provider;
}

/**
 * A door of the proxy for a command under `allow=hosts`, or undefined when none runs: the command then has a
 * network namespace of its own with nothing in it (closed, never the host's network).
 */
export async function leaseEgress(_hosts: readonly string[]): Promise<EgressLease | undefined> {
  const provider = running;
  if (provider === null) return undefined;
  const door = idle.pop() ?? await provider.openDoor();
  let released = false;
  return {
    seam: { ...provider.shared, socketPath: door.socketPath },
    release() {
      if (released) return;
      released = true;
      if (running === provider) idle.push(door);
      else void door.close();
    },
  };
}

/**
 * Starts the egress proxy when the policy is `allow=…` and hands it to every later command (useEgress);
 * resolves with what closes it again (a no-op for `off` and `on`). The proxy's code, with node:http, is
 * loaded only then: a server whose commands have no network, or the host's, never loads it.
 */
export async function startEgressFor(network: NetworkPolicy, logger: Logger): Promise<() => Promise<void>> {
  if (network.kind !== 'allow') return async () => undefined;
  const { startEgressProxy, sandboxBridge, egressEnvironment } = await import('./egress.ts');
  const proxy = await startEgressProxy({ allow: network.hosts, dir: os.tmpdir(), logger });
  useEgress({ shared: { ...sandboxBridge(EGRESS_PROXY_PORT), env: egressEnvironment(EGRESS_PROXY_PORT) }, openDoor: () => proxy.openDoor() });
  logger.log('info', 'bash commands reach only the allowed hosts, through the egress proxy', { hosts: network.hosts });
  return async () => {
    useEgress(null);
    await proxy.close();
  };
}
