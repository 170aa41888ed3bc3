// An MCP host's side of OAuth for end-to-end tests: the SDK's OAuthClientProvider kept in memory, the
// authorization URL followed through the provider's test-only interaction to the code, and a connect that
// runs the whole authorization when the server answers 401.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { discoverAuthorizationServerMetadata, exchangeAuthorization, registerClient, startAuthorization, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { RunningServer } from './fixtures.ts';

export const REDIRECT = 'http://127.0.0.1:1/callback';

/** A host's OAuth state in memory; the authorization URL it is sent to is followed by `authorize`. */
export class HostOAuth implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | null = null;
  get redirectUrl(): string {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'super-pi e2e', redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation() { return this.info; }
  saveClientInformation(info: OAuthClientInformationMixed) { this.info = info; }
  tokens() { return this.saved; }
  saveTokens(tokens: OAuthTokens) { this.saved = tokens; }
  redirectToAuthorization(url: URL) { this.authorizationUrl = url; }
  saveCodeVerifier(v: string) { this.verifier = v; }
  codeVerifier() { return this.verifier; }
}

/** Follows the authorization URL through the provider's interaction (cookies kept) to the redirect: the code. */
export async function authorize(url: URL): Promise<string> {
  const cookies = new Map<string, string>();
  let next = url.href;
  for (let hop = 0; hop < 10; hop++) {
    if (next.startsWith(REDIRECT)) {
      const code = new URL(next).searchParams.get('code');
      if (code === null) throw new Error(`no code in ${next}`);
      return code;
    }
    const res = await fetch(next, { redirect: 'manual', headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = (pair as string).indexOf('=');
      cookies.set((pair as string).slice(0, eq), (pair as string).slice(eq + 1));
    }
    const location = res.headers.get('location');
    if (location === null) throw new Error(`authorization stopped at ${res.status}: ${(await res.text()).slice(0, 300)}`);
    next = new URL(location, next).href;
  }
  throw new Error(`too many redirects, the last to ${next}`);
}

/** Connects the SDK client, running the whole authorization when the server answers 401. */
export async function connect(server: RunningServer, host: HostOAuth): Promise<Client> {
  for (let attempt = 0; attempt < 2; attempt++) {
    const client = new Client({ name: 'oauth-e2e', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(server.url), { authProvider: host });
    try {
      await client.connect(transport);
      return client;
    } catch (err) {
      if (host.authorizationUrl === null) throw err;
      const code = await authorize(host.authorizationUrl);
      host.authorizationUrl = null;
      await transport.finishAuth(code);
    }
  }
  throw new Error('not authorized after one authorization');
}

/**
 * Tokens for `resource` from `issuer` with `scope` asked for by name (the SDK's own steps): how an
 * operator gets a scope the resource metadata does not offer (the observe scope).
 */
export async function tokensWithScope(issuer: string, resource: string, scope: string): Promise<OAuthTokens> {
  const metadata = await discoverAuthorizationServerMetadata(issuer);
  const host = new HostOAuth();
  const clientInformation = await registerClient(issuer, { ...(metadata ? { metadata } : {}), clientMetadata: host.clientMetadata });
  const started = await startAuthorization(issuer, { ...(metadata ? { metadata } : {}), clientInformation, redirectUrl: REDIRECT, scope, resource: new URL(resource) });
  const code = await authorize(started.authorizationUrl);
  return exchangeAuthorization(issuer, { ...(metadata ? { metadata } : {}), clientInformation, authorizationCode: code, codeVerifier: started.codeVerifier, redirectUri: REDIRECT, resource: new URL(resource) });
}
