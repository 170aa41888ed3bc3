// A real authorization server for end-to-end tests: oidc-provider on 127.0.0.1 with dynamic client
// registration, PKCE, JWT access tokens for one resource (RFC 8707) — or opaque ones, checked through its
// token introspection endpoint (RFC 7662) by a registered resource-server client — refresh tokens, and a
// test-only interaction that logs in `accountId` and approves the consent without a page. Its keys can rotate.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

export const ALL_SCOPES = ['mcp:read', 'mcp:write', 'mcp:exec', 'mcp:observe'];

/** The resource server's own client at the issuer, allowed to introspect (opaque tokens). */
export const INTROSPECTION_CLIENT = { id: 'super-pi-resource-server', secret: 'resource-server-secret-0123456789' };

export interface TestIssuerOptions {
  /** Access tokens are opaque (oidc-provider's own format) rather than JWTs; introspection is on either way. */
  readonly opaque?: boolean;
}

export interface TestIssuer {
  readonly issuer: string;
  /** Sets the resource (this server's URL) tokens are minted for, its scopes and their lifetime. */
  resource: string;
  accessTokenTtlSeconds: number;
  /** The scopes tokens for the resource may carry (default: all); asked-for others are left out. */
  grantedScopes: readonly string[];
  /** Signs new tokens with a fresh key (new kid); the old key stays published for `keepOld`. */
  rotate(keepOld: boolean): Promise<void>;
  close(): Promise<void>;
}

async function signingJwk(kid: string) {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
}

export async function startTestIssuer(accountId = 'alice', options: TestIssuerOptions = {}): Promise<TestIssuer> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const state = { resource: '', accessTokenTtlSeconds: 300, grantedScopes: ALL_SCOPES as readonly string[] };
  let keys = [await signingJwk('key-1')];
  let generation = 1;
  const make = () => new Provider(issuer, {
    jwks: { keys },
    clientBasedCORS: () => true,
    clients: [{ client_id: INTROSPECTION_CLIENT.id, client_secret: INTROSPECTION_CLIENT.secret, grant_types: [], response_types: [], redirect_uris: [] }],
    scopes: ['openid', 'offline_access', ...ALL_SCOPES],
    pkce: { required: () => true },
    features: {
      registration: { enabled: true },
      // Only the resource server's client may ask what a token is.
      introspection: { enabled: true, allowedPolicy: (_ctx: unknown, client: { clientId: string }) => client.clientId === INTROSPECTION_CLIENT.id },
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => state.resource,
        useGrantedResource: () => true,
        // The scopes this resource server may be granted: a token carries those asked for among them.
        getResourceServerInfo: () => ({
          scope: state.grantedScopes.join(' '), accessTokenTTL: state.accessTokenTtlSeconds,
          ...(options.opaque ? { accessTokenFormat: 'opaque' } : { accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } }),
        }),
      },
    },
    issueRefreshToken: () => true,
    ttl: { AccessToken: () => state.accessTokenTtlSeconds },
    findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub }) }),
  });
  let provider = make();
  server.on('request', (req, res) => {
    const m = /^\/interaction\/([^/?]+)/.exec(req.url ?? '');
    if (m === null) return void provider.callback()(req, res);
    // The test-only consent step: log the account in and grant what was asked, then resume the flow.
    void (async () => {
      const details = await provider.interactionDetails(req, res);
      const grant = new provider.Grant({ accountId, clientId: String(details.params.client_id) });
      const prompt = details.prompt as { details: { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> } };
      if (prompt.details.missingOIDCScope) grant.addOIDCScope(prompt.details.missingOIDCScope.join(' '));
      for (const [resource, scopes] of Object.entries(prompt.details.missingResourceScopes ?? {})) grant.addResourceScope(resource, scopes.join(' '));
      const grantId = await grant.save();
      await provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: true });
    })().catch((err: unknown) => {
      res.statusCode = 500;
      res.end(String((err as Error).stack));
    });
  });
  return {
    issuer,
    get resource() { return state.resource; },
    set resource(r: string) { state.resource = r; },
    get grantedScopes() { return state.grantedScopes; },
    set grantedScopes(g: readonly string[]) { state.grantedScopes = g; },
    get accessTokenTtlSeconds() { return state.accessTokenTtlSeconds; },
    set accessTokenTtlSeconds(s: number) { state.accessTokenTtlSeconds = s; },
    async rotate(keepOld: boolean) {
      generation++;
      const next = await signingJwk(`key-${generation}`);
      // oidc-provider signs with the first key of a type; the rest are only published.
      keys = keepOld ? [next, ...keys] : [next];
      provider = make();
    },
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
