// The egress proxy's plain-HTTP side: a request for an absolute http:// URL, checked against the allow
// list, sent on to its host with Host set from the URL, and the answer streamed back as it comes.

import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { pipeline } from 'node:stream';
import { egressAllowed, type EgressRule, type EgressTarget, parseEgressTarget } from './egress-allow.ts';
import { answer, connectUpstream, endToEndHeaders, targetText, type UpstreamContext, UpstreamError } from './egress-upstream.ts';

/** What a forward needs of its proxy. */
export interface ForwardContext {
  readonly rules: readonly EgressRule[];
  readonly idleTimeoutMs: number;
  /** How the upstream is reached (resolved, checked, connected, tracked). */
  readonly upstream: UpstreamContext;
  readonly log: (level: 'debug' | 'info', message: string, data: Record<string, unknown>) => void;
  /** Logs a refusal and gives the 403's text. */
  readonly refuse: (target: EgressTarget) => string;
}

/**
 * Answers one plain request: 400 unless it is for an absolute http:// URL, 403 for a host not on the
 * list or a name that leads only to special-purpose addresses, 502/504 when the host cannot be reached;
 * else the host's own answer. Every failure after the answer has begun cuts the connection instead.
 * Rejects only on a bug (its caller answers 502).
 */
export async function forwardPlain(req: IncomingMessage, res: ServerResponse, ctx: ForwardContext): Promise<void> {
  const url = req.url ?? '';
  const absolute = /^http:\/\/([^/?#]*)(.*)$/is.exec(url);
  if (absolute === null) {
    const why = /^https:\/\//i.test(url)
      ? 'https:// goes through CONNECT (set HTTPS_PROXY), not as a plain request'
      : 'this is a proxy: it takes CONNECT host:port, or a request for an absolute URL (GET http://host/path)';
    return answer(res, 400, `super-pi egress proxy: ${why}\n`);
  }
  const target = parseEgressTarget(absolute[1] as string, 80);
  if (typeof target === 'string') return answer(res, 400, `super-pi egress proxy: ${target}\n`);
  if (!egressAllowed(ctx.rules, target)) return answer(res, 403, ctx.refuse(target));
  const pathAndQuery = absolute[2] === '' ? '/' : (absolute[2] as string);
  const where = targetText(target);

  let socket: Socket;
  try {
    socket = await connectUpstream(target, ctx.upstream);
  } catch (err) {
    if (!(err instanceof UpstreamError)) throw err;
    return answer(res, err.status, `super-pi egress proxy: ${err.message}\n`);
  }
  if (res.destroyed) {
    socket.destroy();
    return;
  }
  socket.setTimeout(ctx.idleTimeoutMs, () => socket.destroy(new UpstreamError(504, `${where} sent nothing for ${ctx.idleTimeoutMs / 1000} s`)));
  // Host from the URL, never the client's: another Host could name a site the list does not, on the same server.
  const headers = [...endToEndHeaders(req.rawHeaders), 'Host', target.port === 80 ? target.host : where, 'Connection', 'close'];
  const outgoing = httpRequest({ createConnection: () => socket, method: req.method, path: pathAndQuery, headers, setHost: false });
  outgoing.on('response', (incoming) => {
    try {
      res.writeHead(incoming.statusCode ?? 502, incoming.statusMessage, endToEndHeaders(incoming.rawHeaders));
    } catch (err) {
      incoming.destroy();
      socket.destroy();
      answer(res, 502, `super-pi egress proxy: ${where} answered with headers that cannot be passed on (${String(err)})\n`);
      return;
    }
    pipeline(incoming, res, (err) => {
      if (err) ctx.log('debug', 'egress response cut off', { target: where, error: err.message });
    });
  });
  outgoing.on('error', (err) => {
    socket.destroy();
    answer(res, err instanceof UpstreamError ? err.status : 502, `super-pi egress proxy: ${where}: ${err.message}\n`);
  });
  res.on('close', () => {
    if (!res.writableFinished) outgoing.destroy();
  });
  pipeline(req, outgoing, (err) => {
    if (err) ctx.log('debug', 'egress request body cut off', { target: where, error: err.message });
  });
}
