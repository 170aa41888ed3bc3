// How many host names the egress proxies of this process resolve at once. dns.lookup runs getaddrinfo on
// libuv's small thread pool, which the server's file operations share: a command that asks for many
// slow-to-resolve names (`*.domain` lets it choose them) must not hold every thread and stall the node.

import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { EGRESS_MAX_CONCURRENT_LOOKUPS } from '../../limits.ts';

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A gate of `limit` lookups at a time, over `lookup`. `gate(signal)` gives the function to pass as
 * net.connect's `lookup`: past the limit it waits its turn, first come first served; when `signal` aborts
 * while it waits it leaves the queue and never resolves anything (its socket is gone). The queue holds one
 * entry per connection being made, so it is bounded by the connections the proxies admit.
 */
export function createLookupGate(limit: number, lookup: LookupFunction = dnsLookup as LookupFunction): (signal: AbortSignal) => LookupFunction {
  const waiting: (() => void)[] = [];
  let running = 0;
  const next = (): void => {
    while (running < limit && waiting.length > 0) (waiting.shift() as () => void)();
  };
  return (signal) => (hostname: string, options: LookupOptions, callback: LookupCallback) => {
    const start = (): void => {
      signal.removeEventListener('abort', leave);
      running += 1;
      let done = false;
      lookup(hostname, options, (err, address, family) => {
        if (!done) {
          done = true;
          running -= 1;
          next();
        }
        callback(err, address, family);
      });
    };
    const leave = (): void => {
      const at = waiting.indexOf(start);
      if (at >= 0) waiting.splice(at, 1);
    };
    if (signal.aborted) return;
    if (running < limit) return start();
    waiting.push(start);
    signal.addEventListener('abort', leave, { once: true });
  };
}

/** The one gate of this process: the thread pool it protects is the process's. */
export const egressLookup = createLookupGate(EGRESS_MAX_CONCURRENT_LOOKUPS);
