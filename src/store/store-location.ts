// Where the server keeps conversations, as the operator names it (`--store`, `SUPERPI_STORE`): the
// embedded SQLite store (the default), or a PostgreSQL database by URL. The URL may carry a password, so
// nothing here ever puts the value as given into a message: only a redacted form or a label without
// the user and password.

export type StoreLocation =
  | { readonly kind: 'sqlite' }
  /** `url` as given (it may hold the password: only the driver reads it); `label` is safe to print. */
  | { readonly kind: 'postgres'; readonly url: string; readonly label: string };

/** The environment variable naming the store when `--store` is not given. */
export const STORE_ENV = 'SUPERPI_STORE';
/** The explicit name of the default store (to override `SUPERPI_STORE` from the command line). */
export const SQLITE_STORE = 'sqlite';

const POSTGRES_PROTOCOLS = new Set(['postgres:', 'postgresql:']);

export class StoreLocationError extends Error {
  override readonly name = 'StoreLocationError';
}

/**
 * `undefined`, '' or `sqlite`: the embedded SQLite store. `postgres://…` or `postgresql://…`: that
 * database. Anything else throws `StoreLocationError`, whose message never holds a password.
 */
export function parseStoreLocation(value: string | undefined): StoreLocation {
  if (value === undefined || value === '' || value === SQLITE_STORE) return { kind: 'sqlite' };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // Not parsed, so where a password would be is unknown: the value is not shown at all.
    throw new StoreLocationError(`--store takes ${SQLITE_STORE} or a URL postgres://user:password@host:port/database; the value given is not a valid URL (not shown, as it may hold a password)`);
  }
  if (!POSTGRES_PROTOCOLS.has(url.protocol)) {
    throw new StoreLocationError(`--store takes ${SQLITE_STORE} or a URL postgres://user:password@host:port/database, not ${redactedUrl(url)}`);
  }
  // "postgres:user:pw@host" parses with everything in the path, where the label would show it.
  if (!value.slice(url.protocol.length).startsWith('//')) {
    throw new StoreLocationError(`--store takes ${SQLITE_STORE} or a URL postgres://user:password@host:port/database; the value given lacks the // after ${url.protocol} (not shown, as it may hold a password)`);
  }
  return { kind: 'postgres', url: value, label: storeLabel(url) };
}

/** The database a URL names, without user or password: what logs and errors say. */
export function storeLabel(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

function redactedUrl(url: URL): string {
  const copy = new URL(url.href);
  if (copy.password !== '') copy.password = '***';
  // A query may carry a password too (`?password=`): its values are not shown.
  for (const key of [...copy.searchParams.keys()]) copy.searchParams.set(key, '***');
  return copy.href;
}
