// The named limits and defaults an operator or a caller meets, in one place, lowest layer (imports
// nothing): what each bounds, what happens past it, and the flag that changes it where there is one.
// Every figure the README states comes from here (test/architecture/readme-figures.test.ts checks them).
// Purely internal tuning constants stay beside the code they tune.


// ── Protocol: what one message, and one session, can make the core hold or do (src/mcp). No flags: no real client comes near them.

/**
 * Deepest nesting of objects and arrays in one message (a batch element counts on its own; the
 * message object itself is level 1). Real MCP messages nest under 10 levels; the limit keeps
 * recursive consumers downstream (checkpoint encoding, structured clone, JSON.stringify) far from
 * their stack limit. Past it: a request gets -32602 with its id, a response counts as an error
 * answer, a notification is dropped (logged), anything else gets -32600 with id null.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Elements one JSON-RPC batch may carry (batches exist in 2025-03-26 and 2024-11-05). Past it the
 * whole batch is refused with one -32600 reply, id null; no element is handled.
 */
export const MAX_BATCH_LENGTH = 1000;

/**
 * Size of the `capabilities` an initialize may declare, as the length of their JSON text. The
 * session keeps them for its lifetime and in every checkpoint. Past it: -32602, the session stays
 * uninitialized.
 */
export const MAX_CLIENT_CAPABILITIES_BYTES = 64 * 1024;

/** Length of each string of the initialize `clientInfo` (name, version, title) the session keeps. Past it: -32602. */
export const MAX_CLIENT_INFO_STRING_LENGTH = 256;

/**
 * Length of a request id, or of a progress token, in characters (numbers are always accepted). Both
 * are kept while the request is in flight. Past it: -32600 with id null (an over-long id is not echoed).
 */
export const MAX_REQUEST_ID_LENGTH = 256;

/**
 * Length of a method name, in characters (the longest MCP method is under 40). A request with a longer
 * one gets -32600 with its id; a notification is dropped, with one log line that does not repeat it.
 */
export const MAX_METHOD_LENGTH = 256;

/** Requests of one session in flight at once (tool calls, confirmations, resource reads, completions). Past it: -32011 (server busy). */
export const MAX_REQUESTS_IN_FLIGHT = 512;

/**
 * Conversations (harness tasks) one session starts; subscriptions are only possible to these, so the
 * same bound holds for them. Past it: a further `harness_task` call gets -32602.
 */
export const MAX_SESSION_CONVERSATIONS = 1000;

/** Items per page of every list (`tools/list`, `prompts/list`, `resources/list`, templates); `--page-size` changes it. */
export const DEFAULT_PAGE_SIZE = 50;

/** The most values one completion returns (the MCP limit); past it the rest are counted in `total`, with `hasMore`. */
export const MAX_COMPLETION_VALUES = 100;

/**
 * Roots of one `roots/list` answer that are considered, in the client's order; later ones are ignored
 * (logged). The session works in the first acceptable one, so a host's first folder is always among them.
 */
export const MAX_ROOTS_CONSIDERED = 16;

/** Characters of one root's URI; a longer one is refused (logged) without being looked at. */
export const MAX_ROOT_URI_LENGTH = 4096;

/**
 * How long tool calls, resource reads and completions wait for the client's roots (asked after
 * `initialized` and on `roots/list_changed`) before they run in the workspace the session has — the
 * configured one until a root was chosen (logged). Hosts answer `roots/list` in milliseconds.
 */
export const ROOTS_WAIT_MS = 3000;

/**
 * Freshness hint (`ttlMs`, 2026-07-28) on answers that change only when the server is restarted with
 * other flags: `tools/list`, `prompts/list`, `resources/templates/list`, `server/discover`. Always
 * `cacheScope: "private"`: what a caller may see depends on its principal.
 */
export const CATALOG_CACHE_TTL_MS = 5 * 60_000;

