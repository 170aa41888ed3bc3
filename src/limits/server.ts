// The named limits of one area: The supervision tree and stopping the server. Imported through src/limits.ts, the one module every
// other file names (test/architecture/readme-figures.test.ts reads them there); imports nothing.

// ── The supervision tree (src/server/application.ts, src/supervisor/intensities.ts).

/**
 * Restart intensity (restarts / period) of each level of the supervision tree; past it that level gives
 * up (README, "Crash semantics"). `--restart-intensity LEVEL=N/SECONDS` changes one. Defaults, and why:
 * - root 3 / 5 s: a child of the root (schedulers, tools, sessions, tasks) restarting more often is a bug
 *   in the server itself; the process exits 1 with the reason rather than spin.
 * - schedulers 10 / 2 s: a thread that dies while booting loops about three times a second per slot, and
 *   is stopped within two seconds; a killed thread now and then is absorbed.
 * - session 10 / 1 s: a connection actor crashing on every message is a loop and ends the session within a
 *   second (its requests all answered); sporadic crashes — a bad message now and then — are absorbed.
 * - task 10 / 10 s: a harness task's actor is replayed from its transcript, which takes longer per restart.
 */
export const DEFAULT_TREE_INTENSITIES = {
  root: { maxRestarts: 3, periodMs: 5000 },
  schedulers: { maxRestarts: 10, periodMs: 2000 },
  session: { maxRestarts: 10, periodMs: 1000 },
  task: { maxRestarts: 10, periodMs: 10_000 },
} as const;

// ── The server: stopping sessions and the store (src/server).

/** How long a stopping connection or task actor gets (its child spec's shutdown) before it is killed. */
export const SESSION_SHUTDOWN_MS = 2000;

/** How long stopping waits for tasks to record how they ended before the store is closed under them. */
export const STORE_CLOSE_GRACE_MS = 2000;
