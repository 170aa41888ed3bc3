// Is a JWT an access token at all? An issuer signs ID tokens (and logout tokens, security events...) with
// the same keys as its access tokens, so a signature, `iss` and `aud` do not tell them apart. RFC 9068 §4
// marks access tokens with `typ: at+jwt`, but many providers still issue `typ: JWT` (or none): by default
// a token is refused only when it is recognisably something else; `--oauth-require-at-jwt` requires the mark.

/** RFC 9068's media type, in either spelling (RFC 7515 §4.1.9: `application/` may be left out). */
const AT_JWT: ReadonlySet<string> = new Set(['at+jwt', 'application/at+jwt']);

/** What generic JWT access tokens say of themselves (RFC 7519 §5.1), or nothing. */
const GENERIC_JWT: ReadonlySet<string> = new Set(['jwt', 'application/jwt']);

/**
 * Claims only an OpenID Connect ID token carries (OIDC Core §3.1.3.6, §3.3.2.11): the hashes binding it to
 * the access token or code issued beside it. `nonce` is not among them: some providers copy the
 * authorization request's nonce into their access tokens too.
 */
const ID_TOKEN_CLAIMS: readonly string[] = ['at_hash', 'c_hash'];

/**
 * Why this JWT is not taken as an access token, or null. `typ` compares case-insensitively (a media type);
 * `requireAtJwt`: only `at+jwt` is an access token (`--oauth-require-at-jwt`). Reads the decoded header
 * and claims, before any key is looked up.
 */
export function notAnAccessToken(header: { typ?: unknown }, claims: Readonly<Record<string, unknown>>, requireAtJwt: boolean): string | null {
  const typ = header.typ;
  if (typ !== undefined && typeof typ !== 'string') return 'the token\'s typ header is not a string';
  const kind = typ?.toLowerCase();
  if (requireAtJwt) {
    if (kind === undefined || !AT_JWT.has(kind)) return `the token's typ is ${typ === undefined ? 'missing' : JSON.stringify(typ)}; this server requires at+jwt access tokens (RFC 9068, --oauth-require-at-jwt)`;
    return null;
  }
  if (kind !== undefined && !AT_JWT.has(kind) && !GENERIC_JWT.has(kind)) return `the token's typ ${JSON.stringify(typ)} says it is not an access token`;
  const mark = ID_TOKEN_CLAIMS.find((c) => Object.hasOwn(claims, c));
  if (mark !== undefined) return `the token is an ID token (it carries ${mark}), not an access token`;
  return null;
}
