// Multi-round-trip limits (2026-07-28 `input_required`, docs/multi-round-trip.md): sealed request state.

/**
 * How long a sealed `requestState` (a confirmation asked over 2026-07-28) stays valid, by the wall clock
 * of whichever node the retry reaches: long enough for a person to read and answer the question, short
 * enough that a state unanswered is not good for long. An accepted confirmation is single-use besides
 * (its use recorded in the store: CONSUMED_STATE_SWEEP_BATCH).
 */
export const REQUEST_STATE_TTL_MS = 10 * 60_000;

/** The longest `requestState` a retry may carry (characters): ours are about 300; anything far larger is refused unread. */
export const MAX_REQUEST_STATE_LENGTH = 4096;

/**
 * Random bytes of the nonce sealed into every `requestState` (22 base64url characters): two states sealed
 * for the same call in the same millisecond differ by it, so each is spent on its own
 * (docs/multi-round-trip.md#single-use). 128 bits: two seals sharing one is not a case to handle.
 */
export const STATE_NONCE_BYTES = 16;

/** The shortest state key (`SUPERPI_STATE_KEY`, UTF-8 bytes) a node accepts: an HMAC-SHA256 key shorter than its output weakens it. */
export const MIN_STATE_KEY_BYTES = 32;

/**
 * Rows of spent confirmations (docs/multi-round-trip.md#single-use) that one consumption deletes in its own
 * write, soonest expired first: each consumption adds one row and may take this many expired ones, so the
 * table holds the confirmations used within the last REQUEST_STATE_TTL_MS + CONSUMED_STATE_GRACE_MS and a
 * backlog that never grows.
 */
export const CONSUMED_STATE_SWEEP_BATCH = 16;

/**
 * How long after its state's expiry a spent confirmation's row is kept: a node whose wall clock lags the
 * sweeping node's by less than this still finds the row (and refuses the replay) while the state opens there.
 */
export const CONSUMED_STATE_GRACE_MS = 5 * 60_000;

/** The longest state digest the store records (characters; the core's SHA-256 in base64url is 43). */
export const MAX_STATE_DIGEST_LENGTH = 128;
