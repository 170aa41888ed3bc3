// The named limits of one area: Several nodes on one PostgreSQL store: task leases, node health, sessions on any node. Imported through src/limits.ts, the one module every
// other file names (test/architecture/readme-figures.test.ts reads them there); imports nothing.

// ── Several nodes on one PostgreSQL store: task leases and health (src/store/task-lease.ts, src/server/node-health.ts).

/**
 * How long a running task's lease lasts unless its node renews it (`--task-lease`, `SUPERPI_TASK_LEASE`).
 * Past it, on a PostgreSQL store, another node takes the task over and the first node's writes are fenced.
 */
export const TASK_LEASE_MS = 10_000;
/** Renewals per lease term: with 3, two heartbeats in a row may be late or lost before the lease lapses. */
export const LEASE_RENEWALS_PER_TERM = 3;
/**
 * Expired tasks one takeover pass looks at: bounds one query's rows; the rest wait for the next pass. The
 * query asks only for tasks the pass can act on (its own workspace's, those nobody can continue, those past
 * ORPHAN_TASK_PATIENCE_MS), so tasks left for another process never use this budget.
 */
export const MAX_EXPIRED_TASKS = 20;
/**
 * How long a task whose lease lapsed waits for a process that can continue it (one serving the directory
 * it ran in, with a server model), counted from the lapse on the store's clock. Until then a process that
 * cannot continue it leaves it running (another may: the project's own stdio server started again, a node
 * serving its root); past it any process marks it `interrupted` with a message saying why, so its status
 * never says running forever. Five minutes: a host or service manager restarting its servers brings the
 * project's process back well within it, and a caller polling `tasks/get` learns the truth soon after.
 */
export const ORPHAN_TASK_PATIENCE_MS = 5 * 60_000;
/** The largest session checkpoint the store keeps (a session's negotiated state, not its traffic); past it the save is refused. */
export const MAX_CHECKPOINT_BYTES = 1024 * 1024;
/** How long the node health probe waits for the store before it reports the store unreachable. */
export const HEALTH_STORE_TIMEOUT_MS = 1000;
/**
 * How long one PostgreSQL statement may go unanswered before the call that made it fails (and its
 * connection is dropped). A database that stops answering on an open connection (paused, a network cut
 * with no reset) would otherwise hold the request that asked, and the pooled connection, for as long as
 * it stays silent. Every statement of the store is one short transaction; migrations, which may wait for
 * another node's under their lock, run on a connection of their own without it.
 */
export const POSTGRES_QUERY_TIMEOUT_MS = 30_000;

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

/**
 * Connections one node opens to another node for forwarded POST and DELETE requests (src/cluster/forward.ts);
 * past it a request waits in the agent's queue for one to be free (time in the queue is not counted as
 * connecting, so a busy home is not taken for an unreachable one). GET streams have their own agent and
 * limit, so requests never wait behind streams that stay open.
 */
export const MAX_FORWARD_SOCKETS_PER_NODE = 256;
/**
 * Forwarded GET streams (SSE) one node holds open to another at once; each holds a connection for as long
 * as its client listens. Past it a stream waits for one to end. A quarter of MAX_CONNECTIONS: one peer
 * never fills another node's whole connection budget with its streams.
 */
export const MAX_FORWARD_STREAMS_PER_NODE = 4096;
/**
 * Live nodes read from the node registry when a node refreshes its peers' addresses (src/cluster/peer-addresses.ts):
 * connections from those addresses are not counted against MAX_CONNECTIONS_PER_ADDRESS (only against
 * MAX_CONNECTIONS). The set is read again every lease term / LEASE_RENEWALS_PER_TERM; at most
 * MAX_PEER_ADDRESSES addresses (a host name may resolve to several) are kept.
 */
export const MAX_PEER_NODES = 256;
export const MAX_PEER_ADDRESSES = 1024;

/**
 * Several processes on one SQLite file (say two hosts each running a stdio server on the default store)
 * hear each other's changes to the conversations they watch (task status notifications, transcript
 * updates) through the SQLite change feed (src/store/sqlite-change-feed.ts): while anything is watched,
 * every SQLITE_CHANGE_POLL_MS it asks the store's connection whether another one committed (`PRAGMA
 * data_version`), and when one did reads the watched conversations' status and last seq, at most
 * SQLITE_CHANGE_POLL_IDS per tick by primary key (more are read over the next ticks). So another
 * process's change is heard within about SQLITE_CHANGE_POLL_MS; nothing watched, nothing is polled.
 */
export const SQLITE_CHANGE_POLL_MS = 250;
export const SQLITE_CHANGE_POLL_IDS = 256;
