// The egress proxy's side toward the network: connecting to an allowed host (resolved here, on the
// server, since the sandbox has no DNS, and checked: egress-resolve.ts), and the answers a refused or
// failed request gets, with a reason.

import { connect, type LookupFunction, type Socket } from 'node:net';
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { DEFAULT_EGRESS_PORTS, type EgressRule, type EgressTarget } from './egress-allow.ts';
import { checkedLookup, type EgressLog, SpecialAddressError } from './egress-resolve.ts';

/** Why a request got no upstream: the status it is answered with and a message the command prints. */
export class UpstreamError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/** `host:port` as a request names it (an IPv6 address stays in brackets). */
export function targetText(target: EgressTarget): string {
  return `${target.host}:${target.port}`;
}

/** What a connection to an upstream needs of its proxy. */
export interface UpstreamContext {
  readonly rules: readonly EgressRule[];
  /** Resolving and connecting together; past it, 504. */
  readonly timeoutMs: number;
  /** Registers the socket at once, so a proxy that closes meanwhile destroys it. */
  readonly track: (socket: Socket) => void;
  /** The resolver for a name (the process's lookup gate; tests give their own), told when its socket is gone. */
  readonly lookup: (signal: AbortSignal) => LookupFunction;
  readonly log: EgressLog;
}

/**
 * Connects to `target`. A name is resolved once on the server and the socket is given only the addresses
 * that passed the special-purpose check (checkedLookup); an address target is connected as it is (it is
 * on the list itself). Resolves with the connected socket (half-open allowed, so a tunnel can pass a FIN
 * each way), or rejects with an UpstreamError: 403 when the name leads only to special-purpose addresses,
 * 502 when it does not resolve or the host refuses, 504 past `timeoutMs`. The proxy closing meanwhile
 * destroys the socket (the promise then rejects).
 */
export function connectUpstream(target: EgressTarget, ctx: UpstreamContext): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const host = target.host.startsWith('[') ? target.host.slice(1, -1) : target.host;
    const gone = new AbortController();
    const lookup = checkedLookup(target, ctx.rules, ctx.lookup(gone.signal), ctx.log);
    const socket = connect({ host, port: target.port, allowHalfOpen: true, lookup });
    ctx.track(socket);
    const fail = (err: UpstreamError): void => {
      clearTimeout(timer);
      gone.abort();
      socket.destroy();
      reject(err);
    };
    const timer = setTimeout(() => fail(new UpstreamError(504, `${targetText(target)} did not answer within ${ctx.timeoutMs / 1000} s`)), ctx.timeoutMs);
    socket.once('error', (err) => fail(connectFailure(target, err)));
    socket.once('close', () => fail(new UpstreamError(502, `the connection to ${targetText(target)} was closed before it was made`)));
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeAllListeners('close');
      socket.removeAllListeners('error');
      resolve(socket);
    });
  });
}

/** What went wrong connecting, in words a person reads (the code stays for whoever searches for it). */
function connectFailure(target: EgressTarget, err: Error): UpstreamError {
  if (err instanceof SpecialAddressError) return new UpstreamError(403, err.message);
  const code = (err as NodeJS.ErrnoException).code ?? 'error';
  const where = targetText(target);
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
    case 'EAI_NODATA':
      return new UpstreamError(502, `${target.host} could not be resolved (${code})`);
    case 'ECONNREFUSED':
      return new UpstreamError(502, `${where} refused the connection (ECONNREFUSED)`);
    case 'ETIMEDOUT':
      return new UpstreamError(504, `${where} did not answer (ETIMEDOUT)`);
    default:
      return new UpstreamError(502, `could not connect to ${where} (${code})`);
  }
}

/** The body of a 403: which host was refused and how the operator allows it. */
export function refusalText(target: EgressTarget): string {
  const entry = DEFAULT_EGRESS_PORTS.includes(target.port) ? target.host : targetText(target);
  return [
    `super-pi egress proxy: ${targetText(target)} is not on this sandbox's allow list, so the request was refused.`,
    `The operator allows a host with --bash-network allow=${entry} (several: allow=a.example,b.example:8443;`,
    'a host alone allows ports 80 and 443, host:port that port only, *.example.com every name below example.com).',
    '',
  ].join('\n');
}

/** A whole HTTP/1.1 answer as bytes, for a socket no longer (or not yet) driven by node:http. */
export function rawAnswer(status: number, text: string): string {
  const body = Buffer.from(text);
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: text/plain; charset=utf-8\r\n`
    + `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${text}`;
}

/** How long a connection refused on arrival stays half-open for its client's request to come and be dropped. */
const REFUSED_LINGER_MS = 2000;

/**
 * Refuses a connection as it arrives, before its request is read (too many connections). Its client writes
 * the request regardless; a socket destroyed before those bytes arrive makes that write fail, and the relay
 * in between (the sandbox's bridge) then dropped the connection before handing the answer on, so the command
 * read nothing instead of the 503. What the client sends is read and dropped, and the socket closes once the
 * client ends its side, or after REFUSED_LINGER_MS.
 */
export function refuseOnArrival(socket: Duplex, status: number, text: string): void {
  if (socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  const linger = setTimeout(() => socket.destroy(), REFUSED_LINGER_MS);
  socket.once('close', () => clearTimeout(linger));
  socket.once('end', () => socket.destroy());
  socket.resume();
  socket.end(rawAnswer(status, text));
}

/** Answers on a raw socket and closes it once the answer is flushed. */
export function answerRaw(socket: Duplex, status: number, text: string): void {
  if (socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(rawAnswer(status, text), () => socket.destroy());
}

/** Answers through node:http and closes the connection after; a response already begun is cut off instead. */
export function answer(res: ServerResponse, status: number, text: string): void {
  if (res.headersSent || res.destroyed) {
    res.destroy();
    return;
  }
  const body = Buffer.from(text);
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': body.length, connection: 'close' });
  res.end(body);
}

/**
 * Headers that belong to one hop and are not passed on (RFC 9110 §7.6.1), with `host`, which the proxy
 * sets from the target itself: a Host the client chose could name a site the allow list does not, served
 * by the same upstream.
 */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host']);

/** `rawHeaders` (name, value, name, value…) without the hop-by-hop ones and those `Connection` names. */
export function endToEndHeaders(raw: readonly string[]): string[] {
  const named = new Set<string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if ((raw[i] as string).toLowerCase() === 'connection') {
      for (const token of (raw[i + 1] as string).split(',')) named.add(token.trim().toLowerCase());
    }
  }
  const kept: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    if (!HOP_HEADERS.has(name) && !named.has(name)) kept.push(raw[i] as string, raw[i + 1] as string);
  }
  return kept;
}
