// Undo for super-pi-code: the content of every file is recorded before the task changes it — durably,
// before the write (write-ahead) — and after, and undo reverts a conversation's changes newest first,
// refusing, and naming, any file that someone else has changed since.

import type { AsyncConversationStore } from '../store/async-store.ts';
import { FileRefusedError, isMissing, readConfinedFile, removeConfinedFile, writeConfinedFile } from '../tools/confined-file.ts';
import { ToolError, type ToolOutcome } from '../tools/contract.ts';
import { MAX_SNAPSHOT_BYTES } from '../limits.ts';
import { type Entry, type EntryType, MAX_ENTRIES_LIMIT } from '../store/store.ts';
import { type BeforeImage, type FileSnapshot, isBeforeImage } from './file-snapshot.ts';

/** One change to undo: a tool call's before-image and, when it was recorded, the content it left. */
interface Change {
  readonly path: string;
  before: string | null;
  /** undefined: the call was interrupted between its before-image and its after-image (result unknown). */
  after: string | null | undefined;
  /** The entries of the change (marked undone together). */
  readonly seqs: number[];
}

/**
 * The conversation's changes still to undo, newest first (by the entry that began each). Entries of one
 * tool call are one change: its before-image is the true original even when a re-run after a crash
 * recorded a completed snapshot later; entries without a call id (older transcripts) stand alone.
 */
function changesToUndo(entries: readonly Entry[]): Change[] {
  const undone = new Set(entries.filter((e) => e.type === 'undo').flatMap((e) => (e.payload as { reverted: number[] }).reverted));
  const byCall = new Map<string, Change>();
  const changes: Change[] = [];
  for (const e of entries) {
    if (e.type !== 'file_snapshot' || undone.has(e.seq)) continue;
    const p = e.payload as (FileSnapshot | BeforeImage) & { id?: string };
    const key = typeof p.id === 'string' ? p.id : `#${e.seq}`;
    let change = byCall.get(key);
    if (change === undefined) {
      change = { path: p.path, before: p.before, after: undefined, seqs: [] };
      byCall.set(key, change);
      changes.push(change);
    }
    change.seqs.push(e.seq);
    if (!isBeforeImage(p)) change.after = p.after;
  }
  return changes.reverse();
}

/** The file's content now, or null when it does not exist. */
export async function currentContent(workspace: string, userPath: string): Promise<string | null> {
  // The confined read: a FIFO or device is refused on its descriptor instead of hanging the snapshot.
  try {
    const { bytes } = await readConfinedFile(workspace, userPath, MAX_SNAPSHOT_BYTES, { usedAs: 'snapshotted for undo' });
    return bytes.toString('utf8');
  } catch (err) {
    if (isMissing(err)) return null;
    if (err instanceof FileRefusedError && err.reason === 'too-large') {
      throw new ToolError(`${userPath} is larger than ${MAX_SNAPSHOT_BYTES} bytes; super-pi-code does not change files it cannot undo`, { cause: err });
    }
    throw err;
  }
}

/**
 * Every `file_snapshot` and `undo` entry of the conversation, in order, read page by page — however long it
 * is — with the store's type filter, so its message entries are not loaded; null when it is not the caller's.
 */
async function changeEntries(store: AsyncConversationStore, conversationId: string, principal: string): Promise<Entry[] | null> {
  const all: Entry[] = [];
  for (;;) {
    const page = await store.entriesPage(conversationId, principal, { afterSeq: all.at(-1)?.seq ?? 0, limit: MAX_ENTRIES_LIMIT, types: CHANGE_TYPES });
    if (page === null) return null;
    all.push(...page.entries);
    if (!page.more || page.entries.length === 0) return all;
  }
}

const CHANGE_TYPES: readonly EntryType[] = ['file_snapshot', 'undo'];

export async function undoConversation(store: AsyncConversationStore, conversationId: string, principal: string, workspace: string): Promise<ToolOutcome> {
  const entries = await changeEntries(store, conversationId, principal);
  if (entries === null) throw new ToolError(`conversation ${conversationId} not found`);
  const changes = changesToUndo(entries);
  if (changes.length === 0) {
    return { text: `Nothing to undo in conversation ${conversationId}.`, structured: { conversation_id: conversationId, reverted: 0, reverted_paths: [], interrupted: 0, refused: [] } };
  }
  const reverted: number[] = [];
  const revertedPaths: string[] = [];
  const refused: string[] = [];
  const seenRefused = new Set<string>();
  let changed = 0;
  let interrupted = 0;
  for (const change of changes) {
    // Once a newer change to a file was refused, older changes to it cannot be reverted either.
    if (seenRefused.has(change.path)) continue;
    // A call that failed left the file as it was: nothing to revert, nothing to report.
    if (change.after !== undefined && change.after === change.before) continue;
    const now = await currentContent(workspace, change.path);
    // A change interrupted before its after-image has no known result: whatever the file holds is taken
    // to be what the interrupted write left (a later change of this conversation was reverted first).
    if (change.after !== undefined && now !== change.after) {
      seenRefused.add(change.path);
      refused.push(change.path);
      continue;
    }
    reverted.push(...change.seqs);
    // Interrupted before it wrote anything: consumed, not reported.
    if (change.after === undefined && now === change.before) continue;
    if (change.after === undefined) interrupted++;
    if (change.before === null) await removeConfinedFile(workspace, change.path);
    else await writeConfinedFile(workspace, change.path, change.before);
    changed++;
    revertedPaths.push(change.path);
  }
  // Committed before the reply that reports it: a retried undo must see what this one reverted.
  await store.append(conversationId, 'undo', { reverted, refused });
  const lines = [`Reverted ${changed} change(s) of conversation ${conversationId}, newest first: ${[...new Set(revertedPaths)].join(', ') || '(none)'}.`];
  if (interrupted > 0) lines.push(`${interrupted} of them had been interrupted before their result was recorded; restored to the content recorded before them.`);
  if (refused.length > 0) lines.push(`Refused (changed since by someone else): ${refused.join(', ')}.`);
  return {
    text: lines.join('\n'),
    isError: refused.length > 0,
    structured: { conversation_id: conversationId, reverted: changed, reverted_paths: [...new Set(revertedPaths)], interrupted, refused },
  };
}
