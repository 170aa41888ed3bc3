// `--trusted-proxy ADDR[,ADDR...]`: the addresses of reverse proxies (or TLS terminators) whose connections the
// connection gate counts against the total cap only (connection-gate.ts). IP addresses only, written as the
// gate compares them: a host name would be resolved once and then go stale, and a range would trust more
// than the operator named. Nothing here ever reads a header.

import { isIP } from 'node:net';

export class TrustedProxyError extends Error {
  override readonly name = 'TrustedProxyError';
}

/**
 * The addresses of a comma-separated list (flags may repeat), each in the form `addressOf` gives a socket's:
 * an IPv4 address as it is, an IPv6 one in its canonical text (`::1`, lower case, zeros compressed),
 * an IPv4-mapped IPv6 one as its IPv4 address. Brackets around an IPv6 address are allowed.
 */
export function parseTrustedProxies(lists: readonly string[]): ReadonlySet<string> {
  const out = new Set<string>();
  for (const entry of lists.flatMap((l) => l.split(',')).map((a) => a.trim()).filter((a) => a !== '')) out.add(canonical(entry));
  if (out.size === 0 && lists.length > 0) throw new TrustedProxyError('--trusted-proxy takes IP addresses separated by commas, such as 127.0.0.1 or ::1, not an empty list');
  return out;
}

function canonical(entry: string): string {
  const bare = entry.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (isIP(bare) === 4) return bare;
  if (isIP(bare) !== 6 || bare.includes('%')) throw new TrustedProxyError(`--trusted-proxy takes IP addresses (a proxy is known by the address it connects from; no host names, ranges, ports or zones), not "${entry}"`);
  if (bare.startsWith('::ffff:') && isIP(bare.slice('::ffff:'.length)) === 4) return bare.slice('::ffff:'.length);
  const text = new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(text);
  if (mapped === null) return text;
  const [hi, lo] = [Number.parseInt(mapped[1] as string, 16), Number.parseInt(mapped[2] as string, 16)];
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
}
