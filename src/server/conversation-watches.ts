// Who on this node hears about which conversation — the sessions subscribed to its transcript
// (`notifications/resources/updated`: transcript-watch.ts) and those whose listen named it as a task
// (`notifications/tasks`: task-status-watch.ts) — and the three ways a change reaches them: made in this
// process; made on another node of a PostgreSQL store (its LISTEN/NOTIFY feed calls `entryElsewhere` /
// `statusElsewhere`); made by another process on the same SQLite file (the SQLite change feed, polled
// only while something is watched: src/store/sqlite-change-feed.ts).

import type { Logger } from '../log/logger.ts';
import { type ChangeSource, SqliteChangeFeed } from '../store/sqlite-change-feed.ts';
import { type TaskReader, type TaskStatusListener, TaskStatusWatch } from '../task/task-status-watch.ts';
import { type TranscriptListener, TranscriptWatch } from '../task/transcript-watch.ts';
import type { Clock } from '../time/clock.ts';

export class ConversationWatches {
  readonly #transcripts = new TranscriptWatch();
  readonly #statuses: TaskStatusWatch;
  readonly #sqlite: SqliteChangeFeed;

  constructor(read: TaskReader, logger: Logger, clock: Clock) {
    this.#statuses = new TaskStatusWatch(read, (taskId, error) =>
      logger.log('warning', 'reading a task for its status listeners failed; the next change reads again', { task: taskId, error: error.message }));
    this.#sqlite = new SqliteChangeFeed({
      clock,
      watched: { count: () => this.#transcripts.conversations + this.#statuses.tasks, ids: () => [...this.#transcripts.ids(), ...this.#statuses.ids()] },
      transcriptChanged: (conversation) => this.entryElsewhere(conversation),
      taskStatusChanged: (conversation) => this.statusElsewhere(conversation),
      onError: (error) => logger.log('warning', "polling the SQLite store for other processes' changes failed; the next poll tries again", { error: error.message }),
    });
  }

  /** The SQLite store is open: other processes on its file are heard through its connection. */
  attachSqlite(source: ChangeSource): void {
    this.#sqlite.attach(source);
  }

  /**
   * `sessionId` hears of `conversation`'s new entries (the store found it to be the session's principal's):
   * until it unsubscribes or ends (a 2025 subscription), or, `stream`, while one of its listen streams names it.
   */
  watchTranscript(conversation: string, sessionId: string, listener: TranscriptListener, stream = false): void {
    if (stream) this.#transcripts.watchStream(conversation, sessionId, listener);
    else this.#transcripts.watch(conversation, sessionId, listener);
    this.#sqlite.watch(conversation);
  }

  /**
   * `sessionId` unsubscribed from the transcript (a 2025 subscription), or, `stream`, one of its listen streams
   * that named it ended: it stops hearing it once neither kind of watch needs it.
   */
  unwatchTranscript(conversation: string, sessionId: string, stream = false): void {
    if (stream) this.#transcripts.unwatchStream(conversation, sessionId);
    else this.#transcripts.unwatch(conversation, sessionId);
  }

  /** One more of `sessionId`'s listen streams names the task (before the listen reads it: task-status-watch.ts). */
  watchTask(taskId: string, sessionId: string, principal: string, listener: TaskStatusListener): void {
    this.#statuses.watch(taskId, sessionId, principal, listener);
    this.#sqlite.watch(taskId);
  }

  unwatchTask(taskId: string, sessionId: string): void {
    this.#statuses.unwatch(taskId, sessionId);
  }

  /** The session is gone: it hears nothing any more. */
  forget(sessionId: string): void {
    this.#transcripts.forget(sessionId);
    this.#statuses.forget(sessionId);
  }

  /** This process appended to the conversation: its transcript's and its status's listeners hear. */
  entryHere(conversation: string): void {
    this.#sqlite.heardHere(conversation, 'entry');
    this.entryElsewhere(conversation);
  }

  /** This process may have changed the task's status (or a listen asks for it again): its status listeners hear. */
  statusHere(taskId: string): void {
    this.#sqlite.heardHere(taskId, 'status');
    this.#statuses.changed(taskId);
  }

  /** Another node or process appended to the conversation. */
  entryElsewhere(conversation: string): void {
    this.#transcripts.changed(conversation);
    this.#statuses.changed(conversation);
  }

  /** Another node or process changed the task's status. */
  statusElsewhere(taskId: string): void {
    this.#statuses.changed(taskId);
  }

  /** The feed from other nodes was lost for a while: every watched task is read again. */
  missedElsewhere(): void {
    this.#statuses.changedAll();
  }

  /** Does the node watch anything for the session (a 2025 subscription, a listen's transcripts or tasks)? Its client waits to hear. */
  watching(sessionId: string): boolean {
    return this.#transcripts.watches(sessionId) || this.#statuses.watches(sessionId);
  }

  /** Tasks watched, sessions watching some task, and transcripts watched. */
  counts(): { tasks: number; taskSessions: number; transcripts: number } {
    return { tasks: this.#statuses.tasks, taskSessions: this.#statuses.sessions, transcripts: this.#transcripts.conversations };
  }

  /** Polling stops (the store is about to close). */
  close(): void {
    this.#sqlite.close();
  }
}
