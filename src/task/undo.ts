// Undo for super-pi-code: the content of every file is recorded before the task changes it (and after),
// and undo reverts a conversation's changes newest first — refusing, and naming, any file that someone
// else has changed since.

import type { AsyncConversationStore } from '../store/async-store.ts';
import { FileRefusedError, isMissing, readConfinedFile, removeConfinedFile, writeConfinedFile } from '../tools/confined-file.ts';
import { ToolError, type ToolOutcome } from '../tools/contract.ts';
import { MAX_SNAPSHOT_BYTES } from '../limits.ts';

export interface FileSnapshot {
  readonly path: string;
  /** null: the file did not exist. */
  readonly before: string | null;
  readonly after: string | null;
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

export async function undoConversation(store: AsyncConversationStore, conversationId: string, principal: string, workspace: string): Promise<ToolOutcome> {
  const entries = await store.entries(conversationId, principal);
  if (entries === null) throw new ToolError(`conversation ${conversationId} not found`);
  const undone = new Set(entries.filter((e) => e.type === 'undo').flatMap((e) => (e.payload as { reverted: number[] }).reverted));
  const snapshots = entries.filter((e) => e.type === 'file_snapshot' && !undone.has(e.seq)).reverse();
  if (snapshots.length === 0) return { text: `Nothing to undo in conversation ${conversationId}.` };
  const reverted: number[] = [];
  const revertedPaths: string[] = [];
  const refused: string[] = [];
  const seenRefused = new Set<string>();
  for (const e of snapshots) {
    const snap = e.payload as FileSnapshot;
    // Once a newer change to a file was refused, older changes to it cannot be reverted either.
    if (seenRefused.has(snap.path)) continue;
    const now = await currentContent(workspace, snap.path);
    if (now !== snap.after) {
      seenRefused.add(snap.path);
      refused.push(snap.path);
      continue;
    }
    if (snap.before === null) await removeConfinedFile(workspace, snap.path);
    else await writeConfinedFile(workspace, snap.path, snap.before);
    reverted.push(e.seq);
    revertedPaths.push(snap.path);
  }
  // Committed before the reply that reports it: a retried undo must see what this one reverted.
  await store.append(conversationId, 'undo', { reverted, refused });
  const lines = [`Reverted ${reverted.length} change(s) of conversation ${conversationId}, newest first: ${[...new Set(revertedPaths)].join(', ') || '(none)'}.`];
  if (refused.length > 0) lines.push(`Refused (changed since by someone else): ${refused.join(', ')}.`);
  return { text: lines.join('\n'), isError: refused.length > 0, structured: { conversation_id: conversationId, reverted: reverted.length, refused } };
}
