// The runtime half of a 2026-07-28 `requestState` seal: HMAC-SHA256 and SHA-256 under the node's state
// key (node:crypto), handed to the pure core as a `StateSealer`, with the wall-clock time, per message.

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { RoundTrip, StateSealer } from '../mcp/request-state.ts';
import { REQUEST_STATE_TTL_MS } from '../limits.ts';

/** The sealer for one key: every node of a cluster that holds the same key opens the others' states. */
export function requestSealer(key: Uint8Array): StateSealer {
  const hmacKey = Buffer.from(key);
  return {
    mac: (data) => createHmac('sha256', hmacKey).update(data, 'utf8').digest('base64url'),
    digest: (data) => createHash('sha256').update(data, 'utf8').digest('base64url'),
    same: (a, b) => {
      const x = Buffer.from(a, 'utf8');
      const y = Buffer.from(b, 'utf8');
      return x.length === y.length && timingSafeEqual(x, y);
    },
  };
}

/**
 * What the core gets with each message: the sealer (null without a key) and the time now. Wall clock, not
 * the monotonic `Clock`: an expiry sealed on one node is read on another, whose monotonic scale differs.
 */
export function roundTripAt(sealer: StateSealer | null, now: number = Date.now()): RoundTrip {
  return { sealer, now, ttlMs: REQUEST_STATE_TTL_MS };
}
