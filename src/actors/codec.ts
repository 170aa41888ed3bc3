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
  return Buffer.from(buffer).toString('latin1');
}

/** A packed checkpoint back into a fresh, exact-size ArrayBuffer that can be transferred. */
export function unpackCheckpoint(packed: string): ArrayBuffer {
  const exact = new ArrayBuffer(packed.length);
  new Uint8Array(exact).set(Buffer.from(packed, 'latin1'));
  return exact;
}
