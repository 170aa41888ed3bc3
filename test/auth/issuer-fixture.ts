// An issuer in memory for unit tests: metadata and a JWKS served through an injected FetchJson (counting
// the JWKS reads, and able to go away), keys that rotate, and tokens signed with any key and claims; and
// one on loopback HTTP for a server process (`startLoopbackIssuer`).

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import type { FetchJson } from '../../src/auth/issuer-fetch.ts';
import { IssuerUnavailable } from '../../src/auth/issuer-fetch.ts';

export const ISSUER = 'https://issuer.example';
export const RESOURCE = 'https://mcp.example/mcp';

export type SigningKey = { readonly kid: string; readonly privateKey: CryptoKey; readonly publicJwk: JWK };

export async function signingKey(kid: string, alg = 'ES256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

export class MemoryIssuer {
  keys: SigningKey[];
  jwksReads = 0;
  reachable = true;
  /** Every request made to this issuer (metadata, JWKS), answered or not. */
  requests = 0;

  constructor(readonly issuer: string, keys: SigningKey[]) {
    this.keys = keys;
  }

  readonly fetchJson: FetchJson = async (url) => {
    this.requests++;
    if (!this.reachable) throw new IssuerUnavailable(`${url}: connection refused`);
    if (url === `${this.issuer}/.well-known/oauth-authorization-server`) return { issuer: this.issuer, jwks_uri: `${this.issuer}/jwks` };
    if (url === `${this.issuer}/jwks`) {
      this.jwksReads++;
      return { keys: this.keys.map((k) => k.publicJwk) };
    }
    throw new IssuerUnavailable(`${url}: HTTP 404`);
  };
}

export interface Claims {
  readonly iss?: string;
  readonly aud?: string | string[];
  readonly sub?: string;
  readonly exp?: number;
  readonly nbf?: number;
  readonly scope?: string;
  readonly cnf?: Record<string, string>;
  /** Any other claim (an ID token's at_hash, a nonce). */
  readonly [claim: string]: unknown;
}

/** A token signed by `key` with exactly `claims` (seconds since the epoch for exp/nbf). */
export function sign(key: SigningKey, claims: Claims, header: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT({ ...claims }).setProtectedHeader({ alg: String(key.publicJwk.alg), kid: key.kid, typ: 'at+jwt', ...header }).sign(key.privateKey);
}

export function base64url(value: unknown): string {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
}

/** A loopback issuer publishing one ES256 key, whose tokens for `resource` a server process started with `--oauth-issuer` accepts. */
export async function startLoopbackIssuer(resource: string) {
  const key = await signingKey('k1');
  const server = createServer((req, res) => {
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    res.setHeader('content-type', 'application/json');
    if (req.url === '/.well-known/oauth-authorization-server') return void res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks` }));
    if (req.url === '/jwks') return void res.end(JSON.stringify({ keys: [key.publicJwk] }));
    res.statusCode = 404;
    res.end('{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  /** A ten-minute token of `sub` with `scope`; `header`, `claims`: what a test changes of the usual ones. */
  const token = (sub: string, scope: string, header: Record<string, unknown> = {}, claims: Record<string, unknown> = {}) =>
    sign(key, { iss: issuer, aud: resource, sub, scope, exp: Math.floor(Date.now() / 1000) + 600, ...claims }, header);
  return { issuer, token, close: () => new Promise<void>((r) => server.close(() => r())) };
}
