// The harness tasks this process has run, as the observer and the metrics see them: which session and
// principal, harness, status, turns and tool calls so far (counted from the store's appends as they
// happen), and a way to read a task's transcript for the observer page.

import type { Principal } from '../mcp/state.ts';
import type { AsyncConversationStore } from '../store/async-store.ts';
import type { ConversationStatus, Entry, EntryType } from '../store/store.ts';
import type { StoreListener } from './observed-store.ts';
import { principalName } from './observed-sessions.ts';
import { OBSERVER_TRANSCRIPT_PAGE_BYTES } from '../limits.ts';

/** Finished tasks kept for the page; running ones are always kept. */
export const MAX_FINISHED_TASKS = 100;
/** Transcript entries one observer request returns; the page asks again from the last seq it has. */
export const MAX_TRANSCRIPT_PAGE = 200;

export interface TaskRow {
  /** The task supervisor's id (`task-N`): the observer's handle, not the Tasks extension's `taskId`. */
  readonly id: string;
  /** The handle of the session that started it (`SessionRow.id`), never its `Mcp-Session-Id`. */
  readonly session: string;
  readonly principal: string;
  readonly harness: string;
  readonly status: ConversationStatus;
  readonly turns: number;
  readonly toolCalls: number;
  readonly ageMs: number;
  readonly restarts: number;
}

interface TaskEntry {
  readonly id: string;
  readonly conversationId: string;
  readonly session: string;
  readonly principal: Principal;
  /** The store's owner key of the conversation (transcripts are read as their owner). */
  readonly ownerKey: string;
  readonly harness: string;
  readonly started: number;
  status: ConversationStatus;
  turns: number;
  toolCalls: number;
}

export class ObservedTasks implements StoreListener {
  readonly #byTask = new Map<string, TaskEntry>();
  readonly #byConversation = new Map<string, TaskEntry>();
  readonly #counts = new Map<ConversationStatus, number>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** A task started under its supervisor (its conversation is already `running` in the store). */
  started(task: { id: string; conversationId: string; session: string; principal: Principal; ownerKey: string; harness: string }): void {
    const entry: TaskEntry = { ...task, started: this.#now(), status: 'running', turns: 0, toolCalls: 0 };
    this.#byTask.set(task.id, entry);
    this.#byConversation.set(task.conversationId, entry);
    this.#counts.set('running', (this.#counts.get('running') ?? 0) + 1);
    this.#trim();
  }

  appended(conversationId: string, type: EntryType): void {
    const e = this.#byConversation.get(conversationId);
    if (!e) return;
    if (type === 'model') e.turns++;
    else if (type === 'tool_call') e.toolCalls++;
  }

  statusSet(conversationId: string, status: ConversationStatus): void {
    const e = this.#byConversation.get(conversationId);
    if (!e || e.status === status) return;
    this.#counts.set(e.status, (this.#counts.get(e.status) ?? 1) - 1);
    this.#counts.set(status, (this.#counts.get(status) ?? 0) + 1);
    e.status = status;
  }

  /**
   * A task's run on this node settled. Its status is normally written first (`statusSet`); a run that lost
   * the task instead — fenced by a newer run of its conversation (a `conversation_id` continuation), a
   * `tasks/cancel` served by another node, a takeover — writes none, and would stay `running` here, never
   * trimmed: one permanent entry per lost run, and a running count that only grows. It is counted
   * `interrupted` (on this node, its run stopped without an end), and the list trimmed.
   */
  ended(taskId: string): void {
    const e = this.#byTask.get(taskId);
    if (e === undefined || e.status !== 'running') return;
    this.#counts.set('running', (this.#counts.get('running') ?? 1) - 1);
    this.#counts.set('interrupted', (this.#counts.get('interrupted') ?? 0) + 1);
    e.status = 'interrupted';
    this.#trim();
  }

  /** Tasks by status, over every task this process has run. */
  counts(): ReadonlyMap<ConversationStatus, number> {
    return this.#counts;
  }

  rows(restartsOf: (taskId: string) => number): TaskRow[] {
    const now = this.#now();
    return [...this.#byTask.values()].map((e) => ({
      id: e.id, session: e.session, principal: principalName(e.principal), harness: e.harness, status: e.status,
      turns: e.turns, toolCalls: e.toolCalls, ageMs: now - e.started, restarts: restartsOf(e.id),
    }));
  }

  /** The principal whose task this is (null: no such task). */
  principalOf(taskId: string): Principal | null {
    return this.#byTask.get(taskId)?.principal ?? null;
  }

  /** Entries after `afterSeq`, at most MAX_TRANSCRIPT_PAGE of them and OBSERVER_TRANSCRIPT_PAGE_BYTES of payload; null when there is no such task. */
  async transcript(store: AsyncConversationStore, taskId: string, afterSeq: number): Promise<Entry[] | null> {
    const e = this.#byTask.get(taskId);
    if (!e) return null;
    return store.entries(e.conversationId, e.ownerKey, { afterSeq, limit: MAX_TRANSCRIPT_PAGE, maxBytes: OBSERVER_TRANSCRIPT_PAGE_BYTES });
  }

  #trim(): void {
    let finished = 0;
    for (const e of this.#byTask.values()) if (e.status !== 'running') finished++;
    for (const [id, e] of this.#byTask) {
      if (finished <= MAX_FINISHED_TASKS) return;
      if (e.status === 'running') continue;
      this.#byTask.delete(id);
      this.#byConversation.delete(e.conversationId);
      finished--;
    }
  }
}
