// What a task reads of its conversation to rebuild its state (task-core.ts `resumeTask`), at its start, at
// each restart after a crash and at each round of a round-trip run: every entry but the file snapshots
// before the last model turn — which neither the model's history (`historyOf`) nor the resume uses, and
// which are the large entries (whole file contents, for undo) — and every entry after it, snapshots
// included (a call of that turn interrupted mid-write is re-run against its before-image). The store
// filters by type, so the snapshots left out are never loaded. Bounded: at most TASK_HISTORY_MAX_BYTES of
// payload (plus, at most, the one entry that crosses it); past it the task is refused, not truncated —
// docs/limits.md says why. The bytes are the sizes the store recorded at each write (EntriesPage.payloadSizes),
// not payloads serialised again here.

import type { AsyncConversationStore } from '../store/async-store.ts';
import { ENTRY_TYPES, type Entry, type EntryType, MAX_ENTRIES_LIMIT } from '../store/store.ts';
import { TASK_HISTORY_MAX_BYTES } from '../limits.ts';

/** The entry types of a task's history before its last model turn: all but the file snapshots. */
export const HISTORY_TYPES: readonly EntryType[] = ENTRY_TYPES.filter((t) => t !== 'file_snapshot');

/** A task's history as read (or carried forward from one round to the next): its entries and the payload bytes they count for. */
export interface LoadedHistory {
  /** In seq order; the last is the transcript's last entry when it was read (or appended by the reader since). */
  readonly entries: readonly Entry[];
  /** `payloadSizes[i]`: the payload bytes `entries[i]` counts for. */
  readonly payloadSizes: readonly number[];
  /** Their sum. */
  readonly bytes: number;
}

export type TaskHistory =
  /** The entries, in seq order: what `resumeTask` needs, and the transcript's last entry among them. */
  | LoadedHistory
  /** Over the bound: why the task cannot go on (the task records it and fails). */
  | { readonly refused: string };

/** The history read so far is past the byte bound: nothing more is read. */
class OverBound extends Error {}

/**
 * What a read from `known` answers when the entries after it hold a model turn (another node ran the
 * conversation meanwhile): the snapshots `known` holds from before that turn would have to go, so the
 * history is read whole instead.
 */
const KNOWN_OUTDATED = 'known-outdated';

/** An entry and the payload bytes it counts for. */
interface Sized {
  readonly entry: Entry;
  readonly size: number;
}

/** Where the last model entry is, or -1. */
export function lastModelOf(entries: readonly Entry[]): number {
  let i = entries.length - 1;
  while (i >= 0 && entries[i]?.type !== 'model') i--;
  return i;
}

/**
 * The caller's conversation as a task reads it, or null when it is not the caller's or does not exist.
 * `known`: what a reader of this same conversation on this node loaded and appended up to its last entry
 * (round-history.ts); only the entries after it are read, since those before never change. Should they
 * hold a model turn (another node ran the conversation meanwhile) or pass the bound, it is read whole
 * instead, so the answer is always the one a whole read gives.
 */
export async function taskHistory(store: AsyncConversationStore, conversationId: string, principal: string, maxBytes = TASK_HISTORY_MAX_BYTES, known?: LoadedHistory): Promise<TaskHistory | null> {
  const from = known !== undefined && known.bytes <= maxBytes ? known : undefined;
  let history: TaskHistory | typeof KNOWN_OUTDATED | null;
  try {
    history = await read(store, conversationId, principal, maxBytes, from);
  } catch (err) {
    if (!(err instanceof OverBound)) throw err;
    // Over the bound from `known`: a whole read may still fit (it leaves out the snapshots before a later model turn).
    if (from !== undefined) return taskHistory(store, conversationId, principal, maxBytes);
    return {
      refused: `conversation ${conversationId} has more than TASK_HISTORY_MAX_BYTES (${maxBytes} bytes) of history, more than a task loads: ` +
        'it cannot be continued. Start a new conversation (harness_task without conversation_id); its transcript stays readable as it is.',
    };
  }
  return history === KNOWN_OUTDATED ? taskHistory(store, conversationId, principal, maxBytes) : history;
}

async function read(store: AsyncConversationStore, conversationId: string, principal: string, maxBytes: number, known: LoadedHistory | undefined): Promise<TaskHistory | typeof KNOWN_OUTDATED | null> {
  let bytes = known?.bytes ?? 0;
  /** Every entry of `types` after `afterSeq`, page by page, each page cut at the bytes left; null: not the caller's. */
  const all = async (afterSeq: number, types: readonly EntryType[]): Promise<Sized[] | null> => {
    const out: Sized[] = [];
    for (;;) {
      const page = await store.entriesPage(conversationId, principal, { afterSeq: out.at(-1)?.entry.seq ?? afterSeq, limit: MAX_ENTRIES_LIMIT, maxBytes: Math.max(1, maxBytes - bytes), types });
      if (page === null) return null;
      for (const size of page.payloadSizes) bytes += size;
      // A page past the bound is its first entry alone, larger than what was left: nothing more is read.
      if (bytes > maxBytes) throw new OverBound();
      out.push(...page.entries.map((entry, i) => ({ entry, size: page.payloadSizes[i] as number })));
      if (!page.more || page.entries.length === 0) return out;
    }
  };
  const start = known?.entries.at(-1)?.seq ?? 0;
  const added = await all(start, HISTORY_TYPES);
  if (added === null) return null;
  if (known !== undefined && added.some((s) => s.entry.type === 'model')) return KNOWN_OUTDATED;
  const history = [...(known?.entries.map((entry, i) => ({ entry, size: known.payloadSizes[i] as number })) ?? []), ...added];
  const lastModel = lastModelOf(history.map((s) => s.entry));
  if (lastModel < 0) return loaded(history, bytes);
  const snapshots = await all(Math.max((history[lastModel] as Sized).entry.seq, start), ['file_snapshot']);
  if (snapshots === null) return null;
  return loaded(merged(history, snapshots), bytes);
}

const loaded = (history: readonly Sized[], bytes: number): LoadedHistory =>
  ({ entries: history.map((s) => s.entry), payloadSizes: history.map((s) => s.size), bytes });

/** Two runs of entries, each in seq order, as one. */
function merged(a: readonly Sized[], b: readonly Sized[]): Sized[] {
  if (b.length === 0) return [...a];
  const out: Sized[] = [];
  let j = 0;
  for (const s of a) {
    while (j < b.length && (b[j] as Sized).entry.seq < s.entry.seq) out.push(b[j++] as Sized);
    out.push(s);
  }
  while (j < b.length) out.push(b[j++] as Sized);
  return out;
}
