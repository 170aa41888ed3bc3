// The per-node cache of parked places (parked-input-cache.ts): least recently read dropped first past
// TASK_PARKED_INPUT_CACHE_ENTRIES places or TASK_PARKED_INPUT_CACHE_BYTES held; a place larger than the
// whole bound is not kept.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ParkedInputCache } from '../../src/task/parked-input-cache.ts';
import { TASK_PARKED_INPUT_CACHE_BYTES, TASK_PARKED_INPUT_CACHE_ENTRIES } from '../../src/limits.ts';

const test = suite('ParkedInputCache');

test('past the place bound the least recently read goes; a read keeps a place', () => {
  const cache = new ParkedInputCache<string>();
  for (let i = 0; i < TASK_PARKED_INPUT_CACHE_ENTRIES; i++) cache.set(`p${i}`, `v${i}`, 1);
  assert.is(cache.get('p0'), 'v0', 'p0 is now the most recently read');
  cache.set('new', 'v', 1);
  assert.is(cache.size, TASK_PARKED_INPUT_CACHE_ENTRIES);
  assert.is(cache.get('p1'), undefined, 'p1, least recently read, went');
  assert.is(cache.get('p0'), 'v0');
  assert.is(cache.get('new'), 'v');
});

test('past the size bound the least recently read go until it fits; one larger than the bound is not kept', () => {
  const cache = new ParkedInputCache<string>();
  const third = Math.floor(TASK_PARKED_INPUT_CACHE_BYTES / 3);
  cache.set('a', 'A', third);
  cache.set('b', 'B', third);
  cache.set('c', 'C', third);
  cache.set('d', 'D', third);
  assert.equal([cache.get('a'), cache.get('b'), cache.get('c'), cache.get('d')], [undefined, 'B', 'C', 'D']);
  cache.set('huge', 'H', TASK_PARKED_INPUT_CACHE_BYTES + 1);
  assert.is(cache.get('huge'), undefined);
  assert.is(cache.size, 3, 'and it dropped nothing');
  cache.set('b', 'B2', 1);
  assert.is(cache.get('b'), 'B2', 'a place set again holds the new value, at its new size');
  cache.set('e', 'E', third);
  assert.is(cache.size, 4, 'b no longer counts a third');
});

test.run();
