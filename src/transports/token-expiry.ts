// When a connection's access token expires (`exp`, wall-clock seconds), the connection ends: one timer,
// re-armed in steps no longer than a Node timer can hold. setTimeout takes at most 2^31-1 ms (~24.8 days)
// and fires a longer delay after 1 ms, which closed every WebSocket whose token lived longer than that as
// soon as it opened.

/** The longest delay setTimeout honours; a longer one fires at once (with a TimeoutOverflowWarning). */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** A scheduled expiry; `cancel` stops it (the connection ended first). */
export interface TokenExpiry {
  cancel(): void;
}

/**
 * Calls `expired` once the wall clock (`now`, ms) reaches `expiresAt` (seconds), never before, always
 * asynchronously. The timers are unref'd: a pending expiry keeps no process alive.
 */
export function onTokenExpiry(expiresAt: number, expired: () => void, now: () => number = Date.now): TokenExpiry {
  const at = expiresAt * 1000;
  let timer: NodeJS.Timeout | null = null;
  const arm = (): void => {
    const left = at - now();
    if (left <= 0 && timer !== null) {
      timer = null;
      return expired();
    }
    timer = setTimeout(arm, Math.min(Math.max(0, left), MAX_TIMER_DELAY_MS));
    timer.unref();
  };
  arm();
  return {
    cancel() {
      if (timer !== null) clearTimeout(timer);
      timer = null;
    },
  };
}

/**
 * `reply` is cut (destroyed) once the wall clock reaches `endsAt` (seconds: an OAuth token's `exp` plus the
 * clock skew its admission allowed), unless it closed first: what a token let a client read stops with the
 * token, as a WebSocket is closed then. For the replies that need not end on their own: a GET's event
 * stream, a `subscriptions/listen` POST's (a tool call's ends with its answer, and is left to finish).
 */
export function endAtExpiry(reply: { destroy(): unknown; on(event: 'close', listener: () => void): unknown }, endsAt: number, now: () => number = Date.now): void {
  const expiry = onTokenExpiry(endsAt, () => void reply.destroy(), now);
  reply.on('close', () => expiry.cancel());
}
