// Which addresses an allowed host NAME may not lead the egress proxy to: the special-purpose ranges (the
// server's own loopback, private networks, link-local with the cloud metadata service, CGNAT, multicast…),
// as a named list, and the classifier the proxy runs on every address a name resolves to.

import { isIPv4, isIPv6 } from 'node:net';

/** A block of addresses with what it is for, as the IANA special-purpose registries name it. */
export interface AddressRange {
  readonly cidr: string;
  readonly name: string;
}

/**
 * IPv4 ranges a name must not resolve into (RFC 6890 and the IANA IPv4 special-purpose registry, less
 * the few blocks there that are globally reachable services; plus multicast and the reserved 240/4).
 */
export const SPECIAL_IPV4_RANGES: readonly AddressRange[] = [
  { cidr: '0.0.0.0/8', name: '"this network" (0.0.0.0 reaches the host itself)' },
  { cidr: '10.0.0.0/8', name: 'private' },
  { cidr: '100.64.0.0/10', name: 'shared address space (carrier-grade NAT)' },
  { cidr: '127.0.0.0/8', name: 'loopback' },
  { cidr: '169.254.0.0/16', name: 'link-local (cloud metadata services)' },
  { cidr: '172.16.0.0/12', name: 'private' },
  { cidr: '192.0.0.0/24', name: 'IETF protocol assignments' },
  { cidr: '192.0.2.0/24', name: 'documentation (TEST-NET-1)' },
  { cidr: '192.88.99.0/24', name: '6to4 relay anycast (deprecated)' },
  { cidr: '192.168.0.0/16', name: 'private' },
  { cidr: '198.18.0.0/15', name: 'benchmarking' },
  { cidr: '198.51.100.0/24', name: 'documentation (TEST-NET-2)' },
  { cidr: '203.0.113.0/24', name: 'documentation (TEST-NET-3)' },
  { cidr: '224.0.0.0/4', name: 'multicast' },
  { cidr: '240.0.0.0/4', name: 'reserved (and the broadcast address)' },
];

/**
 * IPv6 ranges a name must not resolve into (the IANA IPv6 special-purpose registry and RFC 4291's
 * deprecated forms). 6to4, Teredo (in 2001::/23) and IPv4-compatible addresses carry an IPv4 address
 * the host may route to by itself, so they are refused whole.
 */
export const SPECIAL_IPV6_RANGES: readonly AddressRange[] = [
  { cidr: '::/128', name: 'unspecified (reaches the host itself)' },
  { cidr: '::1/128', name: 'loopback' },
  { cidr: '::/96', name: 'IPv4-compatible (deprecated)' },
  { cidr: '::ffff:0:0:0/96', name: 'IPv4-translated (SIIT)' },
  { cidr: '64:ff9b:1::/48', name: 'NAT64, local use' },
  { cidr: '100::/64', name: 'discard-only' },
  { cidr: '2001::/23', name: 'IETF protocol assignments (Teredo, benchmarking, ORCHID)' },
  { cidr: '2001:db8::/32', name: 'documentation' },
  { cidr: '2002::/16', name: '6to4' },
  { cidr: '3fff::/20', name: 'documentation' },
  { cidr: '5f00::/16', name: 'segment routing (SRv6)' },
  { cidr: 'fc00::/7', name: 'unique local (private)' },
  { cidr: 'fe80::/10', name: 'link-local' },
  { cidr: 'fec0::/10', name: 'site-local (deprecated)' },
  { cidr: 'ff00::/8', name: 'multicast' },
];

/**
 * IPv6 ranges whose last 32 bits are an IPv4 address the connection reaches: such an address is as
 * special as the IPv4 address it carries (`::ffff:127.0.0.1` is loopback; `64:ff9b::8.8.8.8` is not).
 */
export const IPV4_EMBEDDING_RANGES: readonly AddressRange[] = [
  { cidr: '::ffff:0:0/96', name: 'IPv4-mapped' },
  { cidr: '64:ff9b::/96', name: 'NAT64' },
];

/** What anything that is not an address as a resolver writes one is taken for: refused, never guessed at. */
export const NOT_AN_ADDRESS: AddressRange = { cidr: 'none', name: 'not an IP address as a resolver writes one' };

/** Why an address is special: its range, and the IPv6 form it was reached through when it was embedded. */
export interface SpecialUse {
  readonly range: AddressRange;
  readonly via: AddressRange | null;
}

