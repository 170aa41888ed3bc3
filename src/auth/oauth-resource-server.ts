// Assembles the OAuth side of the server from its settings: the verifier over the trusted issuers, the
// metadata URL its 401s name, introspection for opaque tokens where an issuer offers it (and the operator
// gave client credentials), and a first read of each issuer's metadata and keys at startup so a
// misconfigured issuer is in the log before the first caller.

import type { Logger } from '../log/logger.ts';
import { AccessTokenVerifier } from './access-token.ts';
import type { OAuthResourceServer } from './bearer-authority.ts';
import type { ClientCredentials } from './client-credentials.ts';
import { TokenIntrospector } from './introspection.ts';
import { type FetchJson, fetchJson as defaultFetchJson } from './issuer-fetch.ts';
import type { OAuthConfig } from './oauth-config.ts';
import { metadataUrl } from './protected-resource-metadata.ts';

export interface OAuthResourceServerOptions {
  readonly fetchJson?: FetchJson;
  readonly now?: () => number;
  readonly logger?: Logger;
  /** This server's client at the issuers (`--oauth-introspection-client-id` and its secret): opaque tokens are introspected. */
  readonly introspection?: ClientCredentials;
}

export function createOAuthResourceServer(config: OAuthConfig, options: OAuthResourceServerOptions = {}): OAuthResourceServer {
  const fetchJson = options.fetchJson ?? defaultFetchJson;
  const now = options.now ? { now: options.now } : {};
  const verifier = new AccessTokenVerifier(config, { fetchJson, ...now });
  const cacheOf = (issuer: string) => {
    const cache = verifier.issuer(issuer);
    if (cache === undefined) throw new Error(`${issuer} is not a configured issuer`);
    return cache;
  };
  for (const issuer of config.issuers) {
    void cacheOf(issuer).metadata().then(async (metadata) => {
      if (options.introspection !== undefined) {
        options.logger?.log(metadata.introspectionEndpoint === undefined ? 'warning' : 'info', metadata.introspectionEndpoint === undefined ? 'OAuth issuer offers no token introspection: its opaque tokens are refused' : 'OAuth issuer offers token introspection', { issuer });
      }
      if (metadata.jwksUri !== undefined) await cacheOf(issuer).key('', 'ES256');
      options.logger?.log('info', 'OAuth issuer reachable', { issuer });
    }).catch((err: unknown) => options.logger?.log('warning', 'OAuth issuer cannot be read yet; its tokens get 503 until it can', { issuer, error: (err as Error).message }));
  }
  const base = { config, verifier, metadataUrl: metadataUrl(config.resource) };
  if (options.introspection === undefined) return base;
  const introspector = new TokenIntrospector(config, { credentials: options.introspection, metadata: (issuer) => cacheOf(issuer).metadata(), fetchJson, ...now });
  return { ...base, introspect: (token) => introspector.introspect(token) };
}
