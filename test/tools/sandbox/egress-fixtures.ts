// What the egress tests share: a proxy in a throw-away directory, upstream listeners on 127.0.0.1 (an
// echo server that answers a half-close, an HTTP server that says what it was asked), and a raw client
// that reads what a socket sends up to a mark. Every one is ended by the test that started it.

import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { type EgressProxy, type EgressProxyOptions, startEgressProxy } from '../../../src/tools/sandbox/egress.ts';

/** How long a raw read waits for its mark before the test fails (a hang is a failure, not a wait). */
const READ_WITHIN_MS = 10_000;

export interface Upstream {
  readonly port: number;
  close(): Promise<void>;
}

async function listening(server: Server | HttpServer, sockets: Set<Socket>): Promise<Upstream> {
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
  };
}

/** Echoes each chunk as `echo:<chunk>`; when the client half-closes it answers `bye` and ends its side. */
export function echoUpstream(): Promise<Upstream> {
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: Buffer) => socket.write(`echo:${chunk.toString()}`));
    socket.on('end', () => socket.end('bye'));
  });
  return listening(server, new Set());
}

/**
 * Answers every request with `<method> <url> host=<Host header> body=<body>` and its headers as JSON in
 * `x-seen`; `/redirect?to=URL` answers 302 to URL instead.
 */
export function httpUpstream(): Promise<Upstream> {
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const redirect = /^\/redirect\?to=(.*)$/.exec(req.url ?? '');
      if (redirect !== null) {
        res.writeHead(302, { location: decodeURIComponent(redirect[1] as string) });
        res.end();
        return;
      }
      res.setHeader('x-seen', JSON.stringify(req.headers));
      res.end(`${req.method} ${req.url} host=${req.headers.host} body=${Buffer.concat(chunks).toString()}`);
    });
  });
  return listening(server, new Set());
}

/** A port on 127.0.0.1 that nothing listens on (bound, noted, closed). */
export async function closedPort(): Promise<number> {
  const upstream = await listening(createServer(), new Set());
  await upstream.close();
  return upstream.port;
}

export interface ProxyHome {
  readonly proxy: EgressProxy;
  readonly dir: string;
  close(): Promise<void>;
}

/** A proxy for `allow`; `options` may shorten its limits, give it a resolver of the test's, or a logger. */
export async function proxyFor(allow: readonly string[], options: Omit<EgressProxyOptions, 'allow' | 'dir'> = {}): Promise<ProxyHome> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'egress-'));
  const proxy = await startEgressProxy({ ...options, allow, dir });
  return {
    proxy,
    dir,
    async close() {
      await proxy.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A client socket that collects everything it receives, and reads up to a mark. */
export class RawClient {
  #received = '';
  #closed = false;
  #wake: (() => void) | null = null;
  readonly socket: Socket;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.#received += chunk.toString('latin1');
      this.#wake?.();
    });
    socket.on('error', () => socket.destroy());
    // The proxy's FIN means nothing more will come: that is the end a test waits for (the client is
    // half-open, as a tunnel's client is, so it would not close by itself).
    const ended = (): void => {
      this.#closed = true;
      this.#wake?.();
    };
    socket.on('end', ended);
    socket.on('close', ended);
  }

  static open(socketPath: string): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = connect({ path: socketPath, allowHalfOpen: true });
      socket.once('connect', () => resolve(new RawClient(socket)));
      socket.once('error', reject);
    });
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Waits until what was received contains `mark` (or the socket closed); returns everything up to and with it, and keeps the rest. */
  async until(mark: string): Promise<string> {
    const deadline = Date.now() + READ_WITHIN_MS;
    while (!this.#received.includes(mark) && !this.#closed) {
      if (Date.now() > deadline) throw new Error(`no "${mark}" within ${READ_WITHIN_MS} ms; got ${JSON.stringify(this.#received)}`);
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        setTimeout(resolve, 100);
      });
    }
    const at = this.#received.indexOf(mark);
    const end = at < 0 ? this.#received.length : at + mark.length;
    const taken = this.#received.slice(0, end);
    this.#received = this.#received.slice(end);
    return taken;
  }

  /** Waits for the proxy to end the connection and returns everything received that was not read yet. */
  async rest(): Promise<string> {
    return this.until('\u0000never\u0000');
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** Sends `bytes` on a new connection and returns all that comes back until the proxy closes it. */
export async function exchange(socketPath: string, bytes: string | Buffer): Promise<string> {
  const client = await RawClient.open(socketPath);
  try {
    client.socket.write(bytes);
    return await client.rest();
  } finally {
    client.destroy();
  }
}
