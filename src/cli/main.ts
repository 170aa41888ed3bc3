// The command line: parse options, open the workspace, start the application (the supervision tree),
// then serve it over HTTP and WebSocket (default) or stdio (`--stdio`) until told to stop. The server
// itself is the library's (serve.ts); what is here belongs to the process: signals, the launcher watch,
// the banner, exit codes.

import { TokenConfigError } from '../auth/tokens.ts';
import { OAuthConfigError } from '../auth/oauth-config.ts';
import type { Logger } from '../log/logger.ts';
import { StoreError } from '../store/errors.ts';
import { WorkspaceError } from '../tools/workspace.ts';
import { CODE_CACHE_WRITE_DELAY_MS, type CodeCacheHandle } from './code-cache.ts';
import { watchLauncher } from './launcher-watch.ts';
import { OptionsError, parseOptions, usageFor } from './options.ts';
import { httpBanner, listenProblem } from './startup-messages.ts';
import { listen, type OpenedServer, openServer, SERVER_VERSION, serveStdioSession } from './serve.ts';
import { installLastResort, type LastResort } from './last-resort.ts';
import { DRAIN_GRACE_MS, STDIO_EXIT_GRACE_MS, UNCAUGHT_EXIT_GRACE_MS } from '../limits.ts';

export { SERVER_VERSION } from './serve.ts';

/** What the process's start hands the command line (bin.ts). */
export interface ProcessStart {
  /** The code cache the bundle was compiled with (start.ts); absent when running from source. */
  readonly codeCache?: CodeCacheHandle;
}

