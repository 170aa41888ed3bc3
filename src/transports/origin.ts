// DNS-rebinding and cross-origin protection: the Host of an HTTP or WebSocket request must name this
// server by an allowed name (localhost names by default), and a browser's Origin must be this server's
// own origin — scheme, host and port: an allowed name at the bound port — or one the operator listed
// (`--allowed-origins`). A page on another port of the same machine is another origin, and browsers
// apply no CORS to a WebSocket upgrade, so the port must count. Anything else is refused with 403.

export interface OriginPolicy {
  /** Names accepted in `Host`, and, at `port`, in `Origin` (lower case; IPv6 in brackets). */
  readonly allowedHosts: readonly string[];
  /** Other origins accepted as they are (`--allowed-origins`), each `scheme://host[:port]` as `parseOrigin` returns it. */
  readonly allowedOrigins?: readonly string[];
  /** The port the server is bound to; undefined (not yet bound): only `allowedOrigins` pass. */
  readonly port?: () => number | undefined;
}

/** The host name of a `Host` header value (`name:port`, `[v6]:port`), lower-cased. */
function hostName(value: string): string {
  const v = value.trim().toLowerCase();
  if (v.startsWith('[')) return v.slice(0, v.indexOf(']') + 1);
  const colon = v.lastIndexOf(':');
  return colon === -1 ? v : v.slice(0, colon);
}

/**
 * An origin as it is compared: `scheme://host[:port]` with the default port left out (URL's `origin`),
 * or null when `value` is not an http(s) origin (`null`, a path, another scheme).
 */
export function parseOrigin(value: string): string | null {
  if (!URL.canParse(value)) return null;
  const url = new URL(value);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  return url.origin;
}

/** Null when allowed, else the reason for the 403. */
export function checkHostAndOrigin(policy: OriginPolicy, host: string | undefined, origin: string | undefined): string | null {
  if (!host) return 'missing Host header';
  if (!policy.allowedHosts.includes(hostName(host))) return `Host "${host}" is not allowed`;
  if (origin === undefined || origin === '') return null; // not a browser (or a same-origin GET)
  return isAllowedOrigin(policy, origin) ? null : `Origin "${origin}" is not allowed`;
}

function isAllowedOrigin(policy: OriginPolicy, origin: string): boolean {
  const normal = parseOrigin(origin);
  if (normal === null) return false;
  if (policy.allowedOrigins?.includes(normal)) return true;
  const url = new URL(normal);
  // The server speaks plain HTTP: its own origin is http://; one behind a TLS proxy is listed by the operator.
  if (url.protocol !== 'http:') return false;
  const own = policy.port?.();
  const port = url.port === '' ? 80 : Number(url.port);
  return own !== undefined && port === own && policy.allowedHosts.includes(url.hostname.toLowerCase());
}
