// The named limits of one area: The operator's log. Imported through src/limits.ts, the one module every
// other file names (test/architecture/readme-figures.test.ts reads them there); imports nothing.

// ── The operator's log (src/log/logger.ts). No flags: a log line is for reading, not for keeping what a caller sent.

/**
 * Length of each string a log record carries, the message and every string in its fields, in characters;
 * past it the string is cut and says how much was left out. Caller text (a method name, a path, an error
 * message) reaches the log only through these fields, so no caller can write a megabyte-long line.
 */
export const MAX_LOGGED_STRING_LENGTH = 1024;

/** Length of the fields of one log record, as their JSON text; past it the text is cut, saying how much was left out. */
export const MAX_LOGGED_FIELDS_LENGTH = 8 * 1024;

/**
 * Characters of log lines waiting for stderr to take them. A host that never reads our stderr pipe (or a
 * terminal whose output is stopped) would otherwise have every record kept in memory, without end (20 MB
 * of records took 20 MB in 35 ms, measured on Node 20, 22 and 24). 1 MiB is some five thousand records of
 * a usual size, enough to ride out a reader that is slow for a while. Past it records are dropped, and
 * once stderr has taken what waited one line says how many were dropped. It also bounds what a tool-pool
 * thread has sent the main thread and the main thread has not yet taken (log/thread-console.ts, log/thread-output.ts): piscina
 * gives its threads no piped output, and Node piped a thread's stderr to ours past this queue.
 */
export const LOG_QUEUE_MAX_BYTES = 1024 * 1024;

/**
 * Characters of a thread's console output (a scheduler, git status or tool thread writing to its stdout or
 * stderr) given to the bounded log queue as one record: a longer chunk is cut into pieces of this size, so
 * one large write cannot pass LOG_QUEUE_MAX_BYTES (an empty queue takes any one record whole), and past the
 * bound whole pieces are dropped and counted like log records.
 */
export const THREAD_OUTPUT_PIECE_CHARS = 64 * 1024;
