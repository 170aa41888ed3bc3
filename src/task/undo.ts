// Undo for super-pi-code: the content of every file is recorded before the task changes it — durably,
// before the write (write-ahead) — and after, and undo reverts a conversation's changes newest first,
// refusing, and naming, any file that someone else has changed since. What to revert is planned from
// digests of the recorded contents (undo-plan.ts), not from the contents themselves.

import type { AsyncConversationStore } from '../store/async-store.ts';
import { FileRefusedError, isMissing, readConfinedFile, removeConfinedFile, writeConfinedFile } from '../tools/confined-file.ts';
import { ToolError, type ToolOutcome } from '../tools/contract.ts';
import { MAX_SNAPSHOT_BYTES } from '../limits.ts';
import { beforeContent, digestOf, planUndo, UNDO_BOUNDS, type UndoBounds } from './undo-plan.ts';

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
 * Reverts the conversation's changes not yet undone, newest first. Planned from digests (undo-plan.ts), so
 * what it holds is bounded (UNDO_PAGE_BYTES, UNDO_MAX_SNAPSHOTS) however long the conversation; each file's
 * before-image is read back from the store only when it is restored.
 */
export async function undoConversation(store: AsyncConversationStore, conversationId: string, principal: string, workspace: string, bounds: UndoBounds = UNDO_BOUNDS): Promise<ToolOutcome> {
  const changes = await planUndo(store, conversationId, principal, bounds);
  if (changes === null) throw new ToolError(`conversation ${conversationId} not found`);
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
    const now = digestOf(await currentContent(workspace, change.path));
    // A change interrupted before its after-image has no known result: whatever the file holds is taken
    // to be what the interrupted write left (a later change of this conversation was reverted first).
    if (change.after !== undefined && now !== change.after) {
      seenRefused.add(change.path);
      refused.push(change.path);
      continue;
    }
    // Interrupted before it wrote anything: consumed, not reported.
    if (change.after === undefined && now === change.before) {
      reverted.push(...change.seqs);
      continue;
    }
    const before = change.before === null ? null : await beforeContent(store, conversationId, principal, change);
    // Its before-image is gone (the conversation was deleted meanwhile): the file is left as it is.
    if (before === undefined) {
      seenRefused.add(change.path);
      refused.push(change.path);
      continue;
    }
    reverted.push(...change.seqs);
    if (change.after === undefined) interrupted++;
    if (before === null) await removeConfinedFile(workspace, change.path);
    else await writeConfinedFile(workspace, change.path, before);
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
