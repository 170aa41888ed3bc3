// The streams resumed on this node from the session event log (GET with Last-Event-ID on a PostgreSQL
// store): at most so many per session and per principal, and one reader per session that reads the log
// once per wake-up and hands each of its streams the events of its own stream, with one look-out per
// session for requests that died with their node. K streams of a session cost one query per event, not K.

import type { SessionOrphanWatch } from '../cluster/orphan-requests.ts';
import type { SessionEventFeed } from '../store/session-event-feed.ts';
import type { SseStream } from './sse-stream.ts';
import { MAX_RESUMED_STREAMS_PER_PRINCIPAL, MAX_RESUMED_STREAMS_PER_SESSION, SESSION_EVENTS_PAGE } from '../limits.ts';

export interface ResumedStreamLimits {
  readonly perSession: number;
  readonly perPrincipal: number;
}

export interface ResumedStreamsOptions {
  readonly feed: SessionEventFeed;
  readonly limits?: ResumedStreamLimits;
  /** The look-out of a session's resumed request streams (a cluster), or null. */
  readonly watchOrphans: (sessionId: string, principal: string) => SessionOrphanWatch | null;
  /** Reading the log failed: the session's streams are closed (their clients may resume them again). */
  readonly onError: (sessionId: string, error: Error) => void;
}

/** Why a stream was not resumed: the status and a body that names the limit. */
export interface ResumeRefusal {
  readonly status: 429;
  readonly message: string;
}

/** One resumed stream: the log's stream it follows, and the last event it has had (or passed). */
interface Follower {
  readonly name: string;
  after: number;
  readonly stream: SseStream;
}

/** The reader of one session's log on this node, and the streams it feeds. */
interface Reader {
  readonly followers: Set<Follower>;
  /** Wakes the reader when a stream joins (it may need older events) or leaves. */
  kick: () => void;
}

export class ResumedStreams {
  readonly #o: ResumedStreamsOptions;
  readonly #limits: ResumedStreamLimits;
  /** By session id and the log's principal. */
  readonly #readers = new Map<string, Reader>();
  /** Streams open per log principal; a principal with none has no entry. */
  readonly #byPrincipal = new Map<string, number>();

  constructor(options: ResumedStreamsOptions) {
    this.#o = options;
    this.#limits = options.limits ?? { perSession: MAX_RESUMED_STREAMS_PER_SESSION, perPrincipal: MAX_RESUMED_STREAMS_PER_PRINCIPAL };
  }

  /**
   * Follows `name` of the session's log after `after` on the stream `open` makes, or refuses (429) when
   * the session or the principal has as many resumed streams here as its limit.
   */
  follow(sessionId: string, principal: string, name: string, after: number, open: () => SseStream): ResumeRefusal | null {
    const key = `${principal}\n${sessionId}`;
    const reader = this.#readers.get(key);
    if ((reader?.followers.size ?? 0) >= this.#limits.perSession) {
      return { status: 429, message: `Too Many Requests: this session has ${this.#limits.perSession} resumed streams open on this node, the limit; close one or retry later` };
    }
    const held = this.#byPrincipal.get(principal) ?? 0;
    if (held >= this.#limits.perPrincipal) {
      return { status: 429, message: `Too Many Requests: this principal has ${held} resumed streams open on this node, the limit; close some or retry later` };
    }
    const follower: Follower = { name, after, stream: open() };
    this.#byPrincipal.set(principal, held + 1);
    let joined = reader;
    if (joined === undefined) {
      joined = { followers: new Set(), kick: () => undefined };
      this.#readers.set(key, joined);
      joined.followers.add(follower);
      void this.#read(key, joined, sessionId, principal);
    } else {
      joined.followers.add(follower);
      joined.kick();
    }
    const into = joined;
    follower.stream.onClose(() => {
      if (!into.followers.delete(follower)) return;
      const left = (this.#byPrincipal.get(principal) ?? 1) - 1;
      if (left <= 0) this.#byPrincipal.delete(principal);
      else this.#byPrincipal.set(principal, left);
      into.kick();
    });
    return null;
  }

  async #read(key: string, reader: Reader, sessionId: string, principal: string): Promise<void> {
    try {
      await this.#follow(reader, sessionId, principal);
    } catch (err) {
      this.#o.onError(sessionId, err as Error);
      for (const f of [...reader.followers]) f.stream.end();
    } finally {
      if (this.#readers.get(key) === reader) this.#readers.delete(key);
    }
  }

  async #follow(reader: Reader, sessionId: string, principal: string): Promise<void> {
    const { feed } = this.#o;
    const { followers } = reader;
    let orphans: SessionOrphanWatch | null | undefined;
    while (followers.size > 0) {
      // Registered before reading, so an event appended between the read and the wait still wakes it.
      const wait = feed.wait(sessionId);
      const kicked = new Promise<void>((resolve) => (reader.kick = resolve));
      let due: { readonly done: Promise<void>; cancel(): void } | undefined;
      try {
        let from = Number.MAX_SAFE_INTEGER;
        for (const f of followers) if (f.after < from) from = f.after;
        const events = await feed.store.sessionEventsAfter(sessionId, principal, from, { limit: SESSION_EVENTS_PAGE });
        if (events === null) {
          for (const f of [...followers]) f.stream.end();
          return;
        }
        // A stream that joined during the read, further back than it started, waits for the next read.
        for (const e of events) {
          for (const f of followers) {
            if (e.seq <= f.after || f.after < from || e.stream !== f.name) continue;
            f.stream.send(String(e.seq), e.data);
            f.after = e.seq;
            if (e.ends) f.stream.end();
          }
        }
        // Every stream has now seen the log up to here: the next read starts after it, for all of them.
        const last = events.at(-1)?.seq;
        if (last !== undefined) for (const f of followers) if (f.after >= from && f.after < last) f.after = last;
        if (events.length === SESSION_EVENTS_PAGE) continue;
        if (followers.size === 0) return;
        orphans ??= this.#o.watchOrphans(sessionId, principal);
        due = orphans?.untilDue();
        await Promise.race([wait.woken, kicked, ...(due ? [due.done] : [])]);
        if (orphans && followers.size > 0) await orphans.lookIfDue([...followers].map((f) => f.name));
      } finally {
        wait.cancel();
        due?.cancel();
      }
    }
  }
}