/**
 * Freshness hint (`ttlMs`, 2026-07-28) on answers that follow the workspace and the caller's work:
 * `resources/list` (conversations) and `resources/read` (git status, transcripts). Private, as above.
 */
export const RESOURCE_CACHE_TTL_MS = 5_000;


// ── Actors: mailboxes, scheduler threads, calls (src/actors).

/** Messages an actor's mailbox holds at most; past it new ones are refused (a request gets -32011, server busy). */
export const DEFAULT_MAILBOX_LIMIT = 10_000;

/** Messages one actor handles per turn before the next actor on its thread gets a turn (BEAM's reductions): one busy session cannot starve the others. */
export const REDUCTIONS_PER_TURN = 64;

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


// ── Connections: one MCP session (src/connection).

/**
 * Elements of a JSON-RPC batch handled per turn of the actor. Between slices the thread serves its other
 * actors and answers its heartbeat, so a long batch (up to MAX_BATCH_LENGTH) never holds the thread.
 */
export const BATCH_SLICE_LENGTH = 50;

/** Messages held for a session while its actor is being restarted; past this, requests are refused with -32011 (server busy). */
export const MAX_BUFFERED_MESSAGES = 10_000;

/** After a deadline or cancellation aborts a tool, how long it has to stop; past it the call is answered for (`Stopped: …`) and its late result dropped. */
export const ABORT_GRACE_MS = 2000;

/** Entries of the top-level layout listed; more are summarised as a count. */
export const LAYOUT_LIMIT = 100;

/** Lines of the README shown in the workspace resource. */
export const README_EXCERPT_LINES = 40;

/** Bytes of the README read at most: the excerpt comes from its head, whatever its size. */
export const README_EXCERPT_BYTES = 16 * 1024;

/** Path completions returned at most; the rest are reported as `hasMore`. */
export const PATH_COMPLETION_LIMIT = 100;


// ── Tools: what one tool call may read, run, keep and wait for (src/tools).

/** Lines of output a tool returns at most (pi's rule); past it the output is cut with a notice that says how to go on. */
export const DEFAULT_MAX_LINES = 2000;

/** Bytes of output a tool returns at most (pi's rule, whichever of the two comes first); past it as DEFAULT_MAX_LINES. */
export const DEFAULT_MAX_BYTES = 50 * 1024;

/** Largest file read whole on a caller's behalf (edit; git's index and objects) unless a caller names a smaller bound; a larger one is refused with a message naming the size. */
export const MAX_CONFINED_FILE_BYTES = 64 * 1024 * 1024;

/** Symlink hops followed while resolving one path (as Linux's 40); past it the path is refused as a loop ("too many levels of symbolic links"). */
export const MAX_SYMLINK_HOPS = 40;

/** Directory entries a single walk (`grep`, `find`) examines; past it the walk stops and the result says it was capped, so a huge tree cannot run forever. */
export const MAX_WALK_ENTRIES = 200_000;

/** Paths returned when the caller gives no `limit`. */
export const FIND_DEFAULT_LIMIT = 1000;

/** Matches returned when the caller gives no `limit`. */
export const GREP_DEFAULT_LIMIT = 100;

/** Characters of a matched or context line shown before it is cut. */
export const GREP_MAX_LINE_LENGTH = 500;

/** Files larger than this are skipped (and counted) rather than read. */
export const GREP_MAX_FILE_BYTES = 10 * 1024 * 1024;

/** Replacements one `edit` call may carry in `edits` (the schema's maxItems); more is refused before anything is read. */
export const EDIT_MAX_EDITS = 1000;

/** UTF-8 bytes of all of one `edit` call's oldText and newText together; more is refused before anything is read. */
export const EDIT_MAX_TEXT_BYTES = 1024 * 1024;

/** An `edit` of a file larger than this runs its matching on the tool pool (with its memory limit and deadline) instead of inline. */
export const EDIT_INLINE_MAX_BYTES = 64 * 1024;

