// The named limits of one area: Harness tasks. Imported through src/limits.ts, the one module every
// other file names (test/architecture/readme-figures.test.ts reads them there); imports nothing.

// ── Harness tasks (src/task).

/** Model turns a task may take when `max_turns` is not given; past them the task ends, saying so. */
export const DEFAULT_MAX_TURNS = 25;

/** The most turns `max_turns` may ask for (the tool's JSON Schema maximum: more is -32602). */
export const MAX_TURNS_LIMIT = DEFAULT_MAX_TURNS * 8;

/** How long closing a session waits for its tasks to record that they were stopped. */
export const TASK_CLOSE_GRACE_MS = 2000;

/** Wall time of one task, across restarts; past it the task is stopped and answered as such. */
export const DEFAULT_TASK_WALL_MS = 15 * 60_000;

/** Characters of one tool result sent back to the model (the tools already truncate at 50 KB). */
export const MAX_RESULT_CHARS = 60_000;

/** Files larger than this are not snapshotted (and so cannot be undone): the store keeps whole contents. */
export const MAX_SNAPSHOT_BYTES = 4 * 1024 * 1024;

/**
 * Harness tasks one principal may run at once on this node (every anonymous caller together is one
 * principal); one more is refused at its start with a tool error naming the flag. `--max-tasks-per-principal`.
 */
export const DEFAULT_MAX_TASKS_PER_PRINCIPAL = 4;

/**
 * Model turns one principal's tasks may begin per minute on this node (a sliding window); past it a turn
 * waits until the window allows, reporting progress "waiting for the model budget", within the task's
 * wall time. `--turns-per-minute`.
 */
export const DEFAULT_TURNS_PER_MINUTE = 60;

/**
 * Requests one principal's tasks may send to a model endpoint per minute on this node, retries included
 * (what the operator pays for); past it a request waits as a turn does. `--model-calls-per-minute`.
 */
export const DEFAULT_MODEL_CALLS_PER_MINUTE = 120;

/** The window of the per-minute task budgets. */
export const TASK_BUDGET_WINDOW_MS = 60_000;

/**
 * The `pollIntervalMs` a 2026-07-28 `CreateTaskResult` suggests (Tasks extension, SEP-2663): how often a
 * client should ask `tasks/get`. A model turn takes seconds, so polling faster only costs store reads.
 */
export const TASK_POLL_INTERVAL_MS = 1000;

/** The longest `taskId` a `tasks/get` / `tasks/update` / `tasks/cancel` may name (task ids are conversation UUIDs, 36 characters). */
export const MAX_TASK_ID_LENGTH = 128;

/** The most answers one `tasks/update` may carry in `inputResponses` (at least `MAX_PARKED_QUESTIONS`, so one update can answer a whole park). */
export const MAX_INPUT_RESPONSES = 16;

/**
 * The most questions a Tasks-extension task parks with at once (docs/tasks-extension.md, "Several questions
 * at once"): the calls under `ask` of one model turn, in its order. A turn asking more parks again, after
 * these calls ran, for the rest. Each answer but the last is a transcript entry, so this bounds the entries
 * (and the store writes) one park's answers add.
 */
export const MAX_PARKED_QUESTIONS = 8;

/**
 * How long a Tasks-extension task waits parked `input_required` for its person's answer (`tasks/update`):
 * 10 minutes, as a sealed round-trip state lives (REQUEST_STATE_TTL_MS). Past it the question counts as
 * unanswered, as a round trip's "no answer": the call is not run, the model reads why, and the task goes on.
 */
export const TASK_INPUT_WAIT_MS = 10 * 60_000;
/**
 * A finished task without a stored result (it finished before the store kept results, was cancelled from
 * another node, or was interrupted when its process died) has it rebuilt from the end of its transcript,
 * read backwards TASK_RESULT_TAIL_PAGE entries at a time back to its last run's prompt, but never more than
 * TASK_RESULT_TAIL_ENTRIES entries nor (past one page) TASK_RESULT_TAIL_BYTES of payload JSON: one
 * `tasks/get` poll reads that much at most, however long the conversation is. Past it the counts in
 * the result cover the entries read (docs/tasks-extension.md).
 */
export const TASK_RESULT_TAIL_PAGE = 64;
export const TASK_RESULT_TAIL_ENTRIES = 2048;
export const TASK_RESULT_TAIL_BYTES = 8 * 1024 * 1024;

