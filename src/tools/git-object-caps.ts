// Checks git objects before isomorphic-git inflates them: every object's declared size against a cap, its
// real inflated size against what it declared, delta targets and chain depth, and the inflated total of one
// status call against a budget. isomorphic-git inflates with pako, synchronously and with no bound: a 1 MB
// loose object can inflate to gigabytes, and those bytes live outside the V8 heap, where a worker's
// `resourceLimits` does not reach. So each object is inflated here first, by zlib with `maxOutputLength`
// (it stops at the bound instead of growing), and refused when anything is over; what passes is then at
// most the cap when isomorphic-git inflates it again. Pure over buffers: ./git-fs.ts calls it on each read.

import { inflateSync } from 'node:zlib';
import { formatSize } from './truncate.ts';

/** What one status call may still inflate, shared by every object it reads. */
export interface InflateBudget {
  /** Largest object (declared or inflated), delta targets included. */
  readonly objectMaxBytes: number;
  /** Bytes the call may still inflate in all. */
  remaining: number;
  /** Longest chain of deltas to a base object. */
  readonly maxDeltaDepth: number;
}

/** An object or pack refused by a cap: the note the status shows says which and why. */
export class GitObjectRefused extends Error {
  readonly code = 'EFBIG';
}

/** Bytes of a loose object's header (`commit 123\0`) at most: a type and a decimal size. */
const LOOSE_HEADER_MAX = 32;

/**
 * Inflates `deflated` to at most `limit` bytes; past it (the stream is longer than it may be) it is
 * refused as `what`. A corrupt stream is refused too: isomorphic-git would fail on it anyway.
 */
function inflateAtMost(deflated: Buffer, limit: number, what: string): Buffer {
  try {
    return inflateSync(deflated, { maxOutputLength: Math.max(1, limit) });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw new GitObjectRefused(`${what} inflates past the ${formatSize(limit)} it may`);
    throw new GitObjectRefused(`${what} is not a valid zlib stream (${(err as Error).message})`);
  }
}

function charge(budget: InflateBudget, bytes: number, what: string): void {
  if (bytes > budget.remaining) throw new GitObjectRefused(`${what} would pass what one status may inflate (GIT_STATUS_MAX_INFLATED_BYTES)`);
  budget.remaining -= bytes;
}

/** Checks a loose object file (`objects/xx/…`, deflated `type size\0body`); throws GitObjectRefused. */
export function checkLooseObject(deflated: Buffer, name: string, budget: InflateBudget): void {
  // The deflated form of an object under the cap is never much larger than the cap (stored blocks add 5 bytes per 16 KB).
  if (deflated.length > budget.objectMaxBytes + Math.ceil(budget.objectMaxBytes / 1024) + LOOSE_HEADER_MAX + 1024) {
    throw new GitObjectRefused(`${name} is ${formatSize(deflated.length)} compressed, over the ${formatSize(budget.objectMaxBytes)} object cap (GIT_OBJECT_MAX_BYTES)`);
  }
  // The header alone first: a bomb that declares 4 GB is refused before a byte of its body is inflated.
  const head = inflatePrefix(deflated);
  const nul = head.indexOf(0);
  const header = /^(commit|tree|blob|tag) (0|[1-9][0-9]{0,15})$/.exec(head.subarray(0, nul === -1 ? LOOSE_HEADER_MAX : nul).toString('latin1'));
  if (nul === -1 || nul >= LOOSE_HEADER_MAX || header === null) throw new GitObjectRefused(`${name} has no valid object header`);
  const declared = Number(header[2]);
  if (declared > budget.objectMaxBytes) {
    throw new GitObjectRefused(`${name} declares ${formatSize(declared)}, over the ${formatSize(budget.objectMaxBytes)} object cap (GIT_OBJECT_MAX_BYTES)`);
  }
  const total = nul + 1 + declared;
  charge(budget, total, name);
  // A header that lies (says little, inflates to much more) is stopped at what it said.
  const whole = inflateAtMost(deflated, total, name);
  if (whole.length !== total) throw new GitObjectRefused(`${name} inflates to ${whole.length - nul - 1} bytes, not the ${declared} its header declares`);
}

/**
 * The first bytes a zlib stream inflates to, from a short prefix of it (a truncated stream is fine with a
 * sync flush): enough for a header, bounded whatever the stream holds.
 */
