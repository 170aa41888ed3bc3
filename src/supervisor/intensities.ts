// The restart intensity of each level of the application's supervision tree (OTP's intensity / period),
// named, documented defaults; `--restart-intensity LEVEL=N/SECONDS` changes one (README, "Crash semantics").

import { DEFAULT_TREE_INTENSITIES } from '../limits.ts';

export type TreeLevel = 'root' | 'schedulers' | 'session' | 'task';

export interface Intensity {
  /** Restarts tolerated within `periodMs`; one more and the supervisor gives up. */
  readonly maxRestarts: number;
  readonly periodMs: number;
}

export type TreeIntensities = Readonly<Record<TreeLevel, Intensity>>;

const LEVELS: readonly TreeLevel[] = ['root', 'schedulers', 'session', 'task'];

/** Parses `--restart-intensity` values such as `session=20/1` or `schedulers=10/2.5` (seconds) over the defaults. */
export function parseIntensities(specs: readonly string[], defaults: TreeIntensities = DEFAULT_TREE_INTENSITIES): TreeIntensities {
  const result: Record<TreeLevel, Intensity> = { ...defaults };
  for (const spec of specs) {
    const match = /^([a-z]+)=(\d+)\/(\d+(?:\.\d+)?)$/.exec(spec);
    const level = match?.[1] as TreeLevel | undefined;
    if (!match || level === undefined || !LEVELS.includes(level)) {
      throw new Error(`--restart-intensity takes LEVEL=RESTARTS/SECONDS with LEVEL one of ${LEVELS.join(', ')} (e.g. session=10/1), not "${spec}"`);
    }
    const maxRestarts = Number(match[2]);
    const periodMs = Math.round(Number(match[3]) * 1000);
    if (!Number.isSafeInteger(maxRestarts) || periodMs <= 0) throw new Error(`--restart-intensity ${level}: a period of at least 1 ms, not "${spec}"`);
    result[level] = { maxRestarts, periodMs };
  }
  return result;
}
