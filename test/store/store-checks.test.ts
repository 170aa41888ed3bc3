// The checks every store backend shares (store-checks.ts): which text survives a UTF-8 text column
// unchanged, page limits, and payload serialization with its size limit.

import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { StoreError } from '../../src/store/errors.ts';
import { pageLimit, serializePayload, storableText } from '../../src/store/store-checks.ts';

test('storableText holds exactly for the strings that survive UTF-8 unchanged and hold no NUL', () => {
  // Full 16-bit code units, so lone and paired surrogates both turn up.
  fc.assert(
    fc.property(fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((n) => String.fromCharCode(n)) }), (s) => {
      const survives = Buffer.from(s, 'utf8').toString('utf8') === s && !s.includes('\u0000');
      assert.is(storableText(s), survives, JSON.stringify(s));
    }),
    { numRuns: 2000 },
  );
  assert.ok(storableText('emoji 🧪 ünïcödé'));
  assert.not.ok(storableText('a\uD800'));
  assert.not.ok(storableText('\uDC00'));
  assert.not.ok(storableText('\uDC00\uD800'), 'a pair in the wrong order is two lone halves');
  assert.not.ok(storableText('a\u0000'));
});

test('pageLimit: absent is the fallback, a huge value is lowered, a bad one refused', () => {
  assert.is(pageLimit(undefined, 7, 10, 'limit'), 7);
  assert.is(pageLimit(1000, 7, 10, 'limit'), 10);
  for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
    assert.throws(() => pageLimit(bad, 7, 10, 'limit'), (e: unknown) => e instanceof StoreError && e.code === 'invalid_argument');
  }
});

test('serializePayload gives the JSON text; the limit counts UTF-8 bytes', () => {
  assert.is(serializePayload({ a: [1, 'x'] }, 100), '{"a":[1,"x"]}');
  assert.is(serializePayload('ü', 4), '"ü"');
  assert.throws(() => serializePayload('ü', 3), (e: unknown) => e instanceof StoreError && e.code === 'payload_too_large');
});

test.run();