function inflatePrefix(deflated: Buffer): Buffer {
  // 64 compressed bytes inflate to at most ~66 KB (deflate's ratio is below 1032:1).
  try {
    return inflateSync(deflated.subarray(0, 64), { finishFlush: 2 /* Z_SYNC_FLUSH */, maxOutputLength: 128 * 1024 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return Buffer.alloc(0);
    throw new GitObjectRefused(`not a valid zlib stream (${(err as Error).message})`);
  }
}

const OBJ_OFS_DELTA = 6;
const OBJ_REF_DELTA = 7;

interface PackEntry {
  readonly offset: number;
  /** Where the next entry (or the trailer) starts: the end of this one's deflated data. */
  end: number;
  type: number;
  /** Start of the deflated data. */
  data: number;
  declared: number;
  /** Offset of the base in this pack, or -1 (a base object, or a ref-delta to an object outside it). */
  base: number;
}

/**
 * Checks a whole pack against its index before isomorphic-git reads any of it: every entry's declared
 * size under the cap and truly what it inflates to, every delta's target size under the cap, delta chains
 * no deeper than the limit (a ref-delta cycle is an endless chain), and the sum of all of it within the
 * budget. Throws GitObjectRefused.
 */
export function checkPack(pack: Buffer, idx: Buffer, name: string, budget: InflateBudget): void {
  const { offsets, oids } = readIndex(idx, name);
  if (pack.length < 32 || pack.readUInt32BE(0) !== 0x5041434b /* PACK */) throw new GitObjectRefused(`${name} is not a pack`);
  const bodyEnd = pack.length - 20;
  // Every entry isomorphic-git could reach: those the index lists, and the bases their ofs-deltas name
  // (which the index need not list), each header read once.
  const byOffset = new Map<number, PackEntry>();
  const pending = [...new Set(offsets)];
  while (pending.length > 0) {
    const offset = pending.pop() as number;
    if (byOffset.has(offset)) continue;
    if (offset < 12 || offset >= bodyEnd) throw new GitObjectRefused(`${name}: offset ${offset} lies outside the pack`);
    const entry = readEntryHeader(pack, offset, bodyEnd, name);
    byOffset.set(offset, entry);
    if (entry.base !== -1 && !byOffset.has(entry.base)) pending.push(entry.base);
  }
  // An entry's deflated data ends where the next entry starts (or at the trailer).
  const sorted = [...byOffset.keys()].sort((a, b) => a - b);
  sorted.forEach((offset, i) => {
    const entry = byOffset.get(offset) as PackEntry;
    entry.end = i + 1 < sorted.length ? (sorted[i + 1] as number) : bodyEnd;
    if (entry.data >= entry.end) throw new GitObjectRefused(`${name}: entry at ${offset} is cut short`);
  });
  const offsetOf = new Map<string, number>();
  oids.forEach((oid, i) => offsetOf.set(oid, offsets[i] as number));
  for (const entry of byOffset.values()) {
    if (entry.type === OBJ_REF_DELTA) entry.base = offsetOf.get(pack.subarray(entry.data - 20, entry.data).toString('hex')) ?? -1;
  }
  const depthOf = new Map<number, number>();
  for (const entry of byOffset.values()) {
    const what = `${name} at offset ${entry.offset}`;
    if (entry.declared > budget.objectMaxBytes) throw new GitObjectRefused(`${what} declares ${formatSize(entry.declared)}, over the ${formatSize(budget.objectMaxBytes)} object cap (GIT_OBJECT_MAX_BYTES)`);
    charge(budget, entry.declared, name);
    const body = inflateAtMost(pack.subarray(entry.data, entry.end), entry.declared, what);
    if (body.length !== entry.declared) throw new GitObjectRefused(`${what} inflates to ${body.length} bytes, not the ${entry.declared} it declares`);
    if (entry.type === OBJ_OFS_DELTA || entry.type === OBJ_REF_DELTA) {
      const target = deltaTargetSize(body, what);
      if (target > budget.objectMaxBytes) throw new GitObjectRefused(`${what} is a delta to ${formatSize(target)}, over the ${formatSize(budget.objectMaxBytes)} object cap (GIT_OBJECT_MAX_BYTES)`);
      // Applying it makes the target: counted as inflated bytes too.
      charge(budget, target, name);
      if (chainDepth(entry, byOffset, depthOf, budget.maxDeltaDepth) > budget.maxDeltaDepth) {
        throw new GitObjectRefused(`${what} ends a delta chain deeper than ${budget.maxDeltaDepth} (GIT_DELTA_MAX_DEPTH)`);
      }
    }
  }
}

/** Type, declared size and base of the entry at `offset` (git's pack format: a varint header, then for deltas the base). */
function readEntryHeader(pack: Buffer, offset: number, end: number, name: string): PackEntry {
  let at = offset;
  const next = (): number => {
    if (at >= end) throw new GitObjectRefused(`${name}: entry at ${offset} is cut short`);
    return pack[at++] as number;
  };
  let byte = next();
  const type = (byte >> 4) & 7;
  if (type === 0 || type === 5) throw new GitObjectRefused(`${name}: entry at ${offset} has an unknown type`);
  let declared = byte & 15;
  let scale = 16;
  while (byte & 0x80) {
    byte = next();
    declared += (byte & 0x7f) * scale;
    scale *= 128;
    if (scale > 2 ** 53) throw new GitObjectRefused(`${name}: entry at ${offset} has an oversized length`);
  }
  let base = -1;
  if (type === OBJ_OFS_DELTA) {
    byte = next();
    let distance = byte & 0x7f;
    while (byte & 0x80) {
      byte = next();
      distance = (distance + 1) * 128 + (byte & 0x7f);
      if (distance > pack.length) throw new GitObjectRefused(`${name}: entry at ${offset} has a base before the pack`);
    }
    base = offset - distance;
    if (base < 12 || base >= offset) throw new GitObjectRefused(`${name}: entry at ${offset} has a base outside the pack`);
  } else if (type === OBJ_REF_DELTA) {
    at += 20;
    if (at >= end) throw new GitObjectRefused(`${name}: entry at ${offset} is cut short`);
  }
  return { offset, end, type, data: at, declared, base };
}

/** A delta starts with two varints: the base's size and the target's. */
function deltaTargetSize(delta: Buffer, what: string): number {
  let at = 0;
  const varint = (): number => {
    let value = 0;
    let scale = 1;
    for (;;) {
      if (at >= delta.length) throw new GitObjectRefused(`${what} is a delta cut short`);
      const byte = delta[at++] as number;
      value += (byte & 0x7f) * scale;
      scale *= 128;
      if (!(byte & 0x80)) return value;
      if (scale > 2 ** 53) throw new GitObjectRefused(`${what} is a delta with an oversized size`);
    }
  };
  varint();
  return varint();
}

/** Deltas between `entry` and a base object, memoised; a value past `max` stops the walk (and a cycle always passes it). */
function chainDepth(entry: PackEntry, byOffset: ReadonlyMap<number, PackEntry>, depthOf: Map<number, number>, max: number): number {
  const path: PackEntry[] = [];
  let at: PackEntry | undefined = entry;
  let depth = 0;
  while (at !== undefined && at.base !== -1 && path.length <= max) {
    const known = depthOf.get(at.offset);
    if (known !== undefined) {
      depth = known;
      break;
    }
    path.push(at);
    at = byOffset.get(at.base);
  }
  if (path.length > max) return max + 1;
  for (let i = path.length - 1; i >= 0; i--) depthOf.set((path[i] as PackEntry).offset, ++depth);
  return depthOf.get(entry.offset) ?? 0;
}

/** Offsets and object ids of a version-2 pack index (the only version isomorphic-git reads). */
function readIndex(idx: Buffer, name: string): { offsets: number[]; oids: string[] } {
  if (idx.length < 8 + 256 * 4 + 40 || idx.readUInt32BE(0) !== 0xff744f63 || idx.readUInt32BE(4) !== 2) throw new GitObjectRefused(`${name}: its index is not a version-2 pack index`);
  const count = idx.readUInt32BE(8 + 255 * 4);
  const oidsAt = 8 + 256 * 4;
  const offsetsAt = oidsAt + count * 20 + count * 4;
  const largeAt = offsetsAt + count * 4;
  if (largeAt + 40 > idx.length) throw new GitObjectRefused(`${name}: its index is cut short`);
  const offsets: number[] = [];
  const oids: string[] = [];
  for (let i = 0; i < count; i++) {
    oids.push(idx.subarray(oidsAt + i * 20, oidsAt + (i + 1) * 20).toString('hex'));
    const small = idx.readUInt32BE(offsetsAt + i * 4);
    if (small & 0x80000000) {
      const at = largeAt + (small & 0x7fffffff) * 8;
      if (at + 8 > idx.length - 40) throw new GitObjectRefused(`${name}: its index is cut short`);
      offsets.push(Number(idx.readBigUInt64BE(at)));
    } else {
      offsets.push(small);
    }
  }
  return { offsets, oids };
}
