// Who may open another session (HTTP or WebSocket): one count for the whole server, one per token
// principal, and one for all anonymous callers together — so that no caller, and above all no
// anonymous one, can take every session and lock token holders out.

import type { Principal } from '../mcp/state.ts';


export interface QuotaLimits {
  readonly maxSessions: number;
  readonly maxSessionsPerPrincipal: number;
  readonly maxAnonymousSessions: number;
  /** Are there token holders to keep room for? */
  readonly tokensConfigured: boolean;
}

/** Why a session was refused: the HTTP status and a message that names the limit and its flag. */
export interface Refusal {
  readonly status: 429 | 503;
  readonly message: string;
  /** Response headers that go with it (a `Retry-After`). */
  readonly headers?: Readonly<Record<string, string>>;
}

export class SessionQuota {
  readonly #limits: QuotaLimits;
  readonly #anonymousCap: number;
  #total = 0;
  #anonymous = 0;
  /** Open sessions by token principal name; a principal without sessions has no entry. */
  readonly #byPrincipal = new Map<string, number>();

  constructor(limits: QuotaLimits) {
    this.#limits = limits;
    this.#anonymousCap = limits.tokensConfigured
      ? Math.min(limits.maxAnonymousSessions, Math.floor(limits.maxSessions / 2))
      : limits.maxAnonymousSessions;
  }

  get total(): number {
    return this.#total;
  }

  /** The most sessions anonymous callers may hold together (after keeping room for token holders). */
  get anonymousCap(): number {
    return this.#anonymousCap;
  }

  /** Takes a session slot for `principal`, or says why not. Every slot taken is given back with `release`. */
  acquire(principal: Principal): Refusal | null {
    const { maxSessions, maxSessionsPerPrincipal } = this.#limits;
    if (this.#total >= maxSessions) {
      return { status: 503, message: `Service Unavailable: ${maxSessions} sessions are open, the limit (--max-sessions)` };
    }
    if (principal.kind === 'anonymous') {
      if (this.#anonymous >= this.#anonymousCap) {
        return { status: 429, message: `Too Many Requests: anonymous callers hold ${this.#anonymous} sessions, their limit (--max-anonymous-sessions${this.#limits.tokensConfigured ? ', at most half of --max-sessions' : ''}); send a bearer token or retry later` };
      }
      this.#anonymous++;
    } else if (principal.kind === 'token') {
      const held = this.#byPrincipal.get(principal.name) ?? 0;
      if (held >= maxSessionsPerPrincipal) {
        return { status: 429, message: `Too Many Requests: this principal holds ${held} sessions, the limit (--max-sessions-per-principal); end one (DELETE) or retry later` };
      }
      this.#byPrincipal.set(principal.name, held + 1);
    }
    this.#total++;
    return null;
  }

  release(principal: Principal): void {
    this.#total--;
    if (principal.kind === 'anonymous') {
      this.#anonymous--;
    } else if (principal.kind === 'token') {
      const held = (this.#byPrincipal.get(principal.name) ?? 1) - 1;
      if (held <= 0) this.#byPrincipal.delete(principal.name);
      else this.#byPrincipal.set(principal.name, held);
    }
  }
}
