// A Tasks-extension task parked for input (`input_required`, SEP-2663): what it waits for, read back from the
// store alone, so that `tasks/get` on any node shows it and `tasks/update` on any node knows what an
// answer answers. Either its person's yes or no to a call under `ask` (the round stopped before the call's
// `tool_call` entry, so the pure task core resumed from the transcript is at that call again), or its
// client's model's turn (the core resumed asks for that turn and nothing else first).
//
// A poll is bounded work (docs/tasks-extension.md, "What a poll costs"): the last run alone is read,
// backwards (task-result-tail.ts), and for a model turn the earlier runs its request carries, all within
// one poll's bound; what was rebuilt is kept on the node for the next polls of the same place
// (parked-input-cache.ts). A last run longer than the bound is replayed from the entries read, its turn
// numbered by the counts its park stored with the status (the pending call or turn is at its end).

import type { CreateMessageRequest } from '@modelcontextprotocol/sdk/types.js';
import type { HarnessId } from '../harness/ids.ts';
import type { StoredTask } from '../mcp/effects.ts';
import type { AsyncConversationStore } from '../store/async-store.ts';
import type { Entry, TaskRecord } from '../store/store.ts';
import { historyOf, resumeTask, type TaskSetup } from './task-core.ts';
import { ParkedInputCache } from './parked-input-cache.ts';
import { questionIn, roundTools, turnParams, waitsForModel, waitsForPerson } from './task-rounds.ts';
import { confirmKey, parkQuestions, splitAnswers } from './parked-questions.ts';
import { readBack, TAIL_BUDGET, type TailBudget } from './task-result-tail.ts';
import { MAX_PARKED_QUESTIONS, MAX_TURNS_LIMIT, TASK_RESULT_TAIL_BYTES, TASK_RESULT_TAIL_ENTRIES } from '../limits.ts';

/**
 * Where a parked task waits: the key of its input request, its place (model turn, last entry's seq), and the
 * request. A model turn's `params` are null when its conversation is longer than one poll reads (`tooLong` says so).
 */
export type ParkedInput =
  /**
   * Its person's yes or no to the calls under `ask` of model turn `turn`, parked at `seq`: the questions not
   * answered yet (`pending`, in the turn's order; the others' answers are entries after the park, the
   * transcript now ending at `lastSeq`, where a resume claims it).
   */
  | { readonly kind: 'ask'; readonly turn: number; readonly seq: number; readonly lastSeq: number; readonly pending: readonly PendingQuestion[] }
  | { readonly kind: 'turn'; readonly key: string; readonly turn: number; readonly seq: number; readonly params: CreateMessageRequest['params'] | null };

/** A question a parked task waits for the answer to: its input request's key, the call it is about, its text. */
export interface PendingQuestion {
  readonly key: string;
  readonly callId: string;
  readonly message: string;
}

/**
 * The keys of the input requests: minted from the task's place, so an answer to an earlier question or turn
 * never matches a later one, and a person's answer never a model turn's.
 */
export const inputKey = (kind: ParkedInput['kind'], turn: number, seq: number): string => `${kind === 'ask' ? 'confirm' : 'sample'}-${turn}-${seq}`;

/** Why a parked model turn's request is not shown: its conversation is longer than a poll reads. */
export const TOO_LONG_FOR_A_POLL = `the task waits for a model turn of its client, but its conversation is longer than one tasks/get reads (${TASK_RESULT_TAIL_ENTRIES} entries, ${TASK_RESULT_TAIL_BYTES / 1024 / 1024} MiB of payload), so its sampling request cannot be shown; cancel the task, or continue the conversation with a server model`;

/** Per store (one a node): what polls of parked places rebuilt. */
const cached = new WeakMap<AsyncConversationStore, ParkedInputCache<ParkedInput | null>>();

/**
 * What the caller's parked task waits for (`record`: its row, `taskRecord`), from its transcript; null when the
 * transcript shows nothing to wait for (changed by hand), or, its last run cut by the bound, its park stored no
 * counts. The core is resumed as a task that can ask (so a question parked at is seen as one, whoever reads
 * it) with the largest turn limit, which stops no run before its own did. `caller`: who reads it (local,
 * forbidden writes, and whether the reading client can be asked): a model turn's params describe the tools
 * its rounds would offer that caller.
 */
export async function parkedInput(store: AsyncConversationStore, record: TaskRecord, principal: string, caller: ReaderOf): Promise<ParkedInput | null> {
  const place = [principal, record.conversation.id, record.lastSeq, caller.local, caller.forbidWrites, caller.canConfirm].join('\n');
  let cache = cached.get(store);
  const kept = cache?.get(place);
  if (kept !== undefined) return kept;
  const read = await readParkedInput(store, record, principal, caller);
  // Only a parked place is kept: the transcript up to it is final while the task waits there.
  if (read === null || record.conversation.status !== 'input_required') return read?.input ?? null;
  if (cache === undefined) cached.set(store, cache = new ParkedInputCache());
  // What it holds: a question's text, or a model turn's request, as large as the payloads it was built from.
  cache.set(place, read.input, read.input?.kind === 'ask' ? read.input.pending.reduce((n, q) => n + q.message.length, 0) : read.chars);
  return read.input;
}

