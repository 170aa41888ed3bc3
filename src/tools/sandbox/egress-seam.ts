// Where `bash` finds the egress proxy for `--bash-network allow=…`: the one place the server hands over
// the proxy it started (src/tools/sandbox/egress.ts, per server), as data the sandbox's argv is built from.

import os from 'node:os';
import type { Logger } from '../../log/logger.ts';
import { EGRESS_PROXY_PORT } from '../../limits.ts';
import type { EgressSeam } from './bwrap-argv.ts';
import type { NetworkPolicy } from './policy.ts';

let running: EgressSeam | null = null;

/** Set by startEgressFor once the proxy listens, and cleared (null) when it closes it. */
export function useEgress(seam: EgressSeam | null): void {
  running = seam;
}

/**
 * The proxy for a command under `allow=hosts`, or undefined when none runs: the command then has a network
 * namespace of its own with nothing in it (closed, never the host's network).
 */
export function egressFor(_hosts: readonly string[]): EgressSeam | undefined {
  return running ?? undefined;
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
  useEgress({ socketPath: proxy.socketPath, ...sandboxBridge(EGRESS_PROXY_PORT), env: egressEnvironment(EGRESS_PROXY_PORT) });
  logger.log('info', 'bash commands reach only the allowed hosts, through the egress proxy', { hosts: network.hosts });
  return async () => {
    useEgress(null);
    await proxy.close();
  };
}
