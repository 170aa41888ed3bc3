// The named limits of one area: What one message, and one session, can make the protocol core hold or do. Imported through src/limits.ts, the one module every
// other file names (test/architecture/readme-figures.test.ts reads them there); imports nothing.

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
 * Shortest message text (characters) whose nesting is read before it is parsed (src/mcp/text-depth.ts): a
 * longer line nesting past MAX_JSON_DEPTH is parsed as a small stand-in, refused exactly as the message
 * would be. JSON.parse of a line of brackets costs about 60 µs a KiB (a second for 4 MiB) on the thread
 * that reads it; under this length the deepest line costs about that much, and the scan (~0.45 µs on a
 * 300-character line) is not paid by the lines most messages are.
 */
export const DEPTH_SCAN_MIN_CHARS = 1024;

/**
 * Elements one JSON-RPC batch may carry (batches exist in 2025-03-26 and 2024-11-05). Past it the
 * whole batch is refused with one -32600 reply, id null; no element is handled.
 */
export const MAX_BATCH_LENGTH = 1000;

/**
 * `_meta` texts a thread keeps parsed (src/mcp/meta-cache.ts): a 2026-07-28 client repeats the same
 * `params._meta` on every request, so a line that carries a kept one is parsed without it. Shared by every
 * connection of the thread; past it the oldest is forgotten (the line is then parsed whole, as any other).
 */
export const MAX_META_CACHE_ENTRIES = 16;

/** Longest `_meta` text (characters of compact JSON) MAX_META_CACHE_ENTRIES keeps; a longer one is never kept. */
export const MAX_META_CACHE_TEXT_LENGTH = 2048;

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

/** Resource URIs one `subscriptions/listen` may name (2026-07-28). Past it: -32602, naming the limit. */
export const MAX_LISTEN_URIS = 64;

/** Task ids one `subscriptions/listen` may name for `notifications/tasks` (Tasks extension). Past it: -32602, naming the limit. */
export const MAX_LISTEN_TASK_IDS = 64;

/** Requests of one session in flight at once (tool calls, confirmations, resource reads, completions). Past it: -32011 (server busy). */
export const MAX_REQUESTS_IN_FLIGHT = 512;

/**
 * Requests of one principal in flight at once on this node, across all its sessions, connections and
 * 2026-07-28 (sessionless) requests: two sessions' worth of `MAX_REQUESTS_IN_FLIGHT`, so one client with
 * many sessions cannot multiply the per-session bound (100 sessions × 512 reads of large files ran the
 * node out of memory). Past it: -32011 (server busy), naming the limit. `--max-requests-in-flight-per-principal`.
 */
export const MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL = 1024;

/**
 * Characters of one principal's messages delivered to its sessions and not yet handled by their actors
 * (in their mailboxes on a scheduler thread, or held for a restarting actor), all its sessions together.
 * Without it one anonymous HTTP session's 120 concurrent 4 MiB POSTs filled its scheduler thread's
 * 256 MB heap (SCHEDULER_THREAD_MEMORY_MB): both threads died of it again and again, and every other
 * session on them lost its request (-32010). Two WebSocket sessions' worth (MAX_INPUT_BACKLOG_BYTES).
 * Past it: the message is refused (-32011, naming the limit; a notification is dropped); a principal
 * with nothing unhandled is always admitted one message, however large (--max-message-bytes).
 */
export const MAX_INPUT_CHARS_PER_PRINCIPAL = 32 * 1024 * 1024;

/** Conversations (harness tasks) one 2025 session starts (it lists them). Past it: a further `harness_task` call gets -32602. */
export const MAX_SESSION_CONVERSATIONS = 1000;

/**
 * Resources one 2025 session is subscribed to at once (`resources/subscribe`: a transcript of any of its
 * principal's conversations), counting those still being looked up; one already subscribed, under any
 * spelling of its URI, is not counted again. They are kept in the session's checkpoint, and the node watches each transcript for the session.
 * Past it: -32602 naming the limit, nothing changes; an unsubscribe frees a place.
 */
export const MAX_SESSION_SUBSCRIPTIONS = 256;

/**
 * Characters of the URI a `resources/subscribe` names (a transcript URI is 70). With the count above it bounds
 * the bytes the subscriptions add to the checkpoint (256 × 256 characters). Past it: -32602 naming the limit.
 */
export const MAX_SUBSCRIPTION_URI_LENGTH = 256;

/** Items per page of every list (`tools/list`, `prompts/list`, `resources/list`, templates); `--page-size` changes it. */
export const DEFAULT_PAGE_SIZE = 50;

/**
 * Conversations one 2026-07-28 `resources/list` page lists from the store (the caller principal's, newest
 * first); `--page-size` lowers it, never raises it. The rest follow by `nextCursor`. Under the store's own
 * `MAX_LIST_LIMIT` (500), which a larger page would be lowered to.
 */
export const MAX_LISTED_CONVERSATIONS = 200;

/**
 * The longest store cursor of a conversation list (`c1.` + base64url of a position); a longer one was not
 * made by the store and is refused before it is decoded. A 2026-07-28 `resources/list` cursor seals one
 * with its principal, so it is refused past what that principal's seal of the longest could be.
 */
export const MAX_LIST_CURSOR_LENGTH = 1024;

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