/** An `edit` whose oldText and newText are longer than this, in characters, runs its matching on the tool pool too (the matcher is built from them). */
export const EDIT_INLINE_MAX_TEXT_CHARS = 16 * 1024;

/** Entries `ls` returns when the caller gives no `limit`. */
export const DEFAULT_LS_LIMIT = 500;

/** Seconds a command may run when the caller gives no `timeout` (pi's default); 0 disables the timer. */
export const BASH_DEFAULT_TIMEOUT_SECONDS = 180;

/** The largest `bash` timeout: what a Node timer can hold, in whole seconds. A larger one is an error naming the range. */
export const BASH_MAX_TIMEOUT_SECONDS = 2_147_483;

/** Between SIGTERM and SIGKILL when a command is stopped, so it can clean up a little. */
export const KILL_GRACE_MS = 500;

/**
 * Sandboxes built ahead of the next `bash` command (one per distinct launch: workspace, policy, environment),
 * so a command does not wait for its namespaces and mounts; past it the oldest spare is ended.
 */
export const MAX_SPARE_SANDBOXES = 4;

/** A spare sandbox older than this is not used (the paths it hides were looked up when it was built): the command builds a fresh one. */
export const SPARE_SANDBOX_MAX_AGE_MS = 30_000;

/**
 * Output kept in memory. Twice the byte limit is enough for truncateTail to give the same lines it would
 * give for the whole output: anything earlier could never fit in the last DEFAULT_MAX_BYTES.
 */
export const TAIL_KEEP_BYTES = 2 * DEFAULT_MAX_BYTES;

/**
 * Full-output files left in the temp directory, the newest included: each new one deletes the oldest beyond
 * this, so a long session does not fill the disk while recent outputs stay readable.
 */
export const MAX_FULL_OUTPUT_FILES = 20;

/**
 * Largest full-output file: past it the file stops growing (the output is still read, and its tail kept in
 * memory), and the notice says the file holds only the beginning. One runaway command cannot fill the disk.
 */
export const MAX_FULL_OUTPUT_FILE_BYTES = 64 * 1024 * 1024;

/**
 * Total size of the full-output files kept: after a new one is written, the oldest are deleted until the
 * newest (always kept) and the rest fit under this, whatever their count. A file still being written (its
 * command is running) is bounded by MAX_FULL_OUTPUT_FILE_BYTES alone until its command ends.
 */
export const MAX_FULL_OUTPUT_TOTAL_BYTES = 256 * 1024 * 1024;

/** A `read` of a file larger than this runs on the tool pool (with its memory limit and fair share) instead of inline. */
export const LARGE_READ_BYTES = 1024 * 1024;

/** Longer side of an image `read` returns, in pixels (pi's rule); a larger image is resized to fit. */
export const IMAGE_MAX_EDGE_PX = 2000;

/**
 * Bytes of the image `read` returns (before base64): 3 MiB is 4 MiB of base64, under the 5 MB per image
 * Anthropic's API accepts with room for the JSON around it, and within DEFAULT_MAX_MESSAGE_BYTES, so an MCP
 * peer with super-pi's own message limit accepts the answer. A larger result is re-encoded as JPEG at
 * falling quality, then smaller, until it fits.
 */
export const IMAGE_MAX_BYTES = 3 * 1024 * 1024;

/** Largest image file `read` decodes; a larger one is refused before it is read. */
export const IMAGE_MAX_FILE_BYTES = 32 * 1024 * 1024;

/**
 * Pixels (width × height) an image may declare and still be decoded: 50 megapixels (an 8K × 6K photo) holds
 * the decode to about 200 MB of native memory at worst. A decompression bomb (a small file declaring
 * 100,000 × 100,000) is refused from its header, before any pixel is decoded.
 */
export const IMAGE_MAX_INPUT_PIXELS = 50_000_000;

/**
 * Image decodes running at once in one process. sharp runs them on libuv's thread pool (4 threads by
 * default), which file reads share: two leave the others free for every session's I/O.
 */
