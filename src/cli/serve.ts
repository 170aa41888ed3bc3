// Starting a server, shared by the command line (main.ts) and the library (src/index.ts): open the
// workspace and tokens, start the application (the supervision tree), then serve one stdio session or
// listen for HTTP and WebSocket. The process-wide parts (signals, the launcher watch, the banner, exit
// codes) stay in main.ts, so an embedder gets a server without its process being taken over.

import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { parseTokenList, readTokenFile, TokenConfigError, TokenTable } from '../auth/tokens.ts';
import { defaultAdvertiseUrl, forwardSourceAddress } from '../cluster/advertise-url.ts';
import { BearerAuthority } from '../auth/bearer-authority.ts';
import { oauthConfig } from '../auth/oauth-config.ts';
import { createOAuthResourceServer } from '../auth/oauth-resource-server.ts';
import { Application } from '../server/application.ts';
import { createLogger, type Logger } from '../log/logger.ts';
import { bashIsolation, describeIsolation } from '../tools/bash-isolation.ts';
import { startEgressFor } from '../tools/sandbox/egress-seam.ts';
import { useSandboxPolicy } from '../tools/sandbox/policy.ts';
import { boundsMechanism, commandLimits, useCommandLimits } from '../tools/sandbox/bounds-probe.ts';
import { describeBounds } from '../tools/sandbox/bounds.ts';
import { closeOpenCgroups } from '../tools/sandbox/command-cgroup.ts';
import { discardSpares } from '../tools/sandbox/spare.ts';
import { storeHome } from '../store/location.ts';
import { openWorkspace } from '../tools/workspace.ts';
import { serveStdio } from '../transports/stdio.ts';
import { defaultSchedulerThreads, parseOptions, type ServerOptions } from './options.ts';
import { DRAIN_GRACE_MS } from '../limits.ts';

export const SERVER_VERSION = '0.1.0';
/**
 * How long after the start the bash isolation is probed (and logged), when no bash call has probed it
 * first: past the first exchanges of a host with a new server, which the probe's fork would slow.
 */
export const ISOLATION_PROBE_DELAY_MS = 2000;

/**
 * The library's options: those of the flags (camelCase, as `ServerOptions` names them), each optional.
 * What is left out takes the flag's default — not the environment, which is the command line's business.
 */
export type LibraryOptions = Partial<Omit<ServerOptions, 'transport' | 'workspaces'>> & {
  /** Workspace root (or roots, the first is used), as `--workspace`. Default: the current directory. */
  readonly workspace?: string | readonly string[];
  /** Where log lines go. Default: stderr at `logLevel`. */
  readonly logger?: Logger;
  /**
   * Called when the supervision tree gives up (the server can no longer serve). Default: the message on
   * stderr and `process.exit(1)`, what the command line does.
   */
  readonly onGiveUp?: (message: string) => void;
};

export interface StdioServeOptions extends LibraryOptions {
  /** Default: `process.stdin`. */
  readonly input?: Readable;
  /** Default: `process.stdout`. Only protocol lines are written to it. */
  readonly output?: Writable;
  /** Aborted: stop reading, let calls in flight finish within `DRAIN_GRACE_MS`, answer the rest with an error. */
  readonly stop?: AbortSignal;
  /** Aborted while draining: answer what is left now. */
  readonly hurry?: AbortSignal;
}

export interface RunningServer {
  /** The Streamable HTTP endpoint (`http://host:port/mcp`); WebSocket is the same address with `ws:`. */
  readonly url: string;
  /** Number of open sessions. */
  sessions(): number;
  /** Drains (calls in flight get `graceMs`), closes every session, stops the application. */
  close(graceMs?: number): Promise<void>;
}

/** The library options as the command line's: flags' defaults, then what was given. */
export function resolveOptions(options: LibraryOptions, transport: 'stdio' | 'http'): ServerOptions {
  const parsed = parseOptions([], {}, process.cwd(), transport);
  if (parsed.kind !== 'serve') throw new Error('parseOptions without flags always serves');
  const { workspace, logger: _logger, onGiveUp: _onGiveUp, ...rest } = options;
  const defined = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) as Partial<ServerOptions>;
  const workspaces = workspace === undefined ? parsed.options.workspaces : typeof workspace === 'string' ? [workspace] : workspace;
  const merged = { ...parsed.options, ...defined, workspaces, workspaceGiven: workspace !== undefined || (defined.workspaceGiven ?? false), transport };
  // The default number of scheduler threads depends on the chaos asked for (see defaultSchedulerThreads).
  return options.threads === undefined ? { ...merged, threads: defaultSchedulerThreads(transport, merged.chaos) } : merged;
}

