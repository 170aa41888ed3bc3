// Where the server keeps conversations, as the operator names it (`--store`, `SUPERPI_STORE`): the
// embedded SQLite store (the default), or a PostgreSQL database by URL. The URL may carry a password, so
// nothing here ever puts the value as given into a message: only its scheme, or a label without the
// user and password.

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
  // Only the scheme is named: in a URL the operator mistyped, a password can sit anywhere.
  if (!POSTGRES_PROTOCOLS.has(url.protocol)) {
    throw new StoreLocationError(`--store takes ${SQLITE_STORE} or a URL postgres://user:password@host:port/database, not a ${url.protocol} URL (the rest is not shown, as it may hold a password)`);
  }
  // "postgres:user:pw@host" and "postgres:///user:pw@host" put the user and password in the path, and
  // a password holding an unescaped "/" ends the host early and leaves its tail, with the "@", in the
  // path: each time the label would show it. A database name has no "@".
  if (!value.slice(url.protocol.length).startsWith('//') || url.pathname.includes('@')) {
    throw new StoreLocationError(`--store takes ${SQLITE_STORE} or a URL postgres://user:password@host:port/database, with "/", "@" and ":" in the password written %2F, %40 and %3A; the value given is not one (not shown, as it may hold a password)`);
  }
  return { kind: 'postgres', url: value, label: storeLabel(url) };
}

/** The database a URL names, without user or password: what logs and errors say. */
export function storeLabel(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}