export const IMAGE_MAX_CONCURRENT_DECODES = 2;

/** Image reads waiting for a decode slot; past it a read is refused at once rather than queued. */
export const IMAGE_MAX_WAITING_DECODES = 64;

/** V8 old-generation limit of one tool-pool thread; past it the call is an error saying it ran out of memory, and the thread is replaced. */
export const TOOL_THREAD_MEMORY_MB = 512;

/** Pooled calls one session may have waiting for a thread; past it a call is refused at once. */
export const TOOL_POOL_MAX_WAITING_PER_SESSION = 64;

/** Lines of short status shown; more are summarised as a count. */
export const GIT_STATUS_LINES = 50;

/**
 * Time the workspace's git status may take; past it its thread is terminated (even mid-inflate) and the
 * resource shows "git status skipped: …" instead.
 */
export const GIT_STATUS_DEADLINE_MS = 5000;

/** V8 old-generation limit of the thread one git status runs in; past it the thread dies and the status is skipped. */
export const GIT_STATUS_THREAD_MEMORY_MB = 64;

/**
 * Largest git object the status inflates (a commit, a tree, a delta's target), by its header and by what
 * it really inflates to; a larger one is refused before it is inflated and the status is skipped.
 * 4 MB holds a tree of ~80,000 entries.
 */
export const GIT_OBJECT_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Bytes one git status may inflate in all: loose objects it reads, and every entry (and delta target) of
 * every pack it reads, which is checked whole before it is used. Past it the status is skipped.
 */
export const GIT_STATUS_MAX_INFLATED_BYTES = 128 * 1024 * 1024;

/** Largest `.pack` or `.idx` file the status reads (isomorphic-git holds a pack whole in memory). */
export const GIT_PACK_MAX_BYTES = 64 * 1024 * 1024;

/** Longest chain of deltas to a base object in a pack (git's own deepest `--depth` is 4095; `gc --aggressive` packs to 50). */
export const GIT_DELTA_MAX_DEPTH = 250;

/**
 * The port on 127.0.0.1, inside a `bash` sandbox with `--bash-network allow=…`, where the egress bridge
 * listens and the proxy variables point (HTTP_PROXY and the rest): 3128, the port HTTP proxies are known by.
 * The sandbox has a network namespace of its own, so the port is free there whatever the host runs.
 */
export const EGRESS_PROXY_PORT = 3128;

/** Bytes of a request line and headers the egress proxy reads before answering 431 and closing the connection. */
export const EGRESS_MAX_HEADER_BYTES = 16 * 1024;

/**
 * Connections one egress proxy serves at once (requests waiting for headers, forwarded requests and open
 * tunnels alike). Past it a new connection is answered 503 and closed; the open ones go on.
 */
export const EGRESS_MAX_CONNECTIONS = 64;

/** How long the egress proxy waits for a request's complete headers; past it, 408 and the connection is closed. */
export const EGRESS_HEADERS_TIMEOUT_MS = 10_000;

/**
 * How long an egress connection may pass no byte either way (a kept-alive client between requests, a quiet
 * tunnel, an upstream that does not answer) before it is closed. A command's own timeout still ends it first.
 */
export const EGRESS_IDLE_TIMEOUT_MS = 120_000;

/** How long the egress proxy may take to resolve an allowed host and connect to it; past it, 504. */
export const EGRESS_CONNECT_TIMEOUT_MS = 10_000;

/**
 * Host names all egress proxies of the server resolve at once. Resolving runs on libuv's thread pool (4
 * threads unless UV_THREADPOOL_SIZE says otherwise), which file operations share; past this, a lookup
 * waits its turn (within EGRESS_CONNECT_TIMEOUT_MS), so slow names never hold the whole pool.
 */
export const EGRESS_MAX_CONCURRENT_LOOKUPS = 2;


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


