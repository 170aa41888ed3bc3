// The sessions that serve 2026-07-28 (stateless) POSTs on this node. A modern request carries its whole
// context, so any session of its principal can serve it: the transport keeps the sessions it opened for
// modern requests and hands each new request one that is idle, opening another only when all are busy.
// Opening a session per request (the first design) cost a supervisor, an actor and a registry entry per
// call — and on a cluster a store write — which made a modern call slower than a legacy one.
//
// Sharing is sound only where nothing a request leaves in its session can reach another client: a
// session is shared by one principal's requests only, and an anonymous caller (every anonymous client
// is the same principal) shares one only when anonymous harness tasks are off — otherwise its
// conversations, keyed by the session, would be readable by any other anonymous client (the caller
// decides, `shareable`). A shared session holds no client's context between requests (modern.ts builds
// each request's view from its `_meta`), only the bookkeeping of work in flight.
//
// A session idle for STATELESS_SESSION_IDLE_MS is closed (one sweep timer for all, unref'd); so are the
// idle ones of a principal whose session quota is full, before a new session of theirs is refused.

import { principalKey } from '../mcp/round-trip.ts';
import type { Principal } from '../mcp/state.ts';
import { STATELESS_SESSION_IDLE_MS } from '../limits.ts';
import type { Clock } from '../time/clock.ts';

/** What the pool needs of a session: whether it is busy, whether a request id is in flight on it. */
export interface Poolable {
  readonly id: string;
  readonly busy: boolean;
  inFlight(key: string): boolean;
}

interface Kept<S> {
  readonly session: S;
  /** When it was last handed out or given back, on the pool's clock. */
  lastUsed: number;
}

export class StatelessPool<S extends Poolable> {
  readonly #byPrincipal = new Map<string, Kept<S>[]>();
  readonly #clock: Clock;
  readonly #idleMs: number;
  readonly #close: (session: S) => void;
  readonly #alive: (session: S, principal: Principal) => boolean;
  #sweep: unknown = null;

  /**
   * `close`: ends a session (the registry's close); the pool forgets it once `remove` is called for it.
   * `alive`: is it still open? A session the registry has let go (the reaper, a give-up) is ending before
   * `remove` comes, and is never handed out meanwhile.
   */
  constructor(clock: Clock, close: (session: S) => void, alive: (session: S, principal: Principal) => boolean, idleMs = STATELESS_SESSION_IDLE_MS) {
    this.#clock = clock;
    this.#close = close;
    this.#alive = alive;
    this.#idleMs = idleMs;
  }

  /** Sessions kept (busy or idle), over all principals. */
  get size(): number {
    let n = 0;
    for (const list of this.#byPrincipal.values()) n += list.length;
    return n;
  }

  /**
   * An idle session of `principal` on which `idKey` is not in flight, else null (the caller opens one and
   * `add`s it). A busy session is never handed out: two requests on one session would share its actor.
   */
  take(principal: Principal, idKey: string): S | null {
    const list = this.#byPrincipal.get(principalKey(principal));
    if (list === undefined) return null;
    // Newest first: the most recently used session is the warmest, and the oldest ones age out.
    for (let i = list.length - 1; i >= 0; i--) {
      const kept = list[i] as Kept<S>;
      if (kept.session.busy || kept.session.inFlight(idKey) || !this.#alive(kept.session, principal)) continue;
      kept.lastUsed = this.#clock.now();
      // Moved to the end: the next `take` starts from it.
      if (i !== list.length - 1) {
        list.splice(i, 1);
        list.push(kept);
      }
      return kept.session;
    }
    return null;
  }

  /** A session just opened for `principal`'s modern request, kept for the next ones. */
  add(principal: Principal, session: S): void {
    const key = principalKey(principal);
    let list = this.#byPrincipal.get(key);
    if (list === undefined) {
      list = [];
      this.#byPrincipal.set(key, list);
    }
    list.push({ session, lastUsed: this.#clock.now() });
    this.#arm();
  }

  /** The session ended (however): it is no longer handed out. */
  remove(principal: Principal, session: S): void {
    const key = principalKey(principal);
    const list = this.#byPrincipal.get(key);
    if (list === undefined) return;
    const i = list.findIndex((k) => k.session === session);
    if (i !== -1) list.splice(i, 1);
    if (list.length === 0) this.#byPrincipal.delete(key);
  }

  /** Closes every idle session of `principal` (its quota is full): how many were closed. */
  shed(principal: Principal): number {
    const list = this.#byPrincipal.get(principalKey(principal)) ?? [];
    const idle = list.filter((k) => !k.session.busy);
    for (const k of idle) this.#close(k.session);
    return idle.length;
  }

  /** Stops the sweep (the transport is closing; its sessions are closed by the registry). */
  stop(): void {
    if (this.#sweep !== null) this.#clock.clearTimeout(this.#sweep);
    this.#sweep = null;
  }

  #arm(): void {
    if (this.#sweep !== null) return;
    this.#sweep = this.#clock.setTimeout(() => {
      this.#sweep = null;
      this.#closeIdle();
      if (this.size > 0) this.#arm();
    }, this.#idleMs, { unref: true });
  }

  #closeIdle(): void {
    const before = this.#clock.now() - this.#idleMs;
    for (const list of this.#byPrincipal.values()) {
      for (const k of [...list]) if (!k.session.busy && k.lastUsed <= before) this.#close(k.session);
    }
  }
}
