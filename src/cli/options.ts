// Server options from flags, then environment, then defaults — merged in this one place.

import { parseArgs } from 'node:util';
import { DEFAULT_THREADS_RULE, defaultThreadCount } from '../actors/thread-count.ts';
import { DEFAULT_HARNESS, type HarnessId, harnessIds, isHarnessId } from '../harness/ids.ts';
import type { LogLevel } from '../mcp/logging-level.ts';
import { type ChaosOptions, parseChaos } from '../server/chaos.ts';
import { defaultPrincipalShare } from '../tools/fair-share.ts';
import { parseLogLevel } from '../log/logger.ts';
import { parseIntensities, type TreeIntensities } from '../supervisor/intensities.ts';
import { DEFAULT_ALLOWED_HOSTS, DEFAULT_MAX_ANONYMOUS_SESSIONS, DEFAULT_MAX_SESSIONS, DEFAULT_MAX_SESSIONS_PER_PRINCIPAL } from '../limits.ts';
import { DEFAULT_MAX_MESSAGE_BYTES, MAX_INPUT_BACKLOG_BYTES, MAX_OUTPUT_BACKLOG_BYTES } from '../limits.ts';
import { parseOrigin } from '../transports/origin.ts';
import { parseObservers } from '../observer/observer-access.ts';
import { checkNodeId } from '../store/node-ownership.ts';
import { parseStoreLocation, STORE_ENV, StoreLocationError, type StoreLocation } from '../store/store-location.ts';
import { StateKeyError, stateKeyFrom } from './state-key.ts';
import { type ClientCredentials, ClientCredentialsError, clientCredentialsFrom } from '../auth/client-credentials.ts';
import { DEFAULT_HOST, DEFAULT_PAGE_SIZE, DEFAULT_PORT, DEFAULT_SESSION_IDLE_SECONDS, DEFAULT_TOOL_TIMEOUT_SECONDS, DEFAULT_TREE_INTENSITIES } from '../limits.ts';
import { HTTP_SEND_TIMEOUT_MS, MAX_TASK_TTL_MS, SSE_KEEPALIVE_MS, TASK_LEASE_MS } from '../limits.ts';
import { OAUTH_CLOCK_SKEW_SECONDS, OAUTH_JWKS_REFETCH_INTERVAL_MS } from '../limits.ts';
import { DEFAULT_MAX_TASKS_PER_PRINCIPAL, DEFAULT_MODEL_CALLS_PER_MINUTE, DEFAULT_TURNS_PER_MINUTE } from '../limits.ts';
import { checkAdvertiseUrl } from '../cluster/advertise-url.ts';
import { parseEnvNames, parseNetworkPolicy, parsePathList, SandboxPolicyError, type SandboxPolicy } from '../tools/sandbox/policy.ts';

