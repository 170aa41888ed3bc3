// OAuth 2.1 resource server limits (docs/oauth.md): issuer documents, JWKS refetch, tokens.

/** Allowed difference between this host's clock and an issuer's when checking a token's `exp` and `nbf` (`--oauth-clock-skew`). */
export const OAUTH_CLOCK_SKEW_SECONDS = 60;

/**
 * A token signed with a key id the cached JWKS does not hold makes the issuer's JWKS be read again, at
 * most once per this interval per issuer: key rotation is followed, and a stream of forged `kid`s cannot
 * turn into a stream of requests to the issuer.
 */
export const OAUTH_JWKS_REFETCH_INTERVAL_MS = 30_000;

/** A cached JWKS is read again (at the next token) once it is this old, even if every `kid` is known. */
export const OAUTH_JWKS_MAX_AGE_MS = 10 * 60_000;

/** How long one request to an issuer (metadata, JWKS, introspection) may take before it counts as unreachable. */
export const OAUTH_FETCH_TIMEOUT_MS = 5000;

/** The largest issuer document (metadata, JWKS, introspection answer) read; past it the issuer counts as broken. */
export const OAUTH_MAX_DOCUMENT_BYTES = 256 * 1024;

/** The longest bearer token looked at (bytes of the header value); a longer one is refused with 431 before any parsing. */
export const OAUTH_MAX_TOKEN_BYTES = 8192;

/**
 * `Retry-After` (seconds) of the 503 a request gets while an issuer's keys cannot be read; also how long
 * an issuer whose metadata or JWKS read failed is left alone before it is asked again (meanwhile its
 * tokens are checked with the keys already held, else get the 503), so tokens naming a failing issuer
 * cannot become a stream of requests to it.
 */
export const OAUTH_UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/**
 * Access tokens already verified, kept (by SHA-256 digest, never the token) until they expire, so the
 * signature of a token a client sends on every request is checked once; the oldest entry goes first.
 */
export const OAUTH_VERIFIED_TOKEN_CACHE_ENTRIES = 10_000;

/**
 * Opaque access tokens an issuer's introspection endpoint (RFC 7662) called active, kept (by SHA-256
 * digest, never the token) so a client's every request does not cost a request to the issuer; the oldest
 * entry goes first.
 */
export const OAUTH_INTROSPECTION_CACHE_ENTRIES = 10_000;

/**
 * An introspected token is remembered until its `exp`, but never longer than this: a token the issuer
 * revokes stops working here within this time.
 */
export const OAUTH_INTROSPECTION_CACHE_MAX_SECONDS = 300;

/**
 * An opaque token every introspecting issuer refused (inactive: unknown, expired, revoked; or an active
 * answer that failed the JWT rules) is remembered (by SHA-256 digest, never the token) this long, so the
 * same bad token sent again and again is refused here without a request to the issuer each time. Short:
 * a token issued a moment before its issuer could introspect it works once this has passed.
 */
export const OAUTH_INTROSPECTION_INACTIVE_CACHE_SECONDS = 30;

/**
 * Refused opaque tokens remembered at once (`OAUTH_INTROSPECTION_INACTIVE_CACHE_SECONDS`), oldest first
 * out; a table apart from the active tokens', so made-up tokens never push a real one out of its cache.
 */
export const OAUTH_INTROSPECTION_INACTIVE_CACHE_ENTRIES = 10_000;

/**
 * Introspection requests to the issuers in flight at once (the same token asked twice shares one). Past
 * it a new opaque token gets 503 with Retry-After: a caller sending made-up tokens cannot turn this
 * server into a flood of requests to the issuer.
 */
export const OAUTH_INTROSPECTION_MAX_IN_FLIGHT = 32;
