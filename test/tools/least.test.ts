// LeastItems (src/tools/least.ts): what a listing keeps of a directory it cannot hold whole. For any items,
// any comparator order and any `keep`, the kept items are exactly the first `keep` of the whole list sorted,
// in order, and `offered` counts every item (fast-check, fixed seed); with a budget, a prefix of those
// holding every item the lesser ones leave room for, and no more. Then `ls` over generated real
// directories answers exactly what sorting the whole directory and cutting it at `limit` gives.

import fc from 'fast-check';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { LeastItems } from '../../src/tools/least.ts';
import { lsTool } from '../../src/tools/ls.ts';
import { context } from './sandbox.ts';

const SEED = 20261207;
const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

test('with a budget, keeps a prefix of the least `keep` holding every item the lesser ones leave room for', () => {
  fc.assert(
    fc.property(fc.array(fc.string({ maxLength: 12 }), { maxLength: 300 }), fc.nat({ max: 320 }), fc.nat({ max: 200 }), (items, keep, max) => {
      const weight = (s: string): number => s.length + 1;
      const least = new LeastItems(keep, byCodeUnits, { weight, max });
      for (const item of items) least.offer(item);
      const whole = [...items].sort(byCodeUnits).slice(0, keep);
      // Every item whose lesser ones weigh at most `max` could be shown: it is kept; nothing past those is needed.
      let shown = 0;
      for (let before = 0; shown < whole.length && before <= max; shown++) before += weight(whole[shown] as string);
      const kept = least.sorted();
      assert.equal(kept, whole.slice(0, kept.length));
      assert.ok(kept.length >= shown, JSON.stringify({ kept: kept.length, shown }));
      // And no more than that: all but the greatest kept item weigh at most `max`.
      assert.ok(kept.slice(0, -1).reduce((n, s) => n + weight(s), 0) <= max);
      assert.is(least.offered, items.length);
    }),
    { seed: SEED, numRuns: 500 },
  );
});

test('keeps exactly the least `keep` items, in order, and counts every item offered', () => {
  fc.assert(
    fc.property(fc.array(fc.string({ maxLength: 6 }), { maxLength: 300 }), fc.nat({ max: 320 }), (items, keep) => {
      const least = new LeastItems(keep, byCodeUnits);
      for (const item of items) least.offer(item);
      assert.equal(least.sorted(), [...items].sort(byCodeUnits).slice(0, keep));
      assert.is(least.offered, items.length);
    }),
    { seed: SEED, numRuns: 500 },
  );
});

test('with a comparator that folds case (ls\'s), the kept names are the whole sort\'s first ones', () => {
  const folded = (a: string, b: string): number => a.toLowerCase().localeCompare(b.toLowerCase()) || byCodeUnits(a, b);
  fc.assert(
    fc.property(fc.uniqueArray(fc.stringMatching(/^[a-cA-C._-]{1,4}$/), { maxLength: 200 }), fc.integer({ min: 1, max: 50 }), (names, keep) => {
      const least = new LeastItems(keep, folded);
      for (const name of names) least.offer(name);
      assert.equal(least.sorted(), [...names].sort(folded).slice(0, keep));
    }),
    { seed: SEED, numRuns: 300 },
  );
});

test('refuses a keep that is not a whole number', () => {
  assert.throws(() => new LeastItems(-1, byCodeUnits), /keep must be a whole number/);
  assert.throws(() => new LeastItems(1.5, byCodeUnits), /keep must be a whole number/);
});

test('ls of a generated directory is the whole directory sorted, cut at limit', async () => {
  const folded = (a: string, b: string): number => {
    const f = a.toLowerCase().localeCompare(b.toLowerCase());
    return f !== 0 ? f : byCodeUnits(a, b);
  };
  await fc.assert(
    fc.asyncProperty(
      fc.uniqueArray(fc.stringMatching(/^[a-dA-D0-9_.-]{1,5}$/).filter((n) => n !== '.' && n !== '..'), { minLength: 1, maxLength: 40 }),
      fc.integer({ min: 1, max: 45 }),
      async (names, limit) => {
        const ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'super-pi-least-')));
        try {
          for (const [i, name] of names.entries()) {
            if (i % 3 === 0) await mkdir(path.join(ws, name));
            else await writeFile(path.join(ws, name), '');
          }
          const r = await lsTool({ limit }, context(ws));
          const expected = [...names].sort(folded).slice(0, limit);
          const listing = r.structured as { entries: { name: string }[]; truncated: boolean };
          assert.equal(listing.entries.map((e) => e.name), expected);
          assert.is(listing.truncated, names.length > limit);
        } finally {
          await rm(ws, { recursive: true, force: true });
        }
      },
    ),
    { seed: SEED, numRuns: 40 },
  );
});

test.run();
