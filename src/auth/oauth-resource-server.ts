// Assembles the OAuth side of the server from its settings: the verifier over the trusted issuers, the
// metadata URL its 401s name, introspection for opaque tokens where an issuer offers it, and a first read
// of each issuer's keys at startup so a misconfigured issuer is in the log before the first caller.

import type { Logger } from '../log/logger.ts';
import { AccessTokenVerifier } from './access-token.ts';
import type { OAuthResourceServer } from './bearer-authority.ts';
import { type FetchJson, fetchJson as defaultFetchJson } from './issuer-fetch.ts';
import type { OAuthConfig } from './oauth-config.ts';
import { metadataUrl } from './protected-resource-metadata.ts';

export interface OAuthResourceServerOptions {
  readonly fetchJson?: FetchJson;
  readonly now?: () => number;
  readonly logger?: Logger;
}

export function createOAuthResourceServer(config: OAuthConfig, options: OAuthResourceServerOptions = {}): OAuthResourceServer {
  const fetchJson = options.fetchJson ?? defaultFetchJson;
  const verifier = new AccessTokenVerifier(config, { fetchJson, ...(options.now ? { now: options.now } : {}) });
  for (const issuer of config.issuers) {
    void verifier.issuer(issuer)?.key('', 'ES256').then(
      () => options.logger?.log('info', 'OAuth issuer reachable', { issuer }),
      (err: unknown) => options.logger?.log('warning', 'OAuth issuer cannot be read yet; its tokens get 503 until it can', { issuer, error: (err as Error).message }),
    );
  }
  return { config, verifier, metadataUrl: metadataUrl(config.resource) };
}
