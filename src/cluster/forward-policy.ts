// Whether a request may be forwarded to a node's advertise URL with the caller's bearer token in it: not
// over plain http:// to an address off this machine, where anyone on the path between the nodes reads
// the token, unless the operator said the network between the nodes is trusted
// (`--cluster-insecure-forwarding`). https:// advertise URLs, and loopback ones, always forward.

import { isIP } from 'node:net';

/** The flag that allows bearer tokens over plain http:// between nodes. */
export const INSECURE_FORWARDING_FLAG = '--cluster-insecure-forwarding';

/** Whether `hostname` (as `URL.hostname` gives it: IPv6 in brackets) names this machine's loopback interface. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) !== 6) return false;
  if (host === '::1') return true;
  // IPv4-mapped (::ffff:127.0.0.1, which URL writes as ::ffff:7f00:1).
  const mapped = /^::ffff:(.+)$/.exec(host)?.[1];
  if (mapped === undefined) return false;
  if (isIP(mapped) === 4) return mapped.startsWith('127.');
  const high = /^([0-9a-f]{1,4}):[0-9a-f]{1,4}$/.exec(mapped)?.[1];
  return high !== undefined && parseInt(high, 16) >> 8 === 127;
}

/**
 * Why a request carrying a bearer token (`carriesToken`) must not be forwarded to `baseUrl`, or null
 * when it may: plain http:// to a host off this machine, without `insecureAllowed`.
 */
export function forwardingRefusal(baseUrl: string, carriesToken: boolean, insecureAllowed: boolean): string | null {
  if (!carriesToken || insecureAllowed) return null;
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return `the home node's advertise URL "${baseUrl}" is not a URL`;
  }
  if (url.protocol !== 'http:' || isLoopbackHost(url.hostname)) return null;
  return `this node does not forward a bearer token over plain http:// to ${url.host} (the session's home); the home needs an https:// --advertise-url, or every node ${INSECURE_FORWARDING_FLAG} on a network between the nodes that is trusted`;
}

/**
 * The local address a forward to `targetHostname` leaves from: this node's bound address (`bound`, from
 * advertise-url.ts `forwardSourceAddress`), so peers know the connection by it (peer-addresses.ts) — but
 * not a loopback address to a host off this machine, which it cannot reach (a node on 127.0.0.1 behind a
 * local TLS terminator, forwarding to another machine's terminator): the system chooses then.
 */
export function forwardSource(bound: string | undefined, targetHostname: string): { readonly localAddress: string; readonly family: 4 | 6 } | null {
  if (bound === undefined) return null;
  const family = isIP(bound);
  if (family !== 4 && family !== 6) return null;
  if (isLoopbackHost(bound) && !isLoopbackHost(targetHostname)) return null;
  return { localAddress: bound, family };
}