// ── Several nodes on one PostgreSQL store: task leases and health (src/store/task-lease.ts, src/server/node-health.ts).

/**
 * How long a running task's lease lasts unless its node renews it (`--task-lease`, `SUPERPI_TASK_LEASE`).
 * Past it, on a PostgreSQL store, another node takes the task over and the first node's writes are fenced.
 */
export const TASK_LEASE_MS = 10_000;
/** Renewals per lease term: with 3, two heartbeats in a row may be late or lost before the lease lapses. */
export const LEASE_RENEWALS_PER_TERM = 3;
/** Expired tasks one takeover pass looks at: bounds one query's rows; the rest wait for the next pass. */
export const MAX_EXPIRED_TASKS = 20;
/** The largest session checkpoint the store keeps (a session's negotiated state, not its traffic); past it the save is refused. */
export const MAX_CHECKPOINT_BYTES = 1024 * 1024;
/** How long the node health probe waits for the store before it reports the store unreachable. */
export const HEALTH_STORE_TIMEOUT_MS = 1000;


// ── Sessions on any node of a cluster (src/cluster).

/**
 * How long forwarding a request to a session's home may take to connect; past it (or on a refused
 * connection) the home counts as unreachable for this try. Connecting only: an answer may rightly take long.
 */
export const FORWARD_CONNECT_TIMEOUT_MS = 2000;
/**
 * How often a node whose request could not reach a session's home (its lease still fresh) looks again:
 * the home may be back, or its lease lapsed so the session can be taken over. The whole wait is bounded
 * by the home's lease (plus one look), never by this.
 */
export const HOME_RETRY_MS = 250;
/**
 * How often a resumed stream that waits on the session event log looks whether its request was orphaned:
 * the session's home has no fresh node lease and no running task answers the request, so nothing will
 * ever end the stream (it is then answered `-32010` `node-died`). A request is taken for orphaned only
 * when two looks in a row say so, so the longest wait is about two of these past the home's lease.
 */
export const ORPHAN_CHECK_MS = 1000;
/**
 * Tries to find a session's place (forward, take over) for one request: a takeover lost to another node
 * is followed by a look at the new home, and so on; past this the request is answered 503 (retry).
 */
export const MAX_LOCATE_ATTEMPTS = 4;
/**
 * Sessions whose home a node remembers after forwarding to it (for as long as that home's lease was seen
 * to have left, never longer), so the next request of the session is forwarded without reading the store;
 * past this many the oldest is forgotten (and read again when needed).
 */
export const HOME_CACHE_ENTRIES = 10_000;

// ── Model endpoints a harness task calls (src/model).

/** Deadline of one attempt, from sending the request to the last byte of the response. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;

/** Attempts after the first one; a request is sent at most 1 + this many times. */
export const DEFAULT_MAX_RETRIES = 3;

/** Largest successful response body read; a model turn is far smaller, so more means something is wrong. */
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;


// ── The observer page and /metrics (src/observer).

/** How often a watching observer page gets a snapshot. */
export const OBSERVER_UPDATE_MS = 500;

/** Observer event streams open at once; more are refused with 503. */
export const MAX_OBSERVER_STREAMS = 16;

/** A stream whose client has this much unread is skipped (not buffered further) until it catches up. */
export const MAX_OBSERVER_BACKLOG_BYTES = 1 << 20;

/** Seconds of the call chart sent with each snapshot, once the server has run that long. */
export const CHART_SECONDS = 180;


// ── Transports: stdio, Streamable HTTP and WebSocket (src/transports).

/**
 * Bytes of outgoing messages held while the client does not read them: stdio's lines waiting for 'drain',
 * a WebSocket's frames queued to its socket (`bufferedAmount`). Input is not read meanwhile, so replies
 * stop growing it; past this (a client that never reads, under a stream of answers and notifications) a
 * stdio host is treated as gone, as after EPIPE, and a WebSocket is closed with 1008.
 */
