// The HTTP side of the observer: GET /metrics (Prometheus text), GET /observer (the page and its
// script, static and data-free), GET /observer/events (a snapshot stream, SSE, a few per second) and
// GET /observer/transcript (a task's transcript from a seq on). Data requests carry the bearer token.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BearerAuthority } from '../auth/bearer-authority.ts';
import type { TokenTable } from '../auth/tokens.ts';
import { checkHostAndOrigin, type OriginPolicy } from '../transports/origin.ts';
import { admitObserver, type ObserverAccessPolicy } from './observer-access.ts';
import { OBSERVER_PAGE } from './page-html.ts';
import { OBSERVER_SCRIPT } from './page-script.ts';
import { ObserverStreams, type ObserverStreamLimits } from './observer-streams.ts';
import type { ServerObserver } from './server-observer.ts';
import type { Principal } from '../mcp/state.ts';
import { OBSERVER_STREAM_RETRY_AFTER_SECONDS } from '../limits.ts';

export interface ObserverRoutesOptions {
  /** What the routes read of the server's observer. */
  readonly observer: Pick<ServerObserver, 'metrics' | 'snapshot' | 'transcript'>;
  readonly tokens: TokenTable;
  readonly origin: OriginPolicy;
  readonly access: ObserverAccessPolicy;
  /** The server's admission: with OAuth configured, an access token with the observe scope is an observer too. */
  readonly auth: BearerAuthority;
  /** The event streams' bounds; each defaults to its named limit (tests shorten them). */
  readonly streams?: Partial<ObserverStreamLimits>;
}

/**
 * On every answer of these routes: nothing cached, nothing sniffed, never framed (the page holds the
 * token box and a tree a click away from transcripts: no other site may overlay it), no Referer, no
 * other origin may embed an answer (`<script src>`, `<img>`) even where a browser would not sniff it,
 * and none keeps a handle on a window it opened.
 */
const COMMON_HEADERS = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Resource-Policy': 'same-origin',
  // A window another site opened on the page keeps no handle on it (no frame counting, no navigating it).
  'Cross-Origin-Opener-Policy': 'same-origin',
};

