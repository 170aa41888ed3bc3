// Opaque access tokens (not a JWT, or a JWT naming no issuer) checked by token introspection (RFC 7662):
// the configured issuers whose metadata names an `introspection_endpoint` are asked, in order, with this
// server's client credentials; the first that calls the token active decides. Its answer is held to the
// same rules as a JWT (`iss`, `aud` naming this resource, `exp`/`nbf` within the skew, a `sub`, scopes)
// and remembered by digest until it expires. A refusal is remembered by digest briefly, so the same bad token
// does not cost a request to the issuer each time. An issuer that cannot be asked is a 503, never an acceptance.

import { createHash } from 'node:crypto';
import {
  OAUTH_INTROSPECTION_CACHE_ENTRIES, OAUTH_INTROSPECTION_CACHE_MAX_SECONDS, OAUTH_INTROSPECTION_INACTIVE_CACHE_ENTRIES,
  OAUTH_INTROSPECTION_INACTIVE_CACHE_SECONDS, OAUTH_INTROSPECTION_MAX_IN_FLIGHT, OAUTH_UNAVAILABLE_RETRY_AFTER_SECONDS,
} from '../limits.ts';
import type { RefusedToken, TokenVerdict, VerifiedToken } from './access-token.ts';
import type { ClientCredentials } from './client-credentials.ts';
import { type FetchJson, IssuerUnavailable } from './issuer-fetch.ts';
import type { IssuerMetadata } from './jwks-cache.ts';
import type { OAuthConfig } from './oauth-config.ts';
import { capabilitiesOf } from './scopes.ts';

export interface TokenIntrospectorOptions {
  readonly credentials: ClientCredentials;
  /** A configured issuer's metadata (its JwksCache's, read once). */
  readonly metadata: (issuer: string) => Promise<IssuerMetadata>;
  readonly fetchJson: FetchJson;
  /** Wall-clock milliseconds since the epoch. Default Date.now. */
  readonly now?: () => number;
  readonly cacheEntries?: number;
  /** Refused tokens remembered at once; default OAUTH_INTROSPECTION_INACTIVE_CACHE_ENTRIES. */
  readonly inactiveCacheEntries?: number;
  readonly maxInFlight?: number;
}

interface Remembered<V extends TokenVerdict> {
  readonly verdict: V;
  /** Seconds since the epoch: the token's `exp`, or sooner (OAUTH_INTROSPECTION_CACHE_MAX_SECONDS); a refusal's OAUTH_INTROSPECTION_INACTIVE_CACHE_SECONDS. */
  readonly until: number;
}

export class TokenIntrospector {
  readonly #config: OAuthConfig;
  readonly #o: TokenIntrospectorOptions;
  readonly #now: () => number;
  /** Active tokens by SHA-256 digest, oldest first. */
  readonly #remembered = new Map<string, Remembered<VerifiedToken>>();
  /** Tokens the issuers refused (401), by SHA-256 digest, oldest first: a table apart, so they never evict an active one. */
  readonly #refused = new Map<string, Remembered<RefusedToken>>();
  /** Introspections under way by digest: the same token sent twice at once asks once. */
  readonly #inFlight = new Map<string, Promise<TokenVerdict>>();
  #requests = 0;

  constructor(config: OAuthConfig, options: TokenIntrospectorOptions) {
    this.#config = config;
    this.#o = options;
    this.#now = options.now ?? Date.now;
  }

  introspect(token: string): Promise<TokenVerdict> {
    const digest = createHash('sha256').update(token).digest('base64url');
    const known = recall(this.#remembered, digest, this.#now()) ?? recall(this.#refused, digest, this.#now());
    if (known !== undefined) return Promise.resolve(known);
    const pending = this.#inFlight.get(digest);
    if (pending !== undefined) return pending;
    if (this.#inFlight.size >= (this.#o.maxInFlight ?? OAUTH_INTROSPECTION_MAX_IN_FLIGHT)) {
      return Promise.resolve(unavailable(`OAUTH_INTROSPECTION_MAX_IN_FLIGHT (${this.#o.maxInFlight ?? OAUTH_INTROSPECTION_MAX_IN_FLIGHT}) introspections are under way`));
    }
    const asked = this.#ask(token).then((verdict) => {
      if (verdict.ok) this.#remember(digest, verdict);
      // A 503 is never remembered: the issuer that could not be asked may know the token.
      else if (verdict.status === 401) this.#rememberRefusal(digest, verdict);
      return verdict;
    }).finally(() => this.#inFlight.delete(digest));
    this.#inFlight.set(digest, asked);
    return asked;
  }

  /** How many introspection requests were sent (for tests and /health). */
  get requests(): number {
    return this.#requests;
  }

