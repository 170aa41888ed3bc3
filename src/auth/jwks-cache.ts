// One trusted issuer's signing keys: its metadata (RFC 8414, else OpenID discovery) names the JWKS, whose
// public keys are cached by `kid`. Rotation is followed: an unknown `kid` reads the JWKS again, at most
// once per `refetchIntervalMs`, so forged key ids cannot make this server flood the issuer. An issuer that
// could not be read is not asked again for `retryMs` (the Retry-After its 503s name): without that, every
// token naming it — forged ones too — was one more request (two, for its metadata) to an issuer already
// failing.

import { importJWK, type JWK } from 'jose';
import { OAUTH_UNAVAILABLE_RETRY_AFTER_SECONDS } from '../limits.ts';
import { type FetchJson, IssuerUnavailable } from './issuer-fetch.ts';

/** Signature algorithms a token may use: asymmetric only, so no key from a JWKS can ever act as an HMAC secret (and never `none`). */
export const ALLOWED_ALGORITHMS: readonly string[] = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/** What the issuer's metadata says that this server uses. */
export interface IssuerMetadata {
  readonly issuer: string;
  /** Absent only for an issuer that offers introspection alone (opaque tokens, no JWTs). */
  readonly jwksUri?: string;
  readonly introspectionEndpoint?: string;
}

export interface JwksCacheOptions {
  readonly fetchJson: FetchJson;
  /** Milliseconds; only differences matter. */
  readonly now: () => number;
  readonly refetchIntervalMs: number;
  readonly maxAgeMs: number;
  /** After a failed read of its metadata or JWKS, the issuer is not asked again for this long. Default OAUTH_UNAVAILABLE_RETRY_AFTER_SECONDS. */
  readonly retryMs?: number;
}

type ImportedKey = Awaited<ReturnType<typeof importJWK>>;

interface KeySet {
  readonly byKid: Map<string, JWK>;
  /** Imported keys by `kid` and algorithm: importing costs more than verifying. */
  readonly imported: Map<string, ImportedKey>;
  readonly fetchedAt: number;
}

export class JwksCache {
  readonly #issuer: string;
  readonly #o: JwksCacheOptions;
  #metadata: Promise<IssuerMetadata> | null = null;
  #keys: KeySet | null = null;
  /** When the JWKS was last asked for (successfully or not): the refetch interval counts from here. */
  #lastAttempt = Number.NEGATIVE_INFINITY;
  #inFlight: Promise<KeySet> | null = null;
  /** The last failed read of the metadata or the JWKS (cleared by a successful JWKS read): until `retryMs` after it, nothing is fetched. */
  #failure: { readonly at: number; readonly error: IssuerUnavailable } | null = null;

  constructor(issuer: string, options: JwksCacheOptions) {
    this.#issuer = issuer;
    this.#o = options;
  }