export interface OpenedServer {
  readonly app: Application;
  readonly options: ServerOptions;
  readonly logger: Logger;
  readonly workspace: string;
  readonly tokens: TokenTable;
  /** Probes the bash isolation now if not done yet; resolves once its line is logged. */
  readonly logIsolation: () => Promise<void>;
  /** Closes the egress proxy of `--bash-network allow=…` (nothing to close otherwise). */
  readonly closeEgress: () => Promise<void>;
}

/**
 * Opens the workspace, reads the tokens and starts the application. Configuration errors (no such
 * workspace, a bad token file) reject with `WorkspaceError`, `TokenConfigError` or an ENOENT error
 * before anything is started.
 */
export async function openServer(options: ServerOptions, extra: Pick<LibraryOptions, 'logger' | 'onGiveUp'> = {}): Promise<OpenedServer> {
  const logger = extra.logger ?? createLogger(options.logLevel);
  const workspace = await openWorkspace(options.workspaces[0] as string);
  const tokens = await loadTokens(options);
  // The server's own state is hidden from bash: its home (store, code cache) and the tokens file.
  useSandboxPolicy({
    ...options.bashPolicy,
    serverState: [storeHome(), ...(options.tokensFile === undefined ? [] : [path.resolve(options.tokensFile)])],
  });
  useCommandLimits(options.bashLimits);
  const stopEgress = await startEgressFor(options.bashPolicy.network, logger);
  // At the stop: the egress proxy, then the spare sandboxes and every command cgroup still open.
  const closeEgress = async (): Promise<void> => {
    await stopEgress();
    discardSpares();
    await closeOpenCgroups().catch((err: unknown) => logger.log('warning', `bash: a command cgroup could not be removed at the stop: ${(err as Error).message}`));
  };
  let app: Application;
  try {
    app = await Application.start({
      workspace,
      harness: options.harness,
      pageSize: options.pageSize,
      toolTimeoutMs: options.toolTimeoutMs,
      threads: options.threads,
      toolThreads: options.toolThreads,
      toolShare: options.toolShare,
      maxRequestsInFlightPerPrincipal: options.maxRequestsInFlightPerPrincipal,
      chaos: options.chaos,
      intensities: options.intensities,
      logger,
      serverVersion: SERVER_VERSION,
      allowAnonymousWrites: options.allowAnonymousWrites,
      allowAnonymousTasks: options.allowAnonymousTasks,
      followRoots: !options.workspaceGiven,
      taskBudget: { maxTasks: options.maxTasksPerPrincipal, turnsPerMinute: options.turnsPerMinute, modelCallsPerMinute: options.modelCallsPerMinute },
      unsafeBashWithoutSandbox: options.unsafeBashWithoutSandbox,
      // stdio serves no /metrics: nothing would read them.
      metrics: options.metrics && options.transport !== 'stdio',
      store: options.store,
      ...(options.stateKey === undefined ? {} : { stateKey: options.stateKey }),
      sessionLimits: {
        maxSessions: options.maxSessions,
        maxSessionsPerPrincipal: options.maxSessionsPerPrincipal,
        maxAnonymousSessions: options.maxAnonymousSessions,
        tokensConfigured: tokens.size > 0,
      },
      ...(options.nodeId === undefined ? {} : { nodeId: options.nodeId }),
      taskLeaseMs: options.taskLeaseMs,
      ...(options.taskTtlMs === undefined ? {} : { taskTtlMs: options.taskTtlMs }),
      onGiveUp: extra.onGiveUp ?? exitOnGiveUp,
    });
  } catch (err) {
    await closeEgress();
    throw err;
  }
  // Probed once near the start rather than at the first bash call, so the operator reads in the log what
  // is in force — but not during the start: it runs a process (forking this one: 10-50 ms of the main
  // thread), which a host waiting for its first replies should not pay for. A bash call probes at once.
  let logged: Promise<void> | null = null;
  const logIsolation = (): Promise<void> => (logged ??= bashIsolation().then((isolation) => {
    logger.log(isolation.kind === 'bubblewrap' ? 'info' : 'warning', `bash isolation: ${describeIsolation(isolation)}`);
    void boundsMechanism().then((bounds) => {
      const full = bounds.kind === 'cgroup1' || bounds.kind === 'cgroup2';
      logger.log(full ? 'info' : 'warning', `bash bounds: ${describeBounds(bounds, commandLimits())}`);
    }, (err: unknown) => logger.log('error', `bash bounds could not be probed: ${(err as Error).message}`));
    if (isolation.kind !== 'bubblewrap') {
      logger.log('warning', options.unsafeBashWithoutSandbox
        ? 'bash runs WITHOUT a sandbox for every caller (--unsafe-bash-without-sandbox): a command can read and write whatever this user can'
        : 'bash runs without a sandbox: refused to HTTP and WebSocket callers (--unsafe-bash-without-sandbox allows it); the local stdio user runs commands as this user, unconfined');
    }
  }));
  setTimeout(() => void logIsolation(), ISOLATION_PROBE_DELAY_MS).unref();
  return { app, options, logger, workspace, tokens, logIsolation, closeEgress };
}

