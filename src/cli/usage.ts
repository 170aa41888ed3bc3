// The command line's help: the usage text `--help` prints, the environment variables the server reads,
// and which flags only the HTTP server reads. Parsing is options.ts's; this is what a person reads.

import { DEFAULT_THREADS_RULE } from '../actors/thread-count.ts';
import { DEFAULT_HARNESS, harnessIds } from '../harness/ids.ts';
import { STORE_ENV } from '../store/store-location.ts';
import { MAX_NODE_OUTPUT_BACKLOG_BYTES, MAX_NODE_REQUEST_BODY_BYTES, MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL } from '../limits.ts';
import { DEFAULT_HOST, DEFAULT_MAX_ANONYMOUS_SESSIONS, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_SESSIONS_PER_PRINCIPAL, DEFAULT_PAGE_SIZE, DEFAULT_PORT } from '../limits.ts';
import { DEFAULT_MAX_TASKS_PER_PRINCIPAL, DEFAULT_MODEL_CALLS_PER_MINUTE, DEFAULT_SESSION_IDLE_SECONDS, DEFAULT_TOOL_TIMEOUT_SECONDS, DEFAULT_TREE_INTENSITIES, DEFAULT_TURNS_PER_MINUTE } from '../limits.ts';
import { HTTP_SEND_TIMEOUT_MS, MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS, MAX_INPUT_BACKLOG_BYTES, MAX_OUTPUT_BACKLOG_BYTES, OAUTH_CLOCK_SKEW_SECONDS, OAUTH_JWKS_REFETCH_INTERVAL_MS, SSE_KEEPALIVE_MS, TASK_LEASE_MS } from '../limits.ts';
import { BASH_MAX_MEMORY_BYTES, BASH_MAX_PROCESSES } from '../limits.ts';

/**
 * Every environment variable the server reads, with its meaning: `--help` prints them all (a test scans
 * src/ for `SUPERPI_` names, so a variable read without a line here fails it).
 */