export interface ServerOptions {
  /** Workspace roots in order; the first is the one tools use. */
  readonly workspaces: readonly string[];
  /** The operator named the workspace (`--workspace` or `SUPERPI_WORKSPACE`): clients' roots are then never asked. */
  readonly workspaceGiven: boolean;
  readonly harness: HarnessId;
  readonly logLevel: LogLevel;
  readonly maxMessageBytes: number;
  /** A WebSocket session's unhandled input before its socket is not read (`--max-input-backlog-bytes`). */
  readonly maxInputBacklogBytes: number;
  /** Output a client may leave unread before stdio drops it / a WebSocket is closed 1008 (`--max-output-backlog-bytes`). */
  readonly maxOutputBacklogBytes: number;
  readonly pageSize: number;
  readonly toolTimeoutMs: number;
  /** Scheduler worker threads hosting the actors; 0: on the main thread (see defaultSchedulerThreads). */
  readonly threads: number;
  /** Tool-pool threads for grep, find and large reads. */
  readonly toolThreads: number;
  /** Pooled tool calls one principal may run at once (default: tool threads − 1, at least 1). */
  readonly toolShare: number;
  readonly chaos: ChaosOptions;
  /** Restart intensity of each level of the supervision tree. */
  readonly intensities: TreeIntensities;
  readonly transport: 'stdio' | 'http';
  readonly host: string;
  /** 0 picks a free port (printed at start). */
  readonly port: number;
  readonly tokensFile: string | undefined;
  /** `SUPERPI_TOKENS`: comma-separated token=principal pairs. */
  readonly tokenList: string | undefined;
  readonly requireAuth: boolean;
  readonly allowAnonymousWrites: boolean;
  /** Anonymous remote callers may start harness_task (`--allow-anonymous-tasks`, `SUPERPI_ALLOW_ANONYMOUS_TASKS`). */
  readonly allowAnonymousTasks: boolean;
  /** Harness tasks one principal may run at once on this node (`--max-tasks-per-principal`). */
  readonly maxTasksPerPrincipal: number;
  /** Model turns one principal's tasks may begin per minute on this node (`--turns-per-minute`). */
  readonly turnsPerMinute: number;
  /** Model requests, retries included, one principal's tasks may send per minute on this node (`--model-calls-per-minute`). */
  readonly modelCallsPerMinute: number;
  readonly allowedHosts: readonly string[];
  /** Origins accepted besides the server's own (`--allowed-origins`, `SUPERPI_ALLOWED_ORIGINS`), as `scheme://host[:port]`. */
  readonly allowedOrigins: readonly string[];
  readonly maxSessions: number;
  readonly maxSessionsPerPrincipal: number;
  readonly maxAnonymousSessions: number;
  readonly sessionIdleMs: number;
  /** An SSE stream idle this long gets a `: keep-alive` comment (`--sse-keepalive SECONDS`), in milliseconds. */
  readonly sseKeepAliveMs: number;
  /** An HTTP connection whose client takes none of its reply's bytes this long is destroyed (`--send-timeout SECONDS`), in milliseconds. */
  readonly sendTimeoutMs: number;
  /** Token principals who may read /metrics and the /observer page's data (`--observers`). */
  readonly observers: readonly string[];
  /** Prometheus metrics and per-call accounting; `--no-metrics` turns them off. */
  readonly metrics: boolean;
  /** Where conversations are kept (`--store`, `SUPERPI_STORE`): SQLite by default, or PostgreSQL. */
  readonly store: StoreLocation;
  /** This node's name on a shared PostgreSQL store (`--node-id`, `SUPERPI_NODE_ID`); undefined: host name + pid. */
  readonly nodeId: string | undefined;
  /** The term of a running task's lease (`--task-lease`, `SUPERPI_TASK_LEASE`), in milliseconds. */
  readonly taskLeaseMs: number;
  /** The retention of Tasks-extension tasks (`--task-ttl`, `SUPERPI_TASK_TTL`), in milliseconds; undefined (the default): none, nothing is deleted. */
  readonly taskTtlMs: number | undefined;
  /** How other nodes reach this one (`--advertise-url`, `SUPERPI_ADVERTISE_URL`); undefined: `http://<host>:<bound port>`. */
  readonly advertiseUrl: string | undefined;
  /** `--cluster-insecure-forwarding` (`SUPERPI_CLUSTER_INSECURE_FORWARDING=1`): bearer tokens may be forwarded to another node over plain http:// off this machine. */
  readonly clusterInsecureForwarding: boolean;
  /** The `bash` sandbox from `--bash-network`, `--bash-hide`, `--bash-writable`, `--bash-reveal`, `--bash-env`; the server adds its own state to hide. */
  readonly bashPolicy: SandboxPolicy;
  /** `--unsafe-bash-without-sandbox`: remote callers may run `bash` where no sandbox can be built. */
  readonly unsafeBashWithoutSandbox: boolean;
  /** Key of 2026-07-28 `requestState` seals (`--state-key-file`, `SUPERPI_STATE_KEY`; state-key.ts); undefined: a random one per process. */
  readonly stateKey: Uint8Array | undefined;
  /** OAuth authorization servers whose access tokens are accepted (`--oauth-issuer`, repeatable; `SUPERPI_OAUTH_ISSUERS`, comma-separated). Empty: no OAuth. */
  readonly oauthIssuers: readonly string[];
  /** This server's canonical URL, the audience of its tokens (`--resource`, `SUPERPI_RESOURCE`); undefined: the advertise URL or bound address + `/mcp`. */
  readonly resource: string | undefined;
  /** Scope names granting each capability (`--oauth-scope-read`, `-write`, `-exec`, `-observe`); unset ones keep their defaults. */
  readonly oauthScopes: Partial<Record<'read' | 'write' | 'exec' | 'observe', string>>;
  /** `--oauth-clock-skew SECONDS`; undefined: OAUTH_CLOCK_SKEW_SECONDS. */
  readonly oauthClockSkewSeconds: number | undefined;
  /** `--oauth-jwks-refetch SECONDS`: an unknown kid reads an issuer's JWKS again at most this often; undefined: OAUTH_JWKS_REFETCH_INTERVAL_MS. */
  readonly oauthJwksRefetchSeconds: number | undefined;
  /** This server's client at the issuers, for introspecting opaque tokens (`--oauth-introspection-client-id` and a secret from a file or the environment); undefined: opaque tokens are refused. */
  readonly oauthIntrospection: ClientCredentials | undefined;
}

