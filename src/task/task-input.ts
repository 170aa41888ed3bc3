// A Tasks-extension task parked for input (`input_required`, SEP-2663): what it waits for, read back from the
// transcript alone, so that `tasks/get` on any node shows it and `tasks/update` on any node knows what an
// answer answers. Either its person's yes or no to a call under `ask` (the round stopped before the call's
// `tool_call` entry, so the pure task core resumed from the transcript is at that call again), or its
// client's model's turn (the core resumed asks for that turn and nothing else first).

import type { CreateMessageRequest } from '@modelcontextprotocol/sdk/types.js';
import type { HarnessId } from '../harness/ids.ts';
import type { StoredTask } from '../mcp/effects.ts';
import type { AsyncConversationStore } from '../store/async-store.ts';
import type { Conversation } from '../store/store.ts';
import { fullTranscript } from '../store/full-transcript.ts';
import { resumeTask, type TaskSetup } from './task-core.ts';
import { questionIn, roundTools, turnParams, waitsForModel, waitsForPerson } from './task-rounds.ts';
import { MAX_TURNS_LIMIT } from '../limits.ts';

/** Where a parked task waits: the key of its input request, its place (model turn, last entry's seq), and the request. */
export type ParkedInput =
  | { readonly kind: 'ask'; readonly key: string; readonly turn: number; readonly seq: number; readonly message: string }
  | { readonly kind: 'turn'; readonly key: string; readonly turn: number; readonly seq: number; readonly params: CreateMessageRequest['params'] };

/**
 * The keys of the input requests: minted from the task's place, so an answer to an earlier question or turn
 * never matches a later one, and a person's answer never a model turn's.
 */
export const inputKey = (kind: ParkedInput['kind'], turn: number, seq: number): string => `${kind === 'ask' ? 'confirm' : 'sample'}-${turn}-${seq}`;

/**
 * What the caller's parked task `conversation` waits for, from its transcript; null when the transcript shows
 * nothing to wait for (changed by hand). The core is resumed as a task that can ask (so a question parked at
 * is seen as one, whoever reads it) with the largest turn limit, which stops no run before its own did.
 * `caller`: who reads it (local, forbidden writes, and whether the reading client can be asked): a model
 * turn's params describe the tools its rounds would offer that caller.
 */
export async function parkedInput(store: AsyncConversationStore, conversation: Conversation, principal: string, caller: ReaderOf): Promise<ParkedInput | null> {
  const entries = await fullTranscript(store, conversation.id, principal);
  if (entries === null || !entries.some((e) => e.type === 'user')) return null;
  const harness = conversation.harness as HarnessId;
  const step = resumeTask({ conversationId: conversation.id, harness, maxTurns: MAX_TURNS_LIMIT, ...caller, canConfirm: true }, entries);
  const seq = entries.at(-1)?.seq ?? 0;
  const turn = step.state.turn;
  const question = questionIn(step);
  if (question !== undefined && waitsForPerson(step, turn)) return { kind: 'ask', key: inputKey('ask', turn, seq), turn, seq, message: question.confirm };
  const model = step.actions.at(-1);
  if (model?.a !== 'model' || !waitsForModel(step, model.turn)) return null;
  return { kind: 'turn', key: inputKey('turn', model.turn, seq), turn: model.turn, seq, params: turnParams(harness, roundTools(harness, caller), model.messages) };
}

/** Who reads a parked task: local or not, forbidden writes, and whether the reading client can be asked. */
export type ReaderOf = Pick<TaskSetup, 'local' | 'forbidWrites' | 'canConfirm'>;
/** A remote caller that can be asked: the reader `tasks/get` assumes when none is named. */
export const REMOTE_ASKABLE: ReaderOf = { local: false, forbidWrites: false, canConfirm: true };

/** What `tasks/get` shows of a parked task's input: the question's text, or the model turn's params (null: none shown). */
export async function parkedRequest(store: AsyncConversationStore, conversation: Conversation, principal: string, caller: ReaderOf): Promise<StoredTask['question']> {
  const input = await parkedInput(store, conversation, principal, caller);
  if (input === null) return null;
  return input.kind === 'ask' ? { key: input.key, message: input.message } : { key: input.key, params: input.params };
}
