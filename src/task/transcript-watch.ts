// Which sessions hear about a transcript's new entries. A conversation belongs to its principal, so a
// session may subscribe to one that another session (of the same principal) runs: a task's appends are
// announced here, and every session that subscribed hears — not only the one that started the task.
// Sessions are added only after the store found the conversation to be their principal's.

/** Delivers `notifications/resources/updated` for a transcript to one session's core. */
export type TranscriptListener = (conversationId: string) => void;

export class TranscriptWatch {
  /** conversation id → session id → listener. */
  readonly #bySession = new Map<string, Map<string, TranscriptListener>>();
  /** session id → the conversations it watches, so a closed session is forgotten in one step. */
  readonly #ofSession = new Map<string, Set<string>>();

  /** From now on `sessionId` hears about `conversationId` (idempotent). */
  watch(conversationId: string, sessionId: string, listener: TranscriptListener): void {
    let listeners = this.#bySession.get(conversationId);
    if (!listeners) this.#bySession.set(conversationId, (listeners = new Map()));
    listeners.set(sessionId, listener);
    let watched = this.#ofSession.get(sessionId);
    if (!watched) this.#ofSession.set(sessionId, (watched = new Set()));
    watched.add(conversationId);
  }

  /** The conversation got an entry: every session watching it hears (its core drops it if it unsubscribed). */
  changed(conversationId: string): void {
    for (const listener of this.#bySession.get(conversationId)?.values() ?? []) listener(conversationId);
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
