// A conversation's whole transcript, read page by page (MAX_ENTRIES_LIMIT entries a page) through the
// store's principal-taking reads: what a task resumed from the store, or a round of it, rebuilds its state
// from. (A `tasks/get` of a finished task reads its stored result, or the end of the transcript alone:
// task/task-result-tail.ts.)

import type { AsyncConversationStore } from './async-store.ts';
import { type Entry, MAX_ENTRIES_LIMIT } from './store.ts';

/** Every entry of the caller's conversation, in order; null when it is not the caller's or does not exist. */
export async function fullTranscript(store: AsyncConversationStore, conversationId: string, principal: string): Promise<Entry[] | null> {
  const all: Entry[] = [];
  for (;;) {
    const page = await store.entries(conversationId, principal, { afterSeq: all.at(-1)?.seq ?? 0, limit: MAX_ENTRIES_LIMIT });
    if (page === null) return null;
    all.push(...page);
    if (page.length < MAX_ENTRIES_LIMIT) return all;
  }
}
