// Verifying an OAuth access token (a JWT, RFC 9068) for this resource server: an allowed asymmetric
// signature by a key of a configured issuer, `iss` among them, `aud` naming this resource, `exp`/`nbf`
// within the clock skew, a `sub`, and nothing marking it another kind of JWT (token-kind.ts). The principal is issuer + sub; the scopes become capabilities.
// A verified token is remembered by its digest until it expires, so a client's every request costs a hash.

import { createHash } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, errors, jwtVerify } from 'jose';
import { OAUTH_UNAVAILABLE_RETRY_AFTER_SECONDS, OAUTH_VERIFIED_TOKEN_CACHE_ENTRIES } from '../limits.ts';
import type { Principal } from '../mcp/state.ts';
import { type FetchJson, fetchJson as defaultFetchJson, IssuerUnavailable } from './issuer-fetch.ts';
import { ALLOWED_ALGORITHMS, JwksCache } from './jwks-cache.ts';
import type { OAuthConfig } from './oauth-config.ts';
import { type Capability, capabilitiesOf } from './scopes.ts';
import { notAnAccessToken } from './token-kind.ts';

export interface VerifiedToken {
  readonly ok: true;
  readonly principal: Principal & { kind: 'token' };
  readonly capabilities: ReadonlySet<Capability>;
  /** `exp`, seconds since the epoch. */
  readonly expiresAt: number;
}

/**
 * Why a token is refused. `reason` is for the operator's log and the caller's message: it never
 * contains the token. 401: not a valid token for this server; 503: the issuer's keys cannot be read.
 */
export interface RefusedToken {
  readonly ok: false;
  readonly status: 401 | 503;
  readonly reason: string;
  readonly retryAfterSeconds?: number;
}

export type TokenVerdict = VerifiedToken | RefusedToken;

export interface AccessTokenVerifierOptions {
  readonly fetchJson?: FetchJson;
  /** Wall-clock milliseconds since the epoch (tokens carry wall-clock times). Default Date.now. */
  readonly now?: () => number;
  readonly cacheEntries?: number;
}

