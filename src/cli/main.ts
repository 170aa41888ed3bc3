// The command line: parse options, open the workspace, start the application (the supervision tree),
// then serve it over HTTP and WebSocket (default) or stdio (`--stdio`) until told to stop.

import { parseTokenList, readTokenFile, TokenConfigError, TokenTable } from '../auth/tokens.ts';
import { Application } from '../runtime/application.ts';
import { createLogger, type Logger } from '../runtime/logger.ts';
import { bashIsolation, describeIsolation } from '../tools/bash-isolation.ts';
import { openWorkspace, WorkspaceError } from '../tools/workspace.ts';
import { startHttpServer } from '../transports/http.ts';
import { serveStdio } from '../transports/stdio.ts';
import { watchLauncher } from './launcher-watch.ts';
import { OptionsError, parseOptions, type ServerOptions, usage } from './options.ts';

export const SERVER_VERSION = '0.1.0';
/** On SIGTERM/SIGINT, calls in flight get this long to finish before they are aborted. */
export const DRAIN_GRACE_MS = 10_000;
/**
 * After the stdio server has finished (drained, answered, stopped), how long anything left behind (a
 * stuck handle) may keep the process alive before it exits anyway: a host must see it end.
 */
export const STDIO_EXIT_GRACE_MS = 3000;

