// The checkpoint codec: V8's serialisation in an exact-size buffer, and the one-byte string a session keeps
// its latest checkpoint in on the main thread (every byte value survives the trip, into a fresh buffer).

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeCheckpoint, encodeCheckpoint, packCheckpoint, sharedCheckpointCount, unpackCheckpoint } from '../../src/actors/codec.ts';

test('every byte value survives packing into a string and back, into a fresh exact-size buffer', () => {
  const bytes = new Uint8Array(512).map((_, i) => (i * 7 + 3) % 256);
  const packed = packCheckpoint(bytes.slice().buffer);
  assert.is(packed.length, bytes.length, 'one character per byte');
  const back = unpackCheckpoint(packed);
  assert.is(back.byteLength, bytes.length);
  assert.equal(new Uint8Array(back), bytes);
  assert.is.not(unpackCheckpoint(packed), back, 'each unpack is a buffer of its own (it is transferred away)');
});

test('a checkpoint packed and unpacked decodes to what was encoded', () => {
  const state = { phase: 'ready', clientInfo: { name: 'é-client ✓', version: '1.0' }, subscriptions: ['superpi://conversation/c1/transcript'], nextTicket: 42 };
  assert.equal(decodeCheckpoint(unpackCheckpoint(packCheckpoint(encodeCheckpoint(state)))), state);
});

test('equal checkpoints share one kept string, at most 64 are kept, and a large one still round-trips', () => {
  const before = sharedCheckpointCount();
  const one = { phase: 'ready', clientInfo: { name: 'same-host', version: '1' }, nextTicket: 0 };
  const a = packCheckpoint(encodeCheckpoint(one));
  const b = packCheckpoint(encodeCheckpoint(one));
  assert.is(a, b);
  assert.is(sharedCheckpointCount(), Math.min(before + 1, 64), 'the second pack of the same bytes keeps nothing more');
  for (let i = 0; i < 200; i++) packCheckpoint(encodeCheckpoint({ ...one, nextTicket: i + 1 }));
  assert.is(sharedCheckpointCount(), 64, 'bounded, whatever sessions pack');
  const large = { ...one, conversations: Array.from({ length: 200 }, (_, i) => `conversation-${i}`) };
  const packedLarge = packCheckpoint(encodeCheckpoint(large));
  assert.ok(packedLarge.length > 2048);
  assert.equal(decodeCheckpoint(unpackCheckpoint(packedLarge)), large);
  // Still a faithful codec for the shared ones.
  assert.equal(decodeCheckpoint(unpackCheckpoint(packCheckpoint(encodeCheckpoint(one)))), one);
});

test.run();
