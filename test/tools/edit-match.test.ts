// The one-pass matcher behind `edit`: for every needle, the same count (capped at two) and first position
// as searching for it alone, overlapping occurrences included, on generated texts (fast-check, fixed seed).

import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { findNeedles } from '../../src/tools/edit-match.ts';

const SEED = 20_261_205;

/** What searching for one needle alone finds: indexOf from every position, stopping at the second. */
function alone(haystack: string, needle: string): { count: number; first: number } {
  const first = haystack.indexOf(needle);
  if (first === -1) return { count: 0, first };
  return { count: haystack.indexOf(needle, first + 1) === -1 ? 1 : 2, first };
}

// A small alphabet makes needles that are prefixes, suffixes and infixes of one another, the cases the
// failure and output links exist for; a surrogate pair and a code unit above 0xFF check the 16-bit alphabet.
const unit = fc.constantFrom('a', 'a', 'b', 'b', 'c', '\n', 'é', '😀');
const str = (max: number) => fc.array(unit, { minLength: 0, maxLength: max }).map((u) => u.join(''));

test('every needle gets the count (0, 1, 2+) and first index that searching for it alone gives', () => {
  fc.assert(fc.property(str(40), fc.array(str(5).filter((s) => s.length > 0), { minLength: 1, maxLength: 8 }), (haystack, needles) => {
    assert.equal(findNeedles(haystack, needles), needles.map((n) => alone(haystack, n)));
  }), { seed: SEED, numRuns: 3000 });
});

test('needles drawn from the text itself (so most occur) agree with searching alone', () => {
  const cut = fc.tuple(str(60), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 8 })), { minLength: 1, maxLength: 10 }));
  fc.assert(fc.property(cut, ([haystack, spans]) => {
    fc.pre(haystack.length > 0);
    const needles = spans.map(([at, len]) => haystack.slice(at % haystack.length, (at % haystack.length) + len));
    assert.equal(findNeedles(haystack, needles), needles.map((n) => alone(haystack, n)));
  }), { seed: SEED, numRuns: 3000 });
});

test('counts overlapping occurrences: "aa" occurs twice in "aaa"', () => {
  assert.equal(findNeedles('aaa', ['aa', 'aaa', 'aaaa']), [{ count: 2, first: 0 }, { count: 1, first: 0 }, { count: 0, first: -1 }]);
});

test('equal needles get equal answers, and an empty needle is refused', () => {
  assert.equal(findNeedles('xaby', ['ab', 'ab']), [{ count: 1, first: 1 }, { count: 1, first: 1 }]);
  assert.throws(() => findNeedles('abc', ['a', '']), /empty needle/);
});

test.run();