/**
 * Scheduler threads when `--threads` is not given. A stdio server has exactly one session: its actors run
 * on the main thread (0), so it boots no thread — except when fault injection kills scheduler workers,
 * which needs real ones. HTTP and WebSocket serve many sessions: DEFAULT_THREADS_RULE.
 */
export function defaultSchedulerThreads(transport: 'stdio' | 'http', chaos: ChaosOptions): number {
  const killsWorkers = chaos.killWorkerEveryMs !== undefined || chaos.killTaskWorkerEveryMs !== undefined;
  return transport === 'stdio' && !killsWorkers ? 0 : defaultThreadCount();
}

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
  ['SUPERPI_TASK_TTL', 'how long a finished 2026-07-28 task is kept, in seconds (as --task-ttl)'],
  ['SUPERPI_ADVERTISE_URL', 'how the other nodes of a cluster reach this one (as --advertise-url)'],
  ['SUPERPI_CLUSTER_INSECURE_FORWARDING', 'set to 1 to forward bearer tokens over plain http:// to other nodes (as --cluster-insecure-forwarding)'],
  ['SUPERPI_OAUTH_ISSUERS', 'comma-separated OAuth issuer URLs whose access tokens are accepted (as --oauth-issuer)'],
  ['SUPERPI_RESOURCE', "this server's canonical URL, the audience OAuth tokens must name (as --resource)"],
  ['SUPERPI_OAUTH_INTROSPECTION_CLIENT_ID', "this server's client id at the issuers, for token introspection (as --oauth-introspection-client-id)"],
  ['SUPERPI_OAUTH_INTROSPECTION_SECRET', "that client's secret (or --oauth-introspection-secret-file; never on the command line)"],
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
  'max-anonymous-sessions', 'session-idle', 'sse-keepalive', 'send-timeout', 'observers', 'advertise-url', 'cluster-insecure-forwarding',
  'oauth-issuer', 'resource', 'oauth-scope-read', 'oauth-scope-write', 'oauth-scope-exec', 'oauth-scope-observe', 'oauth-clock-skew', 'oauth-jwks-refetch',
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
  --session-idle SECONDS   idle HTTP sessions are closed after this   default: ${DEFAULT_SESSION_IDLE_SECONDS}
  --sse-keepalive SECONDS  an SSE stream (a listen, a GET stream, a long tool call) silent this long gets a comment line, so proxies keep it open; fractions allowed   default: ${SSE_KEEPALIVE_MS / 1000}
  --send-timeout SECONDS   an HTTP connection whose client takes none of its reply this long is closed, its unsent bytes dropped; fractions allowed   default: ${HTTP_SEND_TIMEOUT_MS / 1000}
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
  --unsafe-bash-without-sandbox   let HTTP and WebSocket callers run bash where no sandbox can be built (no bwrap)   default: refused
  --oauth-issuer URL       accept OAuth access tokens (JWT) of this authorization server; repeatable; then every caller needs a bearer token   env SUPERPI_OAUTH_ISSUERS=URL,URL   default: none (static tokens only)
  --resource URL           this server's canonical URL, the audience (aud) OAuth tokens must name   env SUPERPI_RESOURCE   default: --advertise-url or http://<host>:<bound port>, + /mcp
  --oauth-scope-read NAME  the scope granting read-only tools and resources   default: mcp:read
  --oauth-scope-write NAME the scope granting write and edit   default: mcp:write
  --oauth-scope-exec NAME  the scope granting bash and harness_task   default: mcp:exec
  --oauth-scope-observe NAME   the scope granting /metrics and /observer   default: mcp:observe
  --oauth-clock-skew SECONDS   allowed clock difference with an issuer for exp and nbf   default: ${OAUTH_CLOCK_SKEW_SECONDS}
  --oauth-jwks-refetch SECONDS   a token under an unknown key id reads its issuer's keys again at most this often (key rotation)   default: ${OAUTH_JWKS_REFETCH_INTERVAL_MS / 1000}
  --oauth-introspection-client-id ID   this server's client at the issuers: opaque (non-JWT) tokens are checked by token introspection (RFC 7662) where an issuer offers it   env SUPERPI_OAUTH_INTROSPECTION_CLIENT_ID   default: none (opaque tokens refused)
  --oauth-introspection-secret-file FILE   file holding that client's secret   env SUPERPI_OAUTH_INTROSPECTION_SECRET
  --help                   print this text
  --version                print the version

