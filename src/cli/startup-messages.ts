// What the HTTP command line tells its operator at the start: the banner (where everything is served,
// who may do what, how to add a token), and one line naming the flag when the port cannot be listened on.

import { isLoopbackHost } from '../observer/observer-access.ts';
import type { OpenedServer } from './serve.ts';
import type { ServerOptions } from './options.ts';

/**
 * The one line for an error of listening (`listen` rejected), naming the flag to change; null for an
 * error that is not the operator's configuration (thrown on as before).
 */
export function listenProblem(err: unknown, options: Pick<ServerOptions, 'host' | 'port'>): string | null {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const where = `${options.host.includes(':') ? `[${options.host}]` : options.host}:${options.port}`;
  switch (code) {
    case 'EADDRINUSE':
      return `--port ${options.port}: ${where} is already in use (another super-pi may hold it); stop it, or give another --port (0 picks a free one)`;
    case 'EACCES':
    case 'EPERM':
      return `--port ${options.port}: permission denied to listen on ${where} (ports below 1024 need privileges); give a --port of 1024 or more (0 picks a free one)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
    case 'EAI_NONAME':
      return `--host ${options.host}: the name does not resolve (${code}); give an address such as 127.0.0.1 or a resolvable name`;
    case 'EADDRNOTAVAIL':
      return `--host ${options.host}: not an address of this machine (${code}); give one of its addresses, such as 127.0.0.1`;
    default:
      return null;
  }
}

/** The banner an HTTP server prints on stdout once it listens. */
export function httpBanner(opened: Pick<OpenedServer, 'options' | 'workspace' | 'tokens'>, url: string, version: string): string {
  const { options, workspace, tokens } = opened;
  const base = url.replace(/\/mcp$/, '');
  const observersOpen = isLoopbackHost(options.host) && tokens.size === 0 && !options.requireAuth;
  const observerAccess = observersOpen
    ? 'open (loopback server without tokens)'
    : options.observers.length > 0 ? `token principals ${options.observers.join(', ')} (--observers)` : 'nobody yet: name token principals with --observers';
  const anonymous = options.requireAuth
    ? 'refused (--require-auth)'
    : `${options.allowAnonymousWrites ? 'every tool, writes included (--allow-anonymous-writes)' : 'read-only tools (--allow-anonymous-writes for write, edit, bash)'}; `
      + `${options.allowAnonymousTasks ? 'harness tasks allowed (--allow-anonymous-tasks)' : 'no harness tasks (--allow-anonymous-tasks)'}`;
  return [
    `super-pi ${version} serving ${workspace} (harness ${options.harness}, ${tokens.size} token(s)${options.requireAuth ? ', auth required' : ''})`,
    `  Streamable HTTP  ${url}`,
    `  WebSocket        ${url.replace(/^http/, 'ws')}  (subprotocol "mcp")`,
    `  Health           ${base}/health`,
    `  Observer         ${base}/observer  (data: ${observerAccess})`,
    `  Metrics          ${options.metrics ? `${base}/metrics` : 'off (--no-metrics)'}`,
    `Tokens: ${tokens.size === 0 ? 'none configured' : `${tokens.size} configured`}. Anonymous callers: ${anonymous}.`,
    '  Add a token: a line "TOKEN PRINCIPAL" in a file given with --tokens FILE, or SUPERPI_TOKENS="TOKEN=PRINCIPAL"; restart to apply.',
    'Host configuration:',
    JSON.stringify({ mcpServers: { 'super-pi': { type: 'http', url } } }, null, 2),
    '',
  ].join('\n');
}