/** A compact JWS: three base64url parts. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export class AccessTokenVerifier {
  readonly #config: OAuthConfig;
  readonly #now: () => number;
  readonly #issuers = new Map<string, JwksCache>();
  /** Verified tokens by SHA-256 digest, oldest first. */
  readonly #verified = new Map<string, VerifiedToken>();
  readonly #cacheEntries: number;

  constructor(config: OAuthConfig, options: AccessTokenVerifierOptions = {}) {
    this.#config = config;
    this.#now = options.now ?? Date.now;
    this.#cacheEntries = options.cacheEntries ?? OAUTH_VERIFIED_TOKEN_CACHE_ENTRIES;
    for (const issuer of config.issuers) {
      this.#issuers.set(issuer, new JwksCache(issuer, {
        fetchJson: options.fetchJson ?? defaultFetchJson, now: this.#now,
        refetchIntervalMs: config.jwksRefetchIntervalMs, maxAgeMs: config.jwksMaxAgeMs,
      }));
    }
  }

  /** The key cache of a configured issuer (its metadata, for introspection and /health). */
  issuer(issuer: string): JwksCache | undefined {
    return this.#issuers.get(issuer);
  }

  /** Is `token` shaped as a JWT at all (else it may be an opaque token, for introspection)? */
  static isJwt(token: string): boolean {
    return COMPACT_JWS.test(token);
  }

  /**
   * Does `token` name its issuer, as a JWT with a string `iss`? Else (an opaque token, or a JWT naming no
   * issuer) only introspection can tell whose it is. Decodes without verifying: this only routes.
   */
  static namesIssuer(token: string): boolean {
    if (!COMPACT_JWS.test(token)) return false;
    try {
      return typeof decodeJwt(token).iss === 'string';
    } catch {
      return false;
    }
  }

  async verify(token: string): Promise<TokenVerdict> {
    const digest = createHash('sha256').update(token).digest('base64url');
    const known = this.#verified.get(digest);
    if (known !== undefined) {
      if (known.expiresAt > this.#now() / 1000 - this.#config.clockSkewSeconds) return known;
      this.#verified.delete(digest);
    }
    const verdict = await this.#verify(token);
    if (verdict.ok) this.#remember(digest, verdict);
    return verdict;
  }

  async #verify(token: string): Promise<TokenVerdict> {
    if (!COMPACT_JWS.test(token)) return refused('the bearer token is not a JWT (three base64url parts)');
    let header: ReturnType<typeof decodeProtectedHeader>;
    let claims: ReturnType<typeof decodeJwt>;
    try {
      header = decodeProtectedHeader(token);
      claims = decodeJwt(token);
    } catch {
      return refused('the bearer token is not a well-formed JWT');
    }
    const { alg } = header;
    const { iss } = claims;
    // Checked before any key is looked up: an algorithm outside the list (none, HS256...) never reaches a key.
    if (typeof alg !== 'string' || !ALLOWED_ALGORITHMS.includes(alg)) return refused(`the token's algorithm ${JSON.stringify(alg)} is not allowed (asymmetric signatures only)`);
    // An ID token (or any other JWT) the issuer signed is no access token, whatever its aud and scope say.
    const other = notAnAccessToken(header, claims, this.#config.requireAtJwt);
    if (other !== null) return refused(other);
    const keys = typeof iss === 'string' ? this.#issuers.get(iss) : undefined;
    if (keys === undefined) return refused('the token was issued by an issuer this server does not trust');
    try {
      const { payload } = await jwtVerify(token, async (header) => {
        const key = await keys.key(header.kid, header.alg);
        if (key === null) throw new errors.JWKSNoMatchingKey();
        return key;
      }, {
        issuer: iss as string,
        audience: this.#config.resource,
        algorithms: [...ALLOWED_ALGORITHMS],
        clockTolerance: this.#config.clockSkewSeconds,
        currentDate: new Date(this.#now()),
        requiredClaims: ['exp', 'sub'],
      });
      const { sub } = payload;
      // jose checks that sub is there, not that it is a string: 42 and "42" would be one principal.
      if (typeof sub !== 'string') return refused('the token\'s sub claim is not a string');
      if (sub === '') return refused('the token has an empty sub');
      // A token bound to a key (DPoP, mTLS) is only as good as the proof of that key, which a bearer request lacks.
      if (payload.cnf !== undefined) return refused('the token is bound to a key (cnf); this server accepts only plain bearer tokens');
      return {
        ok: true,
        principal: { kind: 'token', name: `${iss as string}#${sub}` },
        capabilities: capabilitiesOf(payload.scope, this.#config.scopes),
        expiresAt: payload.exp as number,
      };
    } catch (err) {
      if (err instanceof IssuerUnavailable) return { ok: false, status: 503, reason: `the issuer's keys cannot be read: ${err.message}`, retryAfterSeconds: OAUTH_UNAVAILABLE_RETRY_AFTER_SECONDS };
      return refused(describe(err));
    }
  }

  #remember(digest: string, verdict: VerifiedToken): void {
    if (this.#verified.size >= this.#cacheEntries) {
      const oldest = this.#verified.keys().next();
      if (oldest.done !== true) this.#verified.delete(oldest.value);
    }
    this.#verified.set(digest, verdict);
  }
}

function refused(reason: string): RefusedToken {
  return { ok: false, status: 401, reason };
}

/** jose's error, as a sentence without the token in it. */
function describe(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'the token has expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    switch (err.claim) {
      case 'aud': return 'the token is for another audience (aud does not name this resource)';
      case 'iss': return 'the token was issued by an issuer this server does not trust';
      case 'nbf': return 'the token is not valid yet (nbf)';
      default: return `the token's ${err.claim} claim is missing or invalid`;
    }
  }
  if (err instanceof errors.JWKSNoMatchingKey) return 'the token names a key (kid) its issuer does not have';
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'the token\'s signature does not verify';
  if (err instanceof errors.JOSEAlgNotAllowed) return 'the token\'s algorithm is not allowed';
  if (err instanceof errors.JOSEError) return `the token is invalid (${err.code})`;
  return 'the token is invalid';
}
