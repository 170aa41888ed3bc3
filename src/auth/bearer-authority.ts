// Who a request's `Authorization` header names, for every transport and every node: a static token
// (tokens.ts, every capability), an OAuth access token (access-token.ts, its scopes' capabilities), no
// header (anonymous, unless a token is required), or a refusal with the status and challenge a host can
// act on (RFC 6750 §3, RFC 9728 §5.1). A refused token is logged by its reason, never by its text.

import type { Logger } from '../log/logger.ts';
import { OAUTH_MAX_TOKEN_BYTES } from '../limits.ts';
import type { Principal } from '../mcp/state.ts';
import { AccessTokenVerifier } from './access-token.ts';
import type { OAuthConfig } from './oauth-config.ts';
import { ALL_CAPABILITIES, type Capability, DOOR_CAPABILITY } from './scopes.ts';
import type { TokenTable } from './tokens.ts';

export interface Admitted {
  readonly principal: Principal;
  readonly capabilities: ReadonlySet<Capability>;
  /** How the caller was identified: no token, a static token (`--tokens`), or an OAuth access token. */
  readonly source: 'anonymous' | 'static' | 'oauth';
  /** OAuth: `exp` in seconds since the epoch (a WebSocket is closed then); static tokens and anonymous never expire. */
  readonly expiresAt?: number;
}

export interface AuthRefusal {
  readonly status: 401 | 403 | 431 | 503;
  readonly message: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** The OAuth side: its settings, the verifier, and where this resource's metadata is served. */
export interface OAuthResourceServer {
  readonly config: OAuthConfig;
  readonly verifier: AccessTokenVerifier;
  /** The URL of this resource's Protected Resource Metadata (RFC 9728), named in every 401. */
  readonly metadataUrl: string;
  /** Opaque (non-JWT) tokens, through the issuer's introspection endpoint (introspection.ts). */
  readonly introspect?: (token: string) => ReturnType<AccessTokenVerifier['verify']>;
}

export interface BearerAuthorityOptions {
  readonly tokens: TokenTable;
  readonly requireAuth: boolean;
  readonly oauth?: OAuthResourceServer | null;
  readonly logger?: Logger;
}

const ANONYMOUS: Admitted = { principal: { kind: 'anonymous' }, source: 'anonymous', capabilities: new Set(['read', 'write', 'exec', 'observe']) };

export function isAuthRefusal(x: Admitted | AuthRefusal): x is AuthRefusal {
  return 'status' in x;
}

export class BearerAuthority {
  readonly #o: BearerAuthorityOptions;
  #oauth: OAuthResourceServer | null;
  /** Static principals, made once: their capability set is shared. */
  readonly #static = new Map<string, Admitted>();

  constructor(options: BearerAuthorityOptions) {
    this.#o = options;
    this.#oauth = options.oauth ?? null;
  }