/**
 * What a poll of a parked task (`input_required`) rebuilt, kept per node so that the next polls of the same
 * parked place read no entry: at most TASK_PARKED_INPUT_CACHE_ENTRIES places, least recently read dropped
 * first, and at most TASK_PARKED_INPUT_CACHE_BYTES held (a question's text; a model turn's request carries
 * its conversation, counted as the payload JSON it was built from; one larger than that is not kept).
 */
export const TASK_PARKED_INPUT_CACHE_ENTRIES = 32;
export const TASK_PARKED_INPUT_CACHE_BYTES = 32 * 1024 * 1024;

/**
 * Retention of Tasks-extension tasks (`--task-ttl`, `SUPERPI_TASK_TTL`; docs/tasks-extension.md#retention):
 * none by default (`ttlMs: null`, nothing is ever deleted). With a retention, a node sweeps the expired task
 * conversations out of the store every TASK_SWEEP_INTERVAL_MS (or every retention, when that is shorter, but
 * not more often than TASK_SWEEP_MIN_INTERVAL_MS), TASK_SWEEP_BATCH conversations (with their entries) per
 * delete, at most TASK_SWEEP_BATCHES_PER_PASS deletes per pass: the rest wait for the next pass.
 */
export const TASK_SWEEP_INTERVAL_MS = 60_000;
export const TASK_SWEEP_MIN_INTERVAL_MS = 1000;
export const TASK_SWEEP_BATCH = 50;
export const TASK_SWEEP_BATCHES_PER_PASS = 20;
/** The longest retention `--task-ttl` accepts: a year (the retention is kept in milliseconds with every task). */
export const MAX_TASK_TTL_MS = 365 * 24 * 3600_000;

/**
 * Tasks-extension tasks one principal may have parked `input_required` on this node at once (a parked task
 * holds no task slot; the node keeps its wait until TASK_INPUT_WAIT_MS). One more new task is refused at its
 * start with a tool error naming the limit; answering or cancelling one frees its place.
 */
export const MAX_PARKED_TASKS_PER_PRINCIPAL = 64;

/**
 * The most payload a task loads of its conversation's history (each entry's JSON as UTF-8, as the store
 * records it), at its start, at each restart and at each round of a round-trip run (task-history.ts): the
 * file snapshots before its last model turn are not loaded at all; a conversation whose other entries
 * pass this is refused — the task records an `error` entry saying so and fails, suggesting a new
 * conversation — rather than cut (docs/limits.md says why). 32 MiB: several times what any model's
 * context window holds, so a history the task refuses could not have been sent whole to a model anyway.
 */
export const TASK_HISTORY_MAX_BYTES = 32 * 1024 * 1024;

/**
 * The histories kept on this node for the next round of a run in round trips (round-history.ts): at most
 * this many conversations, least recently read dropped first, and at most TASK_ROUND_HISTORY_CACHE_BYTES
 * of payload (one larger is not kept). A round whose history is not kept reads it whole from the store.
 */
export const TASK_ROUND_HISTORY_CACHE_ENTRIES = 32;
export const TASK_ROUND_HISTORY_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * Undo (src/task/undo-plan.ts) reads a conversation's `file_snapshot` and `undo` entries in pages of at most
 * UNDO_PAGE_BYTES of payload JSON (one entry at least, whatever its size), each dropped once read, and keeps
 * of each snapshot not yet undone a record of digests (its seq, its path, SHA-256 digests of its contents:
 * a few hundred bytes); at most UNDO_MAX_SNAPSHOTS such records, past which the undo is refused before it
 * reverts anything. A file's before-image is read back alone, when it is restored.
 */
export const UNDO_PAGE_BYTES = 8 * 1024 * 1024;
export const UNDO_MAX_SNAPSHOTS = 100_000;

/**
 * A task's end whose status the store refused (the disk full, the database unreachable) is written again every
 * TASK_STATUS_RETRY_MS, at most TASK_STATUS_RETRIES times (ten minutes), until the store takes it
 * (task-status-retry.ts): until then its conversation reads `running` and a 2026-07-28 client polls a task
 * that nothing runs. A newer claim of the conversation (fenced) or the store's close ends the retries.
 */
export const TASK_STATUS_RETRY_MS = 5000;
export const TASK_STATUS_RETRIES = 120;

/**
 * Tool calls one model turn may ask for. Past it the turn is not run: the task fails naming the limit (its
 * transcript kept, continuable). The calls are the model's text — a client's sampling answer, or a model a
 * file it read has told what to write — and each would be run, recorded and its result kept for every later
 * turn: tens of thousands of `read`s of one large file in a single turn were gigabytes held by the task.
 */
export const MAX_TOOL_CALLS_PER_TURN = 64;
