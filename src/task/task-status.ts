// A harness task as a 2026-07-28 `tasks/get` sees it, read from the store alone so that any node answers:
// its conversation's status and times, and, once it ended, the harness_task result. That result is read
// in the same row as the status (the run stored it with its status: task-result.ts), so polling a
// finished task costs one row however long its transcript is. A task finished without a stored result
// has it rebuilt from the end of its transcript (task-result-tail.ts, bounded) by the pure task core
// (`resumeTask` finishes a finished run with the same `finish` action the live run answered with),
// shaped as task-run.ts shapes it.

import type { HarnessId } from '../harness/ids.ts';
import type { StoredTask } from '../mcp/effects.ts';
import type { AsyncConversationStore } from '../store/async-store.ts';
import type { Conversation, Entry } from '../store/store.ts';
import type { TaskRecord } from '../store/store.ts';
import type { ToolOutcome } from '../tools/contract.ts';
import { interruptedText, resumeTask, taskStructured } from './task-core.ts';
import { parkedRequest, REMOTE_ASKABLE, type ReaderOf } from './task-input.ts';
import { lastRun } from './task-result-tail.ts';
import { DEFAULT_MAX_TURNS } from '../limits.ts';
import { shownTtlMs } from '../store/retention.ts';

/** The caller's task `taskId` (its conversation), or null when it is not the caller's or does not exist: the two are not told apart. */
export async function readStoredTask(store: AsyncConversationStore, principal: string, taskId: string, caller: ReaderOf = REMOTE_ASKABLE): Promise<StoredTask | null> {
  const record = await store.taskRecord(taskId, principal);
  if (record === null) return null;
  const { conversation } = record;
  const times = { taskId: conversation.id, createdAt: iso(conversation.createdAt), lastUpdatedAt: iso(conversation.updatedAt), ttlMs: shownTtlMs(conversation) };
  if (conversation.status === 'running') return { ...times, status: 'running', outcome: null };
  if (conversation.status === 'input_required') return { ...times, status: 'input_required', outcome: null, question: await parkedRequest(store, record, principal, caller) };
  return { ...times, status: conversation.status, outcome: await finishedOutcome(store, principal, record, conversation.status) };
}

/** The stored result, else the one rebuilt from the end of the transcript (what a run cut by the bound has is counted from the entries read). */
async function finishedOutcome(store: AsyncConversationStore, principal: string, record: TaskRecord, status: Exclude<Conversation['status'], 'running' | 'input_required'>): Promise<ToolOutcome | null> {
  const { conversation, result } = record;
  if (result !== null) {
    return { text: result.text, isError: result.isError, structured: taskStructured(conversation.id, conversation.harness, status, result.text, result.turns, result.toolCalls) };
  }
  const tail = await lastRun(store, conversation.id, principal, record.lastSeq);
  if (tail === null) return null;
  const first = tail.entries[0];
  // Cut before its prompt: the run is replayed from the first entry read, as if a prompt stood before it.
  const entries = tail.from === 'cut' && first !== undefined ? [{ ...first, seq: first.seq - 1, type: 'user' as const, payload: { text: '' } }, ...tail.entries] : tail.entries;
  return outcomeOf(conversation, entries);
}

/**
 * The harness_task result of a conversation that is not running, from its transcript: the last run (from
 * its last `user` entry) as the task core finishes it. Null when the transcript holds no finished run
 * (a conversation interrupted mid-run: the text says so and how to continue it).
 */
export function outcomeOf(conversation: Conversation, entries: readonly Entry[]): ToolOutcome | null {
  if (conversation.status === 'interrupted') {
    const why = lastOfRun(entries, 'interrupted');
    const message = typeof why?.message === 'string' ? why.message : 'its process stopped before it finished, or it waits for a model turn of its client';
    const text = interruptedText(conversation.id, message);
    return { text, isError: true, structured: taskStructured(conversation.id, conversation.harness, 'interrupted', text, 0, 0) };
  }
  if (!entries.some((e) => e.type === 'user')) return null;
  const setup = { conversationId: conversation.id, harness: conversation.harness as HarnessId, maxTurns: DEFAULT_MAX_TURNS, local: false, forbidWrites: false, canConfirm: false };
  const finish = resumeTask(setup, entries).actions.find((a) => a.a === 'finish');
  if (finish === undefined || finish.a !== 'finish') return null;
  return { text: finish.text, isError: finish.isError, structured: taskStructured(conversation.id, conversation.harness, finish.status, finish.text, finish.turns, finish.toolCalls) };
}

/** The payload of the last entry of `type` in the last run (after the last `user` entry). */
function lastOfRun(entries: readonly Entry[], type: Entry['type']): Record<string, unknown> | undefined {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i];
    if (e === undefined || e.type === 'user') return undefined;
    if (e.type === type && typeof e.payload === 'object' && e.payload !== null) return e.payload as Record<string, unknown>;
  }
  return undefined;
}

/** Store times are milliseconds since the epoch (wall clock); the wire wants ISO-8601. */
const iso = (ms: number): string => new Date(ms).toISOString();
