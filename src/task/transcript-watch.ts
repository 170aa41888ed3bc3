// Which sessions hear about a transcript's new entries. A conversation belongs to its principal, so a
// session may subscribe to one that another session (of the same principal) runs: a task's appends are
// announced here, and every session that subscribed hears — not only the one that started the task.
// Sessions are added only after the store found the conversation to be their principal's.
// Two kinds of watch, counted apart: a 2025 subscription's lasts until the session unsubscribes or ends
// (`watch` / `unwatch`); a 2026-07-28 listen stream's lasts as long as some stream of the session names the
// transcript (`watchStream` / `unwatchStream`), so a pooled session that serves one listen after another does
// not come to watch every conversation of its principal. The session hears while either needs it.

/** Delivers `notifications/resources/updated` for a transcript to one session's core. */
export type TranscriptListener = (conversationId: string) => void;

/** One session's watch of one transcript: by its 2025 subscription (`pinned`), by `streams` listen streams, or both. */
interface SessionWatch {
  readonly listener: TranscriptListener;
  readonly pinned: boolean;
  readonly streams: number;
}

export class TranscriptWatch {
  /** conversation id → session id → its watch. */
  readonly #bySession = new Map<string, Map<string, SessionWatch>>();
  /** session id → the conversations it watches, so a closed session is forgotten in one step. */
  readonly #ofSession = new Map<string, Set<string>>();

  /** From now on `sessionId` hears about `conversationId`, until it unsubscribes or ends (a 2025 subscription; idempotent). */
  watch(conversationId: string, sessionId: string, listener: TranscriptListener): void {
    this.#set(conversationId, sessionId, listener, true, 0);
  }

  /** The session's 2025 subscription to the transcript ended; unless a listen stream of its names it, it no longer hears it (idempotent). */
  unwatch(conversationId: string, sessionId: string): void {
    const entry = this.#bySession.get(conversationId)?.get(sessionId);
    if (entry === undefined || !entry.pinned) return;
    if (entry.streams > 0) this.#bySession.get(conversationId)?.set(sessionId, { ...entry, pinned: false });
    else this.#drop(conversationId, sessionId);
  }

  /** One more of the session's listen streams names the transcript: it hears about it while one does. */
  watchStream(conversationId: string, sessionId: string, listener: TranscriptListener): void {
    this.#set(conversationId, sessionId, listener, false, 1);
  }

  /** One of the session's listen streams naming the transcript ended; once none does (and no subscription), the session no longer hears it. */
  unwatchStream(conversationId: string, sessionId: string): void {
    const listeners = this.#bySession.get(conversationId);
    const entry = listeners?.get(sessionId);
    if (listeners === undefined || entry === undefined || entry.streams === 0) return;
    if (entry.pinned || entry.streams > 1) {
      listeners.set(sessionId, { ...entry, streams: entry.streams - 1 });
      return;
    }
    this.#drop(conversationId, sessionId);
  }

  /** Nothing of the session's needs the transcript any more. */
  #drop(conversationId: string, sessionId: string): void {
    const listeners = this.#bySession.get(conversationId);
    listeners?.delete(sessionId);
    if (listeners?.size === 0) this.#bySession.delete(conversationId);
    const watched = this.#ofSession.get(sessionId);
    watched?.delete(conversationId);
    if (watched?.size === 0) this.#ofSession.delete(sessionId);
  }

  #set(conversationId: string, sessionId: string, listener: TranscriptListener, pin: boolean, streams: number): void {
    let listeners = this.#bySession.get(conversationId);
    if (!listeners) this.#bySession.set(conversationId, (listeners = new Map()));
    const entry = listeners.get(sessionId);
    listeners.set(sessionId, { listener, pinned: pin || (entry?.pinned ?? false), streams: (entry?.streams ?? 0) + streams });
    let watched = this.#ofSession.get(sessionId);
    if (!watched) this.#ofSession.set(sessionId, (watched = new Set()));
    watched.add(conversationId);
  }

  /** The conversation got an entry: every session watching it hears (its core sends it only where a subscription or stream names it). */
  changed(conversationId: string): void {
    for (const { listener } of this.#bySession.get(conversationId)?.values() ?? []) listener(conversationId);
  }

  /** The session is gone: it watches nothing any more. */
  forget(sessionId: string): void {
    for (const conversationId of this.#ofSession.get(sessionId) ?? []) {
      const listeners = this.#bySession.get(conversationId);
      listeners?.delete(sessionId);
      if (listeners?.size === 0) this.#bySession.delete(conversationId);
    }
    this.#ofSession.delete(sessionId);
  }

  /** Does the session watch any transcript (a subscription, a listen stream)? */
  watches(sessionId: string): boolean {
    return this.#ofSession.has(sessionId);
  }

  /** Sessions watching anything (tests check that closed sessions are forgotten). */
  get sessions(): number {
    return this.#ofSession.size;
  }

  /** Conversations watched by some session. */
  get conversations(): number {
    return this.#bySession.size;
  }

  /** The conversations watched by some session (the SQLite change feed reads these). */
  ids(): Iterable<string> {
    return this.#bySession.keys();
  }
}
