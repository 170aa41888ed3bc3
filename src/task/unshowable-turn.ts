// A task on its client's model parked at a turn whose sampling request no node can rebuild within one
// poll's bound (its conversation is longer than TASK_RESULT_TAIL_ENTRIES entries or TASK_RESULT_TAIL_BYTES of
// payload: task-input.ts). Shown as `input_required` with no input request, the client could not answer it
// and would only wait out TASK_INPUT_WAIT_MS; so the node that finds it (the one that parked it, at once, or
// any node's `tasks/get`) ends it `interrupted`, saying why and how to go on.
//
// Of several nodes finding it at once, one ends it: the decision is one conditional write, the claim of the
// parked place (`resumeParkedTask`: only while the task is still `input_required` at that seq, as an answer's
// resume and the wait's expiry claim it), and the status written after it is fenced by the epoch it won. An
// answer that took the place first wins whole, and the task goes on.

import type { AsyncConversationStore } from '../store/async-store.ts';
import { parkedInput, type ReaderOf } from './task-input.ts';
import { TASK_RESULT_TAIL_BYTES, TASK_RESULT_TAIL_ENTRIES } from '../limits.ts';

/** The result (and so `tasks/get`'s statusMessage and error) of a task ended here. */
export function unshowableTurnText(conversationId: string): string {
  return `The task was interrupted: its conversation is too long to send to its client's model (a sampling request is rebuilt from at most ${TASK_RESULT_TAIL_ENTRIES} transcript entries and ${TASK_RESULT_TAIL_BYTES / 1024 / 1024} MiB of payload, TASK_RESULT_TAIL_ENTRIES and TASK_RESULT_TAIL_BYTES, and this conversation is longer), so its next turn could not be asked for. Its transcript is kept: continue it with harness_task conversation_id ${conversationId} on a server with a model of its own, or start a new conversation.`;
}

/**
 * Ends the principal's task `interrupted` when it is parked at a client-model turn whose request a poll
 * cannot rebuild. True when this call ended it; false when the task waits for anything else (a question, a
 * turn that is shown), is not parked, or another node's write (an answer, a cancel, this same end) came first.
 * `changed`: told once the status is written (the task's status listeners hear it).
 */
export async function endUnshowableTurn(store: AsyncConversationStore, taskId: string, principal: string, reader: ReaderOf, changed?: (taskId: string) => void): Promise<boolean> {
  const record = await store.taskRecord(taskId, principal);
  if (record === null || record.conversation.status !== 'input_required') return false;
  // Bounded and kept (parked-input-cache.ts): the polls that follow on this node read nothing more.
  const input = await parkedInput(store, record, principal, reader);
  if (input?.kind !== 'turn' || input.params !== null) return false;
  const claimed = await store.resumeParkedTask(taskId, principal, input.seq);
  if (claimed === null) return false;
  // The park kept the run's counts with its status; the result keeps them.
  const counts = record.result;
  await store.setStatus(taskId, 'interrupted', claimed.lease.epoch, { text: unshowableTurnText(taskId), isError: true, turns: counts?.turns ?? 0, toolCalls: counts?.toolCalls ?? 0 });
  changed?.(taskId);
  return true;
}
