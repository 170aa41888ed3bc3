// Restart intensity, OTP's guard against restart storms: at most `maxRestarts` restarts within any
// `periodMs`; one more and the supervisor gives up and escalates. Pure: time comes in as `now`.

/**
 * OTP's default is 1 restart in 5 s. We allow 3: one crash here can restart several actors at once
 * (a worker thread that dies takes every actor scheduled on it, and one_for_all / rest_for_one
 * restart siblings), and a single bad request should not take the subtree down.
 */
export const DEFAULT_MAX_RESTARTS = 3;
/** The window restarts are counted in, as OTP's default period (5 s). */
export const DEFAULT_PERIOD_MS = 5000;

export interface RestartIntensityVerdict {
  /** False when this restart would be restart number `maxRestarts + 1` within the period. */
  readonly allowed: boolean;
  /** The restarts still inside the period, oldest first; with `now` appended when allowed. Store it for the next call. */
  readonly restarts: number[];
}

/**
 * Decides whether one more restart at `now` is allowed, given the times of past restarts.
 * A restart counts while `now - t < periodMs`: one exactly `periodMs` ago has left the window.
 * With `maxRestarts` 0 every restart is refused.
 */
export function restartIntensity(
  restarts: readonly number[],
  now: number,
  maxRestarts: number = DEFAULT_MAX_RESTARTS,
  periodMs: number = DEFAULT_PERIOD_MS,
): RestartIntensityVerdict {
  const window = restarts.filter((t) => now - t < periodMs);
  if (window.length >= maxRestarts) return { allowed: false, restarts: window };
  return { allowed: true, restarts: [...window, now] };
}
