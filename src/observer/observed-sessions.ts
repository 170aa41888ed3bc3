// The open sessions as the observer and the metrics see them: transport, principal, harness, the
// protocol version the session negotiated (read off its initialize answer as it goes out), age and
// requests in flight. Filled by the application's hooks; it never holds what a caller sent.

import type { Outgoing } from '../mcp/outgoing.ts';
import { supportedVersions } from '../mcp/version.ts';
import type { Principal } from '../mcp/state.ts';
import type { PrincipalKind, Transport } from './metrics.ts';

/** What the directory reads of a live session. */
export interface SessionView {
  readonly inFlight: number;
  readonly restarts: number;
}

export interface SessionRow {
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

/** How the core serialises an answer (jsonrpc.ts `resultLine`): these keys, in this order. */
const LINE_START = '{"jsonrpc":"2.0","id":';
const RESULT_KEY = ',"result":';
const VERSION_FIRST = '{"protocolVersion":"';
const VERSION_LENGTH = 10;

/**
 * The version an initialize answer carries, else undefined. Only the start of the result is looked at,
 * and found where the core puts it (after the id, serialised as JSON.stringify serialises it), not
 * searched for: a session that never initializes (2026-07-28 clients) is watched for its whole life, and
 * scanning each of its answers cost ~0.8 µs a reply, searching for the result key ~1 µs. Nothing a tool
 * returned can be taken for it: it comes after the version's place.
 */
function initializeVersion(out: Outgoing): string | undefined {
  if (out.inReplyTo === undefined || out.isError === true) return undefined;
  const line = out.line;
  if (!line.startsWith(LINE_START)) return undefined;
  const at = LINE_START.length + JSON.stringify(out.inReplyTo).length;
  if (!line.startsWith(RESULT_KEY, at) || !line.startsWith(VERSION_FIRST, at + RESULT_KEY.length)) return undefined;
  const from = at + RESULT_KEY.length + VERSION_FIRST.length;
  const version = line.slice(from, from + VERSION_LENGTH);
  if (!/^[0-9-]{10}$/.test(version) || line[from + VERSION_LENGTH] !== '"') return undefined;
  // A version super-pi speaks is kept as its one constant, not as a slice per session (issue 27).
  return supportedVersions.find((v) => v === version) ?? version;
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
   * Reads the negotiated version off `out` if it is an initialize answer of the open session `id`: true
   * once the session's version is known (its sender shows it no more replies: server/session-outlet.ts).
   */
  versionFrom(id: string, out: Outgoing): boolean {
    const version = initializeVersion(out);
    const entry = version === undefined ? undefined : this.#open.get(id);
    if (version === undefined || entry === undefined) return false;
    entry.version = version;
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
