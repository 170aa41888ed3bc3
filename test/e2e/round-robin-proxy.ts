// A load balancer as the cluster tests and benchmarks need one: plain HTTP on 127.0.0.1, each request to
// the next node in turn, no session affinity (it never reads Mcp-Session-Id), bodies streamed both ways so
// an SSE reply reaches the client as it is written. A node that cannot be reached answers 502, as nginx
// does; a client that goes away aborts its upstream request.

import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RoundRobinProxy {
  /** The proxy's base URL (`http://127.0.0.1:PORT`); `/mcp` and every other path are passed on as they are. */
  readonly url: string;
  /** Requests passed to each node so far, by the node's base URL (nodes that got none are absent). */
  readonly hits: Map<string, number>;
  /** The node each request went to, in the order requests came. */
  readonly log: string[];
  /** The nodes requests go to from now on (a node's death is not the proxy's to notice). */
  setTargets(targets: readonly string[]): void;
  close(): Promise<void>;
}

/** Headers a proxy must not pass on (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

export async function startRoundRobinProxy(targets: readonly string[]): Promise<RoundRobinProxy> {
  if (targets.length === 0) throw new Error('a round-robin proxy needs at least one target');
  let nodes = [...targets];
  let next = 0;
  const hits = new Map<string, number>();
  const log: string[] = [];
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    const target = nodes[next++ % nodes.length] as string;
    hits.set(target, (hits.get(target) ?? 0) + 1);
    log.push(target);
    const upstreamUrl = new URL(req.url ?? '/', target);
    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = value;
    headers.host = upstreamUrl.host;
    const upstream = http.request(upstreamUrl, { method: req.method, headers, agent }, (up) => {
      const back: http.OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(up.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) back[name] = value;
      res.writeHead(up.statusCode ?? 502, back);
      res.flushHeaders();
      up.pipe(res);
      up.on('error', () => res.destroy());
      up.on('aborted', () => res.destroy());
    });
    upstream.on('error', (err) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      res.writeHead(502, { 'Content-Type': 'text/plain' });
      res.end(`Bad Gateway: ${target} cannot be reached (${err.message})`);
    });
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    log,
    setTargets(list) {
      if (list.length === 0) throw new Error('a round-robin proxy needs at least one target');
      nodes = [...list];
    },
    close: () => new Promise<void>((resolve) => {
      agent.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
