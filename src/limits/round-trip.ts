// Multi-round-trip limits (2026-07-28 `input_required`, docs/multi-round-trip.md): sealed request state.

/**
 * How long a sealed `requestState` (a confirmation asked over 2026-07-28) stays valid, by the wall clock
 * of whichever node the retry reaches: long enough for a person to read and answer the question, short
 * enough that an answered state cannot be replayed for long (it carries no single-use mark: the era is
 * stateless, and a store lookup per retry would make it stateful).
 */
export const REQUEST_STATE_TTL_MS = 10 * 60_000;

/** The longest `requestState` a retry may carry (characters): ours are about 300; anything far larger is refused unread. */
export const MAX_REQUEST_STATE_LENGTH = 4096;

/** The shortest state key (`SUPERPI_STATE_KEY`, UTF-8 bytes) a node accepts: an HMAC-SHA256 key shorter than its output weakens it. */
export const MIN_STATE_KEY_BYTES = 32;
