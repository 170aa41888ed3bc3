// The open sessions as the observer and the metrics see them: transport, principal, harness, the
// protocol version the session negotiated (read off its initialize answer as it goes out), age and
// requests in flight. Filled by the application's hooks; it never holds what a caller sent.

import type { Outgoing } from '../mcp/outgoing.ts';
import type { Principal } from '../mcp/state.ts';
import type { PrincipalKind, Transport } from './metrics.ts';

/** What the directory reads of a live session. */
export interface SessionView {
  readonly inFlight: number;
  readonly restarts: number;
}

export interface SessionRow {
  /**
   * The session's handle (`session-K`, the application's own counter): stable for the page to match rows
   * by, and never the registry's id — a Streamable HTTP session's `Mcp-Session-Id`, which is a credential
   * (all an anonymous session has) and no observer is shown. Nothing addresses a session by its handle.
   */
  readonly id: string;
  readonly transport: Transport;
  readonly principalKind: PrincipalKind;
  /** The token principal's name, "anonymous" or "local". */
  readonly principal: string;
  readonly harness: string;
  readonly version: string | null;
  readonly ageMs: number;
  readonly inFlight: number;
  readonly restarts: number;
}

interface Entry {
  readonly transport: Transport;
  readonly principal: Principal;
  readonly harness: string;
  readonly opened: number;
  readonly session: SessionView;
  version: string | null;
}

export function principalName(principal: Principal): string {
  return principal.kind === 'token' ? principal.name : principal.kind;
}

export class ObservedSessions {
  readonly #open = new Map<string, Entry>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  get size(): number {
    return this.#open.size;
  }

  /**
   * Takes the negotiated version from `out` if it is an initialize answer of the open session `id`
   * (`Outgoing.negotiated`, set by the core: no line is read for it): true once the session's version is
   * known (its sender shows it no more replies: server/session-outlet.ts).
   */
  versionFrom(id: string, out: Outgoing): boolean {
    if (out.negotiated === undefined) return false;
    const entry = this.#open.get(id);
    if (entry === undefined) return false;
    entry.version = out.negotiated;
    return true;
  }

  opened(id: string, info: { transport: Transport; principal: Principal; harness: string; session: SessionView }): void {
    // Spelled out: `{ ...info, opened, version }` gave every entry a hidden class of its own (~0.23 KB each).
    this.#open.set(id, { transport: info.transport, principal: info.principal, harness: info.harness, session: info.session, opened: this.#now(), version: null });
  }

  closed(id: string): void {
    this.#open.delete(id);
  }

  principalOf(id: string): Principal | null {
    return this.#open.get(id)?.principal ?? null;
  }

  *kinds(): Iterable<{ transport: Transport; principal: PrincipalKind }> {
    for (const e of this.#open.values()) yield { transport: e.transport, principal: e.principal.kind };
  }

  rows(): SessionRow[] {
    const now = this.#now();
    return [...this.#open].map(([id, e]) => ({
      id, transport: e.transport, principalKind: e.principal.kind, principal: principalName(e.principal), harness: e.harness,
      version: e.version, ageMs: now - e.opened, inFlight: e.session.inFlight, restarts: e.session.restarts,
    }));
  }
}
