// The runtime half of a 2026-07-28 `requestState` seal: HMAC-SHA256 and SHA-256 under the node's state
// key and a random nonce per seal (node:crypto), handed to the pure core as a `StateSealer`, with the
// wall-clock time, per message.

import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { RoundTrip, StateSealer } from '../mcp/request-state.ts';
import { REQUEST_STATE_TTL_MS, STATE_NONCE_BYTES } from '../limits.ts';

/** STATE_NONCE_BYTES from the CSPRNG, base64url: the nonce of one seal. */
export function randomNonce(): string {
  return randomBytes(STATE_NONCE_BYTES).toString('base64url');
}

/**
 * The sealer for one key: every node of a cluster that holds the same key opens the others' states.
 * `nonce`: where each seal's nonce comes from (random; a test may pass a counter to seal reproducibly).
 */
export function requestSealer(key: Uint8Array | (() => Uint8Array), nonce: () => string = randomNonce): StateSealer {
  let hmacKey: Buffer | null = typeof key === 'function' ? null : Buffer.from(key);
  const keyBytes = (): Buffer => (hmacKey ??= Buffer.from((key as () => Uint8Array)()));
  return {
    mac: (data) => createHmac('sha256', keyBytes()).update(data, 'utf8').digest('base64url'),
    digest: (data) => createHash('sha256').update(data, 'utf8').digest('base64url'),
    same: (a, b) => {
      const x = Buffer.from(a, 'utf8');
      const y = Buffer.from(b, 'utf8');
      return x.length === y.length && timingSafeEqual(x, y);
    },
    nonce,
  };
}

let threadKey: Uint8Array | null = null;
/** This thread's sealer for its own key, and the last one made for a given key: every actor shares it. */
let ownSealer: StateSealer | null = null;
let lastKeyed: { key: Uint8Array; sealer: StateSealer } | null = null;

/**
 * The sealer for `key`, shared by every actor of this thread that is handed the same key (a node hands
 * one key to all of its sessions): one per actor cost ~0.5 KB of closures and key copies per idle session.
 */
export function sharedSealer(key: Uint8Array): StateSealer {
  if (lastKeyed === null || !sameBytes(lastKeyed.key, key)) lastKeyed = { key: Uint8Array.from(key), sealer: requestSealer(Uint8Array.from(key)) };
  return lastKeyed.sealer;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The sealer of a process whose actors all run on this one thread (a stdio server) and that was given no
 * key: a random key of this thread's own, made at the first seal, so a start that never seals never
 * loads node:crypto (test/package/stdio-start.test.ts). A server with scheduler threads is handed one key
 * for all of them instead (application.ts): a state sealed on one thread must open on another.
 */
export function threadSealer(): StateSealer {
  return (ownSealer ??= requestSealer(() => (threadKey ??= randomBytes(32))));
}

/**
 * What the core gets with each message: the sealer (null without a key) and the time now. Wall clock, not
 * the monotonic `Clock`: an expiry sealed on one node is read on another, whose monotonic scale differs.
 */
export function roundTripAt(sealer: StateSealer | null, now: number = Date.now()): RoundTrip {
  return { sealer, now, ttlMs: REQUEST_STATE_TTL_MS };
}