/** The page: its own script only, no inline script, no base or form target, no framing. */
const PAGE_HEADERS = {
  ...COMMON_HEADERS,
  'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

/** Data (JSON, the event stream, the metrics text): a document of no capability if ever opened as one. */
const DATA_HEADERS = {
  ...COMMON_HEADERS,
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'; sandbox",
};

/**
 * Fetch Metadata (`Sec-Fetch-Site`): a browser names the site a request comes from. Anything but the
 * page itself (`same-origin`) or the operator typing the address (`none`) — a page on another site, or
 * on another port of localhost (`same-site`) — is refused before any token check, store read or stream
 * slot: no CORS header would let it read the answer, but without this a no-cors `fetch`, an `<img>` or a
 * `<script>` made the server do the work (a transcript read, an event stream) and timed it. The page
 * shell itself may be opened by a link from anywhere (its framing is refused by `frame-ancestors`).
 * Clients other than browsers send no such header and are unaffected.
 */
export function fromAnotherSite(secFetchSite: string | string[] | undefined): boolean {
  if (secFetchSite === undefined) return false;
  const site = Array.isArray(secFetchSite) ? secFetchSite.join(',') : secFetchSite;
  return site !== 'same-origin' && site !== 'none';
}

export class ObserverRoutes {
  readonly #options: ObserverRoutesOptions;
  readonly #streams: ObserverStreams;

  constructor(options: ObserverRoutesOptions) {
    this.#options = options;
    this.#streams = new ObserverStreams(() => frame(JSON.stringify(options.observer.snapshot())), options.streams);
  }

  /** True when the path is one of these routes (and the request has been answered). */
  handle(req: IncomingMessage, res: ServerResponse, pathname: string): boolean {
    if (pathname !== '/metrics' && pathname !== '/observer' && !pathname.startsWith('/observer/')) return false;
    if (req.method !== 'GET') {
      res.writeHead(405, { Allow: 'GET', ...DATA_HEADERS }).end();
      return true;
    }
    const bad = checkHostAndOrigin(this.#options.origin, req.headers.host, req.headers.origin);
    if (bad) {
      refuse(res, 403, `Forbidden: ${bad}`);
      return true;
    }
    if (pathname !== '/observer' && fromAnotherSite(req.headers['sec-fetch-site'])) {
      refuse(res, 403, 'Forbidden: the observer answers its own page only (Sec-Fetch-Site)');
      return true;
    }
    switch (pathname) {
      case '/observer':
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', ...PAGE_HEADERS }).end(OBSERVER_PAGE);
        return true;
      case '/observer/app.js':
        res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8', ...PAGE_HEADERS }).end(OBSERVER_SCRIPT);
        return true;
    }
    const { tokens, access, auth } = this.#options;
    admitObserver(auth, access, req.headers.authorization, (a) => tokens.resolve(a)).then((verdict) => {
      if (!verdict.allowed) return refuse(res, verdict.status, verdict.message, verdict.headers);
      this.#serve(req, res, pathname, viewerOf(verdict.principal, req));
    }).catch((err: unknown) => {
      if (!res.headersSent) refuse(res, 500, `Internal Server Error: ${(err as Error).message}`);
      else res.destroy();
    });
    return true;
  }

  #serve(req: IncomingMessage, res: ServerResponse, pathname: string, viewer: string): void {
    switch (pathname) {
      case '/metrics': this.#metrics(res); return;
      case '/observer/events': this.#events(res, viewer); return;
      case '/observer/transcript':
        // The store may be a database across the network: a failed read is answered, never left hanging.
        this.#transcript(req, res).catch((err: unknown) => {
          if (!res.headersSent) refuse(res, 500, `Internal Server Error: the transcript could not be read (${(err as Error).message})`);
          else res.destroy();
        });
        return;
      default: refuse(res, 404, 'Not Found');
    }
  }

  /** Ends the event streams (the server is stopping). */
  close(): void {
    this.#streams.close();
  }

  #metrics(res: ServerResponse): void {
    const metrics = this.#options.observer.metrics;
    if (!metrics) return refuse(res, 404, 'Not Found: metrics are off (--no-metrics)');
    metrics.scrape().then(({ contentType, text }) => {
      res.writeHead(200, { 'Content-Type': contentType, ...DATA_HEADERS }).end(text);
    }, (err: unknown) => refuse(res, 500, `Internal Server Error: ${(err as Error).message}`));
  }

  #events(res: ServerResponse, viewer: string): void {
    const refused = this.#streams.refusal(viewer);
    if (refused) return refuse(res, refused.status, refused.message, { 'Retry-After': String(OBSERVER_STREAM_RETRY_AFTER_SECONDS) });
    res.writeHead(200, { 'Content-Type': 'text/event-stream', ...DATA_HEADERS, 'Cache-Control': 'no-store, no-transform', Connection: 'keep-alive' });
    res.write(frame(JSON.stringify(this.#options.observer.snapshot())));
    this.#streams.add(res, viewer);
  }

  async #transcript(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const query = new URL(req.url ?? '/', 'http://localhost').searchParams;
    const task = query.get('task') ?? '';
    const after = Number(query.get('after') ?? '0');
    if (!/^task-\d{1,15}$/.test(task) || !Number.isSafeInteger(after) || after < 0) return refuse(res, 400, 'Bad Request: task=task-N and after=SEQ (a whole number) are required');
    const entries = await this.#options.observer.transcript(task, after);
    if (entries === null) return refuse(res, 404, 'Not Found: no such task');
    res.writeHead(200, { 'Content-Type': 'application/json', ...DATA_HEADERS });
    res.end(JSON.stringify({ entries: entries.map((e) => ({ seq: e.seq, time: e.time, type: e.type, payload: e.payload })) }));
  }
}

/**
 * Whose stream slots a request takes: a token principal's, however many addresses it comes from; without
 * a token (a loopback server without tokens) every caller is anonymous, so its address stands for it.
 */
function viewerOf(principal: Principal, req: IncomingMessage): string {
  return principal.kind === 'token' ? `token:${principal.name}` : `address:${req.socket.remoteAddress ?? 'unknown'}`;
}

function frame(json: string): string {
  return `data: ${json}\n\n`;
}

function refuse(res: ServerResponse, status: number, message: string, headers: Readonly<Record<string, string>> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...DATA_HEADERS, ...headers });
  res.end(JSON.stringify({ error: message }));
}