/**
 * How a stdio session ended: its input closed or it was stopped (`ended`), or its supervisor gave it up
 * (`gave-up`: its actor kept crashing; every request it was sent has been answered with why).
 */
export type StdioEnd = { readonly kind: 'ended' } | { readonly kind: 'gave-up'; readonly reason: string };

export type StdioSessionIo = Pick<StdioServeOptions, 'input' | 'output' | 'stop' | 'hurry'> & {
  /** Called once, when the session sends its first message (the command writes its code cache after it). */
  readonly onFirstReply?: () => void;
};

/** Serves one stdio session until its input ends, `stop` is aborted or it is given up, then stops the application. */
export async function serveStdioSession(opened: OpenedServer, io: StdioSessionIo = {}): Promise<StdioEnd> {
  const { app, options, logger, workspace } = opened;
  logger.log('info', 'serving MCP over stdio', { workspace, harness: options.harness, pid: process.pid, threads: options.threads });
  const transport = {
    input: io.input ?? process.stdin,
    output: io.output ?? process.stdout,
    maxMessageBytes: options.maxMessageBytes,
    maxOutputBacklogBytes: options.maxOutputBacklogBytes,
    ...(io.stop ? { stop: io.stop } : {}),
    ...(io.hurry ? { hurry: io.hurry } : {}),
    stopDrainMs: DRAIN_GRACE_MS,
  };
  let reason = '';
  let first = io.onFirstReply;
  const ended = await serveStdio(transport, {
    open: (session) => app.open({
      ...session,
      // The command writes its code cache after the first reply has left, off the path of the first exchange.
      send: first === undefined ? session.send : (message) => {
        session.send(message);
        const called = first;
        first = undefined;
        called?.();
      },
      onGiveUp: (message) => { reason = message; session.onGiveUp?.(message); },
    }),
    close: (id) => app.close(id),
  });
  logger.log('info', ended === 'gave-up' ? 'the session was given up; stopping' : io.stop?.aborted ? 'drained; exiting' : 'input closed; exiting');
  // A short session (a host probing the server) still logs what isolation was in force.
  await Promise.all([app.stop(), opened.logIsolation()]);
  await opened.closeEgress();
  return ended === 'gave-up' ? { kind: 'gave-up', reason } : { kind: 'ended' };
}

