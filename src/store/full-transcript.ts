// A conversation's whole transcript, read page by page (MAX_ENTRIES_LIMIT entries a page) through the
// store's principal-taking reads: what a task resumed from the store, or a round of it, rebuilds its state
// from. (A `tasks/get` of a finished task reads its stored result, or the end of the transcript alone:
// task/task-result-tail.ts.) Not bounded in total, by count or bytes: the model is sent the whole
// conversation (task-core.ts `historyOf`), so a resumed task or a round loads every entry, each up to
// DEFAULT_MAX_PAYLOAD_BYTES, however many runs `conversation_id` has continued it for.

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
