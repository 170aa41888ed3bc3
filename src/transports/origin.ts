// DNS-rebinding protection: the Host and Origin of an HTTP or WebSocket request must name this server
// by an allowed name (localhost names by default); anything else is refused with 403.


export interface OriginPolicy {
  readonly allowedHosts: readonly string[];
}

/** The host name of a `Host` header value (`name:port`, `[v6]:port`), lower-cased. */
function hostName(value: string): string {
  const v = value.trim().toLowerCase();
  if (v.startsWith('[')) return v.slice(0, v.indexOf(']') + 1);
  const colon = v.lastIndexOf(':');
  return colon === -1 ? v : v.slice(0, colon);
}

/** Null when allowed, else the reason for the 403. */
export function checkHostAndOrigin(policy: OriginPolicy, host: string | undefined, origin: string | undefined): string | null {
  if (!host) return 'missing Host header';
  if (!policy.allowedHosts.includes(hostName(host))) return `Host "${host}" is not allowed`;
  if (origin === undefined || origin === '') return null; // not a browser (or a same-origin request)
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    // An Origin that is not a URL (or "null") cannot be one of ours.
    return `Origin "${origin}" is not allowed`;
  }
  const name = url.hostname.startsWith('[') ? url.hostname : url.hostname.includes(':') ? `[${url.hostname}]` : url.hostname;
  return policy.allowedHosts.includes(name.toLowerCase()) ? null : `Origin "${origin}" is not allowed`;
}