export const MAX_OUTPUT_BACKLOG_BYTES = 64 * 1024 * 1024;

/**
 * Bytes (characters) of a WebSocket session's messages read and not yet handled by its actor, frames held
 * while the session opens included. Past it the socket is not read (`WebSocket#pause`): the client's
 * further frames wait in its own buffers and TCP's until the session has caught up to this, so a client
 * that sends faster than the session handles costs the server this much, not a mailbox of 4 MiB frames.
 */
export const MAX_INPUT_BACKLOG_BYTES = 16 * 1024 * 1024;

/**
 * Bytes queued to a WebSocket past which its input is not read until they have left: a client behind on
 * its answers sends no new requests to add to them (stdio pauses its input the same way on a full pipe).
 */
export const WS_OUTPUT_PAUSE_BYTES = 1024 * 1024;

/**
 * How long a POST that may stream (it carries a tools/call) waits before it opens its SSE stream when it
 * has nothing to send yet. A call answered sooner gets one plain JSON reply (the spec lets the server
 * choose JSON or SSE per POST): no stream, no keep-alive timer, one write. A progress notification or a
 * question for the person opens the stream at once; a long silent call gets its stream (and keep-alive
 * comments) after this long, well before any client or proxy gives up waiting for headers.
 */
export const SSE_OPEN_AFTER_MS = 1000;

/** Ids of unanswered requests whose POST closed, kept per session so a late answer reaches no other POST. */
export const ABANDONED_IDS_KEPT = 1000;

/**
 * How long an idle keep-alive connection stays open (Node's default is 5 s). A client that reuses a
 * connection just as the server closes it gets "other side closed" for a request the server never saw
 * (undici's fetch, under load, did: test/e2e/many-clients.test.ts); a longer timeout than the clients'
 * own (undici keeps one 4 s by default; load balancers up to 60 s) leaves the closing to the client.
 */
export const HTTP_KEEP_ALIVE_MS = 65_000;

/** How long `close()` lets calls in flight finish before their sessions are closed under them. */
export const DEFAULT_CLOSE_GRACE_MS = 5000;

/** Largest message (one line, without its newline) accepted by default: 4 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/** Host names accepted by default, with any port. */
export const DEFAULT_ALLOWED_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/** Concurrent sessions (HTTP and WebSocket together) before new ones are refused with 503. */
export const DEFAULT_MAX_SESSIONS = 10_000;

/** Concurrent sessions one token principal may hold (HTTP and WebSocket together); past it, 429. */
export const DEFAULT_MAX_SESSIONS_PER_PRINCIPAL = 100;

/**
 * Concurrent sessions all anonymous callers together may hold; past it, 429. When tokens are configured,
 * anonymous callers never get more than half of `--max-sessions` whatever this says, so token holders
 * always keep the other half.
 */
export const DEFAULT_MAX_ANONYMOUS_SESSIONS = 1_000;

/** Idle HTTP sessions (no request, no open stream) are closed after this long (`--session-idle`). */
export const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;

/** The longest the reaper waits between two looks; with a shorter idle limit it looks at that interval. */
export const REAPER_MAX_INTERVAL_MS = 60_000;

/** Interval of `: keep-alive` comments on an idle stream. */
export const SSE_KEEPALIVE_MS = 15_000;

/** Events kept per session for replay after a reconnect. */
export const SSE_REPLAY_EVENTS = 1000;

/**
 * Bytes (UTF-8) of the events one session's log keeps for replay, besides their count and age: the
 * in-memory replay buffer of a GET stream, and on a PostgreSQL store the session's rows of
 * `session_events`. Each new event deletes the oldest until the rest fit; their ids then read as expired.
 */
export const SESSION_EVENTS_MAX_BYTES = 8 * 1024 * 1024;

/**
 * The largest event a session's log keeps as it is. A larger one is sent live as it is, but kept as a
 * small notice (SESSION_EVENT_TOO_LARGE: a `notifications/message` saying so) in its place, so one
 * answer cannot take a session's whole budget; a client resuming past it gets the notice.
 */