/**
 * The same, read with no bound and kept nowhere: for the one read that must find the place whatever the
 * transcript's length — a wait's expiry, which otherwise would never resume a task whose place a poll
 * cannot tell (a last run cut by the bound whose park stored no counts, or whose last model turn lies
 * before the entries read).
 */
export async function wholeParkedInput(store: AsyncConversationStore, record: TaskRecord, principal: string, caller: ReaderOf): Promise<ParkedInput | null> {
  return (await readParkedInput(store, record, principal, caller, UNBOUNDED))?.input ?? null;
}

const UNBOUNDED: TailBudget = { entries: Number.POSITIVE_INFINITY, chars: Number.POSITIVE_INFINITY };

async function readParkedInput(store: AsyncConversationStore, record: TaskRecord, principal: string, caller: ReaderOf, budget: TailBudget = TAIL_BUDGET): Promise<{ input: ParkedInput | null; chars: number } | null> {
  const { conversation } = record;
  const tail = await readBack(store, conversation.id, principal, record.lastSeq, true, budget);
  const first = tail?.entries[0];
  if (tail === null || tail.from === 'start' || first === undefined) return tail === null ? null : { input: null, chars: tail.chars };
  const cut = tail.from === 'cut';
  // Cut before its prompt: the run is replayed from the first entry read, as if a prompt stood before it,
  // and its turns numbered from the counts its park stored (the model turns before the entries read).
  const read: readonly Entry[] = cut ? [{ ...first, seq: first.seq - 1, type: 'user', payload: { text: '' } }, ...tail.entries] : tail.entries;
  // Answers to some of several questions follow the park: the core resumes from the entries before them.
  const { upToPark: entries, answers } = splitAnswers(read);
  const models = entries.filter((e) => e.type === 'model').length;
  const stored = record.result;
  if (cut && (stored === null || models === 0)) return { input: null, chars: tail.chars };
  const earlier = cut && stored !== null ? stored.turns - models : 0;
  const harness = conversation.harness as HarnessId;
  const step = resumeTask({ conversationId: conversation.id, harness, maxTurns: MAX_TURNS_LIMIT, ...caller, canConfirm: true }, entries);
  const seq = entries.at(-1)?.seq ?? 0;
  const chars = tail.chars;
  if (questionIn(step) !== undefined && waitsForPerson(step, step.state.turn)) {
    const turn = step.state.turn + earlier;
    const questions = parkQuestions(step, MAX_PARKED_QUESTIONS);
    const answered = new Set(answers.map((a) => a.key));
    const pending = questions.map((q, i) => ({ key: confirmKey(turn, seq, i, questions.length), callId: q.call.id, message: q.confirm })).filter((q) => !answered.has(q.key));
    return { input: { kind: 'ask', turn, seq, lastSeq: record.lastSeq, pending }, chars };
  }
  const model = step.actions.at(-1);
  if (model?.a !== 'model' || !waitsForModel(step, model.turn)) return { input: null, chars };
  const turn = model.turn + earlier;
  const place = { kind: 'turn', key: inputKey('turn', turn, seq), turn, seq } as const;
  if (cut) return { input: { ...place, params: null }, chars };
  // The request carries the conversation: its earlier runs are read too, within what the poll's bound left.
  const history = first.seq <= 1 ? { entries: [], read: 0, chars: 0, from: 'start' as const }
    : await readBack(store, conversation.id, principal, first.seq - 1, false, { entries: budget.entries - tail.read, chars: budget.chars - chars });
  if (history === null) return null;
  if (history.from !== 'start') return { input: { ...place, params: null }, chars: chars + history.chars };
  const messages = [...historyOf(history.entries), ...model.messages];
  return { input: { ...place, params: turnParams(harness, roundTools(harness, caller), messages) }, chars: chars + history.chars };
}

/** Who reads a parked task: local or not, forbidden writes, and whether the reading client can be asked. */
export type ReaderOf = Pick<TaskSetup, 'local' | 'forbidWrites' | 'canConfirm'>;
/** A remote caller that can be asked: the reader `tasks/get` assumes when none is named. */
export const REMOTE_ASKABLE: ReaderOf = { local: false, forbidWrites: false, canConfirm: true };

/** What `tasks/get` shows of a parked task's input: the question's text, or the model turn's params (null: none shown). */
export async function parkedRequest(store: AsyncConversationStore, record: TaskRecord, principal: string, caller: ReaderOf): Promise<StoredTask['question']> {
  const input = await parkedInput(store, record, principal, caller);
  if (input === null) return null;
  if (input.kind === 'ask') return { asks: input.pending.map(({ key, message }) => ({ key, message })) };
  return input.params === null ? { key: input.key, unshown: TOO_LONG_FOR_A_POLL } : { key: input.key, params: input.params };
}
