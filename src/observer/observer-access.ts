// Who may read /metrics and the observer's data: on a loopback server with no tokens configured (and
// no --require-auth), anyone who passes the Host/Origin checks — that is the operator's own machine;
// otherwise only token principals named in --observers. Anonymous callers never.

import type { Principal } from '../mcp/state.ts';

export interface ObserverAccessPolicy {
  /** The server is bound to a loopback address. */
  readonly loopback: boolean;
  readonly tokensConfigured: boolean;
  readonly requireAuth: boolean;
  /** Token principal names from --observers. */
  readonly observers: ReadonlySet<string>;
}

export type AccessVerdict = { allowed: true } | { allowed: false; status: 401 | 403; message: string };

export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  return h === 'localhost' || h === '::1' || h === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** `principal` as the token table resolved the request's Authorization header (null: an unknown token). */
export function decideObserverAccess(policy: ObserverAccessPolicy, principal: Principal | null): AccessVerdict {
  if (principal === null) return { allowed: false, status: 401, message: 'Unauthorized: unknown bearer token' };
  if (policy.loopback && !policy.tokensConfigured && !policy.requireAuth) return { allowed: true };
  if (principal.kind !== 'token') return { allowed: false, status: 401, message: 'Unauthorized: the observer and /metrics need the bearer token of a principal named in --observers' };
  if (!policy.observers.has(principal.name)) return { allowed: false, status: 403, message: 'Forbidden: this principal is not named in --observers' };
  return { allowed: true };
}

export function parseObservers(list: string | undefined): string[] {
  return (list ?? '').split(',').map((n) => n.trim()).filter((n) => n !== '');
}