  /** The issuer's metadata, read once (a failed read is tried again at the next call). */
  metadata(): Promise<IssuerMetadata> {
    if (this.#metadata === null) {
      const failed = this.#recentFailure();
      if (failed !== null) return Promise.reject(failed);
      this.#metadata = discover(this.#issuer, this.#o.fetchJson).catch((err: unknown) => {
        this.#metadata = null;
        this.#noteFailure(err);
        throw err;
      });
    }
    return this.#metadata;
  }

  /**
   * The key for `kid` and `alg`, or null when the issuer has no such key (after one refetch, if the last
   * was long enough ago). Rejects with IssuerUnavailable when the keys cannot be read at all.
   */
  async key(kid: string | undefined, alg: string): Promise<ImportedKey | null> {
    const now = this.#o.now();
    let keys = this.#keys;
    if (keys === null || now - keys.fetchedAt >= this.#o.maxAgeMs) {
      const failed = this.#recentFailure();
      if (failed === null) {
        keys = await this.#refresh().catch((err: unknown) => {
          // Stale keys are still the issuer's keys: better than refusing everyone while it is briefly away.
          if (this.#keys !== null && err instanceof IssuerUnavailable) return this.#keys;
          throw err;
        });
      } else if (keys === null) {
        // Failed a moment ago and no keys yet: the token waits (503) without another request to the issuer.
        throw failed;
      }
      // Else failed a moment ago: the stale keys serve until the issuer is asked again.
    }
    let jwk = pick(keys, kid);
    if (jwk === undefined && now - this.#lastAttempt >= this.#o.refetchIntervalMs) {
      keys = await this.#refresh();
      jwk = pick(keys, kid);
    }
    if (jwk === undefined) return null;
    if (jwk.alg !== undefined && jwk.alg !== alg) return null;
    const cacheKey = `${jwk.kid ?? ''}\n${alg}`;
    const cached = keys.imported.get(cacheKey);
    if (cached !== undefined) return cached;
    let imported: ImportedKey;
    try {
      imported = await importJWK(jwk, alg);
    } catch {
      // A key of another type than the token's algorithm (an RSA key for ES256): no key for this token.
      return null;
    }
    keys.imported.set(cacheKey, imported);
    return imported;
  }

  /** How many times the JWKS was asked for (for tests and /health). */
  get fetches(): number {
    return this.#fetches;
  }

  #fetches = 0;

  #refresh(): Promise<KeySet> {
    this.#inFlight ??= this.#load().finally(() => {
      this.#inFlight = null;
    });
    return this.#inFlight;
  }

  /** The failure of the issuer's last read while it is more recent than `retryMs`, else null. */
  #recentFailure(): IssuerUnavailable | null {
    const failure = this.#failure;
    if (failure === null || this.#o.now() - failure.at >= (this.#o.retryMs ?? OAUTH_UNAVAILABLE_RETRY_AFTER_SECONDS * 1000)) return null;
    return failure.error;
  }

  #noteFailure(err: unknown): void {
    if (err instanceof IssuerUnavailable) this.#failure = { at: this.#o.now(), error: err };
  }

  async #load(): Promise<KeySet> {
    try {
      const keys = await this.#read();
      this.#failure = null;
      return keys;
    } catch (err) {
      this.#noteFailure(err);
      throw err;
    }
  }

  async #read(): Promise<KeySet> {
    const { jwksUri } = await this.metadata();
    this.#lastAttempt = this.#o.now();
    if (jwksUri === undefined) throw new IssuerUnavailable(`${this.#issuer}: its metadata names no jwks_uri (it offers introspection only)`);
    this.#fetches++;
    const doc = await this.#o.fetchJson(jwksUri);
    const keys = (doc as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(keys)) throw new IssuerUnavailable(`${jwksUri}: not a JWK set`);
    const byKid = new Map<string, JWK>();
    for (const k of keys as unknown[]) {
      if (typeof k !== 'object' || k === null) continue;
      const jwk = k as JWK;
      // Only public signing keys: a symmetric (`oct`) or private member, or an encryption key, is never used.
      if (jwk.kty !== 'RSA' && jwk.kty !== 'EC' && jwk.kty !== 'OKP') continue;
      if (jwk.d !== undefined || (jwk.use !== undefined && jwk.use !== 'sig')) continue;
      byKid.set(jwk.kid ?? '', jwk);
    }
    this.#keys = { byKid, imported: new Map(), fetchedAt: this.#o.now() };
    return this.#keys;
  }
}

/** A token without `kid` may use the issuer's key only when it has exactly one. */
function pick(keys: KeySet, kid: string | undefined): JWK | undefined {
  if (kid !== undefined) return keys.byKid.get(kid);
  return keys.byKid.size === 1 ? keys.byKid.values().next().value : undefined;
}

/**
 * RFC 8414 metadata (`/.well-known/oauth-authorization-server` inserted before the issuer's path), else
 * OpenID discovery (`/.well-known/openid-configuration` appended). The document must name this very
 * issuer (mix-up protection), and https endpoints (http only beside an http loopback issuer): a JWKS, an
 * introspection endpoint, or both.
 */
async function discover(issuer: string, fetch: FetchJson): Promise<IssuerMetadata> {
  const url = new URL(issuer);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  const candidates = [`${url.origin}/.well-known/oauth-authorization-server${path}`, `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`];
  let last: unknown;
  for (const candidate of candidates) {
    let doc: unknown;
    try {
      doc = await fetch(candidate);
    } catch (err) {
      last = err;
      continue;
    }
    const m = doc as { issuer?: unknown; jwks_uri?: unknown; introspection_endpoint?: unknown } | null;
    if (m?.issuer !== issuer) throw new IssuerUnavailable(`${candidate}: names issuer ${JSON.stringify(m?.issuer)}, not ${issuer}`);
    const jwksUri = endpoint(candidate, 'jwks_uri', m.jwks_uri, url.protocol);
    const introspectionEndpoint = endpoint(candidate, 'introspection_endpoint', m.introspection_endpoint, url.protocol);
    if (jwksUri === undefined && introspectionEndpoint === undefined) throw new IssuerUnavailable(`${candidate}: no jwks_uri`);
    return {
      issuer,
      ...(jwksUri === undefined ? {} : { jwksUri }),
      ...(introspectionEndpoint === undefined ? {} : { introspectionEndpoint }),
    };
  }
  throw last instanceof IssuerUnavailable ? last : new IssuerUnavailable(`${issuer}: no metadata`, { cause: last });
}

/** A URL the metadata names (absent: undefined), https beside an https issuer: a token or a key never travels in the clear. */
function endpoint(document: string, field: string, value: unknown, issuerProtocol: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !URL.canParse(value)) throw new IssuerUnavailable(`${document}: ${field} is not a URL`);
  if (new URL(value).protocol !== 'https:' && issuerProtocol === 'https:') throw new IssuerUnavailable(`${document}: ${field} is not https`);
  return value;
}
