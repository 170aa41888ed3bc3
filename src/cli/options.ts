// Server options from flags, then environment, then defaults — merged in this one place.

import { parseArgs } from 'node:util';
import { defaultThreadCount } from '../actors/thread-count.ts';
import { DEFAULT_HARNESS, type HarnessId, harnessIds, isHarnessId } from '../harness/ids.ts';
import type { LogLevel } from '../mcp/logging-level.ts';
import { type ChaosOptions, parseChaos } from '../server/chaos.ts';
import { defaultPrincipalShare } from '../tools/fair-share.ts';
import { parseLogLevel } from '../log/logger.ts';
import { parseIntensities, type TreeIntensities } from '../supervisor/intensities.ts';
import { DEFAULT_ALLOWED_HOSTS, DEFAULT_MAX_ANONYMOUS_SESSIONS, DEFAULT_MAX_SESSIONS, DEFAULT_MAX_SESSIONS_PER_PRINCIPAL } from '../limits.ts';
import { DEFAULT_MAX_MESSAGE_BYTES, MAX_INPUT_BACKLOG_BYTES, MAX_NODE_OUTPUT_BACKLOG_BYTES, MAX_NODE_REQUEST_BODY_BYTES, MAX_OUTPUT_BACKLOG_BYTES, MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL } from '../limits.ts';
import { parseOrigin } from '../transports/origin.ts';
import { parseObservers } from '../observer/observer-access.ts';
import { checkNodeId } from '../store/node-ownership.ts';
import { parseStoreLocation, STORE_ENV, StoreLocationError, type StoreLocation } from '../store/store-location.ts';
import { StateKeyError, stateKeyFrom } from './state-key.ts';
import { type ClientCredentials, ClientCredentialsError, clientCredentialsFrom } from '../auth/client-credentials.ts';
import { DEFAULT_HOST, DEFAULT_PAGE_SIZE, DEFAULT_PORT, DEFAULT_SESSION_IDLE_SECONDS, DEFAULT_TOOL_TIMEOUT_SECONDS } from '../limits.ts';
import { HTTP_SEND_TIMEOUT_MS, MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS, MAX_TASK_TTL_MS, SSE_KEEPALIVE_MS, TASK_LEASE_MS } from '../limits.ts';
import { OAUTH_CLOCK_SKEW_SECONDS, OAUTH_JWKS_REFETCH_INTERVAL_MS } from '../limits.ts';
import { DEFAULT_MAX_TASKS_PER_PRINCIPAL, DEFAULT_MODEL_CALLS_PER_MINUTE, DEFAULT_TURNS_PER_MINUTE } from '../limits.ts';
import { checkAdvertiseUrl } from '../cluster/advertise-url.ts';
import { parseTrustedProxies } from '../transports/trusted-proxies.ts';
import { HTTP_ONLY_FLAGS, usageFor } from './usage.ts';
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
  /** Unread output of every connection of the node together, past which the one holding the most is closed (`--max-node-output-backlog-bytes`). */
  readonly maxNodeOutputBacklogBytes: number;
  /** POST bodies being read, every connection of the node together, past which the largest is dropped (`--max-node-request-body-bytes`). */
  readonly maxNodeRequestBodyBytes: number;
  /** Requests one principal may have in flight on this node across its sessions (`--max-requests-in-flight-per-principal`). */
  readonly maxRequestsInFlightPerPrincipal: number;
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
  /** Open TCP connections to the HTTP port, in all (`--max-connections`). */
  readonly maxConnections: number;
  /** Open TCP connections from one client address (`--max-connections-per-address`). */
  readonly maxConnectionsPerAddress: number;
  /** Reverse proxies whose connections count against `maxConnections` only (`--trusted-proxy`), canonical IP addresses. */
  readonly trustedProxies: ReadonlySet<string>;
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
  /** `--bash-max-processes`, `--bash-max-memory` (and their variables); unset ones keep their defaults (bounds-probe.ts). */
  readonly bashLimits: { readonly maxProcesses?: number; readonly maxMemoryBytes?: number };
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
  /** Only `typ: at+jwt` JWTs are access tokens (`--oauth-require-at-jwt`, `SUPERPI_OAUTH_REQUIRE_AT_JWT`). */
  readonly oauthRequireAtJwt: boolean;
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

