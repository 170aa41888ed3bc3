// The named limits of one area: The observer page and /metrics. Imported through src/limits.ts, the one module every
// other file names (test/architecture/readme-figures.test.ts reads them there); imports nothing.

// ── The observer page and /metrics (src/observer).

/** How often a watching observer page gets a snapshot. */
export const OBSERVER_UPDATE_MS = 500;

/** Observer event streams open at once; more are refused with 503. */
export const MAX_OBSERVER_STREAMS = 16;

/**
 * Observer event streams one viewer holds open at once (a token principal, or a client address where the
 * observer needs no token), a quarter of MAX_OBSERVER_STREAMS: more are refused with 429.
 */
export const MAX_OBSERVER_STREAMS_PER_VIEWER = 4;

/** The Retry-After of an event stream refused for either count above. */
export const OBSERVER_STREAM_RETRY_AFTER_SECONDS = 5;

/** A stream whose client has this much unread is skipped (not buffered further) until it catches up. */
export const MAX_OBSERVER_BACKLOG_BYTES = 1 << 20;

/**
 * How long a stream may go on being skipped (MAX_OBSERVER_BACKLOG_BYTES unread) without once catching up
 * (nothing unread at a tick) before it is ended: a client reading a trickle never meets the send timeout.
 */
export const OBSERVER_STREAM_LAG_MS = 30_000;

/** Seconds of the call chart sent with each snapshot, once the server has run that long. */
export const CHART_SECONDS = 180;

/**
 * Payload bytes of one `/observer/transcript` answer, cut by the store from the sizes it recorded (no
 * payload past the cut is read); at least one entry, so an entry larger than this comes alone. The page
 * asks again from the last seq it has, a second later.
 */
export const OBSERVER_TRANSCRIPT_PAGE_BYTES = 1 << 20;
