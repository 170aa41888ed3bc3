// OAuth 2.0 Protected Resource Metadata (RFC 9728) for this server: the document, the paths it is served
// at (the bare form and the form suffixed with the resource's path, §3.1) and the URL a 401 names.

import type { OAuthConfig } from './oauth-config.ts';
import { scopesSupported } from './scopes.ts';

export const WELL_KNOWN_PREFIX = '/.well-known/oauth-protected-resource';

/** Where the metadata of `resource` is served: `https://h/.well-known/oauth-protected-resource/mcp` for `https://h/mcp`. */
export function metadataUrl(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  return `${url.origin}${WELL_KNOWN_PREFIX}${path}`;
}

/** The request paths answered with the metadata: the bare well-known path and the path-suffixed one. */
export function metadataPaths(resource: string): ReadonlySet<string> {
  return new Set([WELL_KNOWN_PREFIX, new URL(metadataUrl(resource)).pathname]);
}

export function protectedResourceMetadata(config: OAuthConfig): Record<string, unknown> {
  return {
    resource: config.resource,
    authorization_servers: [...config.issuers],
    scopes_supported: scopesSupported(config.scopes),
    bearer_methods_supported: ['header'],
    resource_name: 'super-pi',
  };
}
