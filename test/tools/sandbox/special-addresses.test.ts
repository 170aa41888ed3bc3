// The special-purpose address classifier the egress proxy runs on every address an allowed name resolves
// to: examples at each range's edges, then properties over every range and every textual form of an
// address in it, checked against Node's own BlockList as an independent oracle.

import { BlockList } from 'node:net';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  type AddressRange, describeSpecialUse, IPV4_EMBEDDING_RANGES, NOT_AN_ADDRESS, SPECIAL_IPV4_RANGES, SPECIAL_IPV6_RANGES, specialUse,
} from '../../../src/tools/sandbox/special-addresses.ts';

/** The range's cidr a classification names, `via` the embedding's, or null for an ordinary address. */
function cidrOf(address: string): string | null {
  const use = specialUse(address);
  if (use === null) return null;
  return use.via === null ? use.range.cidr : `${use.range.cidr} via ${use.via.cidr}`;
}

test('examples at the edges of the ranges, and ordinary addresses beside them', () => {
  const table: [string, string | null][] = [
    ['127.0.0.1', '127.0.0.0/8'], ['127.255.255.255', '127.0.0.0/8'], ['128.0.0.0', null], ['126.255.255.255', null],
    ['0.0.0.0', '0.0.0.0/8'], ['169.254.169.254', '169.254.0.0/16'], ['10.1.2.3', '10.0.0.0/8'], ['11.0.0.0', null],
    ['172.16.0.0', '172.16.0.0/12'], ['172.31.255.255', '172.16.0.0/12'], ['172.15.255.255', null], ['172.32.0.0', null],
    ['192.168.1.1', '192.168.0.0/16'], ['100.64.0.0', '100.64.0.0/10'], ['100.127.255.255', '100.64.0.0/10'], ['100.128.0.0', null],
    ['224.0.0.1', '224.0.0.0/4'], ['255.255.255.255', '240.0.0.0/4'], ['198.19.255.255', '198.18.0.0/15'], ['198.20.0.0', null],
    ['8.8.8.8', null], ['1.1.1.1', null], ['93.184.216.34', null],
    ['::1', '::1/128'], ['::', '::/128'], ['0:0:0:0:0:0:0:1', '::1/128'], ['::2', '::/96'], ['::127.0.0.1', '::/96'],
    ['::ffff:127.0.0.1', '127.0.0.0/8 via ::ffff:0:0/96'], ['::FFFF:7F00:1', '127.0.0.0/8 via ::ffff:0:0/96'],
    ['::ffff:169.254.169.254', '169.254.0.0/16 via ::ffff:0:0/96'], ['::ffff:0.0.0.0', '0.0.0.0/8 via ::ffff:0:0/96'],
    ['::ffff:8.8.8.8', null], ['64:ff9b::127.0.0.1', '127.0.0.0/8 via 64:ff9b::/96'], ['64:ff9b::a00:1', '10.0.0.0/8 via 64:ff9b::/96'],
    ['64:ff9b::8.8.8.8', null], ['64:ff9b:1::1', '64:ff9b:1::/48'], ['::ffff:0:7f00:1', '::ffff:0:0:0/96'],
    ['fe80::1%eth0', 'fe80::/10'], ['FEBF::1', 'fe80::/10'], ['fec0::1', 'fec0::/10'], ['fd00::1', 'fc00::/7'], ['fc00::', 'fc00::/7'],
    ['ff02::1', 'ff00::/8'], ['2001:db8::1', '2001:db8::/32'], ['2001::1', '2001::/23'], ['2001:1ff::1', '2001::/23'], ['2001:200::1', null],
    ['2002:7f00:1::1', '2002::/16'], ['100::1', '100::/64'], ['100:0:0:1::1', null], ['3fff::1', '3fff::/20'], ['5f00::1', '5f00::/16'],
    ['2606:4700:4700::1111', null], ['2a00:1450::1', null],
  ];
  for (const [address, expected] of table) assert.is(cidrOf(address), expected, address);
});

test('anything that is not an address as a resolver writes one is refused, never read as an ordinary address', () => {
  for (const text of ['', 'localhost', '2130706433', '0x7f000001', '0177.0.0.1', '127.1', '127.0.0.1.', ' 127.0.0.1', '[::1]', '::1::', '1.2.3.4.5', '256.0.0.1']) {
    assert.equal(specialUse(text), { range: NOT_AN_ADDRESS, via: null }, JSON.stringify(text));
  }
});

test('the description names the range, its block and the form it came in', () => {
  assert.is(describeSpecialUse(specialUse('127.0.0.1') as NonNullable<ReturnType<typeof specialUse>>), 'loopback, 127.0.0.0/8');
  assert.is(describeSpecialUse(specialUse('::ffff:169.254.169.254') as NonNullable<ReturnType<typeof specialUse>>), 'link-local (cloud metadata services), 169.254.0.0/16, as IPv4-mapped ::ffff:0:0/96');
  assert.is(describeSpecialUse(specialUse('nonsense') as NonNullable<ReturnType<typeof specialUse>>), 'not an IP address as a resolver writes one');
});

