// The sealers a scheduler thread hands its connection actors: one per key for the whole thread (not one
// per actor), and a seal made with one opens only under the same key, whoever holds the sealer.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { requestSealer, sharedSealer, threadSealer } from '../../src/connection/request-sealer.ts';
import { STATE_NONCE_BYTES } from '../../src/limits.ts';

test('actors handed equal keys share one sealer, which seals as a sealer of its own would', () => {
  const a = sharedSealer(new Uint8Array(32).fill(5));
  assert.is(sharedSealer(new Uint8Array(32).fill(5)), a, 'an equal key (another clone of it) gives the same sealer');
  assert.is(a.mac('state'), requestSealer(new Uint8Array(32).fill(5)).mac('state'));
  const b = sharedSealer(new Uint8Array(32).fill(6));
  assert.is.not(b, a);
  assert.is.not(b.mac('state'), a.mac('state'), 'another key seals differently');
  assert.is(sharedSealer(new Uint8Array(32).fill(5)).mac('state'), a.mac('state'), 'back to the first key: its seals again');
});

test('the key is copied: changing the array a sealer was made from changes nothing', () => {
  const key = new Uint8Array(32).fill(9);
  const sealer = sharedSealer(key);
  const before = sealer.mac('x');
  key.fill(1);
  assert.is(sealer.mac('x'), before);
  assert.is.not(sharedSealer(key), sealer, 'the changed array is another key');
});

test("a thread without a key has one sealer of its own, the same for every actor", () => {
  assert.is(threadSealer(), threadSealer());
  assert.is(threadSealer().mac('y'), threadSealer().mac('y'));
});

test('every nonce is fresh: STATE_NONCE_BYTES random bytes as base64url, never the same twice, from any sealer', () => {
  const sealers = [requestSealer(new Uint8Array(32).fill(5)), sharedSealer(new Uint8Array(32).fill(5)), threadSealer()];
  const seen = new Set<string>();
  for (let i = 0; i < 1000; i++) {
    for (const sealer of sealers) {
      const nonce = sealer.nonce();
      assert.is(Buffer.from(nonce, 'base64url').length, STATE_NONCE_BYTES);
      assert.match(nonce, /^[A-Za-z0-9_-]+$/);
      seen.add(nonce);
    }
  }
  assert.is(seen.size, 3000);
  let n = 0;
  assert.equal([1, 2].map(() => requestSealer(new Uint8Array(32), () => `n${++n}`).nonce()), ['n1', 'n2'], 'a test may hand its own');
});

test.run();