export async function main(argv: readonly string[], defaultTransport: 'stdio' | 'http' = 'http'): Promise<number> {
  let command;
  try {
    command = parseOptions(argv, process.env, process.cwd(), defaultTransport);
  } catch (err) {
    if (err instanceof OptionsError) {
      process.stderr.write(`super-pi: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  // Asked-for output goes to stdout (so `super-pi --help | less` works); only errors go to stderr.
  if (command.kind === 'help') {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  if (command.kind === 'version') {
    process.stdout.write(`super-pi ${SERVER_VERSION}\n`);
    return 0;
  }
  const options = command.options;
  const logger = createLogger(options.logLevel);
  let workspace: string;
  let tokens: TokenTable;
  try {
    workspace = await openWorkspace(options.workspaces[0] as string);
    tokens = await loadTokens(options);
  } catch (err) {
    if (err instanceof TokenConfigError || err instanceof WorkspaceError || (err as NodeJS.ErrnoException).code === 'ENOENT') {
      process.stderr.write(`super-pi: ${(err as Error).message}\n`);
      return 2;
    }
    throw err;
  }
  // Probed once, now rather than on the first call, so the operator reads in the log what is in force.
  const isolation = await bashIsolation();
  logger.log(isolation.kind === 'pid-namespace' && isolation.diesWithServer ? 'info' : 'warning', `bash isolation: ${describeIsolation(isolation)}`);
  const app = await Application.start({
    workspace,
    harness: options.harness,
    pageSize: options.pageSize,
    toolTimeoutMs: options.toolTimeoutMs,
    threads: options.threads,
    toolThreads: options.toolThreads,
    toolShare: options.toolShare,
    chaos: options.chaos,
    intensities: options.intensities,
    logger,
    serverVersion: SERVER_VERSION,
    allowAnonymousWrites: options.allowAnonymousWrites,
    // stdio serves no /metrics: nothing would read them.
    metrics: options.metrics && options.transport !== 'stdio',
    onGiveUp: (message) => {
      process.stderr.write(`${message}\n`);
      process.exit(1);
    },
  });
  return options.transport === 'stdio' ? serveOverStdio(app, options, logger, workspace) : serveOverHttp(app, options, logger, workspace, tokens);
}

async function serveOverStdio(app: Application, options: ServerOptions, logger: Logger, workspace: string): Promise<number> {
  logger.log('info', 'serving MCP over stdio', { workspace, harness: options.harness, pid: process.pid, threads: options.threads });
  // SIGTERM or SIGINT (or the wrapper the host launched going away) drains as HTTP does; a second signal
  // cuts the drain short. Either way the requests left are answered with an error and the exit code is 0.
  const stop = new AbortController();
  let hurry: () => void = () => undefined;
  const hurried = new Promise<void>((resolve) => (hurry = resolve));
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stop.signal.aborted) {
      logger.log('info', `${signal} again: answering what is left now`);
      hurry();
      return;
    }
    logger.log('info', `${signal}: draining`, { graceMs: DRAIN_GRACE_MS });
    stop.abort();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  const launcher = await watchLauncher((gone) => {
    if (stop.signal.aborted) return;
    logger.log('info', 'the process the host launched has ended: draining', { launcher: gone.pid, graceMs: DRAIN_GRACE_MS });
    stop.abort();
  });
  if (launcher.launchers.length > 0) logger.log('debug', 'watching the launching wrappers', { pids: launcher.launchers.map((l) => l.pid) });
  const io = { input: process.stdin, output: process.stdout, maxMessageBytes: options.maxMessageBytes, stop: stop.signal, stopDrainMs: DRAIN_GRACE_MS };
  let giveUp: (message: string) => void = () => undefined;
  const gaveUp = new Promise<string>((resolve) => (giveUp = resolve));
  const ended = await serveStdio(io, async (send) => {
    const session = await app.openSession({
      send,
      principal: { kind: 'local' },
      // stdio has exactly one session: if it is given up, the server answers what it was sent, then exits 1.
      onGiveUp: (message) => {
        process.stderr.write(`super-pi: ${message}; exiting\n`);
        giveUp(message);
      },
    });
    return {
      gaveUp,
      receiveFrame: (frame) => session.receiveFrame(frame),
      drain: (ms) => Promise.race([session.drain(ms), hurried]),
      answerInFlight: (reason) => session.answerInFlight(reason),
      close: () => app.closeSession(session),
    };
  });
  launcher.stop();
  // Every reply has been flushed by now: the host sees the server end, non-zero, and can start it again.
  if (ended === 'gave-up') process.exit(1);
  logger.log('info', stop.signal.aborted ? 'drained; exiting' : 'input closed; exiting');
  await app.stop();
  process.off('SIGTERM', onSignal);
  process.off('SIGINT', onSignal);
  setTimeout(() => {
    logger.log('warning', `still running ${STDIO_EXIT_GRACE_MS} ms after the server stopped; exiting`);
    process.exit(0);
  }, STDIO_EXIT_GRACE_MS).unref();
  return 0;
}

async function serveOverHttp(app: Application, options: ServerOptions, logger: Logger, workspace: string, tokens: TokenTable): Promise<number> {
  const server = await startHttpServer({
    host: options.host,
    port: options.port,
    app,
    logger,
    tokens,
    requireAuth: options.requireAuth,
    origin: { allowedHosts: options.allowedHosts },
    maxMessageBytes: options.maxMessageBytes,
    maxSessions: options.maxSessions,
    maxSessionsPerPrincipal: options.maxSessionsPerPrincipal,
    maxAnonymousSessions: options.maxAnonymousSessions,
    sessionIdleMs: options.sessionIdleMs,
    observers: options.observers,
  });
  const wsUrl = server.url.replace(/^http/, 'ws');
  process.stdout.write([
    `super-pi ${SERVER_VERSION} serving ${workspace} (harness ${options.harness}, ${tokens.size} token(s)${options.requireAuth ? ', auth required' : ''})`,
    `  Streamable HTTP  ${server.url}`,
    `  WebSocket        ${wsUrl}  (subprotocol "mcp")`,
    `  Health           ${server.url.replace(/\/mcp$/, '/health')}`,
    `  Observer         ${server.url.replace(/\/mcp$/, '/observer')}${options.metrics ? `  (metrics: ${server.url.replace(/\/mcp$/, '/metrics')})` : ''}`,
    'Host configuration:',
    JSON.stringify({ mcpServers: { 'super-pi': { type: 'http', url: server.url } } }, null, 2),
    '',
  ].join('\n'));
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      logger.log('info', `${signal}: draining`, { graceMs: DRAIN_GRACE_MS, sessions: server.sessions() });
      resolve();
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  await server.close(DRAIN_GRACE_MS);
  await app.stop();
  logger.log('info', 'stopped');
  return 0;
}

async function loadTokens(options: ServerOptions): Promise<TokenTable> {
  const table = new TokenTable();
  if (options.tokenList) parseTokenList(options.tokenList, table);
  if (options.tokensFile) await readTokenFile(options.tokensFile, table);
  return table;
}