interface Block {
  readonly range: AddressRange;
  readonly bytes: Uint8Array;
  readonly bits: number;
}

/** The bytes of a dotted-quad IPv4 address (four decimal parts, no leading zeros), or null. */
function ipv4Bytes(text: string): Uint8Array | null {
  if (!isIPv4(text)) return null;
  return Uint8Array.from(text.split('.').map(Number));
}

/**
 * The 16 bytes of an IPv6 address in any of its textual forms (compressed or not, either case, leading
 * zeros, a dotted IPv4 tail, a `%zone`), or null. The WHATWG URL parser writes it out canonically first.
 */
function ipv6Bytes(text: string): Uint8Array | null {
  if (!isIPv6(text)) return null;
  const zone = text.indexOf('%');
  const url = `http://[${zone < 0 ? text : text.slice(0, zone)}]/`;
  if (!URL.canParse(url)) return null;
  const canonical = new URL(url).hostname.slice(1, -1);
  const [head, tail] = canonical.includes('::') ? canonical.split('::') as [string, string] : [canonical, null];
  const groups = (part: string): number[] => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const front = groups(head);
  const back = tail === null ? [] : groups(tail);
  const all = [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
  if (all.length !== 8) return null;
  const bytes = new Uint8Array(16);
  all.forEach((g, i) => {
    bytes[2 * i] = g >> 8;
    bytes[2 * i + 1] = g & 0xff;
  });
  return bytes;
}

function block(range: AddressRange): Block {
  const [base, bits] = range.cidr.split('/') as [string, string];
  const bytes = ipv4Bytes(base) ?? ipv6Bytes(base);
  if (bytes === null) throw new Error(`bad range ${range.cidr}`);
  return { range, bytes, bits: Number(bits) };
}

function contains(b: Block, bytes: Uint8Array): boolean {
  if (b.bytes.length !== bytes.length) return false;
  for (let bit = 0; bit < b.bits; bit += 8) {
    const mask = b.bits - bit >= 8 ? 0xff : (0xff << (8 - (b.bits - bit))) & 0xff;
    const i = bit / 8;
    if (((b.bytes[i] as number) & mask) !== ((bytes[i] as number) & mask)) return false;
  }
  return true;
}

/** The most specific block holding `bytes` (`::1` is loopback, not merely IPv4-compatible), or null. */
function longestMatch(blocks: readonly Block[], bytes: Uint8Array): Block | null {
  let best: Block | null = null;
  for (const b of blocks) if (contains(b, bytes) && (best === null || b.bits > best.bits)) best = b;
  return best;
}

const V4_BLOCKS = SPECIAL_IPV4_RANGES.map(block);
const V6_BLOCKS = SPECIAL_IPV6_RANGES.map(block);
const EMBEDDING_BLOCKS = IPV4_EMBEDDING_RANGES.map(block);

/**
 * Why `address` (as a resolver returns it: dotted-quad IPv4, or IPv6 in any textual form) is special, or
 * null for an ordinary unicast address. Anything else is NOT_AN_ADDRESS: refused rather than guessed at.
 */
export function specialUse(address: string): SpecialUse | null {
  const v4 = ipv4Bytes(address);
  if (v4 !== null) {
    const hit = longestMatch(V4_BLOCKS, v4);
    return hit === null ? null : { range: hit.range, via: null };
  }
  const v6 = ipv6Bytes(address);
  if (v6 === null) return { range: NOT_AN_ADDRESS, via: null };
  const embedding = longestMatch(EMBEDDING_BLOCKS, v6);
  if (embedding !== null) {
    const hit = longestMatch(V4_BLOCKS, v6.subarray(12));
    return hit === null ? null : { range: hit.range, via: embedding.range };
  }
  const hit = longestMatch(V6_BLOCKS, v6);
  return hit === null ? null : { range: hit.range, via: null };
}

/** `loopback, 127.0.0.0/8` (with `, as IPv4-mapped ::ffff:0:0/96` for an embedded one), for messages. */
export function describeSpecialUse(use: SpecialUse): string {
  const range = use.range === NOT_AN_ADDRESS ? use.range.name : `${use.range.name}, ${use.range.cidr}`;
  return use.via === null ? range : `${range}, as ${use.via.name} ${use.via.cidr}`;
}
