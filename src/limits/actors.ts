// The named limits of one area: The actor runtime: mailboxes, scheduler threads, calls. Imported through src/limits.ts, the one module every
// other file names (test/architecture/readme-figures.test.ts reads them there); imports nothing.

// ── Actors: mailboxes, scheduler threads, calls (src/actors).

/** Messages an actor's mailbox holds at most; past it new ones are refused (a request gets -32011, server busy). */
export const DEFAULT_MAILBOX_LIMIT = 10_000;

/** Messages one actor handles per turn before the next actor on its thread gets a turn (BEAM's reductions): one busy session cannot starve the others. */
export const REDUCTIONS_PER_TURN = 64;

/**
 * Messages the main thread gathers for one scheduler worker thread before it posts them as one: what one
 * event-loop turn sends a thread (the requests of every socket read in that turn) crosses as one message,
 * so a thread is woken once per turn instead of once per request (each wake-up of an idle thread costs the
 * sender a system call and both threads a context switch). The rest go at the end of the turn, however few.
 * An internal figure: it bounds nothing a caller sends (every message is still counted where it lands).
 */
export const THREAD_MESSAGES_PER_POST = 64;

/** Default timeout of an actor `call`, as gen_server's 5 s; past it the call rejects with CallTimeoutError. */
export const DEFAULT_CALL_TIMEOUT_MS = 5000;

/**
 * The fewest threads a pool starts with by default: with one, a thread being restarted (or hung until
 * the heartbeat notices) would stop every actor or every pooled call at once.
 */
export const MIN_DEFAULT_THREADS = 2;

/** How long a spawn waits for a scheduler thread when every one is down (being restarted); past it the spawn fails. */
export const SPAWN_WAIT_MS = 10_000;

/** How often the main thread pings each scheduler worker thread (HEARTBEAT_TIMEOUT_MS says when it is hung). */
export const HEARTBEAT_INTERVAL_MS = 250;

/**
 * A scheduler worker that leaves a ping unanswered for longer than this is hung: it is terminated, and
 * its actors exit (their supervisors restart them). A blocked main thread, which sends no ping, does not
 * count against a worker.
 */
export const HEARTBEAT_TIMEOUT_MS = 1500;

/** V8 old-generation limit of a scheduler worker thread; past it the thread dies (and is replaced), not the process. */
export const SCHEDULER_THREAD_MEMORY_MB = 256;
