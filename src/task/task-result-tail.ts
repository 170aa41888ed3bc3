// The end of a conversation's transcript, read backwards from its last seq: its last run (what a finished
// task's result is rebuilt from when the store kept none, task-status.ts; what a parked task's question is
// read from, task-input.ts), or, for a parked model turn, the whole conversation its request carries.
// Bounded whatever the conversation's length: pages of TASK_RESULT_TAIL_PAGE entries, at most
// TASK_RESULT_TAIL_ENTRIES entries, and no page after TASK_RESULT_TAIL_BYTES of payload JSON were read.

import type { AsyncConversationStore } from '../store/async-store.ts';
import type { Entry } from '../store/store.ts';
import { TASK_RESULT_TAIL_BYTES, TASK_RESULT_TAIL_ENTRIES, TASK_RESULT_TAIL_PAGE } from '../limits.ts';

export interface RunTail {
  /** In seq order: from the run's prompt when `from` is `prompt`, else the entries read. */
  readonly entries: readonly Entry[];
  /** Where the read stopped: at the run's prompt, at the transcript's start (no prompt at all), or cut by the bound. */
  readonly from: 'prompt' | 'start' | 'cut';
  /** Entries read, and their payload JSON characters (what the bounds count): the prompt's page is read whole. */
  readonly read: number;
  readonly chars: number;
}

/** What one backwards read may still take: entries and payload JSON characters. */
export interface TailBudget {
  readonly entries: number;
  readonly chars: number;
}

/** The whole bound of one poll's reads. */
export const TAIL_BUDGET: TailBudget = { entries: TASK_RESULT_TAIL_ENTRIES, chars: TASK_RESULT_TAIL_BYTES };

/** The caller's conversation's last run, given its last seq; null when it is not the caller's (or is gone). */
export function lastRun(store: AsyncConversationStore, conversationId: string, principal: string, lastSeq: number): Promise<RunTail | null> {
  return readBack(store, conversationId, principal, lastSeq, true, TAIL_BUDGET);
}

/**
 * The entries up to `lastSeq` read backwards within `budget`: back to the last `user` entry (`untilPrompt`),
 * else back to the transcript's start (`from` is then `start` when it was reached). Null as `lastRun`.
 */
export async function readBack(store: AsyncConversationStore, conversationId: string, principal: string, lastSeq: number, untilPrompt: boolean, budget: TailBudget): Promise<RunTail | null> {
  const pages: Entry[][] = [];
  const floor = Math.max(0, lastSeq - budget.entries);
  let high = lastSeq;
  let chars = 0;
  let read = 0;
  while (high > floor) {
    const low = Math.max(floor, high - TASK_RESULT_TAIL_PAGE);
    const page = await store.entries(conversationId, principal, { afterSeq: low, limit: high - low });
    if (page === null) return null;
    read += page.length;
    chars += charsOf(page);
    const prompt = untilPrompt ? lastPrompt(page) : -1;
    if (prompt >= 0) return { entries: [...page.slice(prompt), ...pages.reverse().flat()], from: 'prompt', read, chars };
    pages.push(page);
    high = low;
    if (chars >= budget.chars) break;
  }
  return { entries: pages.reverse().flat(), from: high === 0 ? 'start' : 'cut', read, chars };
}

const charsOf = (entries: readonly Entry[]): number => entries.reduce((n, e) => n + (JSON.stringify(e.payload)?.length ?? 0), 0);

/** The index of the page's last `user` entry (a run's prompt), or -1. */
function lastPrompt(page: readonly Entry[]): number {
  for (let i = page.length - 1; i >= 0; i--) if (page[i]?.type === 'user') return i;
  return -1;
}
