// The named limits of one area: stdio, Streamable HTTP and WebSocket. Imported through src/limits.ts, the one module every
// other file names (test/architecture/readme-figures.test.ts reads them there); imports nothing.

// ── Transports: stdio, Streamable HTTP and WebSocket (src/transports).

/**
 * Bytes of outgoing messages held while the client does not read them: stdio's lines waiting for 'drain',
 * a WebSocket's frames queued to its socket (`bufferedAmount`), an SSE reply's bytes its socket has not
 * taken. stdio and WebSocket input is not read meanwhile, so replies stop growing it; past this (a client
 * that never reads, under a stream of answers and notifications) a stdio host is treated as gone, as after
 * EPIPE, a WebSocket is closed with 1008, and an SSE stream (whose writes node:http would queue without
 * end) is ended, its unread bytes dropped.
 */
export const MAX_OUTPUT_BACKLOG_BYTES = 64 * 1024 * 1024;

/**
 * Bytes of output held for clients that do not read, all connections of one node together (WebSocket
 * `bufferedAmount`, the unsent bytes of every HTTP connection: SSE streams and POST replies). Each
 * connection is bounded by MAX_OUTPUT_BACKLOG_BYTES, but a client may hold hundreds: 12 WebSockets of one
 * client took the server from 84 MB to 1.4 GB. Past it the connection holding the most is destroyed.
 * 256 MiB is four connections at the per-connection cap, so one client at that cap never meets it alone,
 * and a quarter of a 1 GiB container, so the rest of the node (heap, threads, SQLite) keeps the other three.
 */
export const MAX_NODE_OUTPUT_BACKLOG_BYTES = 256 * 1024 * 1024;

/**
 * Bytes of Streamable HTTP POST bodies being read and not yet complete, every connection of one node
 * together (`--max-node-request-body-bytes`). Each body is bounded by --max-message-bytes (4 MiB), but a
 * body may take node:http's request timeout (300 s) to finish and one client address may hold 1,024
 * connections: 60 bodies a byte short of 4 MiB took a server from 142 MB to 435 MB RSS, so one address
 * could hold 4 GiB. Past it the body holding the most is dropped, its POST answered 503. 256 MiB is 64
 * bodies of the default largest message; never less than one message (--max-message-bytes).
 */
export const MAX_NODE_REQUEST_BODY_BYTES = 256 * 1024 * 1024;

/**
 * Replies stdio gathers into one write while its session is still handling the lines it was sent: a host
 * with many calls in flight gets them in writes of this many lines, so it starts on the first replies while
 * the server makes the rest, instead of the two processes taking turns. A turn's last replies leave at its
 * end, however few. Measured in BENCHMARKS.md ("A small call against the bare SDK server").
 */
export const STDIO_REPLIES_PER_WRITE = 16;

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

/**
 * How long an HTTP connection may hold reply bytes its client takes none of (nginx's `send_timeout`, whose
 * default this is): node:http keeps a reply's unsent bytes in the process for as long as the client keeps
 * its connection open without reading, even once the reply is finished — and finished replies count
 * against no session's limits, so one client could pile them up on connection after connection. Past it
 * the connection is destroyed (its unsent bytes dropped, a warning logged). Progress is any byte
 * of a reply taken by the system, so a reader that takes anything within the time keeps it. A
 * WebSocket is held to it as well (websocket.ts), its session ending with the socket.
 */
export const HTTP_SEND_TIMEOUT_MS = 60_000;

/**
 * Standalone (GET) streams one Streamable HTTP session holds open on a node. Only the newest is written
 * to; a client needs one, and a few more cover a reconnect racing its old stream's close (a dead peer is
 * noticed only when a write to it fails). Past it the oldest is ended, its unsent bytes dropped: each
 * held a connection, and a GET with Last-Event-ID is first written the session's whole replay buffer.
 */
export const MAX_GET_STREAMS_PER_SESSION = 4;

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

/**
 * Idle HTTP sessions (no request, no open stream) are closed after this long (`--session-idle`); so are
 * idle WebSocket sessions (no message, no request in flight, no subscription), with 1001 saying why: a live
 * client that says nothing would otherwise hold its quota slot for as long as it keeps its socket.
 */
export const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;