export { ENVIRONMENT, HTTP_ONLY_FLAGS, usage, usageFor } from './usage.ts';

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
        'max-node-output-backlog-bytes': { type: 'string' },
        'max-node-request-body-bytes': { type: 'string' },
        'max-requests-in-flight-per-principal': { type: 'string' },
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
        'max-connections': { type: 'string' },
        'max-connections-per-address': { type: 'string' },
        'trusted-proxy': { type: 'string', multiple: true },
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
        'bash-max-processes': { type: 'string' },
        'bash-max-memory': { type: 'string' },
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
        'oauth-require-at-jwt': { type: 'boolean' },
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
  const noIssuer = values['oauth-issuer'] === undefined && (env.SUPERPI_OAUTH_ISSUERS ?? '').trim() === '';
  if (oauthIntrospection !== undefined && noIssuer) throw new OptionsError('--oauth-introspection-client-id needs --oauth-issuer (or SUPERPI_OAUTH_ISSUERS): the issuers to introspect at');
  // A flag that shapes how issuers' tokens are checked means nothing without an issuer: refused, so no one
  // believes a check is in force (--oauth-require-at-jwt alone would leave the server on its static token).
  const issuerFlag = OAUTH_ISSUER_FLAGS.find((f) => values[f] !== undefined) ?? (envFlag('SUPERPI_OAUTH_REQUIRE_AT_JWT', env.SUPERPI_OAUTH_REQUIRE_AT_JWT) ? 'oauth-require-at-jwt' : undefined);
  if (issuerFlag !== undefined && noIssuer) throw new OptionsError(`--${issuerFlag} shapes how an issuer's tokens are checked and needs --oauth-issuer (or SUPERPI_OAUTH_ISSUERS): without one no OAuth token is accepted at all`);
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
      maxNodeOutputBacklogBytes: positiveInt('--max-node-output-backlog-bytes', values['max-node-output-backlog-bytes'] ?? (env.SUPERPI_MAX_NODE_OUTPUT_BACKLOG_BYTES || undefined), MAX_NODE_OUTPUT_BACKLOG_BYTES),
      maxNodeRequestBodyBytes: positiveInt('--max-node-request-body-bytes', values['max-node-request-body-bytes'] ?? (env.SUPERPI_MAX_NODE_REQUEST_BODY_BYTES || undefined), MAX_NODE_REQUEST_BODY_BYTES),
      maxRequestsInFlightPerPrincipal: positiveInt('--max-requests-in-flight-per-principal', values['max-requests-in-flight-per-principal'] ?? (env.SUPERPI_MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL || undefined), MAX_REQUESTS_IN_FLIGHT_PER_PRINCIPAL),
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
      maxConnections: positiveInt('--max-connections', values['max-connections'], MAX_CONNECTIONS),
      maxConnectionsPerAddress: positiveInt('--max-connections-per-address', values['max-connections-per-address'], MAX_CONNECTIONS_PER_ADDRESS),
      trustedProxies: optionValue(() => parseTrustedProxies(values['trusted-proxy'] ?? [])),
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
      bashLimits: bashLimitsFrom(values['bash-max-processes'] ?? (env.SUPERPI_BASH_MAX_PROCESSES || undefined), values['bash-max-memory'] ?? (env.SUPERPI_BASH_MAX_MEMORY_BYTES || undefined)),
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
      oauthRequireAtJwt: values['oauth-require-at-jwt'] ?? envFlag('SUPERPI_OAUTH_REQUIRE_AT_JWT', env.SUPERPI_OAUTH_REQUIRE_AT_JWT),
      oauthIntrospection,
    },
  };
}

/** The flags that only change how an OAuth issuer's tokens are checked: each needs an issuer. */
const OAUTH_ISSUER_FLAGS = ['oauth-require-at-jwt', 'oauth-scope-read', 'oauth-scope-write', 'oauth-scope-exec', 'oauth-scope-observe', 'oauth-clock-skew', 'oauth-jwks-refetch'] as const;

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

/** A value whose parser throws its own error: as an OptionsError (exit 2 with the message), never a crash. */
function optionValue<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    throw new OptionsError((err as Error).message);
  }
}

function positiveInt(flag: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n <= 0) throw new OptionsError(`${flag} takes a positive whole number, not "${raw}"`);
  return n;
}

/** `--bash-max-processes N`, `--bash-max-memory BYTES`: positive whole numbers; an unset one is left to its default. */
function bashLimitsFrom(processes: string | undefined, memory: string | undefined): { maxProcesses?: number; maxMemoryBytes?: number } {
  return {
    ...(processes === undefined ? {} : { maxProcesses: positiveInt('--bash-max-processes', processes, 0) }),
    ...(memory === undefined ? {} : { maxMemoryBytes: positiveInt('--bash-max-memory', memory, 0) }),
  };
}
