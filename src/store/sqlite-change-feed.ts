// A node's change feed on a SQLite store: what another process on the same file changed, for the
// conversations this node watches. The PostgreSQL store has LISTEN/NOTIFY for this (session-event-feed.ts);
// SQLite tells a connection nothing of another's commits, but `PRAGMA data_version` on a connection
// changes whenever another connection committed (never for its own writes). So, while anything is
// watched and only then, the feed asks that every SQLITE_CHANGE_POLL_MS; when it moved, it reads the
// status, last seq and epoch of the watched conversations (at most SQLITE_CHANGE_POLL_IDS per tick, by
// primary key) and compares them with what it last saw: a seq that moved is a transcript append (the
// same hook the PostgreSQL feed calls for another node's append), a status or epoch that moved without
// it is a status change. The store runs on the main thread (SyncStoreAdapter), so the feed does too:
// one pragma per tick, and a bounded indexed read only after another process committed.
//
// What this process changes itself it already tells its watchers; so that it is not told twice, each
// such change is "heard here" (`heardHere`): the conversation's marks are read again at once, and the
// next comparison starts from them. A change another process made in between is absorbed with it, and
// is not lost: the watchers told of this process's change read the store after that read (and when this
// process told only the status's watchers but the seq moved, the transcript's are told here).

import type { Clock } from '../time/clock.ts';
import { SQLITE_CHANGE_POLL_IDS, SQLITE_CHANGE_POLL_MS } from '../limits.ts';

/** What the feed compares of one conversation. */
export interface ConversationMark {
  readonly id: string;
  readonly status: string;
  readonly lastSeq: number;
  readonly epoch: number;
}

/** What the feed needs of the store's connection (sqlite-store.ts). */
export interface ChangeSource {
  /** `PRAGMA data_version`: moves when another connection commits, never for this one's own writes. */
  dataVersion(): number;
  /** The marks of those of `ids` that exist (no principal: the feed only compares them). */
  conversationMarks(ids: readonly string[]): ConversationMark[];
}

/** The conversations this node watches now (transcripts and task statuses; an id may come twice). */
export interface Watched {
  /** How many watches there are: 0 when nothing is watched (then the feed stops polling). */
  count(): number;
  ids(): Iterable<string>;
}

export interface SqliteChangeFeedOptions {
  readonly watched: Watched;
  /** Another process appended to this conversation's transcript. */
  readonly transcriptChanged: (conversationId: string) => void;
  /** Another process changed this conversation's status (or its holder) without appending. */
  readonly taskStatusChanged: (conversationId: string) => void;
  /** A poll failed (the next one tries again). */
  readonly onError: (error: Error) => void;
  readonly clock: Clock;
  /** Default SQLITE_CHANGE_POLL_MS. */
  readonly intervalMs?: number;
  /** Default SQLITE_CHANGE_POLL_IDS. */
  readonly maxIds?: number;
}

export class SqliteChangeFeed {
  readonly #options: SqliteChangeFeedOptions;
  readonly #intervalMs: number;
  readonly #maxIds: number;
  #source: ChangeSource | null = null;
  /** conversation id → what was last seen of it (null: no such row then). */
  readonly #marks = new Map<string, ConversationMark | null>();
  /** The data_version the marks were last compared at. */
  #version = 0;
  /** Ids still to compare since the version last moved (more than one tick's worth), and where the next tick starts. */
  #pending: string[] = [];
  #next = 0;
  #timer: unknown = undefined;
  #closed = false;

  constructor(options: SqliteChangeFeedOptions) {
    this.#options = options;
    this.#intervalMs = options.intervalMs ?? SQLITE_CHANGE_POLL_MS;
    this.#maxIds = options.maxIds ?? SQLITE_CHANGE_POLL_IDS;
  }

  /** The store's connection, once the store is open (on PostgreSQL never: the feed then does nothing). */
  attach(source: ChangeSource): void {
    this.#source = source;
  }

  /** Polling now (tests check that it stops when nothing is watched). */
  get polling(): boolean {
    return this.#timer !== undefined;
  }

  /**
   * The conversation is watched from now on (call before reading it for the watcher): what it is now is
   * the start; polling begins if it had not. One watched already keeps its start, so a change not yet
   * compared is still told to those who watched it first.
   */
  watch(conversationId: string): void {
    const source = this.#source;
    if (source === null || this.#closed || this.#marks.has(conversationId)) return;
    this.#guard(() => {
      // The version before the marks: a commit between the two is then seen as a change, and compared.
      if (this.#timer === undefined) {
        this.#version = source.dataVersion();
        this.#timer = this.#options.clock.setInterval(() => this.#tick(), this.#intervalMs, { unref: true });
      }
      this.#marks.set(conversationId, this.#read(conversationId));
    });
  }

  /**
   * This process changed the conversation and tells its watchers itself (`entry`: its transcript's and
   * its status's; `status`: its status's only): the next comparison starts from now.
   */
  heardHere(conversationId: string, told: 'entry' | 'status'): void {
    const before = this.#marks.get(conversationId);
    if (this.#source === null || before === undefined) return;
    this.#guard(() => {
      const now = this.#read(conversationId);
      this.#marks.set(conversationId, now);
      if (told === 'status' && now !== null && (before === null || now.lastSeq !== before.lastSeq)) this.#options.transcriptChanged(conversationId);
    });
  }

  close(): void {
    this.#closed = true;
    this.#stop();
  }

  #tick(): void {
    const source = this.#source;
    if (source === null) return;
    const watched = this.#options.watched;
    if (watched.count() === 0) {
      this.#stop();
      return;
    }
    this.#guard(() => {
      const version = source.dataVersion();
      if (version !== this.#version) {
        this.#version = version;
        this.#pending = this.#current();
        this.#next = 0;
      } else if (this.#marks.size > 2 * watched.count() + this.#maxIds) {
        // Watches came and went without any other process committing: forget the ones gone.
        this.#current();
      }
      if (this.#next >= this.#pending.length) return;
      const ids = this.#pending.slice(this.#next, this.#next + this.#maxIds);
      this.#next += ids.length;
      if (this.#next >= this.#pending.length) this.#pending = [];
      this.#compare(source.conversationMarks(ids), ids);
    });
  }

  /** The ids watched now, each once; what is no longer watched is forgotten. */
  #current(): string[] {
    const ids = new Set(this.#options.watched.ids());
    for (const id of this.#marks.keys()) if (!ids.has(id)) this.#marks.delete(id);
    return [...ids];
  }

  /** Tells of every difference between what was last seen of `ids` and `marks`, and keeps `marks`. */
  #compare(marks: readonly ConversationMark[], ids: readonly string[]): void {
    const found = new Map(marks.map((m) => [m.id, m]));
    for (const id of ids) {
      const now = found.get(id) ?? null;
      const before = this.#marks.get(id);
      this.#marks.set(id, now);
      // An id first seen here was watched after the last version was read: the watch read its start.
      if (before === undefined || now === null) continue;
      if (before === null || now.lastSeq !== before.lastSeq) this.#options.transcriptChanged(id);
      else if (now.status !== before.status || now.epoch !== before.epoch) this.#options.taskStatusChanged(id);
    }
  }

  #read(conversationId: string): ConversationMark | null {
    return this.#source?.conversationMarks([conversationId])[0] ?? null;
  }

  #stop(): void {
    if (this.#timer !== undefined) this.#options.clock.clearInterval(this.#timer);
    this.#timer = undefined;
    this.#marks.clear();
    this.#pending = [];
    this.#next = 0;
  }

  #guard(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.#options.onError(err as Error);
    }
  }
}