export const SESSION_EVENT_MAX_BYTES = 1024 * 1024;

/**
 * On a PostgreSQL store, SSE events kept per session in `session_events` for a client resuming a stream
 * (GET with Last-Event-ID) on any node; each append deletes the session's events older than this many.
 */
export const SESSION_EVENTS_KEPT = 1000;

/** On a PostgreSQL store, how long an SSE event is kept for resumption at most (pruned by each node's sweep). */
export const SESSION_EVENTS_MAX_AGE_MS = 60 * 60_000;

/**
 * A session's event counter (its head row) is deleted by the sweep once the session appended nothing for
 * this long: far past any session's idle limit, so a live session's event ids never start again at 1.
 */
export const SESSION_EVENT_HEADS_KEPT_MS = 24 * 60 * 60_000;

/** How often each node deletes events older than SESSION_EVENTS_MAX_AGE_MS (one DELETE per sweep). */
export const SESSION_EVENTS_SWEEP_MS = 60_000;

/**
 * Streams resumed from the session event log (GET with Last-Event-ID) one session may hold open on one
 * node. Past it: 429. The node reads a session's log once per event whatever the number (one reader fans
 * out to them), but each holds a connection and a response.
 */
export const MAX_RESUMED_STREAMS_PER_SESSION = 16;

/** Streams resumed from the session event log one principal (all anonymous callers together being one) may hold open on one node. Past it: 429. */
export const MAX_RESUMED_STREAMS_PER_PRINCIPAL = 256;

/** Events read from `session_events` per query while a resumed stream catches up. */
export const SESSION_EVENTS_PAGE = 100;

/** The longest a node's LISTEN connection waits before connecting again after losing the database. */
export const LISTEN_RETRY_MAX_MS = 5_000;

/** When the host closes stdin, requests already sent get this long to be answered before the session closes. */
export const EOF_DRAIN_MS = 2000;

/** Once the session has closed, how long the last replies may take to leave through the output stream. */
export const OUTPUT_FLUSH_MS = 2000;

/**
 * After the session was given up: the server goes on reading (and answering, with the give-up error) until
 * the input has been quiet this long, so requests the host had already sent get their answer before the
 * server exits — and at most GIVE_UP_LINGER_MAX_MS in all, so a host that keeps sending cannot keep it alive.
 * Quiet is counted in turns of the event loop that read nothing (GIVE_UP_QUIET_TICKS of them), not in
 * wall-clock time since the last read: a server busy answering for longer than the window, with more
 * requests waiting in the pipe, once took that for quiet and left 2,700 pipelined requests unread (CI, load 20).
 */
export const GIVE_UP_QUIET_MS = 400;

export const GIVE_UP_QUIET_TICKS = 4;

/** Ten seconds: the bound within which issue 11 wants every request of a given-up session answered. */
export const GIVE_UP_LINGER_MAX_MS = 10_000;

/** WebSocket ping interval; a socket that missed one pong is closed. */
export const WS_PING_INTERVAL_MS = 30_000;

/** Frames a WebSocket may send while its session is still opening (they are held, then handled in order). */
export const WS_EARLY_FRAMES = 1000;

// ── The operator's log (src/log/logger.ts). No flags: a log line is for reading, not for keeping what a caller sent.

/**
 * Length of each string a log record carries, the message and every string in its fields, in characters;
 * past it the string is cut and says how much was left out. Caller text (a method name, a path, an error
 * message) reaches the log only through these fields, so no caller can write a megabyte-long line.
 */
export const MAX_LOGGED_STRING_LENGTH = 1024;

/** Length of the fields of one log record, as their JSON text; past it the text is cut, saying how much was left out. */
export const MAX_LOGGED_FIELDS_LENGTH = 8 * 1024;

// ── Command-line defaults and the stop (src/cli).