export const ENVIRONMENT: readonly (readonly [name: string, meaning: string])[] = [
  ['SUPERPI_WORKSPACE', "workspace roots, separated by ':' (as --workspace)"],
  ['SUPERPI_HARNESS', 'harness for tool calls (as --harness)'],
  ['SUPERPI_LOG_LEVEL', 'stderr log threshold (as --log-level)'],
  ['SUPERPI_PORT', 'HTTP port (as --port)'],
  ['SUPERPI_TOKENS', 'bearer tokens as "tokenA=alice,tokenB=bob", added to those of --tokens'],
  ['SUPERPI_ALLOW_ANONYMOUS_TASKS', 'set to 1 to let anonymous remote callers start harness_task (as --allow-anonymous-tasks)'],
  ['SUPERPI_ALLOWED_ORIGINS', 'browser origins accepted besides the server\'s own (as --allowed-origins)'],
  ['SUPERPI_STORE', 'where conversations are kept: sqlite or a postgres:// URL (as --store)'],
  ['SUPERPI_NODE_ID', "this node's name on a PostgreSQL store (as --node-id)"],
  ['SUPERPI_TASK_LEASE', "a running task's lease in seconds (as --task-lease)"],
  ['SUPERPI_BASH_MAX_PROCESSES', 'processes one bash command may have at once (as --bash-max-processes)'],
  ['SUPERPI_BASH_MAX_MEMORY_BYTES', 'memory one bash command may use, in bytes (as --bash-max-memory)'],
  ['SUPERPI_TASK_TTL', 'how long a finished 2026-07-28 task is kept, in seconds (as --task-ttl)'],
  ['SUPERPI_ADVERTISE_URL', 'how the other nodes of a cluster reach this one (as --advertise-url)'],
  ['SUPERPI_CLUSTER_INSECURE_FORWARDING', 'set to 1 to forward bearer tokens over plain http:// to other nodes (as --cluster-insecure-forwarding)'],
  ['SUPERPI_OAUTH_ISSUERS', 'comma-separated OAuth issuer URLs whose access tokens are accepted (as --oauth-issuer)'],
  ['SUPERPI_RESOURCE', "this server's canonical URL, the audience OAuth tokens must name (as --resource)"],
  ['SUPERPI_OAUTH_REQUIRE_AT_JWT', 'set to 1 to accept only JWTs typed at+jwt as access tokens (as --oauth-require-at-jwt)'],
  ['SUPERPI_OAUTH_INTROSPECTION_CLIENT_ID', "this server's client id at the issuers, for token introspection (as --oauth-introspection-client-id)"],
  ['SUPERPI_OAUTH_INTROSPECTION_SECRET', "that client's secret (or --oauth-introspection-secret-file; never on the command line)"],
  ['SUPERPI_MAX_NODE_OUTPUT_BACKLOG_BYTES', 'unread output of all connections together before the one holding the most is closed (as --max-node-output-backlog-bytes)'],
  ['SUPERPI_MAX_NODE_REQUEST_BODY_BYTES', 'POST bodies being read, all connections together, before the largest is dropped with a 503 (as --max-node-request-body-bytes)'],
  ['SUPERPI_MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL', 'requests one principal has in flight on this node across its sessions (as --max-requests-in-flight-per-principal)'],
  ['SUPERPI_HOME', 'directory of the SQLite store and the code cache   default: ~/.super-pi'],
  ['SUPERPI_CODE_CACHE', 'set to off to neither read nor write the compiled-code cache'],
  ['SUPERPI_MODEL_URL', 'an OpenAI-compatible endpoint (e.g. https://api.openai.com/v1) for harness_task; needs SUPERPI_MODEL'],
  ['SUPERPI_MODEL', 'the model harness_task asks for (required with SUPERPI_MODEL_URL; with Anthropic default: its default model)'],
  ['SUPERPI_API_KEY', 'bearer key sent to SUPERPI_MODEL_URL, when that endpoint wants one'],
  ['SUPERPI_ANTHROPIC_API_KEY', 'use the Anthropic Messages API for harness_task with this key (when SUPERPI_MODEL_URL is unset)'],
  ['SUPERPI_STATE_KEY', 'secret (at least 32 bytes) sealing 2026-07-28 requestState; the same on every node (as --state-key-file); required with a PostgreSQL store'],
  ['SUPERPI_ANTHROPIC_URL', 'another base URL for the Anthropic API (a proxy)'],
];

/** Flags that only the HTTP and WebSocket server reads: refused with `--stdio` rather than ignored. */
export const HTTP_ONLY_FLAGS = [
  'host', 'port', 'tokens', 'require-auth', 'allowed-hosts', 'allowed-origins', 'max-sessions', 'max-sessions-per-principal',
  'max-anonymous-sessions', 'max-connections', 'max-connections-per-address', 'trusted-proxy', 'session-idle', 'sse-keepalive', 'send-timeout', 'max-node-output-backlog-bytes', 'max-node-request-body-bytes', 'observers', 'advertise-url', 'cluster-insecure-forwarding',
  'oauth-issuer', 'resource', 'oauth-scope-read', 'oauth-scope-write', 'oauth-scope-exec', 'oauth-scope-observe', 'oauth-clock-skew', 'oauth-jwks-refetch', 'oauth-require-at-jwt',
  'oauth-introspection-client-id', 'oauth-introspection-secret-file',
] as const;

/** The usage an entry prints: the HTTP one (`super-pi`, examples/server.ts) or the stdio one (examples/stdio.ts). */
export function usageFor(defaultTransport: 'stdio' | 'http'): string {
  if (defaultTransport === 'http') return usage;
  const head = 'Usage: super-pi --stdio [options]   (examples/stdio.ts: serves one MCP session over stdio, as an MCP host launches it)\n'
    + `Refused here (HTTP only): ${HTTP_ONLY_FLAGS.map((f) => `--${f}`).join(', ')}`;
  return `${head}\n${usage.slice(usage.indexOf('\n'))}`;
}

