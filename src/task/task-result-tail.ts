// The last run of a finished conversation, read backwards from its end: what a task's result is rebuilt
// from when the store kept none (task-status.ts). Bounded whatever the conversation's length: pages of
// TASK_RESULT_TAIL_PAGE entries back to the run's prompt (its last `user` entry), at most
// TASK_RESULT_TAIL_ENTRIES entries, and no page after TASK_RESULT_TAIL_BYTES of payload JSON were read.

import type { AsyncConversationStore } from '../store/async-store.ts';
import type { Entry } from '../store/store.ts';
import { TASK_RESULT_TAIL_BYTES, TASK_RESULT_TAIL_ENTRIES, TASK_RESULT_TAIL_PAGE } from '../limits.ts';

export interface RunTail {
  /** In seq order: from the run's prompt when `from` is `prompt`, else the entries read. */
  readonly entries: readonly Entry[];
  /** Where the read stopped: at the run's prompt, at the transcript's start (no prompt at all), or cut by the bound. */
  readonly from: 'prompt' | 'start' | 'cut';
}

/** The caller's conversation's last run, given its last seq; null when it is not the caller's (or is gone). */
export async function lastRun(store: AsyncConversationStore, conversationId: string, principal: string, lastSeq: number): Promise<RunTail | null> {
  const pages: Entry[][] = [];
  const floor = Math.max(0, lastSeq - TASK_RESULT_TAIL_ENTRIES);
  let high = lastSeq;
  let chars = 0;
  while (high > floor) {
    const low = Math.max(floor, high - TASK_RESULT_TAIL_PAGE);
    const page = await store.entries(conversationId, principal, { afterSeq: low, limit: high - low });
    if (page === null) return null;
    const prompt = lastPrompt(page);
    if (prompt >= 0) return { entries: [...page.slice(prompt), ...pages.reverse().flat()], from: 'prompt' };
    pages.push(page);
    high = low;
    for (const e of page) chars += JSON.stringify(e.payload)?.length ?? 0;
    if (chars >= TASK_RESULT_TAIL_BYTES) break;
  }
  return { entries: pages.reverse().flat(), from: high === 0 ? 'start' : 'cut' };
}

/** The index of the page's last `user` entry (a run's prompt), or -1. */
function lastPrompt(page: readonly Entry[]): number {
  for (let i = page.length - 1; i >= 0; i--) if (page[i]?.type === 'user') return i;
  return -1;
}