/**
 * A session kept to serve 2026-07-28 (stateless) requests is closed after this long without one
 * (transports/stateless-pool.ts): long enough that a client's next call finds it warm, short enough
 * that a burst of concurrent calls does not hold its sessions (and their quota slots) for long.
 */
export const STATELESS_SESSION_IDLE_MS = 60_000;

/** The longest the reaper waits between two looks; with a shorter idle limit it looks at that interval. */
export const REAPER_MAX_INTERVAL_MS = 60_000;

/**
 * How long an SSE stream (a `subscriptions/listen` reply, a GET stream, a long tool call) may stay silent
 * before it gets a `: keep-alive` comment (`--sse-keepalive`). Proxies and load balancers close connections
 * idle for about a minute by default (nginx's proxy_read_timeout and AWS ALB's idle timeout 60 s, Heroku's
 * router 55 s): 15 s is a quarter of that, so a comment up to a quarter interval late (sse-keepalive.ts
 * sweeps four times per interval) or lost to a full socket buffer once still comes in time; an idle stream
 * costs 15 bytes every 15 s.
 */
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
/**
 * How often a node's LISTEN connection asks the database something (`SELECT 1`), and how long it waits for
 * the answer before it counts the connection lost and connects again. A LISTEN connection only receives:
 * one the network dropped without a reset (a NAT or firewall forgetting an idle connection, a cut) stayed
 * "up" for good, and the node heard no other node again (no resource updates, no events for resumed
 * streams) with nothing in its log.
 */
export const LISTEN_HEARTBEAT_MS = 10_000;

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

/**
 * WebSocket ping interval; a socket that missed one pong is closed — unless output was queued to it within
 * the last send timeout: its pong waits behind that output, and the send timeout judges it instead.
 */
export const WS_PING_INTERVAL_MS = 30_000;

/** Frames a WebSocket may send while its session is still opening (they are held, then handled in order). */
export const WS_EARLY_FRAMES = 1000;

/**
 * Open TCP connections to the HTTP and WebSocket port, all clients together (`--max-connections`). Each
 * costs a descriptor and a socket's buffers whether or not it ever sends a request, and no session limit
 * counts a connection that opened none. 16,384 is above `DEFAULT_MAX_SESSIONS` (10,000), so every session
 * may hold its WebSocket or GET stream with room for the POSTs beside them, and far below the descriptor
 * limit Node raises itself to at start (the hard limit: 524,288 on current Linux distributions). Past it a
 * new connection is answered 503 with `Retry-After` and closed before node:http reads it.
 */
export const MAX_CONNECTIONS = 16_384;

/**
 * Open TCP connections from one client address (`--max-connections-per-address`), so that one client
 * cannot take the whole of `MAX_CONNECTIONS`: a sixteenth of it. Loopback is an address like any other,
 * and every local host shares 127.0.0.1 — 1,024 is ten times the sessions one token principal may hold
 * (`DEFAULT_MAX_SESSIONS_PER_PRINCIPAL`, 100), each with its stream and a few POSTs, so local hosts and a
 * small office behind one NAT address never meet it. A reverse proxy makes every client one address:
 * `--trusted-proxy` lists it, and its connections count against `MAX_CONNECTIONS` only. Not raised for a
 * load generator that opened 1,200 connections from one address (test/e2e/many-clients.test.ts): a host
 * needs far fewer, and a higher cap lets fewer addresses fill the total. Past it: 503 with `Retry-After`, closed.
 */
export const MAX_CONNECTIONS_PER_ADDRESS = 1024;

/** The `Retry-After` of a connection refused past `MAX_CONNECTIONS` or `MAX_CONNECTIONS_PER_ADDRESS`. */
export const CONNECTION_REFUSED_RETRY_AFTER_SECONDS = 1;

/**
 * Refused connections are logged once per this window: the first at once, the others of the window
 * counted in one line at its end, so a flood of connections writes a line every ten seconds, not one each.
 */
export const CONNECTION_REFUSAL_LOG_MS = 10_000;

/**
 * How long a refused connection may stay open after its 503 was written: time for its client to read the
 * reply and close. Its bytes are read and dropped meanwhile (no parser); past it the socket is destroyed.
 */
export const REFUSED_CONNECTION_LINGER_MS = 1000;
