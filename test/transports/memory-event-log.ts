// The session event log in memory, as the PostgreSQL store keeps it (test/store/session-events.test.ts
// tests that one): seqs per session, the principal checked by every read, and `listen` handing each
// append to the feed as its NOTIFY would. Not a *.test.ts file.

import type { FeedStore } from '../../src/store/session-event-feed.ts';
import type { EventPosition, SessionEvent } from '../../src/store/session-events.ts';

/** The log in memory; `listen`'s handler stands for the NOTIFY of an append. */
export class MemoryLog implements FeedStore {
  readonly sessions = new Map<string, { principal: string; events: SessionEvent[]; last: number }>();
  #notify: ((sessionId: string, seq: number) => void) | null = null;

  async appendSessionEvent(sessionId: string, principal: string, stream: string, data: string, ends = false): Promise<number> {
    let s = this.sessions.get(sessionId);
    if (!s) this.sessions.set(sessionId, (s = { principal, events: [], last: 0 }));
    if (s.principal !== principal) throw new Error('not_found');
    const seq = ++s.last;
    s.events.push({ seq, stream, data, ends });
    this.#notify?.(sessionId, seq);
    return seq;
  }

  async sessionEventPosition(sessionId: string, principal: string, seq: number): Promise<EventPosition | null> {
    const s = this.sessions.get(sessionId);
    if (!s || s.principal !== principal) return null;
    const e = s.events.find((x) => x.seq === seq);
    if (e) return { kind: 'kept', stream: e.stream, ends: e.ends };
    return seq > s.last ? { kind: 'ahead', last: s.last } : { kind: 'expired', last: s.last };
  }

  async sessionEventsAfter(sessionId: string, principal: string, afterSeq: number, options: { stream?: string; limit?: number } = {}): Promise<SessionEvent[] | null> {
    const s = this.sessions.get(sessionId);
    if (!s || s.principal !== principal) return null;
    return s.events.filter((e) => e.seq > afterSeq && (options.stream === undefined || e.stream === options.stream)).slice(0, options.limit ?? 100);
  }

  async pruneSessionEvents(): Promise<number> {
    return 0;
  }

  listen(handlers: { sessionEvent: (sessionId: string, seq: number) => void }) {
    this.#notify = handlers.sessionEvent;
    return { ready: Promise.resolve(), close: async () => undefined };
  }
}

