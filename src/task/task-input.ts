// A Tasks-extension task parked at a question to its person (`input_required`, SEP-2663): the question read
// back from the transcript alone, so that `tasks/get` on any node shows it and `tasks/update` on any node
// knows what an answer answers. The round that parked it (task-rounds.ts) stopped before the call's
// `tool_call` entry, so the pure task core resumed from the transcript is at that call again.

import type { HarnessId } from '../harness/ids.ts';
import type { AsyncConversationStore } from '../store/async-store.ts';
import type { Conversation } from '../store/store.ts';
import { fullTranscript } from '../store/full-transcript.ts';
import { resumeTask } from './task-core.ts';
import { questionIn, waitsForPerson } from './task-rounds.ts';
import { MAX_TURNS_LIMIT } from '../limits.ts';

/** The question a parked task waits at: the key of its input request, its place, and what the form says. */
export interface ParkedQuestion {
  /** `confirm-<turn>-<seq>`: minted from the task's place, so an answer to an earlier question never matches a later one. */
  readonly key: string;
  readonly turn: number;
  /** The transcript's last entry when it parked: the resume is taken only while it still ends there. */
  readonly seq: number;
  readonly message: string;
}

/** The key of the input request of the question at model turn `turn`, the transcript ending at `seq`. */
export const inputKey = (turn: number, seq: number): string => `confirm-${turn}-${seq}`;

/**
 * The question the caller's parked task `conversation` waits at, from its transcript; null when the
 * transcript shows none (it is not the caller's any more, or was changed by hand). The core is resumed as a
 * task that can ask (`canConfirm`), by a remote caller (the local user is never asked from inside a task),
 * with the largest turn limit, which stops no run before its own did.
 */
export async function parkedQuestion(store: AsyncConversationStore, conversation: Conversation, principal: string): Promise<ParkedQuestion | null> {
  const entries = await fullTranscript(store, conversation.id, principal);
  if (entries === null || !entries.some((e) => e.type === 'user')) return null;
  const setup = { conversationId: conversation.id, harness: conversation.harness as HarnessId, maxTurns: MAX_TURNS_LIMIT, local: false, forbidWrites: false, canConfirm: true };
  const step = resumeTask(setup, entries);
  const question = questionIn(step);
  const turn = step.state.turn;
  if (question === undefined || !waitsForPerson(step, turn)) return null;
  const seq = entries.at(-1)?.seq ?? 0;
  return { key: inputKey(turn, seq), turn, seq, message: question.confirm };
}
