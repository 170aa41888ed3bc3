// The restart intensity of each level of the application's supervision tree (OTP's intensity / period),
// named, documented defaults; `--restart-intensity LEVEL=N/SECONDS` changes one (README, "Crash semantics").

export type TreeLevel = 'root' | 'schedulers' | 'session' | 'task';

export interface Intensity {
  /** Restarts tolerated within `periodMs`; one more and the supervisor gives up. */
  readonly maxRestarts: number;
  readonly periodMs: number;
}

export type TreeIntensities = Readonly<Record<TreeLevel, Intensity>>;

/**
 * Defaults, and why:
 * - root 3 / 5 s: a child of the root (schedulers, tools, sessions, tasks) restarting more often is a bug
 *   in the server itself; the process exits 1 with the reason rather than spin.
 * - schedulers 10 / 2 s: a thread that dies while booting loops about three times a second per slot, and
 *   is stopped within two seconds; a killed thread now and then is absorbed.
 * - session 10 / 1 s: a connection actor crashing on every message is a loop and ends the session within a
 *   second (its requests all answered); sporadic crashes — a bad message now and then — are absorbed.
 * - task 10 / 10 s: a harness task's actor is replayed from its transcript, which takes longer per restart.
 */
export const DEFAULT_TREE_INTENSITIES: TreeIntensities = {
  root: { maxRestarts: 3, periodMs: 5000 },
  schedulers: { maxRestarts: 10, periodMs: 2000 },
  session: { maxRestarts: 10, periodMs: 1000 },
  task: { maxRestarts: 10, periodMs: 10_000 },
};

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
