// A session's answers before its first actor is up (a cold start): the requests of EARLY_METHODS are
// answered on the main thread by the same pure core, and the actor's own replies to them are dropped.

import { handleParsedMessage } from '../mcp/handle.ts';
import type { ReadFrame } from '../mcp/frame.ts';
import { idKey } from '../mcp/jsonrpc.ts';
import type { Outgoing } from '../mcp/outgoing.ts';
import type { ConnectionState } from '../mcp/state.ts';
import type { TrackedRequest } from './crash-recovery.ts';

/**
 * Requests a session answers itself while its first actor is still booting (a cold start): their steps
 * are pure and effect-free, and the actor is sent the same lines, so it reaches the same state and its
 * own replies to them are dropped. Anything else ends this and waits for the actor.
 */
const EARLY_METHODS: ReadonlySet<string> = new Set(['initialize', 'notifications/initialized', 'ping']);

export class EarlyAnswers {
  /** While the first actor boots: the core's state as the actor will have it after the lines sent so far. */
  #early: ConnectionState | null;
  /** Requests answered here before the actor, by id key (how many of each): its replies to them are dropped. */
  #answeredEarly: Map<string, number> | null = null;

  /** The first actor boots: from `state`, answer what it is not up to answer yet. Made then, dropped once spent. */
  constructor(state: ConnectionState) {
    this.#early = state;
  }

  /** The actor is up: it answers everything. True when nothing is left here (no reply of the actor's to drop). */
  end(): boolean {
    this.#early = null;
    return this.spent;
  }

  /** Nothing left to answer or to drop: the session lets go of this. */
  get spent(): boolean {
    return this.#early === null && this.#answeredEarly === null;
  }

  get active(): boolean {
    return this.#early !== null;
  }

  /**
   * A request the first actor is not up to answer yet, answered here if it is one of EARLY_METHODS. The
   * line still goes to the actor (same lines, same pure core: same state); the actor's reply is dropped.
   */
  answer(read: ReadFrame | null, inFlight: Map<string, TrackedRequest>, sink: { send(out: Outgoing): void }): void {
    const only = read !== null && !read.batch ? read.messages[0] : undefined;
    const method = only?.kind === 'request' || only?.kind === 'notification' ? only.method : undefined;
    if (read === null || method === undefined || !EARLY_METHODS.has(method)) {
      this.#early = null;
      return;
    }
    const step = handleParsedMessage(read.values[0], this.#early as ConnectionState);
    if (step.effects.some((e) => e.kind !== 'log')) {
      this.#early = null;
      return;
    }
    this.#early = step.state;
    for (const out of step.replies) {
      // Notifications (and the log effects) are left to the actor, which sends them once.
      if (out.inReplyTo === undefined) continue;
      const key = idKey(out.inReplyTo);
      const early = (this.#answeredEarly ??= new Map());
      early.set(key, (early.get(key) ?? 0) + 1);
      inFlight.delete(key);
      sink.send(out);
    }
  }

  /** True (and counted off) when the session already answered a request with this key itself. */
  drop(key: string): boolean {
    const early = this.#answeredEarly;
    const count = early?.get(key);
    if (early === null || count === undefined) return false;
    if (count > 1) early.set(key, count - 1);
    else early.delete(key);
    if (early.size === 0) this.#answeredEarly = null;
    return true;
  }
}
