// The egress proxy of a sandboxed `bash` command under `--bash-network allow=…`: an HTTP proxy on a Unix
// socket (bound into the sandbox, reached there through the bridge on 127.0.0.1) that opens CONNECT
// tunnels and forwards plain HTTP to the allowed hosts only, and answers everything else with a reason.

import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type LookupFunction, type Server as NetServer, Socket } from 'node:net';
import path from 'node:path';
import { pipeline, type Duplex } from 'node:stream';
import {
  EGRESS_CONNECT_TIMEOUT_MS, EGRESS_HEADERS_TIMEOUT_MS, EGRESS_IDLE_TIMEOUT_MS, EGRESS_MAX_CONNECTIONS, EGRESS_MAX_CONNECTIONS_PER_COMMAND,
  EGRESS_MAX_HEADER_BYTES,
} from '../../limits.ts';
import type { Logger } from '../../log/logger.ts';
import { egressAllowed, type EgressTarget, parseEgressRule, parseEgressTarget } from './egress-allow.ts';
import { forwardPlain } from './egress-forward.ts';
import { answer, answerRaw, connectUpstream, refuseOnArrival, refusalText, targetText, type UpstreamContext, UpstreamError } from './egress-upstream.ts';
import { egressLookup } from './lookup-gate.ts';

export { parseEgressAllowList, EgressSyntaxError } from './egress-allow.ts';
export { egressBridgeArgv, sandboxBridge } from './egress-bridge.ts';

/** One Unix socket of the proxy: its connections count against its own cap as well as the proxy's. */
export interface EgressDoor {
  readonly socketPath: string;
  /** Stops listening on it and ends the connections that came through it. Idempotent. */
  close(): Promise<void>;
}

export interface EgressProxy {
  /** The proxy's first Unix socket (mode 0600, in a 0700 directory of its own under `dir`). */
  readonly socketPath: string;
  /**
   * Another socket of the same proxy, beside the first, for one command at a time: the proxy cannot tell
   * apart the commands that share a socket, so each gets its own and one cannot take the whole pool.
   */
  openDoor(): Promise<EgressDoor>;
  /** Stops listening, ends every connection and tunnel, removes the socket's directory. Idempotent. */
  close(): Promise<void>;
}

/** The bounds of one proxy; each defaults to its named limit in src/limits.ts (tests shorten them). */
export interface EgressLimits {
  readonly maxConnections: number;
  /** Connections through one socket (one command's door) at once. */
  readonly maxConnectionsPerDoor: number;
  readonly maxHeaderBytes: number;
  readonly headersTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly connectTimeoutMs: number;
}

export interface EgressProxyOptions {
  /** Allow-list entries, as parseEgressAllowList returns them (a bad one makes the start throw). */
  readonly allow: readonly string[];
  /** Where the socket's own 0700 directory is made. */
  readonly dir: string;
  readonly logger?: Logger;
  readonly limits?: Partial<EgressLimits>;
  /** How names are resolved: the process's lookup gate (tests give a resolver of their own). */
  readonly lookup?: (signal: AbortSignal) => LookupFunction;
}

/** The longest path a Unix socket can be bound to on Linux (sun_path is 108 bytes with its NUL). */
const MAX_SOCKET_PATH_BYTES = 107;

/**
 * The proxy variables that point curl, git, pip, npm (and Node's fetch, which reads them when
 * NODE_USE_ENV_PROXY is set) at the bridge on 127.0.0.1:`port`. NO_PROXY is empty: inside the sandbox
 * nothing is reachable except through the proxy, so no host should be tried directly.
 */
export function egressEnvironment(port: number): Record<string, string> {
  const url = `http://127.0.0.1:${port}`;
  return {
    HTTP_PROXY: url, HTTPS_PROXY: url, ALL_PROXY: url,
    http_proxy: url, https_proxy: url, all_proxy: url,
    NO_PROXY: '', no_proxy: '',
    npm_config_proxy: url, npm_config_https_proxy: url,
    NODE_USE_ENV_PROXY: '1',
  };
}

