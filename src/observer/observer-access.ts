// Who may read /metrics and the observer's data: on a loopback server with no tokens configured (and
// no --require-auth), anyone who passes the Host/Origin checks — that is the operator's own machine;
// otherwise static-token principals named in --observers and, with OAuth, access tokens carrying the
// observe scope (`mcp:observe`). Anonymous callers never.

import { type BearerAuthority, isAuthRefusal } from '../auth/bearer-authority.ts';
import type { Principal } from '../mcp/state.ts';

export interface ObserverAccessPolicy {
  /** The server is bound to a loopback address. */
  readonly loopback: boolean;
  readonly tokensConfigured: boolean;
  readonly requireAuth: boolean;
  /** Token principal names from --observers. */
  readonly observers: ReadonlySet<string>;
}

/** `principal`: who was admitted (the anonymous caller on a loopback server without tokens). */
export type AccessVerdict = { allowed: true; principal: Principal } | { allowed: false; status: 401 | 403; message: string };

export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  return h === 'localhost' || h === '::1' || h === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** `principal` as the token table resolved the request's Authorization header (null: an unknown token). */
export function decideObserverAccess(policy: ObserverAccessPolicy, principal: Principal | null): AccessVerdict {
  if (principal === null) return { allowed: false, status: 401, message: 'Unauthorized: unknown bearer token' };
  if (policy.loopback && !policy.tokensConfigured && !policy.requireAuth) return { allowed: true, principal };
  if (principal.kind !== 'token') return { allowed: false, status: 401, message: 'Unauthorized: the observer and /metrics need the bearer token of a principal named in --observers' };
  if (!policy.observers.has(principal.name)) return { allowed: false, status: 403, message: 'Forbidden: this principal is not named in --observers' };
  return { allowed: true, principal };
}

export type ObserverAdmission = { allowed: true; principal: Principal } | { allowed: false; status: 401 | 403 | 431 | 503; message: string; headers: Readonly<Record<string, string>> };

/**
 * The decision for one request's `Authorization` header. With OAuth configured the header goes through
 * the same admission as /mcp (401 naming the resource metadata, 503 while an issuer cannot be read); an
 * OAuth token then needs the observe scope (403 insufficient_scope naming it, so a host can step up), and
 * a static token still needs its principal in --observers.
 */
export async function admitObserver(auth: BearerAuthority, policy: ObserverAccessPolicy, authorization: string | undefined, resolve: (authorization: string | undefined) => Principal | null): Promise<ObserverAdmission> {
  if (auth.oauth === null) return withChallenge(decideObserverAccess(policy, resolve(authorization)));
  const admitted = await auth.admit(authorization);
  if (isAuthRefusal(admitted)) return { allowed: false, ...admitted };
  if (admitted.source !== 'oauth') return withChallenge(decideObserverAccess(policy, admitted.principal));
  if (admitted.capabilities.has('observe')) return { allowed: true, principal: admitted.principal };
  return { allowed: false, ...auth.insufficientScope('observe') };
}

function withChallenge(verdict: AccessVerdict): ObserverAdmission {
  if (verdict.allowed) return verdict;
  return { ...verdict, headers: verdict.status === 401 ? { 'WWW-Authenticate': 'Bearer realm="super-pi"' } : {} };
}

export function parseObservers(list: string | undefined): string[] {
  return (list ?? '').split(',').map((n) => n.trim()).filter((n) => n !== '');
}