// ---- generated addresses, written every way, against an independent oracle ----

type Bytes = number[];

function parseBase(cidr: string): { bytes: Bytes; bits: number } {
  const [base, bits] = cidr.split('/') as [string, string];
  if (base.includes(':')) {
    const [head, tail] = base.split('::') as [string, string | undefined];
    const groups = (s: string | undefined): number[] => (s === undefined || s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
    const h = groups(head);
    const t = groups(tail);
    const all = [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
    return { bytes: all.flatMap((g) => [g >> 8, g & 0xff]), bits: Number(bits) };
  }
  return { bytes: base.split('.').map(Number), bits: Number(bits) };
}

/** An address inside `cidr`: its prefix, then `random`'s bits. */
function inside(cidr: string, random: Bytes): Bytes {
  const { bytes, bits } = parseBase(cidr);
  return bytes.map((b, i) => {
    const kept = Math.max(0, Math.min(8, bits - 8 * i));
    const mask = kept === 0 ? 0 : (0xff << (8 - kept)) & 0xff;
    return (b & mask) | ((random[i] ?? 0) & ~mask & 0xff);
  });
}

const v4Text = (b: Bytes): string => b.join('.');
const groupsOf = (b: Bytes): number[] => Array.from({ length: 8 }, (_, i) => ((b[2 * i] as number) << 8) | (b[2 * i + 1] as number));

/** How an IPv6 address can be written; each is one the resolver, or Node's parser, may hand over. */
interface V6Style {
  readonly pad: boolean;
  readonly upper: boolean;
  /** Which run of zero groups `::` stands for (index into the runs; none when there is none or when -1). */
  readonly run: number;
  readonly dottedTail: boolean;
  readonly zone: string | null;
}

const v6Style: fc.Arbitrary<V6Style> = fc.record({
  pad: fc.boolean(), upper: fc.boolean(), run: fc.integer({ min: -1, max: 4 }), dottedTail: fc.boolean(), zone: fc.option(fc.constantFrom('eth0', 'lo', '1')),
});

function v6Text(b: Bytes, style: V6Style): string {
  const groups = groupsOf(b).map((g) => g.toString(16).padStart(style.pad ? 4 : 1, '0'));
  const tail = style.dottedTail ? [v4Text(b.slice(12))] : null;
  const words: (string | null)[] = tail === null ? [...groups] : [...groups.slice(0, 6), null, null];
  // Zero runs among the hex groups (a dotted tail is never folded into `::`).
  const runs: [number, number][] = [];
  for (let i = 0; i < words.length;) {
    if (words[i] !== null && /^0+$/.test(words[i] as string)) {
      let j = i;
      while (j < words.length && words[j] !== null && /^0+$/.test(words[j] as string)) j++;
      runs.push([i, j]);
      i = j;
    } else i++;
  }
  const hex = words.filter((w): w is string => w !== null);
  let text: string;
  const chosen = style.run >= 0 && runs.length > 0 ? runs[style.run % runs.length] : undefined;
  if (chosen === undefined) text = [...hex, ...(tail ?? [])].join(':');
  else {
    const [from, to] = chosen;
    const before = hex.slice(0, from).join(':');
    const after = [...hex.slice(to), ...(tail ?? [])].join(':');
    text = `${before}::${after}`;
  }
  if (style.upper) text = text.toUpperCase();
  return style.zone === null ? text : `${text}%${style.zone}`;
}

/** The oracle: Node's BlockList, one per range, and the most specific range holding the address wins. */
function oracle(ranges: readonly AddressRange[], family: 'ipv4' | 'ipv6') {
  const lists = ranges.map((range) => {
    const list = new BlockList();
    const [base, bits] = range.cidr.split('/') as [string, string];
    list.addSubnet(base, Number(bits), family);
    return { range, bits: Number(bits), list };
  });
  return (canonical: string): AddressRange | null => {
    let best: { range: AddressRange; bits: number } | null = null;
    for (const l of lists) if (l.list.check(canonical, family) && (best === null || l.bits > best.bits)) best = l;
    return best?.range ?? null;
  };
}

const v4Oracle = oracle(SPECIAL_IPV4_RANGES, 'ipv4');
const v6Oracle = oracle(SPECIAL_IPV6_RANGES, 'ipv6');
const embeddingOracle = oracle(IPV4_EMBEDDING_RANGES, 'ipv6');
const fullV6 = (b: Bytes): string => groupsOf(b).map((g) => g.toString(16)).join(':');

/** What the classifier must say of `b` (16 bytes), by the oracles alone. */
function expectedV6(b: Bytes): { range: AddressRange; via: AddressRange | null } | null {
  const embedding = embeddingOracle(fullV6(b));
  if (embedding !== null) {
    const range = v4Oracle(v4Text(b.slice(12)));
    return range === null ? null : { range, via: embedding };
  }
  const range = v6Oracle(fullV6(b));
  return range === null ? null : { range, via: null };
}

const random4 = fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 4, maxLength: 4 });
const random16 = fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 16, maxLength: 16 });