export async function main(argv: readonly string[], defaultTransport: 'stdio' | 'http' = 'http', start: ProcessStart = {}): Promise<number> {
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
    process.stdout.write(`${usageFor(defaultTransport)}\n`);
    return 0;
  }
  if (command.kind === 'version') {
    process.stdout.write(`super-pi ${SERVER_VERSION}\n`);
    return 0;
  }
  let opened: OpenedServer;
  try {
    opened = await openServer(command.options);
  } catch (err) {
    if (err instanceof TokenConfigError || err instanceof OAuthConfigError || err instanceof WorkspaceError || (err as NodeJS.ErrnoException).code === 'ENOENT') {
      process.stderr.write(`super-pi: ${(err as Error).message}\n`);
      return 2;
    }
    // The PostgreSQL store could not be opened (unreachable, refused, a newer schema): its message names
    // the database by host and name only, never the password.
    if (err instanceof StoreError) {
      process.stderr.write(`super-pi: the conversation store could not be opened: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  const saveCodeCache = codeCacheWriter(start.codeCache, opened.logger);
  const lastResort = installLastResort(opened.logger);
  lastResort.onFailure(() => opened.app.stop());
  try {
    return await (command.options.transport === 'stdio' ? serveOverStdio(opened, saveCodeCache, lastResort) : serveOverHttp(opened, saveCodeCache, lastResort));
  } finally {
    lastResort.uninstall();
  }
}

/**
 * Schedules the code cache's write, once, CODE_CACHE_WRITE_DELAY_MS after it is called (the first reply
 * is out, or the HTTP server listens): what the log says about the cache is at debug level, as a cache
 * that cannot be used or written only costs the next start some milliseconds.
 */
function codeCacheWriter(cache: CodeCacheHandle | undefined, logger: Logger): () => void {
  if (!cache) return () => undefined;
  if (cache.skipped === null) logger.log('debug', 'compiled from the code cache');
  else if (cache.distrusted !== null) logger.log('warning', 'the code cache is not used: it is reached through a path that is not trusted', { why: cache.distrusted });
  else logger.log('debug', 'compiled without the code cache', { why: cache.skipped });
  let scheduled = false;
  return () => {
    if (scheduled || cache.used) return;
    scheduled = true;
    let written = false;
    const write = (): void => {
      if (written) return;
      written = true;
      const saved = cache.save();
      if (saved.ok) logger.log('debug', 'code cache written');
      else logger.log('debug', 'code cache not written', { why: saved.reason });
    };
    setTimeout(write, CODE_CACHE_WRITE_DELAY_MS).unref();
    // A session shorter than the delay (a host probing the server) still leaves a cache for the next start.
    process.once('exit', write);
  };
}

async function serveOverStdio(opened: OpenedServer, afterFirstReply: () => void, lastResort: LastResort): Promise<number> {
  const { logger } = opened;
  // SIGTERM or SIGINT (or the wrapper the host launched going away) drains as HTTP does; a second signal
  // cuts the drain short. Either way the requests left are answered with an error and the exit code is 0.
  const stop = new AbortController();
  const hurry = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stop.signal.aborted) {
      logger.log('info', `${signal} again: answering what is left now`);
      hurry.abort();
      return;
    }
    logger.log('info', `${signal}: draining`, { graceMs: DRAIN_GRACE_MS });
    stop.abort();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // After an uncaught failure: every request left is answered with an error now.
  let served: Promise<unknown> = Promise.resolve();
  lastResort.onFailure(() => {
    stop.abort();
    hurry.abort();
    return served;
  });
  // Found while the session is already being served: the host's first requests do not wait on /proc.
  const launcher = watchLauncher((gone) => {
    if (stop.signal.aborted) return;
    logger.log('info', 'the process the host launched has ended: draining', { launcher: gone.pid, graceMs: DRAIN_GRACE_MS });
    stop.abort();
  }).then((watch) => {
    if (watch.launchers.length > 0) logger.log('debug', 'watching the launching wrappers', { pids: watch.launchers.map((l) => l.pid) });
    return watch;
  }, (err: unknown) => {
    logger.log('warning', 'cannot watch the launching wrappers; a wrapper that ends will not stop this server', { error: (err as Error).message });
    return null;
  });
  let ended: Awaited<ReturnType<typeof serveStdioSession>>;
  try {
    const session = serveStdioSession(opened, { input: process.stdin, output: process.stdout, stop: stop.signal, hurry: hurry.signal, onFirstReply: afterFirstReply });
    served = session;
    ended = await session;
  } finally {
    (await launcher)?.stop();
  }
  // Given up: every reply has been flushed by now; the host sees the server end, non-zero, and can start it again.
  if (ended.kind === 'gave-up') {
    process.stderr.write(`super-pi: ${ended.reason}; exiting\n`);
    process.exit(1);
  }
  process.off('SIGTERM', onSignal);
  process.off('SIGINT', onSignal);
  setTimeout(() => {
    logger.log('warning', `still running ${STDIO_EXIT_GRACE_MS} ms after the server stopped; exiting`);
    process.exit(0);
  }, STDIO_EXIT_GRACE_MS).unref();
  return 0;
}

async function serveOverHttp(opened: OpenedServer, afterListening: () => void, lastResort: LastResort): Promise<number> {
  const { options, logger } = opened;
  let server;
  try {
    server = await listen(opened);
  } catch (err) {
    const problem = listenProblem(err, options);
    if (problem === null) throw err;
    await opened.app.stop();
    process.stderr.write(`super-pi: ${problem}\n`);
    return 2;
  }
  // After an uncaught failure: requests in flight get half the grace to finish, then are answered with an error.
  lastResort.onFailure(() => server.close(UNCAUGHT_EXIT_GRACE_MS / 2));
  afterListening();
  let stopped: () => void = () => undefined;
  const stopping = new Promise<void>((resolve) => { stopped = resolve; });
  const stop = (signal: string) => {
    logger.log('info', `${signal}: draining`, { graceMs: DRAIN_GRACE_MS, sessions: server.sessions() });
    stopped();
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  // `npm start` runs npm, a shell and tsx above this process: a SIGTERM to npm ends the shell, which does
  // not pass it on, and tsx (orphaned) does not either. A wrapper of this job that ends stops the server.
  // Found before the banner: a wrapper signalled as soon as the banner shows is already being watched.
  const launcher = await watchLauncher((gone) => {
    logger.log('info', 'the process that launched this server has ended: draining', { launcher: gone.pid, graceMs: DRAIN_GRACE_MS, sessions: server.sessions() });
    stopped();
  }, undefined, 'job').then((watch) => {
    if (watch.launchers.length > 0) logger.log('debug', 'watching the launching wrappers', { pids: watch.launchers.map((l) => l.pid) });
    return watch;
  }, (err: unknown) => {
    logger.log('warning', 'cannot watch the launching wrappers; a wrapper that ends will not stop this server', { error: (err as Error).message });
    return null;
  });
  process.stdout.write(httpBanner(opened, server.url, SERVER_VERSION));
  await stopping;
  launcher?.stop();
  await server.close(DRAIN_GRACE_MS);
  return 0;
}