/** Default deadline of one tool call (`--tool-timeout`); past it the call is aborted and answered with an error. */
export const DEFAULT_TOOL_TIMEOUT_SECONDS = 600;

/**
 * Idle HTTP sessions are closed after this (`--session-idle`). The HTTP transport's own default
 * (`DEFAULT_SESSION_IDLE_MS`, equal: test/cli/options.test.ts) is not imported, so that parsing options
 * does not load the HTTP and WebSocket transport, which a stdio start never uses.
 */
export const DEFAULT_SESSION_IDLE_SECONDS = 1800;

/** Address the HTTP and WebSocket server binds (`--host`): loopback, so nothing is exposed unless asked. */
export const DEFAULT_HOST = '127.0.0.1';

/** Port of the HTTP and WebSocket server (`--port`, `SUPERPI_PORT`). */
export const DEFAULT_PORT = 7777;

/** stderr log threshold (`--log-level`, `SUPERPI_LOG_LEVEL`). */
export const DEFAULT_LOG_LEVEL = 'info';

/** On SIGTERM/SIGINT (or `stop`/`close()`), calls in flight get this long to finish before they are aborted. */
export const DRAIN_GRACE_MS = 10_000;

/**
 * After the stdio server has finished (drained, answered, stopped), how long anything left behind (a
 * stuck handle) may keep the process alive before it exits anyway: a host must see it end.
 */
export const STDIO_EXIT_GRACE_MS = 3000;

/**
 * After an exception or rejection nothing caught (a bug: every event callback is guarded), how long the
 * work in flight gets to be answered with an error before the process exits with code 1 anyway.
 */
export const UNCAUGHT_EXIT_GRACE_MS = 2000;

/**
 * How often a node on a shared (PostgreSQL) store probes it. While the last probe found it unreachable
 * the node refuses new sessions (503, `Retry-After` this interval, rounded up to whole seconds), so a
 * node that lost its database is noticed within one interval plus `HEALTH_STORE_TIMEOUT_MS`.
 */
export const STORE_PROBE_INTERVAL_MS = 2000;

// --- Multi-round-trip (2026-07-28 `input_required`, docs/multi-round-trip.md) ---

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

// --- OAuth 2.1 resource server (issue 28) ---

/** Allowed difference between this host's clock and an issuer's when checking a token's `exp` and `nbf` (`--oauth-clock-skew`). */
export const OAUTH_CLOCK_SKEW_SECONDS = 60;

/**
 * A token signed with a key id the cached JWKS does not hold makes the issuer's JWKS be read again, at
 * most once per this interval per issuer: key rotation is followed, and a stream of forged `kid`s cannot
 * turn into a stream of requests to the issuer.
 */
export const OAUTH_JWKS_REFETCH_INTERVAL_MS = 30_000;

/** A cached JWKS is read again (at the next token) once it is this old, even if every `kid` is known. */
export const OAUTH_JWKS_MAX_AGE_MS = 10 * 60_000;

/** How long one request to an issuer (metadata, JWKS, introspection) may take before it counts as unreachable. */
export const OAUTH_FETCH_TIMEOUT_MS = 5000;

/** The largest issuer document (metadata, JWKS, introspection answer) read; past it the issuer counts as broken. */
export const OAUTH_MAX_DOCUMENT_BYTES = 256 * 1024;

/** The longest bearer token looked at (bytes of the header value); a longer one is refused with 431 before any parsing. */
export const OAUTH_MAX_TOKEN_BYTES = 8192;

/** `Retry-After` (seconds) of the 503 a request gets while an issuer's keys cannot be read. */
export const OAUTH_UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/**
 * Access tokens already verified, kept (by SHA-256 digest, never the token) until they expire, so the
 * signature of a token a client sends on every request is checked once; the oldest entry goes first.
 */
export const OAUTH_VERIFIED_TOKEN_CACHE_ENTRIES = 10_000;
