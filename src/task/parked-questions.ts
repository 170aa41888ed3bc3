// The questions a task parked for its person waits at, and the answers recorded so far (docs/tasks-extension.md,
// "Several questions at once"). One model turn may ask for several calls; when more than one of them is under
// `ask`, a Tasks-extension task parks once with all their questions (at most MAX_PARKED_QUESTIONS), each its own
// input request, and `tasks/update` may answer any subset: each answer but the last is a `person_answer` entry
// (store.ts `recordParkedAnswer`) after the park, the last resumes the task. Pure: the round that parks and
// resumes (task-rounds.ts) and the readers of a parked task (task-input.ts) compute the same from the transcript.

import type { ToolCall } from '../model/types.ts';
import type { Entry } from '../store/store.ts';
import { confirmationOf, type TaskAction, type TaskStep } from './task-core.ts';

/** A call the person is asked about, and the question's text. */
export interface ParkedQuestion {
  readonly call: ToolCall;
  readonly confirm: string;
}

/** The person's answer as the round reads it (mcp/round-trip.ts `readPersonAnswer`): run the call, or the refusal the model reads. */
export interface PersonAnswer {
  readonly allowed: boolean;
  readonly refusal: string;
}

/** A `person_answer` entry's payload: the input request's key, the call it is about, the answer. */
export interface RecordedAnswer extends PersonAnswer {
  readonly key: string;
  readonly id: string;
}

/** The call of this step the person must be asked about, if any (a step starts at most one call). */
export function questionIn(step: TaskStep): ParkedQuestion | undefined {
  const tool = step.actions.find((a): a is Extract<TaskAction, { a: 'tool' }> => a.a === 'tool');
  return tool?.confirm === undefined ? undefined : { call: tool.call, confirm: tool.confirm };
}

/**
 * The questions a step parks at: the call it dispatches and, queued behind it in the same model turn, each call
 * under `ask` (the calls that run or are refused without a question are not asked), in the turn's order, at
 * most `limit`. None when the dispatched call needs no question.
 */
export function parkQuestions(step: TaskStep, limit: number): ParkedQuestion[] {
  const first = questionIn(step);
  if (first === undefined) return [];
  const questions = [first];
  for (const call of step.state.queue) {
    if (questions.length >= limit) break;
    const confirm = confirmationOf(step.state.setup, call);
    if (confirm !== undefined) questions.push({ call, confirm });
  }
  return questions;
}

/**
 * The key of the `index`th of `count` questions parked at model turn `turn`, the transcript ending at `seq`
 * when it parked: `confirm-<turn>-<seq>` alone, `confirm-<turn>-<seq>-<n>` (n from 1) for several. Minted from
 * the place, so an answer to an earlier park never matches a later one.
 */
export const confirmKey = (turn: number, seq: number, index: number, count: number): string =>
  count === 1 ? `confirm-${turn}-${seq}` : `confirm-${turn}-${seq}-${index + 1}`;

/**
 * A parked task's transcript split at its park: the entries up to it (what the task core resumes from) and the
 * answers recorded after it, in the order they landed. Answers are the only entries written while it is parked.
 */
export function splitAnswers(entries: readonly Entry[]): { readonly upToPark: readonly Entry[]; readonly answers: readonly RecordedAnswer[] } {
  let end = entries.length;
  while (end > 0 && entries[end - 1]?.type === 'person_answer') end--;
  const answers: RecordedAnswer[] = [];
  for (const entry of entries.slice(end)) {
    const answer = recordedAnswer(entry.payload);
    if (answer !== null) answers.push(answer);
  }
  return { upToPark: end === entries.length ? entries : entries.slice(0, end), answers };
}

function recordedAnswer(payload: unknown): RecordedAnswer | null {
  if (typeof payload !== 'object' || payload === null) return null;
  const p = payload as Record<string, unknown>;
  if (typeof p.key !== 'string' || typeof p.id !== 'string' || typeof p.allowed !== 'boolean' || typeof p.refusal !== 'string') return null;
  return { key: p.key, id: p.id, allowed: p.allowed, refusal: p.refusal };
}