Environment (read when the flag is not given):
${ENVIRONMENT.map(([name, meaning]) => `  ${name.padEnd(36)} ${meaning}`).join('\n')}`;

export class OptionsError extends Error {
  override readonly name = 'OptionsError';
}

export type ParsedCommand = { kind: 'serve'; options: ServerOptions } | { kind: 'help' } | { kind: 'version' };

export function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd(), defaultTransport: 'stdio' | 'http' = 'http'): ParsedCommand {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        workspace: { type: 'string', multiple: true },
        harness: { type: 'string' },
        'log-level': { type: 'string' },
        'max-message-bytes': { type: 'string' },
        'max-input-backlog-bytes': { type: 'string' },
        'max-output-backlog-bytes': { type: 'string' },
        'page-size': { type: 'string' },
        'tool-timeout': { type: 'string' },
        threads: { type: 'string' },
        'tool-threads': { type: 'string' },
        'tool-share': { type: 'string' },
        chaos: { type: 'string', multiple: true },
        'restart-intensity': { type: 'string', multiple: true },
        stdio: { type: 'boolean' },
        host: { type: 'string' },
        port: { type: 'string' },
        tokens: { type: 'string' },
        'require-auth': { type: 'boolean' },
        'allow-anonymous-writes': { type: 'boolean' },
        'allow-anonymous-tasks': { type: 'boolean' },
        'max-tasks-per-principal': { type: 'string' },
        'turns-per-minute': { type: 'string' },
        'model-calls-per-minute': { type: 'string' },
        'allowed-hosts': { type: 'string' },
        'allowed-origins': { type: 'string' },
        'max-sessions': { type: 'string' },
        'max-sessions-per-principal': { type: 'string' },
        'max-anonymous-sessions': { type: 'string' },
        'session-idle': { type: 'string' },
        'sse-keepalive': { type: 'string' },
        'send-timeout': { type: 'string' },
        observers: { type: 'string' },
        'no-metrics': { type: 'boolean' },
        store: { type: 'string' },
        'node-id': { type: 'string' },
        'task-lease': { type: 'string' },
        'task-ttl': { type: 'string' },
        'advertise-url': { type: 'string' },
        'cluster-insecure-forwarding': { type: 'boolean' },
        'bash-network': { type: 'string' },
        'bash-hide': { type: 'string', multiple: true },
        'bash-writable': { type: 'string', multiple: true },
        'bash-reveal': { type: 'string', multiple: true },
        'bash-env': { type: 'string', multiple: true },
        'unsafe-bash-without-sandbox': { type: 'boolean' },
        'state-key-file': { type: 'string' },
        'oauth-issuer': { type: 'string', multiple: true },
        resource: { type: 'string' },
        'oauth-scope-read': { type: 'string' },
        'oauth-scope-write': { type: 'string' },
        'oauth-scope-exec': { type: 'string' },
        'oauth-scope-observe': { type: 'string' },
        'oauth-clock-skew': { type: 'string' },
        'oauth-jwks-refetch': { type: 'string' },
        'oauth-introspection-client-id': { type: 'string' },
        'oauth-introspection-secret-file': { type: 'string' },
        help: { type: 'boolean' },
        version: { type: 'boolean' },
      },
    }));
  } catch (err) {
    throw new OptionsError(`${(err as Error).message}\n\n${usageFor(defaultTransport)}`);
  }
  if (values.help) return { kind: 'help' };
  if (values.version) return { kind: 'version' };
  const fromEnv = env.SUPERPI_WORKSPACE ? env.SUPERPI_WORKSPACE.split(':').filter((p) => p !== '') : [];
  const defaultWorkspaces = [cwd];
  const workspaces = values.workspace && values.workspace.length > 0 ? values.workspace : fromEnv.length > 0 ? fromEnv : defaultWorkspaces;
  const harness = values.harness ?? env.SUPERPI_HARNESS ?? DEFAULT_HARNESS;
  if (!isHarnessId(harness)) throw new OptionsError(`unknown harness "${harness}": use one of ${harnessIds.join(', ')}`);
  let logLevel: LogLevel;
  try {
    logLevel = parseLogLevel(values['log-level'] ?? env.SUPERPI_LOG_LEVEL);
  } catch (err) {
    throw new OptionsError((err as Error).message);
  }
  let chaos: ChaosOptions;
  try {
    chaos = parseChaos(values.chaos ?? []);
  } catch (err) {
    throw new OptionsError((err as Error).message);
  }
  let intensities: TreeIntensities;
  try {
    intensities = parseIntensities(values['restart-intensity'] ?? []);
  } catch (err) {
    throw new OptionsError((err as Error).message);
  }
  let store: StoreLocation;
  try {
    store = parseStoreLocation(values.store ?? env[STORE_ENV]);
  } catch (err) {
    if (err instanceof StoreLocationError) throw new OptionsError(err.message);
    throw err;
  }
  const nodeId = values['node-id'] ?? (env.SUPERPI_NODE_ID || undefined);
  const nodeIdProblem = nodeId === undefined ? null : checkNodeId(nodeId);
  let stateKey: Uint8Array | undefined;
  try {
    stateKey = stateKeyFrom({ file: values['state-key-file'], env: env.SUPERPI_STATE_KEY }, store);
  } catch (err) {
    if (err instanceof StateKeyError) throw new OptionsError(err.message);
    throw err;
  }
  if (nodeIdProblem !== null) throw new OptionsError(`--node-id: ${nodeIdProblem}`);
  const advertiseRaw = values['advertise-url'] ?? (env.SUPERPI_ADVERTISE_URL || undefined);
  const advertise = advertiseRaw === undefined ? undefined : checkAdvertiseUrl(advertiseRaw);
  if (advertise !== undefined && 'problem' in advertise) throw new OptionsError(`--advertise-url: ${advertise.problem}`);
  let bashPolicy: SandboxPolicy;
  try {
    bashPolicy = {
      network: parseNetworkPolicy(values['bash-network']),
      hide: parsePathList('--bash-hide', values['bash-hide'], cwd),
      writable: parsePathList('--bash-writable', values['bash-writable'], cwd),
      reveal: parsePathList('--bash-reveal', values['bash-reveal'], cwd),
      env: parseEnvNames(values['bash-env']),
      serverState: [],
    };
  } catch (err) {
    if (err instanceof SandboxPolicyError) throw new OptionsError(err.message);
    throw err;
  }
  const toolThreads = positiveInt('--tool-threads', values['tool-threads'], defaultThreadCount());
  const transport = values.stdio ? 'stdio' : defaultTransport;
  if (transport === 'stdio') {
    const given = HTTP_ONLY_FLAGS.filter((f) => values[f] !== undefined);
    if (given.length > 0) throw new OptionsError(`--${given[0]} is for the HTTP server and means nothing with --stdio (one session over stdin and stdout): drop --${given[0]}${values.stdio ? ', or drop --stdio to serve HTTP' : ''}`);
  }
  let oauthIntrospection: ClientCredentials | undefined;
  try {
    oauthIntrospection = clientCredentialsFrom({ clientId: values['oauth-introspection-client-id'] ?? env.SUPERPI_OAUTH_INTROSPECTION_CLIENT_ID, secretFile: values['oauth-introspection-secret-file'], secretEnv: env.SUPERPI_OAUTH_INTROSPECTION_SECRET });
  } catch (err) {
    throw err instanceof ClientCredentialsError ? new OptionsError(err.message) : err;
  }
  if (oauthIntrospection !== undefined && values['oauth-issuer'] === undefined && (env.SUPERPI_OAUTH_ISSUERS ?? '').trim() === '') throw new OptionsError('--oauth-introspection-client-id needs --oauth-issuer (or SUPERPI_OAUTH_ISSUERS): the issuers to introspect at');
  return {
    kind: 'serve',
    options: {
      workspaces,
      workspaceGiven: workspaces !== defaultWorkspaces,
      harness,
      logLevel,
      maxMessageBytes: positiveInt('--max-message-bytes', values['max-message-bytes'], DEFAULT_MAX_MESSAGE_BYTES),
      maxInputBacklogBytes: positiveInt('--max-input-backlog-bytes', values['max-input-backlog-bytes'], MAX_INPUT_BACKLOG_BYTES),
      maxOutputBacklogBytes: positiveInt('--max-output-backlog-bytes', values['max-output-backlog-bytes'], MAX_OUTPUT_BACKLOG_BYTES),
      pageSize: positiveInt('--page-size', values['page-size'], DEFAULT_PAGE_SIZE),
      toolTimeoutMs: positiveInt('--tool-timeout', values['tool-timeout'], DEFAULT_TOOL_TIMEOUT_SECONDS) * 1000,
      threads: wholeNumber('--threads', values.threads, defaultSchedulerThreads(transport, chaos)),
      toolThreads,
      toolShare: positiveInt('--tool-share', values['tool-share'], defaultPrincipalShare(toolThreads)),
      chaos,
      intensities,
      transport,
      host: values.host ?? DEFAULT_HOST,
      port: portNumber(values.port ?? env.SUPERPI_PORT),
      tokensFile: values.tokens,
      tokenList: env.SUPERPI_TOKENS,
      requireAuth: values['require-auth'] ?? false,
      allowAnonymousWrites: values['allow-anonymous-writes'] ?? false,
      allowAnonymousTasks: values['allow-anonymous-tasks'] ?? envFlag('SUPERPI_ALLOW_ANONYMOUS_TASKS', env.SUPERPI_ALLOW_ANONYMOUS_TASKS),
      maxTasksPerPrincipal: positiveInt('--max-tasks-per-principal', values['max-tasks-per-principal'], DEFAULT_MAX_TASKS_PER_PRINCIPAL),
      turnsPerMinute: positiveInt('--turns-per-minute', values['turns-per-minute'], DEFAULT_TURNS_PER_MINUTE),
      modelCallsPerMinute: positiveInt('--model-calls-per-minute', values['model-calls-per-minute'], DEFAULT_MODEL_CALLS_PER_MINUTE),
      allowedHosts: values['allowed-hosts'] ? values['allowed-hosts'].split(',').map((h) => h.trim().toLowerCase()).filter((h) => h !== '') : DEFAULT_ALLOWED_HOSTS,
      allowedOrigins: parseAllowedOrigins(values['allowed-origins'] ?? (env.SUPERPI_ALLOWED_ORIGINS || undefined)),
      maxSessions: positiveInt('--max-sessions', values['max-sessions'], DEFAULT_MAX_SESSIONS),
      maxSessionsPerPrincipal: positiveInt('--max-sessions-per-principal', values['max-sessions-per-principal'], DEFAULT_MAX_SESSIONS_PER_PRINCIPAL),
      maxAnonymousSessions: positiveInt('--max-anonymous-sessions', values['max-anonymous-sessions'], DEFAULT_MAX_ANONYMOUS_SESSIONS),
      sessionIdleMs: positiveInt('--session-idle', values['session-idle'], DEFAULT_SESSION_IDLE_SECONDS) * 1000,
      sseKeepAliveMs: secondsAsMs('--sse-keepalive', values['sse-keepalive'], SSE_KEEPALIVE_MS),
      sendTimeoutMs: secondsAsMs('--send-timeout', values['send-timeout'], HTTP_SEND_TIMEOUT_MS),
      observers: parseObservers(values.observers),
      metrics: !(values['no-metrics'] ?? false),
      store,
      nodeId,
      taskLeaseMs: positiveInt('--task-lease', values['task-lease'] ?? (env.SUPERPI_TASK_LEASE || undefined), TASK_LEASE_MS / 1000) * 1000,
      taskTtlMs: taskTtl(values['task-ttl'] ?? (env.SUPERPI_TASK_TTL || undefined)),
      advertiseUrl: advertise?.url,
      clusterInsecureForwarding: values['cluster-insecure-forwarding'] ?? env.SUPERPI_CLUSTER_INSECURE_FORWARDING === '1',
      bashPolicy,
      unsafeBashWithoutSandbox: values['unsafe-bash-without-sandbox'] ?? false,
      stateKey,
      oauthIssuers: values['oauth-issuer'] ?? (env.SUPERPI_OAUTH_ISSUERS ?? '').split(',').map((u) => u.trim()).filter((u) => u !== ''),
      resource: values.resource ?? (env.SUPERPI_RESOURCE || undefined),
      oauthScopes: {
        ...(values['oauth-scope-read'] === undefined ? {} : { read: values['oauth-scope-read'] }),
        ...(values['oauth-scope-write'] === undefined ? {} : { write: values['oauth-scope-write'] }),
        ...(values['oauth-scope-exec'] === undefined ? {} : { exec: values['oauth-scope-exec'] }),
        ...(values['oauth-scope-observe'] === undefined ? {} : { observe: values['oauth-scope-observe'] }),
      },
      oauthJwksRefetchSeconds: values['oauth-jwks-refetch'] === undefined ? undefined : positiveInt('--oauth-jwks-refetch', values['oauth-jwks-refetch'], OAUTH_JWKS_REFETCH_INTERVAL_MS / 1000),
      oauthClockSkewSeconds: values['oauth-clock-skew'] === undefined ? undefined : wholeNumber('--oauth-clock-skew', values['oauth-clock-skew'], OAUTH_CLOCK_SKEW_SECONDS),
      oauthIntrospection,
    },
  };
}

/** `--task-ttl SECONDS` in milliseconds (a positive whole number, at most MAX_TASK_TTL_MS), or none. */
function taskTtl(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const seconds = positiveInt('--task-ttl', raw, 1);
  if (seconds * 1000 > MAX_TASK_TTL_MS) throw new OptionsError(`--task-ttl must be at most ${MAX_TASK_TTL_MS / 1000} seconds (a year), not "${raw}"`);
  return seconds * 1000;
}

/** A yes/no environment variable: 1/true/yes or 0/false/no (any case); unset or empty is no. */
function envFlag(name: string, raw: string | undefined): boolean {
  const v = raw?.trim().toLowerCase() ?? '';
  if (v === '' || v === '0' || v === 'false' || v === 'no') return false;
  if (v === '1' || v === 'true' || v === 'yes') return true;
  throw new OptionsError(`${name} takes 1, true or yes (or 0, false, no), not "${raw}"`);
}

/** `--allowed-origins`: each entry an http(s) origin, kept as the origin check compares it. */
function parseAllowedOrigins(raw: string | undefined): readonly string[] {
  if (raw === undefined) return [];
  return raw.split(',').map((o) => o.trim()).filter((o) => o !== '').map((o) => {
    const origin = parseOrigin(o);
    if (origin === null) throw new OptionsError(`--allowed-origins takes http(s) origins such as http://localhost:3000, not "${o}"`);
    return origin;
  });
}

function portNumber(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_PORT;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0 || n > 65535) throw new OptionsError(`--port takes 0-65535, not "${raw}"`);
  return n;
}

function wholeNumber(flag: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = raw.trim() === '' ? Number.NaN : Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw new OptionsError(`${flag} takes a whole number (0 or more), not "${raw}"`);
  return n;
}

/** Seconds, fractions allowed (`0.5`), as whole milliseconds: at least 1 ms, at most what a Node timer holds. */
function secondsAsMs(flag: string, raw: string | undefined, fallbackMs: number): number {
  if (raw === undefined) return fallbackMs;
  const ms = raw.trim() === '' ? Number.NaN : Math.round(Number(raw) * 1000);
  if (!Number.isSafeInteger(ms) || ms < 1 || ms > 2 ** 31 - 1) throw new OptionsError(`${flag} takes a number of seconds from 0.001 to 2147483 (fractions allowed), not "${raw}"`);
  return ms;
}

function positiveInt(flag: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n <= 0) throw new OptionsError(`${flag} takes a positive whole number, not "${raw}"`);
  return n;
}