test('property: every IPv4 address in every range is that range (the most specific one holding it)', () => {
  for (const range of SPECIAL_IPV4_RANGES) {
    fc.assert(fc.property(random4, (random) => {
      const address = v4Text(inside(range.cidr, random));
      const use = specialUse(address);
      assert.ok(use !== null, address);
      assert.is(use.range, v4Oracle(address), address);
      assert.is(use.via, null);
    }), { numRuns: 60 });
  }
});

test('property: every IPv6 address in every range, written any way (padded, either case, any `::`, a dotted tail, a zone), is that range', () => {
  for (const range of SPECIAL_IPV6_RANGES) {
    fc.assert(fc.property(random16, v6Style, (random, style) => {
      const bytes = inside(range.cidr, random);
      const text = v6Text(bytes, style);
      const expected = expectedV6(bytes);
      assert.ok(expected !== null && expected.via === null, `${text}: the oracle disagrees with the range it was drawn from`);
      assert.equal(specialUse(text), expected, text);
    }), { numRuns: 60 });
  }
});

test('property: an IPv4 address of every range inside every embedding form (mapped, NAT64), written any way, is the IPv4 range, via the form', () => {
  for (const embedding of IPV4_EMBEDDING_RANGES) {
    for (const range of SPECIAL_IPV4_RANGES) {
      fc.assert(fc.property(random4, random16, v6Style, (v4random, v6random, style) => {
        const v4 = inside(range.cidr, v4random);
        const bytes = [...inside(embedding.cidr, v6random).slice(0, 12), ...v4];
        const text = v6Text(bytes, style);
        assert.equal(specialUse(text), { range: v4Oracle(v4Text(v4)), via: embedding }, text);
      }), { numRuns: 15 });
    }
  }
});

test('property: any IPv4 address is special exactly when the oracle says so, and an ordinary one stays ordinary when mapped or NAT64-embedded', () => {
  fc.assert(fc.property(random4, v6Style, fc.constantFrom(...IPV4_EMBEDDING_RANGES), (bytes, style, embedding) => {
    const address = v4Text(bytes);
    const range = v4Oracle(address);
    assert.equal(specialUse(address), range === null ? null : { range, via: null }, address);
    const embedded = v6Text([...parseBase(embedding.cidr).bytes.slice(0, 12), ...bytes], style);
    assert.equal(specialUse(embedded), range === null ? null : { range, via: embedding }, embedded);
  }), { numRuns: 2000 });
});

test('property: any IPv6 address, drawn at random or near a range\'s edge, is special exactly when the oracles say so', () => {
  const prefixes = [...SPECIAL_IPV6_RANGES, ...IPV4_EMBEDDING_RANGES].map((r) => r.cidr);
  // Near an edge: a range's prefix with one of its own bits flipped, so the address is just outside it.
  const nearEdge = fc.tuple(fc.constantFrom(...prefixes), random16, fc.nat()).map(([cidr, random, flip]) => {
    const bytes = inside(cidr, random);
    const bits = parseBase(cidr).bits;
    if (bits === 0) return bytes;
    const bit = flip % bits;
    bytes[bit >> 3] = (bytes[bit >> 3] as number) ^ (0x80 >> (bit & 7));
    return bytes;
  });
  fc.assert(fc.property(fc.oneof(random16, nearEdge), v6Style, (bytes, style) => {
    const text = v6Text(bytes, style);
    assert.equal(specialUse(text), expectedV6(bytes), text);
  }), { numRuns: 3000 });
});

test('property: an IPv4 address spelled as a resolver never writes it (one number, octal, hex, fewer parts, leading zeros) is not an address', () => {
  const spellings = (b: Bytes): string[] => {
    const n = (((b[0] as number) << 24) >>> 0) + ((b[1] as number) << 16) + ((b[2] as number) << 8) + (b[3] as number);
    return [
      String(n), `0x${n.toString(16)}`, `0${n.toString(8)}`,
      b.map((x) => `0${x.toString(8)}`).join('.'), b.map((x) => `0x${x.toString(16)}`).join('.'), b.map((x) => String(x).padStart(3, '0')).join('.'),
      `${b[0]}.${(((b[1] as number) << 16) + ((b[2] as number) << 8) + (b[3] as number))}`,
      `${b[0]}.${b[1]}.${(((b[2] as number) << 8) + (b[3] as number))}`,
      `[::ffff:${v4Text(b)}]`, `${v4Text(b)}.`,
    ];
  };
  fc.assert(fc.property(random4, (bytes) => {
    for (const text of spellings(bytes)) {
      // A three-digit part with no leading zero written padded is the address itself (100.200.150.250).
      if (text === v4Text(bytes)) continue;
      assert.equal(specialUse(text), { range: NOT_AN_ADDRESS, via: null }, text);
    }
  }), { numRuns: 500 });
});

test.run();
