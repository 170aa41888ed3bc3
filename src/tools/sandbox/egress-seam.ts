// Where `bash` finds the egress proxy for `--bash-network allow=…`: the one place the server hands over
// the proxy it started (src/tools/sandbox/egress.ts, per server), as data the sandbox's argv is built from.

import type { EgressSeam } from './bwrap-argv.ts';

let running: EgressSeam | null = null;

/**
 * Set once by the server after it started the proxy (src/cli/serve.ts, `openServer`), e.g.
 * `const proxy = await startEgressProxy({ allow: hosts, dir, logger });`
 * `useEgress({ socketPath: proxy.socketPath, bridgeArgv: egressBridgeArgv(EGRESS_SOCKET_IN_SANDBOX, EGRESS_PROXY_PORT), env: egressEnvironment(EGRESS_PROXY_PORT) });`
 * and cleared (null) when it closes it.
 */
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