export const usage = `Usage: super-pi [options]        (serves MCP over Streamable HTTP and WebSocket; --stdio for stdio)

Options (flags override environment variables, which override defaults):
  --workspace DIR          workspace root; repeatable, the first is used   env SUPERPI_WORKSPACE (list separated by ':')   default: the client's first root, else the current directory
  --harness ID             harness for tool calls: ${harnessIds.join(', ')}   env SUPERPI_HARNESS   default: ${DEFAULT_HARNESS}
  --log-level LEVEL        stderr log threshold: debug, info, notice, warning, error   env SUPERPI_LOG_LEVEL   default: info
  --max-message-bytes N    largest JSON-RPC message accepted (one line)   default: ${DEFAULT_MAX_MESSAGE_BYTES}
  --max-input-backlog-bytes N    a WebSocket session's messages read and not yet handled before the socket is not read   default: ${MAX_INPUT_BACKLOG_BYTES}
  --max-output-backlog-bytes N   output a client leaves unread before stdio treats it as gone, a WebSocket is closed (1008), an SSE stream ended   default: ${MAX_OUTPUT_BACKLOG_BYTES}
  --max-node-output-backlog-bytes N   unread output of every connection together; past it the one holding the most is closed   env SUPERPI_MAX_NODE_OUTPUT_BACKLOG_BYTES   default: ${MAX_NODE_OUTPUT_BACKLOG_BYTES}
  --max-node-request-body-bytes N   POST bodies being read, every connection together; past it the largest is dropped (503)   env SUPERPI_MAX_NODE_REQUEST_BODY_BYTES   default: ${MAX_NODE_REQUEST_BODY_BYTES}
  --max-requests-in-flight-per-principal N   requests of one principal in flight on this node, all its sessions together; past it -32011   env SUPERPI_MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL   default: ${MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL}
  --page-size N            items per page of every list   default: ${DEFAULT_PAGE_SIZE}
  --tool-timeout SECONDS   deadline of one tool call   default: ${DEFAULT_TOOL_TIMEOUT_SECONDS}
  --threads N              scheduler worker threads hosting the actors; 0 runs them on the main thread   default: --stdio 0 (with --chaos kill-worker or kill-task-worker: as HTTP), HTTP ${DEFAULT_THREADS_RULE}
  --tool-threads N         tool-pool threads (grep, find, large reads)   default: ${DEFAULT_THREADS_RULE}
  --tool-share N           tool-pool calls one principal may run at once   default: tool threads - 1, at least 1
  --chaos MODE=VALUE       fault injection, repeatable: kill-worker=<ms> | kill-task-worker=<ms> | crash-actor=<probability>   default: off
  --restart-intensity LEVEL=N/SECONDS   restarts a level of the supervision tree tolerates per period before it gives up, repeatable; LEVEL: root, schedulers, session, task   default: ${(['root', 'schedulers', 'session', 'task'] as const).map((l) => `${l}=${DEFAULT_TREE_INTENSITIES[l].maxRestarts}/${DEFAULT_TREE_INTENSITIES[l].periodMs / 1000}`).join(' ')}
  --stdio                  serve one session over stdio instead of HTTP and WebSocket
  --host HOST              address to bind   default: ${DEFAULT_HOST}
  --port N                 port; 0 picks a free one   env SUPERPI_PORT   default: ${DEFAULT_PORT}
  --tokens FILE            bearer tokens, one "token principal" pair per line   env SUPERPI_TOKENS="tokenA=alice,tokenB=bob"
  --require-auth           refuse callers without a valid bearer token (401)
  --allow-anonymous-writes let anonymous remote callers use write, edit and bash   default: refused
  --allow-anonymous-tasks  let anonymous remote callers start harness_task (it spends the operator's model budget; all anonymous callers share one task budget)   env SUPERPI_ALLOW_ANONYMOUS_TASKS=1   default: refused
  --max-tasks-per-principal N   harness tasks one principal runs at once on this node; one more is refused   default: ${DEFAULT_MAX_TASKS_PER_PRINCIPAL}
  --turns-per-minute N     model turns one principal's tasks begin per minute on this node; past it a turn waits   default: ${DEFAULT_TURNS_PER_MINUTE}
  --model-calls-per-minute N   requests to the model endpoint (retries included) one principal's tasks send per minute on this node; past it a request waits   default: ${DEFAULT_MODEL_CALLS_PER_MINUTE}
  --allowed-hosts LIST     comma-separated Host names accepted (and Origin names at the server's own port)   default: localhost,127.0.0.1,[::1]
  --allowed-origins LIST   comma-separated browser origins accepted besides the server's own, as scheme://host[:port]   env SUPERPI_ALLOWED_ORIGINS   default: none
  --max-sessions N         concurrent HTTP and WebSocket sessions   default: 10000
  --max-sessions-per-principal N   concurrent sessions of one token principal   default: ${DEFAULT_MAX_SESSIONS_PER_PRINCIPAL}
  --max-anonymous-sessions N       concurrent sessions of all anonymous callers together (with tokens configured, at most half of --max-sessions)   default: ${DEFAULT_MAX_ANONYMOUS_SESSIONS}
  --max-connections N      open TCP connections to the HTTP and WebSocket port; one more is answered 503 and closed   default: ${MAX_CONNECTIONS}
  --max-connections-per-address N   open connections from one client address (loopback included; the cluster's other nodes and --trusted-proxy addresses are not counted)   default: ${MAX_CONNECTIONS_PER_ADDRESS}
  --trusted-proxy LIST     comma-separated IP addresses of reverse proxies (nginx, Caddy, a TLS terminator) whose connections count against --max-connections only, not per address: every client behind one shares its address (limit clients per address in the proxy; X-Forwarded-For is not read); repeatable   default: none
  --session-idle SECONDS   idle HTTP and WebSocket sessions (nothing in flight, nothing open or subscribed) are closed after this   default: ${DEFAULT_SESSION_IDLE_SECONDS}
  --sse-keepalive SECONDS  an SSE stream (a listen, a GET stream, a long tool call) silent this long gets a comment line, so proxies keep it open; fractions allowed   default: ${SSE_KEEPALIVE_MS / 1000}
  --send-timeout SECONDS   an HTTP connection or WebSocket whose client takes none of its output this long is closed, its unsent bytes dropped; fractions allowed   default: ${HTTP_SEND_TIMEOUT_MS / 1000}
  --observers LIST         comma-separated token principals who may read /metrics and /observer   default: none (open only on a loopback server without tokens)
  --no-metrics             serve no /metrics and record no tool-call metrics   default: metrics on
  --store URL              where conversations are kept: sqlite, or postgres://user:password@host:port/database   env ${STORE_ENV}   default: sqlite (in SUPERPI_HOME)
  --node-id ID             this node's name on a PostgreSQL store (a stable one lets a restarted node mark its unfinished tasks interrupted)   env SUPERPI_NODE_ID   default: host name:pid
  --task-lease SECONDS     how long a running task's lease lasts unless its node renews it; on a PostgreSQL store another node takes a task over once its lease lapsed   env SUPERPI_TASK_LEASE   default: ${TASK_LEASE_MS / 1000}
  --task-ttl SECONDS       keep a 2026-07-28 task (Tasks extension) this long after it finished, then delete it with its transcript (its ttlMs); sessions' own conversations are never deleted   env SUPERPI_TASK_TTL   default: none (kept until deleted, ttlMs null)
  --advertise-url URL      how the other nodes of a PostgreSQL cluster reach this one (http or https, no credentials): they forward a session's requests here while this node is its home   env SUPERPI_ADVERTISE_URL   default: http://<host>:<bound port>
  --cluster-insecure-forwarding   forward requests with a bearer token to another node's plain http:// advertise URL off this machine (only on a network between the nodes you trust)   env SUPERPI_CLUSTER_INSECURE_FORWARDING=1   default: refused (503); https:// and loopback URLs always forward
  --state-key-file FILE    file holding the secret (at least 32 bytes) that seals 2026-07-28 requestState (a confirmation asked as input_required); the same on every node   env SUPERPI_STATE_KEY   default: a random key per process (required with a PostgreSQL store)
  --bash-network MODE      network of bash commands: off (own empty network namespace), on (the host's), allow=HOST,HOST... (only those, through the egress proxy)   default: off
  --bash-hide PATH         hide PATH from bash commands besides the server's state and the credential stores; repeatable
  --bash-writable PATH     let bash commands write PATH besides the workspace and their private /tmp; repeatable
  --bash-reveal PATH       show a default-hidden PATH (e.g. ~/.npmrc) to bash commands; repeatable
  --bash-env NAME          pass the server's variable NAME to bash commands besides PATH, HOME, LANG, LC_*, TERM, USER, SHELL, TZ, TMPDIR; repeatable
  --bash-max-processes N   processes (threads too) one bash command may have at once; past it the kernel refuses its forks   env SUPERPI_BASH_MAX_PROCESSES   default: ${BASH_MAX_PROCESSES}
  --bash-max-memory BYTES  memory one bash command may use, all its processes together; past it the kernel ends one of them   env SUPERPI_BASH_MAX_MEMORY_BYTES   default: ${BASH_MAX_MEMORY_BYTES} (4 GiB), at most half the host's RAM
  --unsafe-bash-without-sandbox   let HTTP and WebSocket callers run bash where no sandbox can be built (no bwrap)   default: refused
  --oauth-issuer URL       accept OAuth access tokens (JWT) of this authorization server; repeatable; then every caller needs a bearer token   env SUPERPI_OAUTH_ISSUERS=URL,URL   default: none (static tokens only)
  --resource URL           this server's canonical URL, the audience (aud) OAuth tokens must name   env SUPERPI_RESOURCE   default: --advertise-url or http://<host>:<bound port>, + /mcp
  --oauth-scope-read NAME  the scope granting read-only tools and resources   default: mcp:read
  --oauth-scope-write NAME the scope granting write and edit   default: mcp:write
  --oauth-scope-exec NAME  the scope granting bash and harness_task   default: mcp:exec
  --oauth-scope-observe NAME   the scope granting /metrics and /observer   default: mcp:observe
  --oauth-clock-skew SECONDS   allowed clock difference with an issuer for exp and nbf   default: ${OAUTH_CLOCK_SKEW_SECONDS}
  --oauth-jwks-refetch SECONDS   a token under an unknown key id reads its issuer's keys again at most this often (key rotation)   default: ${OAUTH_JWKS_REFETCH_INTERVAL_MS / 1000}
  --oauth-require-at-jwt   accept only JWTs whose typ is at+jwt (RFC 9068) as access tokens   env SUPERPI_OAUTH_REQUIRE_AT_JWT=1   default: also typ JWT or none, unless marked as an ID token
  --oauth-introspection-client-id ID   this server's client at the issuers: opaque (non-JWT) tokens are checked by token introspection (RFC 7662) where an issuer offers it   env SUPERPI_OAUTH_INTROSPECTION_CLIENT_ID   default: none (opaque tokens refused)
  --oauth-introspection-secret-file FILE   file holding that client's secret   env SUPERPI_OAUTH_INTROSPECTION_SECRET
  --help                   print this text
  --version                print the version

Environment (read when the flag is not given):
${ENVIRONMENT.map(([name, meaning]) => `  ${name.padEnd(36)} ${meaning}`).join('\n')}`;