/** Listens for Streamable HTTP and WebSocket on `options.host:options.port` (0: a free port). */
export async function listen(opened: OpenedServer): Promise<RunningServer> {
  const { app, options, logger, tokens } = opened;
  // Loaded here, not at start: a stdio server never needs the HTTP and WebSocket transport (nor ws).
  const { startHttpServer } = await import('../transports/http.ts');
  const auth = new BearerAuthority({ tokens, requireAuth: options.requireAuth, logger });
  // Checked before listening: a bad issuer or resource URL stops the start, saying which flag.
  const checkedOAuth = options.oauthIssuers.length === 0 ? null : (resource: string) => oauthConfig({
    issuers: options.oauthIssuers, resource, scopes: options.oauthScopes, requireAtJwt: options.oauthRequireAtJwt,
    ...(options.oauthClockSkewSeconds === undefined ? {} : { clockSkewSeconds: options.oauthClockSkewSeconds }),
    ...(options.oauthJwksRefetchSeconds === undefined ? {} : { jwksRefetchIntervalMs: options.oauthJwksRefetchSeconds * 1000 }),
  });
  if (checkedOAuth !== null && options.resource !== undefined) checkedOAuth(options.resource);
  const server = await startHttpServer({
    auth,
    host: options.host,
    port: options.port,
    sessions: app,
    health: () => app.health(),
    node: () => app.nodeHealth(),
    observer: app.observer,
    logger,
    tokens,
    requireAuth: options.requireAuth,
    origin: { allowedHosts: options.allowedHosts, allowedOrigins: options.allowedOrigins },
    maxMessageBytes: options.maxMessageBytes,
    maxInputBacklogBytes: options.maxInputBacklogBytes,
    maxOutputBacklogBytes: options.maxOutputBacklogBytes,
    maxNodeOutputBacklogBytes: options.maxNodeOutputBacklogBytes,
    maxNodeRequestBodyBytes: options.maxNodeRequestBodyBytes,
    sessionIdleMs: options.sessionIdleMs,
    sseKeepAliveMs: options.sseKeepAliveMs,
    sendTimeoutMs: options.sendTimeoutMs,
    connectionLimits: { maxConnections: options.maxConnections, maxPerAddress: options.maxConnectionsPerAddress, trustedProxies: options.trustedProxies },
    observers: options.observers,
    cluster: () => app.cluster,
    events: app.sessionEvents,
  });
  // The resource URL may name the bound port: OAuth is turned on now, before the first request is read.
  if (checkedOAuth !== null) {
    try {
      const resource = options.resource ?? `${(options.advertiseUrl ?? defaultAdvertiseUrl(options.host, server.port)).replace(/\/$/, '')}/mcp`;
      auth.useOAuth(createOAuthResourceServer(checkedOAuth(resource), { logger, ...(options.oauthIntrospection ? { introspection: options.oauthIntrospection } : {}) }));
    } catch (err) {
      await server.close(0);
      await app.stop();
      await opened.closeEgress();
      throw err;
    }
  }
  // On a PostgreSQL store the node joins the cluster once it listens: the advertise URL may name the bound port.
  try {
    const from = forwardSourceAddress(options.host);
    await app.joinCluster(options.advertiseUrl ?? defaultAdvertiseUrl(options.host, server.port), {
      insecure: options.clusterInsecureForwarding, peers: (addresses) => server.trustPeers(addresses), ...(from === undefined ? {} : { from }),
    });
  } catch (err) {
    // A node the others cannot find must not serve: it stops, saying why.
    await server.close(0);
    await app.stop();
    await opened.closeEgress();
    throw err;
  }
  return {
    url: server.url,
    sessions: () => server.sessions(),
    close: async (graceMs = DRAIN_GRACE_MS) => {
      // Sessions closed by this stop keep their stored rows: the other nodes take them over.
      app.handOff();
      await server.close(graceMs);
      await app.stop();
      await opened.closeEgress();
      logger.log('info', 'stopped');
    },
  };
}

/**
 * Serves one MCP session over stdio (default: this process's stdin and stdout) and resolves when it
 * ends: its input closed, or `stop` aborted and the drain done. The application is stopped by then.
 */
export async function runStdio(options: StdioServeOptions = {}): Promise<StdioEnd> {
  const opened = await openServer(resolveOptions(options, 'stdio'), options);
  return serveStdioSession(opened, options);
}

/** Starts the Streamable HTTP and WebSocket server; `close()` drains it and stops the application. */
export async function startServer(options: LibraryOptions = {}): Promise<RunningServer> {
  return listen(await openServer(resolveOptions(options, 'http'), options));
}

function exitOnGiveUp(message: string): void {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

async function loadTokens(options: ServerOptions): Promise<TokenTable> {
  const table = new TokenTable();
  if (options.tokenList) parseTokenList(options.tokenList, table);
  if (options.tokensFile) {
    try {
      await readTokenFile(options.tokensFile, table);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // A file that cannot be read is the operator's --tokens, named so: a bare ENOENT says nothing of which file or flag.
      if (typeof code === 'string') throw new TokenConfigError(`--tokens ${options.tokensFile}: cannot be read (${code}); give a readable file of "token principal" lines`, { cause: err });
      throw err;
    }
  }
  return table;
}
