// What a session gives the harness tasks it starts: the store, who the caller is, how a task is supervised.

import type { AsyncConversationStore } from '../store/async-store.ts';
import type { TaskRun } from './task-run.ts';
import type { BudgetRefusal, TaskAllowance } from './principal-budget.ts';

/** What harness tasks need: the store (opened on first use), who the caller is, which session. */
export interface TaskContext {
  readonly store: () => AsyncConversationStore;
  /** The store if its database exists (opened on first use), else null: reads never create one. Default: `store`. */
  readonly existingStore?: () => AsyncConversationStore | null;
  /** The store's owner key for this caller. */
  readonly principal: string;
  readonly local: boolean;
  readonly forbidWrites: boolean;
  readonly sessionId: string;
  readonly env: NodeJS.ProcessEnv;
  /** A slot in the caller's task budget for a new task, or why not (principal-budget.ts). None: unbudgeted. */
  readonly openAllowance?: () => TaskAllowance | BudgetRefusal;
  /** Starts a task under its supervisor (the task's actor is restarted if it dies). */
  readonly supervise: (run: TaskRun) => Promise<void>;
  /** Wall time of one task (default DEFAULT_TASK_WALL_MS). */
  readonly taskWallMs?: number;
  /** The store's task lease term, which a running task renews (default TASK_LEASE_MS). */
  readonly taskLeaseMs?: number;
  /**
   * The retention of the Tasks-extension tasks this context creates (`--task-ttl`, store/retention.ts),
   * kept with each new task's conversation; none (the default): kept until deleted. Never given to a
   * session's own harness_task conversations, nor to a conversation a task continues.
   */
  readonly taskTtlMs?: number;
  /**
   * This session hears about the conversation's new entries from now on (after a subscribe or listen the store
   * allowed): until `unwatchTranscript` says it unsubscribed (or it ends), or, `stream`, that the listen stream that named it ended.
   */
  readonly watchTranscript?: (conversationId: string, stream?: boolean) => void;
  /** This session unsubscribed from the transcript, or, `stream`, one of its listen streams that named it ended. */
  readonly unwatchTranscript?: (conversationId: string, stream?: boolean) => void;
  /** The conversation got an entry: every session watching it hears. Without it, only this session. */
  readonly transcriptChanged?: (conversationId: string) => void;
  /** This session hears about the task's status from now on (`notifications/tasks`, after the store found it the caller's): one more of its streams names it. */
  readonly watchTask?: (taskId: string) => void;
  /** One of this session's streams that named the task ended. */
  readonly unwatchTask?: (taskId: string) => void;
  /** The task's status may have changed: every session watching it is told what the store holds now. */
  readonly taskStatusChanged?: (taskId: string) => void;
  /**
   * The session's place in the store's session event log (a Streamable HTTP session on a PostgreSQL
   * store): kept with each task it starts, so a node that takes the task over can answer the request.
   */
  readonly answerTo?: { readonly session: string; readonly principal: string };
}
