// The keys a principal is known by in the tool pool's shares and the conversation store, and back.

import { randomUUID } from 'node:crypto';
import type { Principal } from '../mcp/state.ts';

/** Whose share of the tool pool a session's calls use: anonymous callers share one, so more sessions buy no more threads. */
export function poolPrincipal(principal: Principal): string {
  return principal.kind === 'anonymous' ? 'anonymous' : principalKey(principal, '');
}

/** The session a taken-over task is shown under: the session that started it is on another node. */
export const TAKEN_OVER = 'taken-over';

/** The principal of an owner key (`principalKey`), for a task taken over from another node. */
export function principalOfKey(key: string): Principal {
  if (key === 'local') return { kind: 'local' };
  if (key.startsWith('token:')) return { kind: 'token', name: key.slice('token:'.length) };
  return { kind: 'anonymous' };
}

/**
 * Who owns a conversation in the store. Anonymous callers are one principal per session: two anonymous
 * clients must not see each other's conversations. The session id alone repeats after a restart
 * (session-1 again), so a random part keeps a new anonymous session from inheriting an old one's.
 */
export function principalKey(principal: Principal, sessionId: string): string {
  switch (principal.kind) {
    case 'local': return 'local';
    case 'token': return `token:${principal.name}`;
    // join, not a template: it makes one flat string. randomUUID's own is a chain of some fifteen
    // concatenations, which this key, kept for the session's life, would otherwise hold (~0.5 KB each).
    case 'anonymous': return ['anonymous', sessionId, randomUUID()].join(':');
  }
}

/**
 * May one session serve the 2026-07-28 requests of several of `principal`'s clients (SessionHost
 * `shareable`)? Every anonymous caller is one principal and its conversations are keyed by the session
 * (`principalKey`), so a session shared by anonymous clients would let one read another's: it is shared
 * only while anonymous callers may not start harness tasks, when no conversation is ever theirs.
 */
export function sharesSessions(principal: Principal, allowAnonymousTasks: boolean): boolean {
  return principal.kind !== 'anonymous' || !allowAnonymousTasks;
}
