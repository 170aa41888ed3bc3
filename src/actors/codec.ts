// The one codec for what crosses threads. Protocol lines cross as the strings they already are
// (bench/actors.ts, 1 KB: a string round trip 42 µs, a cloned object 64 µs, msgpackr 116 µs); session
// checkpoints cross in V8's own serialisation (structured clone's format, node:v8), in an exact-size
// transferred buffer. A checkpoint is made only when a session's identity changes (initialize, log level,
// harness), so its speed never mattered; msgpackr's records were 15% smaller (359 against 420 bytes after
// an initialize) but loading msgpackr cost every start and every restarted scheduler thread ~20 ms.

import { deserialize, serialize } from 'node:v8';

/** Serialises a value into a fresh, exact-size ArrayBuffer that can be transferred. */
export function encodeCheckpoint(value: unknown): ArrayBuffer {
  const view = serialize(value);
  const exact = new ArrayBuffer(view.byteLength);
  new Uint8Array(exact).set(view);
  return exact;
}

export function decodeCheckpoint<T>(buffer: ArrayBuffer | Uint8Array): T {
  return deserialize(buffer instanceof Uint8Array ? buffer : new Uint8Array(buffer)) as T;
}

/**
 * A checkpoint as a one-byte string (a byte per character), for one kept long on the main thread: an
 * ArrayBuffer costs its wrapper and a backing store outside the heap besides its bytes (~0.3 KB more
 * per idle session); a string is its bytes and a header.
 */
export function packCheckpoint(buffer: ArrayBuffer): string {
  const packed = Buffer.from(buffer).toString('latin1');
  if (packed.length > SHARED_CHECKPOINT_MAX_BYTES) return packed;
  const known = shared.get(packed);
  if (known !== undefined) {
    // The most recently used stays: it is the one the next session of that client will pack.
    shared.delete(known);
    shared.set(known, known);
    return known;
  }
  if (shared.size >= SHARED_CHECKPOINTS) shared.delete(shared.keys().next().value as string);
  shared.set(packed, packed);
  return packed;
}

/**
 * Packed checkpoints kept to be shared, most recently used last. Sessions of one client in the same
 * state pack the same bytes (every idle session's checkpoint is its initialize), so 10,000 idle sessions
 * of one host keep one string, not 10,000 (~0.27 KB each: BENCHMARKS.md, memory per idle session).
 */
const SHARED_CHECKPOINTS = 64;
/** Larger checkpoints are a session's own (its conversations, subscriptions): not shared, not kept here. */
const SHARED_CHECKPOINT_MAX_BYTES = 2048;
const shared = new Map<string, string>();

/** How many packed checkpoints this thread keeps to share (a test's view of the bound). */
export function sharedCheckpointCount(): number {
  return shared.size;
}

/** A packed checkpoint back into a fresh, exact-size ArrayBuffer that can be transferred. */
export function unpackCheckpoint(packed: string): ArrayBuffer {
  const exact = new ArrayBuffer(packed.length);
  new Uint8Array(exact).set(Buffer.from(packed, 'latin1'));
  return exact;
}