  /**
   * Turns OAuth on once the resource URL is known (it may name the port the server was bound to): called
   * after listening and before the first request is read; a second call is a programming error.
   */
  useOAuth(oauth: OAuthResourceServer): void {
    if (this.#oauth !== null) throw new Error('OAuth is already configured');
    this.#oauth = oauth;
  }

  /** Is a bearer token needed (static --require-auth, or OAuth: a host learns to authenticate from the 401)? */
  get required(): boolean {
    return this.#o.requireAuth || (this.#oauth) !== null;
  }

  get oauth(): OAuthResourceServer | null {
    return this.#oauth;
  }

  /** What /health says about authentication: which kinds are configured (never a token or principal). */
  describe(): { staticTokens: boolean; oauth: { issuers: readonly string[]; resource: string } | null } {
    const oauth = this.#oauth;
    return { staticTokens: this.#o.tokens.size > 0, oauth: oauth === null ? null : { issuers: oauth.config.issuers, resource: oauth.config.resource } };
  }

  async admit(authorization: string | undefined): Promise<Admitted | AuthRefusal> {
    if (authorization === undefined || authorization === '') {
      if (this.required) return this.#unauthorized('a bearer token is required', null);
      return ANONYMOUS;
    }
    const max = this.#oauth?.config.maxTokenBytes ?? OAUTH_MAX_TOKEN_BYTES;
    if (authorization.length > max + 'Bearer '.length) {
      this.#o.logger?.log('warning', 'bearer token refused', { status: 431, reason: `an Authorization header of ${authorization.length} characters` });
      return { status: 431, message: `Request Header Fields Too Large: a bearer token is at most ${max} bytes`, headers: {} };
    }
    const resolved = this.#o.tokens.resolve(authorization);
    if (resolved !== null && resolved.kind === 'token') return this.#staticPrincipal(resolved.name, resolved);
    const oauth = this.#oauth;
    const m = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i.exec(authorization);
    if (oauth === null || m === null) return this.#unauthorized(m === null ? 'the Authorization header is not "Bearer <token>"' : 'unknown bearer token', 'invalid_token');
    const token = m[1] as string;
    // A JWT naming its issuer is verified here with that issuer's keys; anything else is introspected, where configured.
    const verdict = oauth.introspect === undefined || AccessTokenVerifier.namesIssuer(token) ? await oauth.verifier.verify(token) : await oauth.introspect(token);
    if (verdict.ok) return { principal: verdict.principal, capabilities: verdict.capabilities, source: 'oauth', expiresAt: verdict.expiresAt };
    if (verdict.status === 503) {
      this.#o.logger?.log('warning', 'bearer token not checked: issuer unavailable', { status: 503, reason: verdict.reason });
      return { status: 503, message: 'Service Unavailable: the token issuer cannot be reached to check the token; retry', headers: { 'Retry-After': String(verdict.retryAfterSeconds ?? 1) } };
    }
    return this.#unauthorized(verdict.reason, 'invalid_token');
  }

  /**
   * The admission of every MCP path (POST, GET, DELETE of `/mcp`, a WebSocket upgrade): `admit`, and then a
   * token lacking the door's scope (`mcp:read`) is the 403 insufficient_scope naming it — before any
   * session slot, stream or socket is taken, so a token that could do nothing there holds nothing there.
   */
  async admitMcp(authorization: string | undefined): Promise<Admitted | AuthRefusal> {
    const admitted = await this.admit(authorization);
    if (isAuthRefusal(admitted) || admitted.capabilities.has(DOOR_CAPABILITY)) return admitted;
    return this.insufficientScope(DOOR_CAPABILITY);
  }

  /** The 403 of a call that needs a capability the token's scopes do not grant, naming the scope to step up to. */
  insufficientScope(needed: Capability): AuthRefusal {
    const oauth = this.#oauth;
    const scope = oauth?.config.scopes[needed] ?? needed;
    const metadata = oauth === null ? '' : `, resource_metadata="${oauth.metadataUrl}"`;
    return {
      status: 403,
      message: `Forbidden: this call needs the scope "${scope}", which the access token does not carry`,
      headers: { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scope}"${metadata}, error_description="this call needs ${scope}"` },
    };
  }

  #staticPrincipal(name: string, principal: Principal): Admitted {
    let admitted = this.#static.get(name);
    if (admitted === undefined) {
      admitted = { principal, capabilities: ALL_CAPABILITIES, source: 'static' };
      this.#static.set(name, admitted);
    }
    return admitted;
  }

  #unauthorized(reason: string, error: 'invalid_token' | null): AuthRefusal {
    if (error !== null) this.#o.logger?.log('info', 'bearer token refused', { status: 401, reason });
    const oauth = this.#oauth;
    const params = [
      oauth === null ? 'realm="super-pi"' : `resource_metadata="${oauth.metadataUrl}"`,
      ...(error === null ? [] : [`error="${error}"`, `error_description="${challengeText(reason)}"`]),
    ];
    return { status: 401, message: `Unauthorized: ${reason}`, headers: { 'WWW-Authenticate': `Bearer ${params.join(', ')}` } };
  }
}

/**
 * A reason as RFC 6750 §3 lets `error_description` hold it: printable ASCII without `"` or `\`, each other
 * character a `?`. A reason may quote the token's own header (its `alg`, its `typ`): a character past
 * Latin-1 there made node:http refuse to write the 401 at all (a 500, an error in the log).
 */
function challengeText(reason: string): string {
  return reason.replace(/["\\]/g, '').replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, '?');
}
