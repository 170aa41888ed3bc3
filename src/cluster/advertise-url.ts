// How other nodes of a cluster reach this one (`--advertise-url`, `SUPERPI_ADVERTISE_URL`): the base URL a
// node forwards a session's requests to when this node is the session's home. It is stored in the node
// registry (store/cluster-nodes.ts) for every node to read, so it must be a plain http(s) base URL and
// never carry credentials: anything in it is readable by every node and by whoever reads the database.

/** The advertise URL, normalised (no trailing slash), or why it cannot be one. */
export function checkAdvertiseUrl(raw: string): { readonly url: string } | { readonly problem: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { problem: `"${raw}" is not a URL (give one like http://10.0.0.5:8080)` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem: `an advertise URL is http:// or https://, not ${url.protocol}` };
  if (url.username !== '' || url.password !== '') return { problem: 'an advertise URL must not carry credentials (every node and the database can read it)' };
  if (url.search !== '' || url.hash !== '') return { problem: 'an advertise URL has no query or fragment' };
  const path = url.pathname.replace(/\/+$/, '');
  return { url: `${url.protocol}//${url.host}${path}` };
}

/** The default advertise URL: the address the HTTP server is bound to. */
export function defaultAdvertiseUrl(bindHost: string, port: number): string {
  const host = bindHost.includes(':') ? `[${bindHost}]` : bindHost;
  return `http://${host}:${port}`;
}
