// What a task reads of its conversation to rebuild its state (task-core.ts `resumeTask`), at its start, at
// each restart after a crash and at each round of a round-trip run: every entry but the file snapshots
// before the last model turn — which neither the model's history (`historyOf`) nor the resume uses, and
// which are the large entries (whole file contents, for undo) — and every entry after it, snapshots
// included (a call of that turn interrupted mid-write is re-run against its before-image). The store
// filters by type, so the snapshots left out are never loaded. Bounded: at most TASK_HISTORY_MAX_BYTES of
// payload (plus, at most, the one entry that crosses it); past it the task is refused, not truncated —
// docs/limits.md says why.

import type { AsyncConversationStore } from '../store/async-store.ts';
import { ENTRY_TYPES, type Entry, type EntryType, MAX_ENTRIES_LIMIT } from '../store/store.ts';
import { TASK_HISTORY_MAX_BYTES } from '../limits.ts';

/** The entry types of a task's history before its last model turn: all but the file snapshots. */
export const HISTORY_TYPES: readonly EntryType[] = ENTRY_TYPES.filter((t) => t !== 'file_snapshot');

export type TaskHistory =
  /** The entries, in seq order: what `resumeTask` needs, and the transcript's last entry among them. */
  | { readonly entries: Entry[] }
  /** Over the bound: why the task cannot go on (the task records it and fails). */
  | { readonly refused: string };

/** The bytes an entry's payload counts for, as the store records them: its JSON text as UTF-8. */
const bytesOf = (e: Entry): number => Buffer.byteLength(JSON.stringify(e.payload), 'utf8');

class OverBound extends Error {}

/** The caller's conversation as a task reads it, or null when it is not the caller's or does not exist. */
export async function taskHistory(store: AsyncConversationStore, conversationId: string, principal: string, maxBytes = TASK_HISTORY_MAX_BYTES): Promise<TaskHistory | null> {
  let read = 0;
  /** Every entry of `types` after `afterSeq`, page by page, each page cut at the bytes left; null: not the caller's. */
  const all = async (afterSeq: number, types: readonly EntryType[]): Promise<Entry[] | null> => {
    const out: Entry[] = [];
    for (;;) {
      const page = await store.entriesPage(conversationId, principal, { afterSeq: out.at(-1)?.seq ?? afterSeq, limit: MAX_ENTRIES_LIMIT, maxBytes: Math.max(1, maxBytes - read), types });
      if (page === null) return null;
      for (const e of page.entries) read += bytesOf(e);
      // A page past the bound is its first entry alone, larger than what was left: nothing more is read.
      if (read > maxBytes) throw new OverBound();
      out.push(...page.entries);
      if (!page.more || page.entries.length === 0) return out;
    }
  };
  try {
    const history = await all(0, HISTORY_TYPES);
    if (history === null) return null;
    let lastModel = history.length - 1;
    while (lastModel >= 0 && history[lastModel]?.type !== 'model') lastModel--;
    if (lastModel < 0) return { entries: history };
    const snapshots = await all((history[lastModel] as Entry).seq, ['file_snapshot']);
    if (snapshots === null) return null;
    return { entries: merged(history, snapshots) };
  } catch (err) {
    if (!(err instanceof OverBound)) throw err;
    return {
      refused: `conversation ${conversationId} has more than TASK_HISTORY_MAX_BYTES (${maxBytes} bytes) of history, more than a task loads: ` +
        'it cannot be continued. Start a new conversation (harness_task without conversation_id); its transcript stays readable as it is.',
    };
  }
}

/** Two runs of entries, each in seq order, as one. */
function merged(a: readonly Entry[], b: readonly Entry[]): Entry[] {
  if (b.length === 0) return [...a];
  const out: Entry[] = [];
  let j = 0;
  for (const e of a) {
    while (j < b.length && (b[j] as Entry).seq < e.seq) out.push(b[j++] as Entry);
    out.push(e);
  }
  while (j < b.length) out.push(b[j++] as Entry);
  return out;
}
