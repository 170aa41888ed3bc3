// The checks made on git objects before isomorphic-git inflates them, on hand-made bytes: what a loose
// object or a pack entry declares, what it really inflates to, delta targets and chains (through bases
// the index does not list), and the inflated total of one status.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { deflateSync } from 'node:zlib';
import { checkLooseObject, checkPack, GitObjectRefused, type InflateBudget } from '../../src/tools/git-object-caps.ts';
import { entryHeader, insertDelta, ofsDistance, oneObjectIndex, sealPack, varint } from './fixtures/git-bombs.ts';

const budget = (over: Partial<InflateBudget> = {}): InflateBudget => ({ objectMaxBytes: 1024, remaining: 1 << 20, maxDeltaDepth: 4, ...over });
const OID = 'ab'.repeat(20);

function refusal(check: () => void): string {
  try {
    check();
  } catch (err) {
    if (err instanceof GitObjectRefused) return err.message;
    throw err;
  }
  return assert.unreachable('the object was accepted') as never;
}

test('a loose object within the cap passes and is charged its inflated size', () => {
  const b = budget();
  checkLooseObject(deflateSync(Buffer.from('blob 5\0hello')), 'o', b);
  assert.is(b.remaining, (1 << 20) - 12);
});

test('a loose object declaring more than the cap is refused by its header', () => {
  assert.match(refusal(() => checkLooseObject(deflateSync(Buffer.from(`blob 4000000000\0${'x'.repeat(10)}`)), 'o', budget())), /declares .* object cap/);
});

test('a loose object inflating past what it declares is refused', () => {
  assert.match(refusal(() => checkLooseObject(deflateSync(Buffer.concat([Buffer.from('blob 5\0'), Buffer.alloc(100_000)])), 'o', budget())), /inflates past/);
});

test('a loose object without a valid header is refused', () => {
  assert.match(refusal(() => checkLooseObject(deflateSync(Buffer.from('nonsense')), 'o', budget())), /no valid object header/);
});

test('objects past the inflate budget of one status are refused, whatever each one\'s size', () => {
  const b = budget({ remaining: 20 });
  checkLooseObject(deflateSync(Buffer.from('blob 5\0hello')), 'first', b);
  assert.match(refusal(() => checkLooseObject(deflateSync(Buffer.from('blob 5\0hello')), 'second', b)), /GIT_STATUS_MAX_INFLATED_BYTES/);
});

/** A pack of a base blob and `deltas` ofs-deltas over it (each `delta`, by default one inserting "tip"), its index naming only the last entry. */
function chainPack(base: Buffer, baseDeclared: number, deltas: number, delta = insertDelta(base.length, Buffer.from('tip'))): { pack: Buffer; idx: Buffer } {
  const entries = [Buffer.concat([entryHeader(3, baseDeclared), deflateSync(base)])];
  let offset = 12;
  for (let i = 0; i < deltas; i++) {
    const previous = offset;
    offset += (entries[entries.length - 1] as Buffer).length;
    entries.push(Buffer.concat([entryHeader(6, delta.length), ofsDistance(offset - previous), deflateSync(delta)]));
  }
  const pack = sealPack(entries);
  return { pack, idx: oneObjectIndex(OID, offset, pack) };
}

test('a pack whose entries are within the caps passes', () => {
  const { pack, idx } = chainPack(Buffer.from('base'), 4, 3);
  checkPack(pack, idx, 'p', budget());
});

test('a base the index does not list is still checked: one declaring more than the cap is refused', () => {
  const { pack, idx } = chainPack(Buffer.from('base'), 4_000_000_000, 1);
  assert.match(refusal(() => checkPack(pack, idx, 'p', budget())), /at offset 12 declares/);
});

test('a base that inflates past what it declares is refused', () => {
  const { pack, idx } = chainPack(Buffer.alloc(100_000), 4, 1);
  assert.match(refusal(() => checkPack(pack, idx, 'p', budget())), /inflates past/);
});

test('a delta whose target is larger than the cap is refused', () => {
  // A few bytes that say "the result is 4,000,000 bytes" (then one copy of the base): small itself, huge once applied.
  const { pack, idx } = chainPack(Buffer.from('base'), 4, 1, Buffer.concat([varint(4), varint(4_000_000), Buffer.from([0x90, 4])]));
  assert.match(refusal(() => checkPack(pack, idx, 'p', budget())), /delta to .* object cap/);
});

test('a delta chain deeper than the limit is refused, through bases the index does not list', () => {
  const { pack, idx } = chainPack(Buffer.from('base'), 4, 5);
  assert.match(refusal(() => checkPack(pack, idx, 'p', budget())), /delta chain deeper than 4/);
});

test('an index offset outside the pack is refused', () => {
  const { pack } = chainPack(Buffer.from('base'), 4, 0);
  assert.match(refusal(() => checkPack(pack, oneObjectIndex(OID, pack.length + 10, pack), 'p', budget())), /outside the pack/);
});

test.run();