/** Starts a proxy for one allow list; it serves until `close()`. Throws on a bad entry or a path too long for a socket. */
export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const rules = options.allow.map(parseEgressRule);
  const limits: EgressLimits = {
    maxConnections: EGRESS_MAX_CONNECTIONS, maxConnectionsPerDoor: EGRESS_MAX_CONNECTIONS_PER_COMMAND, maxHeaderBytes: EGRESS_MAX_HEADER_BYTES, headersTimeoutMs: EGRESS_HEADERS_TIMEOUT_MS,
    idleTimeoutMs: EGRESS_IDLE_TIMEOUT_MS, connectTimeoutMs: EGRESS_CONNECT_TIMEOUT_MS, ...options.limits,
  };
  const log = (level: 'debug' | 'info', message: string, data: Record<string, unknown>): void => options.logger?.log(level, message, data);
  const home = await mkdtemp(path.join(options.dir, 'egress-'));
  const socketPath = path.join(home, 'proxy.sock');
  // The longest socket name of the proxy (a door's), so a path that fits here fits for every door.
  if (Buffer.byteLength(path.join(home, `door-${Number.MAX_SAFE_INTEGER}.sock`)) > MAX_SOCKET_PATH_BYTES) {
    await rm(home, { recursive: true, force: true });
    throw new Error(`the egress proxy socket path ${socketPath} is longer than a Unix socket allows (${MAX_SOCKET_PATH_BYTES} bytes); give a shorter dir`);
  }

  /** Every socket the proxy holds, both sides, so close() ends them all. */
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  let clients = 0;
  const reach: UpstreamContext = { rules, timeoutMs: limits.connectTimeoutMs, track, lookup: options.lookup ?? egressLookup, log };

  const http = createHttpServer({ maxHeaderSize: limits.maxHeaderBytes, requestTimeout: 0, keepAliveTimeout: limits.idleTimeoutMs });
  http.timeout = limits.idleTimeoutMs;
  http.on('request', (req: IncomingMessage, res: ServerResponse) => {
    firstRequestSeen(req.socket);
    forwardPlain(req, res, { rules, idleTimeoutMs: limits.idleTimeoutMs, upstream: reach, log, refuse }).catch((err: unknown) => {
      log('debug', 'egress request failed', { error: String(err) });
      answer(res, 502, `super-pi egress proxy: ${String(err)}\n`);
    });
  });
  http.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    firstRequestSeen(socket);
    tunnel(req, socket, head).catch((err: unknown) => {
      log('debug', 'egress tunnel failed', { error: String(err) });
      socket.destroy();
    });
  });
  http.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
    firstRequestSeen(socket);
    answerRaw(socket, 501, 'super-pi egress proxy: protocol upgrades are not forwarded as plain HTTP; use CONNECT (HTTPS, wss://)\n');
  });
  http.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    log('debug', 'egress request unreadable', { code: err.code });
    if (err.code === 'HPE_HEADER_OVERFLOW') answerRaw(socket, 431, `super-pi egress proxy: the request's headers pass ${limits.maxHeaderBytes} bytes\n`);
    else answerRaw(socket, 400, `super-pi egress proxy: the request could not be read as HTTP (${err.code ?? 'error'})\n`);
  });

  const headerTimers = new Map<Duplex, NodeJS.Timeout>();
  function firstRequestSeen(socket: Duplex): void {
    clearTimeout(headerTimers.get(socket));
    headerTimers.delete(socket);
  }

  /**
   * A listener (not yet listening) whose connections, kept in `mine`, count against `maxConnectionsPerDoor`
   * and the proxy's `maxConnections`.
   */
  function door(mine = new Set<Socket>()): NetServer {
    return createNetServer({ allowHalfOpen: true }, (socket) => {
      track(socket);
      socket.on('error', (err: NodeJS.ErrnoException) => log('debug', 'egress client connection failed', { code: err.code }));
      if (clients >= limits.maxConnections) {
        log('info', 'egress connection refused: too many', { limit: limits.maxConnections });
        refuseOnArrival(socket, 503, `super-pi egress proxy: ${limits.maxConnections} connections are open already; close one and retry\n`);
        return;
      }
      if (mine.size >= limits.maxConnectionsPerDoor) {
        log('info', 'egress connection refused: too many for one command', { limit: limits.maxConnectionsPerDoor });
        refuseOnArrival(socket, 503, `super-pi egress proxy: this command has ${limits.maxConnectionsPerDoor} connections open already; close one and retry\n`);
        return;
      }
      clients += 1;
      mine.add(socket);
      socket.once('close', () => {
        clients -= 1;
        mine.delete(socket);
        firstRequestSeen(socket);
      });
      headerTimers.set(socket, setTimeout(() => {
        headerTimers.delete(socket);
        answerRaw(socket, 408, `super-pi egress proxy: no complete request within ${limits.headersTimeoutMs / 1000} s\n`);
      }, limits.headersTimeoutMs));
      http.emit('connection', socket);
    });
  }

  /** Listens on `at` (0600); throws if it cannot. */
  async function listenOn(server: NetServer, at: string): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(at, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (err) => log('debug', 'egress listener failed', { error: err.message }));
    // The directory (0700) already keeps others out; the socket's own mode says the same to whoever looks.
    await chmod(at, 0o600);
  }

  const listener = door();
  const doors = new Set<NetServer>([listener]);
  let doorCount = 0;

  function refuse(target: EgressTarget): string {
    log('info', 'egress refused', { target: targetText(target) });
    return refusalText(target);
  }

  /** A CONNECT: checks the target, connects, answers 200, then passes bytes both ways until either side ends. */
  async function tunnel(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    client.pause();
    // Every connection comes from the listener below, so it is a net.Socket (node:http types it as a Duplex).
    if (client instanceof Socket) client.setTimeout(limits.idleTimeoutMs, () => client.destroy());
    const target = parseEgressTarget(req.url ?? '', null);
    if (typeof target === 'string') return answerRaw(client, 400, `super-pi egress proxy: CONNECT ${req.url ?? ''}: ${target}\n`);
    if (!egressAllowed(rules, target)) return answerRaw(client, 403, refuse(target));
    let upstream: Socket;
    try {
      upstream = await connectUpstream(target, reach);
    } catch (err) {
      if (!(err instanceof UpstreamError)) throw err;
      return answerRaw(client, err.status, `super-pi egress proxy: ${err.message}\n`);
    }
    if (client.destroyed) {
      upstream.destroy();
      return;
    }
    log('debug', 'egress tunnel', { target: targetText(target) });
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) upstream.write(head);
    const ended = (err: Error | null): void => {
      if (err) log('debug', 'egress tunnel ended', { target: targetText(target), error: err.message });
    };
    pipeline(client, upstream, ended);
    pipeline(upstream, client, ended);
  }

  try {
    await listenOn(listener, socketPath);
  } catch (err) {
    listener.close();
    await rm(home, { recursive: true, force: true });
    throw err;
  }

  let closing: Promise<void> | null = null;
  return {
    socketPath,
    async openDoor() {
      if (closing !== null) throw new Error('the egress proxy is closed');
      doorCount += 1;
      const at = path.join(home, `door-${doorCount}.sock`);
      const mine = new Set<Socket>();
      const server = door(mine);
      try {
        await listenOn(server, at);
      } catch (err) {
        server.close();
        throw err;
      }
      doors.add(server);
      let shut: Promise<void> | null = null;
      return {
        socketPath: at,
        close() {
          shut ??= new Promise<void>((resolve) => {
            doors.delete(server);
            server.close(() => resolve());
            for (const socket of mine) socket.destroy();
          });
          return shut;
        },
      };
    },
    close() {
      closing ??= (async () => {
        const stopped = Promise.all([...doors].map((d) => new Promise<void>((resolve) => d.close(() => resolve()))));
        for (const timer of headerTimers.values()) clearTimeout(timer);
        headerTimers.clear();
        for (const socket of sockets) socket.destroy();
        await stopped;
        await rm(home, { recursive: true, force: true });
      })();
      return closing;
    },
  };
}
