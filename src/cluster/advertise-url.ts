// How other nodes of a cluster reach this one (`--advertise-url`, `SUPERPI_ADVERTISE_URL`): the base URL a
// node forwards a session's requests to when this node is the session's home. It is stored in the node
// registry (store/cluster-nodes.ts) for every node to read, so it must be a plain http(s) base URL and
// never carry credentials: anything in it is readable by every node and by whoever reads the database.
// A node's forwards leave from the address it is bound to, so its peers know them by that address.

import { isIP } from 'node:net';

/** The advertise URL, normalised (no trailing slash), or why it cannot be one. */
export function checkAdvertiseUrl(raw: string): { readonly url: string } | { readonly problem: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { problem: `"${raw}" is not a URL (give one like http://10.0.0.5:8080)` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem: `an advertise URL is http:// or https://, not ${url.protocol}` };
  if (url.username !== '' || url.password !== '') return { problem: 'an advertise URL must not carry credentials (every node and the database can read it)' };
  if (url.search !== '' || url.hash !== '') return { problem: 'an advertise URL has no query or fragment' };
  const path = url.pathname.replace(/\/+$/, '');
  return { url: `${url.protocol}//${url.host}${path}` };
}

/** The default advertise URL: the address the HTTP server is bound to. */
export function defaultAdvertiseUrl(bindHost: string, port: number): string {
  const host = bindHost.includes(':') ? `[${bindHost}]` : bindHost;
  return `http://${host}:${port}`;
}

/**
 * The local address this node's forwards leave from: the address it is bound to, when that is one IP
 * address (not a name, not 0.0.0.0 or ::); else undefined (the system chooses by route). A peer exempts
 * connections from the addresses advertise URLs name (peer-addresses.ts): on one machine, nodes bound to
 * 127.0.0.2 and 127.0.0.3 would otherwise connect to each other from 127.0.0.1.
 */
export function forwardSourceAddress(bindHost: string): string | undefined {
  const host = bindHost.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) === 0 || host === '0.0.0.0' || host === '::' || host === '::0') return undefined;
  return host;
}
