// The OAuth resource server's settings, checked once at startup: which issuers are trusted, this server's
// canonical resource URL (the audience tokens must name), the scope names and the named limits.

import {
  OAUTH_CLOCK_SKEW_SECONDS, OAUTH_JWKS_MAX_AGE_MS, OAUTH_JWKS_REFETCH_INTERVAL_MS, OAUTH_MAX_TOKEN_BYTES,
} from '../limits.ts';
import { DEFAULT_SCOPE_NAMES, type ScopeNames } from './scopes.ts';

export class OAuthConfigError extends Error {
  override readonly name = 'OAuthConfigError';
}

export interface OAuthConfig {
  /** Issuer identifiers exactly as they appear in `iss` and in their metadata (`--oauth-issuer`, repeatable). */
  readonly issuers: readonly string[];
  /** This server's canonical URL (`--resource`): the `aud` every token must carry, RFC 8707. */
  readonly resource: string;
  readonly scopes: ScopeNames;
  readonly clockSkewSeconds: number;
  readonly jwksRefetchIntervalMs: number;
  readonly jwksMaxAgeMs: number;
  readonly maxTokenBytes: number;
  /** Only `typ: at+jwt` JWTs are access tokens (`--oauth-require-at-jwt`); else also `JWT` or none, unless marked an ID token (token-kind.ts). */
  readonly requireAtJwt: boolean;
}

export interface OAuthConfigInput {
  readonly issuers: readonly string[];
  readonly resource: string;
  readonly scopes?: Partial<ScopeNames>;
  readonly clockSkewSeconds?: number;
  readonly jwksRefetchIntervalMs?: number;
  readonly jwksMaxAgeMs?: number;
  readonly maxTokenBytes?: number;
  readonly requireAtJwt?: boolean;
}

/** The settings with defaults merged in, or a clear error for the first bad field. */
export function oauthConfig(input: OAuthConfigInput): OAuthConfig {
  if (input.issuers.length === 0) throw new OAuthConfigError('--oauth-issuer: at least one issuer is needed');
  for (const issuer of input.issuers) checkUrl('--oauth-issuer', issuer);
  if (new Set(input.issuers).size !== input.issuers.length) throw new OAuthConfigError('--oauth-issuer: an issuer is named twice');
  checkUrl('--resource', input.resource);
  const scopes = { ...DEFAULT_SCOPE_NAMES, ...input.scopes };
  for (const [capability, name] of Object.entries(scopes)) {
    // RFC 6749 §3.3: a scope token is printable ASCII without space, `"` or `\`.
    if (!/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(name)) throw new OAuthConfigError(`--oauth-scope-${capability}: "${name}" is not a valid scope name`);
  }
  if (new Set(Object.values(scopes)).size !== 4) throw new OAuthConfigError('--oauth-scope-*: two capabilities share a scope name');
  const skew = input.clockSkewSeconds ?? OAUTH_CLOCK_SKEW_SECONDS;
  if (!Number.isInteger(skew) || skew < 0 || skew > 600) throw new OAuthConfigError('--oauth-clock-skew: 0 to 600 seconds');
  return {
    issuers: [...input.issuers],
    resource: input.resource,
    scopes,
    clockSkewSeconds: skew,
    jwksRefetchIntervalMs: input.jwksRefetchIntervalMs ?? OAUTH_JWKS_REFETCH_INTERVAL_MS,
    jwksMaxAgeMs: input.jwksMaxAgeMs ?? OAUTH_JWKS_MAX_AGE_MS,
    maxTokenBytes: input.maxTokenBytes ?? OAUTH_MAX_TOKEN_BYTES,
    requireAtJwt: input.requireAtJwt ?? false,
  };
}

/** An issuer or resource URL: absolute, no fragment, https (or http on a loopback host, for local providers and tests). */
function checkUrl(flag: string, value: string): void {
  if (!URL.canParse(value)) throw new OAuthConfigError(`${flag}: "${value}" is not an absolute URL`);
  const url = new URL(value);
  if (url.hash !== '' || value.includes('#')) throw new OAuthConfigError(`${flag}: "${value}" must not have a fragment`);
  const loopback = url.hostname === 'localhost' || url.hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) throw new OAuthConfigError(`${flag}: "${value}" must be https (http only on a loopback host)`);
}