  async #ask(token: string): Promise<TokenVerdict> {
    let offered = false;
    let unreachable: string | null = null;
    for (const issuer of this.#config.issuers) {
      let answer: unknown;
      try {
        const { introspectionEndpoint } = await this.#o.metadata(issuer);
        if (introspectionEndpoint === undefined) continue;
        offered = true;
        this.#requests++;
        answer = await this.#o.fetchJson(introspectionEndpoint, { token, token_type_hint: 'access_token' }, { authorization: this.#o.credentials.basicAuthorization() });
      } catch (err) {
        if (!(err instanceof IssuerUnavailable)) throw err;
        unreachable ??= err.message;
        continue;
      }
      const active = typeof answer === 'object' && answer !== null && !Array.isArray(answer) ? (answer as { active?: unknown }).active : undefined;
      if (typeof active !== 'boolean') {
        unreachable ??= `${issuer}: its introspection answer has no boolean "active"`;
        continue;
      }
      if (active) return judgeIntrospection(answer as Record<string, unknown>, issuer, this.#config, this.#now() / 1000);
    }
    // An issuer that could not be asked may be the one that knows the token: wait for it, never guess.
    if (unreachable !== null) return unavailable(`token introspection failed: ${unreachable}`);
    if (!offered) return refused('the bearer token is not a JWT, and no configured issuer offers token introspection');
    return refused('the token is not active (its issuer does not know it, or it expired or was revoked)');
  }

  #remember(digest: string, verdict: VerifiedToken): void {
    bound(this.#remembered, this.#o.cacheEntries ?? OAUTH_INTROSPECTION_CACHE_ENTRIES);
    const until = Math.min(verdict.expiresAt + this.#config.clockSkewSeconds, this.#now() / 1000 + OAUTH_INTROSPECTION_CACHE_MAX_SECONDS);
    this.#remembered.set(digest, { verdict, until });
  }

  #rememberRefusal(digest: string, verdict: RefusedToken): void {
    bound(this.#refused, this.#o.inactiveCacheEntries ?? OAUTH_INTROSPECTION_INACTIVE_CACHE_ENTRIES);
    this.#refused.set(digest, { verdict, until: this.#now() / 1000 + OAUTH_INTROSPECTION_INACTIVE_CACHE_SECONDS });
  }
}

/** The verdict remembered for `digest` while it holds (`now`: ms since the epoch); an expired one is forgotten. */
function recall<V extends TokenVerdict>(table: Map<string, Remembered<V>>, digest: string, now: number): V | undefined {
  const known = table.get(digest);
  if (known === undefined) return undefined;
  if (known.until > now / 1000) return known.verdict;
  table.delete(digest);
  return undefined;
}

/** Makes room for one more entry in a table of at most `entries`: the oldest goes. */
function bound(table: Map<string, unknown>, entries: number): void {
  if (table.size < entries) return;
  const oldest = table.keys().next();
  if (oldest.done !== true) table.delete(oldest.value);
}

/**
 * An active introspection answer from `issuer`, checked as a JWT's claims would be (RFC 7662 §2.2 names
 * them the same): `iss` if given is that issuer, `aud` names this resource (a string equal to it, or an
 * array containing it), `exp` is present and not past, `nbf` not ahead (both within the skew), a `sub`;
 * a token bound to a key (`cnf`) or of another type than Bearer is not accepted as a plain bearer token.
 */
export function judgeIntrospection(answer: Readonly<Record<string, unknown>>, issuer: string, config: OAuthConfig, nowSeconds: number): TokenVerdict {
  const { iss, aud, exp, nbf, sub, scope, token_type: tokenType, cnf } = answer;
  const skew = config.clockSkewSeconds;
  if (iss !== undefined && iss !== issuer) return refused('the introspection answer names another issuer than the one asked');
  const audiences = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : [];
  if (!audiences.includes(config.resource)) return refused('the token is for another audience (aud does not name this resource)');
  if (typeof exp !== 'number' || !Number.isFinite(exp)) return refused('the token\'s exp claim is missing or invalid');
  if (exp <= nowSeconds - skew) return refused('the token has expired');
  if (nbf !== undefined && (typeof nbf !== 'number' || nbf > nowSeconds + skew)) return refused('the token is not valid yet (nbf)');
  if (typeof sub !== 'string' || sub === '') return refused('the token\'s sub claim is missing or invalid');
  if (tokenType !== undefined && (typeof tokenType !== 'string' || tokenType.toLowerCase() !== 'bearer')) return refused(`a ${JSON.stringify(tokenType)} token is not a bearer access token`);
  if (cnf !== undefined) return refused('the token is bound to a key (cnf); this server accepts only plain bearer tokens');
  return {
    ok: true,
    principal: { kind: 'token', name: `${issuer}#${sub}` },
    capabilities: capabilitiesOf(scope, config.scopes),
    expiresAt: exp,
  };
}

function refused(reason: string): RefusedToken {
  return { ok: false, status: 401, reason };
}

function unavailable(reason: string): RefusedToken {
  return { ok: false, status: 503, reason, retryAfterSeconds: OAUTH_UNAVAILABLE_RETRY_AFTER_SECONDS };
}
