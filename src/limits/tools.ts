// The named limits of one area: What one tool call may read, run, keep and wait for. Imported through src/limits.ts, the one module every
// other file names (test/architecture/readme-figures.test.ts reads them there); imports nothing.

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

/**
 * Characters of a glob (`find`'s pattern, `grep`'s glob) and of a .gitignore rule compiled to RE2: a path is
 * at most 4096 bytes (PATH_MAX), so no longer glob is a real one. A longer caller's glob is refused naming
 * this; a longer .gitignore rule is skipped, as a malformed one is. Bounds the translation (nested braces are
 * translated once per level) and what RE2 compiles.
 */
export const GLOB_MAX_CHARS = 4096;

/**
 * Characters of the RE2 source one glob translates to. A brace range (`{1..999999}`) becomes an alternation
 * of its members: before this bound `{-999999..999999}` held a tool thread 45 s and ran it out of memory.
 */
export const GLOB_MAX_SOURCE_CHARS = 64 * 1024;

/** Lines of one .gitignore read; the rules past them are not applied, and the search's result says so. No real one comes near. */
export const IGNORE_MAX_LINES = 10_000;

/**
 * .gitignore rules matched through RE2 (not a name, a path, `*.ext` or `name*`, which are looked up by key
 * whatever their number) applied at once: those of all the .gitignore files from the workspace root down to
 * a directory. A walk tests every entry against each of them: 10,000 wildcard rules, workspace content, held
 * a `find` over 1,000 files 5 s and grew with the tree. Those past it are not applied, and the result says so.
 */
export const IGNORE_MAX_GLOB_RULES = 256;

/**
 * Characters of a caller's argument (a `grep` pattern, a glob) quoted in the error refusing it; the rest is
 * counted, not shown. The whole argument was quoted, JSON-escaped, and RE2's message quoted it again: a 1 MB
 * pattern of control characters came back as a 7 MB error result, a 4 MiB one (the largest message) as 28 MB.
 */
export const ARGUMENT_EXCERPT_CHARS = 200;

/**
 * Characters of a tool's error message (any `ToolError`: what the model reads as an `isError` result); a
 * longer one is cut, saying so. Messages name the caller's arguments, and one with a 1 MB `path` was 2 MB
 * (the path twice: "cannot resolve P: ENAMETOOLONG … P"), each control character six on the wire.
 */
export const TOOL_ERROR_MAX_CHARS = 16 * 1024;

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

/**
 * Size of a sandboxed command's private /tmp (a tmpfs: memory no process owns, so the OOM killer cannot
 * free it by ending the command; without a size the kernel allows half the host's RAM, per command).
 */
export const BASH_TMP_MAX_BYTES = 1024 * 1024 * 1024;

/** Size of a sandboxed command's /dev/shm (POSIX shared memory, semaphores), a tmpfs as /tmp is; the rest of /dev is read-only. */
export const BASH_SHM_MAX_BYTES = 64 * 1024 * 1024;

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

/**
 * Connections one `bash` command holds through the egress proxy at once, a quarter of EGRESS_MAX_CONNECTIONS:
 * each command reaches the proxy through a socket of its own, so one command cannot take them all. Past
 * it a new connection is answered 503 and closed, as past the total.
 */
export const EGRESS_MAX_CONNECTIONS_PER_COMMAND = 16;

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

/**
 * Processes (threads count: both are tasks to the kernel) one `bash` command may have at once, the sandbox's
 * own three or four included (`--bash-max-processes`, `SUPERPI_BASH_MAX_PROCESSES`). Enough for `make -j`
 * and test runners; a fork bomb stops there instead of taking the host. Enforced by a cgroup's `pids.max`
 * or, for a server that is not root, RLIMIT_NPROC inside the command's own user namespace (see
 * src/tools/sandbox/bounds.ts for which, and docs/security.md for what each machine gets).
 */
export const BASH_MAX_PROCESSES = 512;

/**
 * Memory one `bash` command may use, all its processes and the tmpfs pages it writes together
 * (`--bash-max-memory`, `SUPERPI_BASH_MAX_MEMORY_BYTES`), at most the host's RAM over
 * BASH_MEMORY_HOST_DIVISOR by default. 4 GiB holds a large TypeScript or webpack build, a JVM test run, or
 * Node at its default heap ceiling; past it the kernel ends a process of that command (the cgroup's OOM
 * killer), never the server.
 */
export const BASH_MAX_MEMORY_BYTES = 4 * 1024 * 1024 * 1024;

/** The default BASH_MAX_MEMORY_BYTES is capped at the host's RAM divided by this, so a small host keeps half for itself. */
export const BASH_MEMORY_HOST_DIVISOR = 2;
