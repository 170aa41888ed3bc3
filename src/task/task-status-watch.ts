// Which sessions hear about a task's status (`notifications/tasks`, Tasks extension), and the reads that
// tell them. A task may have changed whenever its run settles on this node, an entry is appended to its
// transcript (here, or on another node: the store's change feed), or another node sets its status (the
// feed again): each time, if any session watches it, the store is read once for all of them — one read
// in flight per task, and a change reported meanwhile reads again after it — and each watching session's
// core sends a notification on its streams if the status moved. Sessions are added only after the store
// found the task to be their principal's, so all of a task's watchers share its principal.

import type { StoredTask } from '../mcp/effects.ts';

/** Delivers a task as the store holds it now to one session's core. */
export type TaskStatusListener = (task: StoredTask) => void;

/** The task as `tasks/get` reads it (task-status.ts), or null when it is gone. */
export type TaskReader = (taskId: string, principal: string) => Promise<StoredTask | null>;

interface Watched {
  readonly principal: string;
  /** session id → its listener, and how many of its listen streams name the task. */
  readonly sessions: Map<string, { listener: TaskStatusListener; streams: number }>;
}

export class TaskStatusWatch {
  readonly #read: TaskReader;
  readonly #onError: (taskId: string, error: Error) => void;
  /** task id → its principal and the sessions watching it. */
  readonly #byTask = new Map<string, Watched>();
  /** session id → the tasks it watches, so a closed session is forgotten in one step. */
  readonly #ofSession = new Map<string, Set<string>>();
  /** task id → a read in flight; `again`: a change was reported meanwhile, so read once more after it. */
  readonly #reading = new Map<string, { again: boolean }>();

  constructor(read: TaskReader, onError: (taskId: string, error: Error) => void) {
    this.#read = read;
    this.#onError = onError;
  }

  /** From now on `sessionId` hears about `taskId`, the principal's: one more of its streams names it. */
  watch(taskId: string, sessionId: string, principal: string, listener: TaskStatusListener): void {
    let watched = this.#byTask.get(taskId);
    if (!watched) this.#byTask.set(taskId, (watched = { principal, sessions: new Map() }));
    // Only the store's word puts a session here, and it finds a task for its one principal alone.
    if (watched.principal !== principal) return;
    const streams = (watched.sessions.get(sessionId)?.streams ?? 0) + 1;
    watched.sessions.set(sessionId, { listener, streams });
    let tasks = this.#ofSession.get(sessionId);
    if (!tasks) this.#ofSession.set(sessionId, (tasks = new Set()));
    tasks.add(taskId);
  }

  /** One of the session's streams naming the task ended; once none does, the session no longer hears it. */
  unwatch(taskId: string, sessionId: string): void {
    const watched = this.#byTask.get(taskId);
    const entry = watched?.sessions.get(sessionId);
    if (watched === undefined || entry === undefined) return;
    if (entry.streams > 1) {
      watched.sessions.set(sessionId, { ...entry, streams: entry.streams - 1 });
      return;
    }
    watched.sessions.delete(sessionId);
    if (watched.sessions.size === 0) this.#byTask.delete(taskId);
    const tasks = this.#ofSession.get(sessionId);
    tasks?.delete(taskId);
    if (tasks?.size === 0) this.#ofSession.delete(sessionId);
  }

  /** The task may have changed: if anyone watches it, it is read and handed to each of them. */
  changed(taskId: string): void {
    if (!this.#byTask.has(taskId)) return;
    const inFlight = this.#reading.get(taskId);
    if (inFlight) {
      inFlight.again = true;
      return;
    }
    const reading = { again: false };
    this.#reading.set(taskId, reading);
    void this.#readAndTell(taskId, reading);
  }

  /** Every watched task may have changed (the change feed was lost for a while): each is read again. */
  changedAll(): void {
    for (const taskId of this.#byTask.keys()) this.changed(taskId);
  }

  /** The session is gone: it watches nothing any more. */
  forget(sessionId: string): void {
    for (const taskId of this.#ofSession.get(sessionId) ?? []) {
      const watched = this.#byTask.get(taskId);
      watched?.sessions.delete(sessionId);
      if (watched?.sessions.size === 0) this.#byTask.delete(taskId);
    }
    this.#ofSession.delete(sessionId);
  }

  /** Does the session watch any task (a listen stream names one)? */
  watches(sessionId: string): boolean {
    return this.#ofSession.has(sessionId);
  }

  /** Sessions watching a task (tests check that closed sessions are forgotten). */
  get sessions(): number {
    return this.#ofSession.size;
  }

  /** Tasks watched by some session (tests check that ended streams are forgotten). */
  get tasks(): number {
    return this.#byTask.size;
  }

  /** The tasks watched by some session (the SQLite change feed reads these). */
  ids(): Iterable<string> {
    return this.#byTask.keys();
  }

  async #readAndTell(taskId: string, reading: { again: boolean }): Promise<void> {
    try {
      do {
        reading.again = false;
        const watched = this.#byTask.get(taskId);
        if (!watched) return;
        const task = await this.#read(taskId, watched.principal);
        if (task === null) continue;
        for (const { listener } of this.#byTask.get(taskId)?.sessions.values() ?? []) listener(task);
      } while (reading.again);
    } catch (err) {
      // The next change reads again; the streams keep what they were last told.
      this.#onError(taskId, err as Error);
    } finally {
      this.#reading.delete(taskId);
    }
  }
}
