// What undo needs to know of a conversation before it touches a file (undo.ts): its changes still to
// undo, newest first, each as digests of the contents it recorded and the seq of its before-image — not
// the contents. The `file_snapshot` and `undo` entries are read page by page, each page bounded by
// UNDO_PAGE_BYTES of payload and dropped once folded in, so undo holds one page, one record per snapshot
// not yet undone (at most UNDO_MAX_SNAPSHOTS) and, while it restores a file, that file's before-image.
// The event loop turns between pages: one page is the longest the plan holds the main thread.

import { createHash } from 'node:crypto';
import type { AsyncConversationStore } from '../store/async-store.ts';
import { ToolError } from '../tools/contract.ts';
import { nextTurn } from '../tools/walk.ts';
import { UNDO_MAX_SNAPSHOTS, UNDO_PAGE_BYTES } from '../limits.ts';
import { type Entry, type EntryType, MAX_ENTRIES_LIMIT } from '../store/store.ts';
import { type BeforeImage, type FileSnapshot, isBeforeImage } from './file-snapshot.ts';

/** A content as undo compares it: a SHA-256 digest, null when the file did not exist. */
export type ContentDigest = string | null;

export function digestOf(content: string | null): ContentDigest {
  return content === null ? null : createHash('sha256').update(content, 'utf8').digest('base64');
}

/** The bounds of one undo; tests lower them. */
export interface UndoBounds {
  /** Payload bytes of one page of the plan's read (a page holds one entry at least, whatever its size). */
  readonly pageBytes: number;
  /** `file_snapshot` entries not yet undone the plan may hold a record of; past it the undo is refused. */
  readonly maxSnapshots: number;
}

export const UNDO_BOUNDS: UndoBounds = { pageBytes: UNDO_PAGE_BYTES, maxSnapshots: UNDO_MAX_SNAPSHOTS };

/** One `file_snapshot` entry, as digests. */
interface SnapshotRef {
  readonly seq: number;
  readonly before: ContentDigest;
  /** undefined: a before-image (written ahead of the change), with no result. */
  readonly after: ContentDigest | undefined;
}

/** One change to undo: a tool call's entries, its before-image's digest and seq and, when recorded, its result's digest. */
export interface PlannedChange {
  readonly path: string;
  readonly before: ContentDigest;
  /** The entry whose `before` is this change's original content: read again to restore it. */
  readonly beforeSeq: number;
  /** The seq of the change's first entry not yet undone: changes are undone newest first by it. */
  readonly beginsAt: number;
  /** undefined: the call was interrupted between its before-image and its after-image (result unknown). */
  readonly after: ContentDigest | undefined;
  /** The entries of the change (marked undone together). */
  readonly seqs: readonly number[];
}

const CHANGE_TYPES: readonly EntryType[] = ['file_snapshot', 'undo'];

/**
 * The conversation's changes still to undo, newest first (by the entry that began each); null when it is not
 * the caller's. Entries of one tool call are one change: its first entry's `before` is the true original even
 * when a re-run after a crash recorded a completed snapshot later, and its last completed snapshot gives its
 * result; entries without a call id (older transcripts) stand alone. An `undo` entry names the snapshots it
 * reverted, which always precede it: they are dropped as it is read, so only snapshots not yet undone are held.
 */
export async function planUndo(store: AsyncConversationStore, conversationId: string, principal: string, bounds: UndoBounds = UNDO_BOUNDS): Promise<PlannedChange[] | null> {
  const byCall = new Map<string, { readonly path: string; refs: SnapshotRef[] }>();
  const callOf = new Map<number, string>();
  // One string per path, however many snapshots name it.
  const paths = new Map<string, string>();
  let afterSeq = 0;
  for (;;) {
    const page = await store.entriesPage(conversationId, principal, { afterSeq, limit: MAX_ENTRIES_LIMIT, maxBytes: bounds.pageBytes, types: CHANGE_TYPES });
    if (page === null) return null;
    for (const e of page.entries) {
      if (e.type === 'undo') forgetUndone(e, byCall, callOf);
      else fold(e, byCall, callOf, paths, bounds, conversationId);
    }
    afterSeq = page.entries.at(-1)?.seq ?? afterSeq;
    if (!page.more || page.entries.length === 0) break;
    // The SQLite store answers at once (its promise settles in a microtask), so without this the whole
    // plan — every page parsed and digested, seconds for a conversation of large files — ran in one turn
    // of the main thread, and every session on the node waited for it.
    await nextTurn();
  }
  const changes: PlannedChange[] = [];
  for (const { path, refs } of byCall.values()) {
    const first = refs[0];
    if (first === undefined) continue;
    // Its last completed snapshot, if any (a re-run after a crash may have recorded more than one).
    const after = refs.reduce<ContentDigest | undefined>((result, r) => (r.after === undefined ? result : r.after), undefined);
    changes.push({ path, before: first.before, beforeSeq: first.seq, beginsAt: first.seq, after, seqs: refs.map((r) => r.seq) });
  }
  // By the entry that begins each now: an `undo` entry may have taken a call's first entries and left later ones.
  return changes.sort((a, b) => b.beginsAt - a.beginsAt);
}

function fold(e: Entry, byCall: Map<string, { readonly path: string; refs: SnapshotRef[] }>, callOf: Map<number, string>, paths: Map<string, string>, bounds: UndoBounds, conversationId: string): void {
  if (callOf.size >= bounds.maxSnapshots) {
    throw new ToolError(
      `conversation ${conversationId} has more than UNDO_MAX_SNAPSHOTS (${bounds.maxSnapshots}) file snapshots not yet undone, more than one undo plans over; ` +
        'nothing was reverted. Revert its files by hand, or with git.',
    );
  }
  const p = e.payload as (FileSnapshot | BeforeImage) & { id?: string };
  const key = typeof p.id === 'string' ? p.id : `#${e.seq}`;
  let change = byCall.get(key);
  if (change === undefined) {
    let path = paths.get(p.path);
    if (path === undefined) paths.set(p.path, (path = p.path));
    change = { path, refs: [] };
    byCall.set(key, change);
  }
  change.refs.push({ seq: e.seq, before: digestOf(p.before), after: isBeforeImage(p) ? undefined : digestOf(p.after) });
  callOf.set(e.seq, key);
}

function forgetUndone(e: Entry, byCall: Map<string, { readonly path: string; refs: SnapshotRef[] }>, callOf: Map<number, string>): void {
  const reverted = (e.payload as { reverted?: unknown }).reverted;
  if (!Array.isArray(reverted)) return;
  for (const seq of reverted) {
    if (typeof seq !== 'number') continue;
    const key = callOf.get(seq);
    if (key === undefined) continue;
    callOf.delete(seq);
    const change = byCall.get(key);
    if (change === undefined) continue;
    change.refs = change.refs.filter((r) => r.seq !== seq);
    // A call whose entries are all undone is gone: a later entry of it (a re-run) begins a change of its own.
    if (change.refs.length === 0) byCall.delete(key);
  }
}

/**
 * The content a change's before-image recorded, read again by its seq (one entry); undefined when that entry
 * is gone or no longer what the plan read (the conversation was deleted meanwhile).
 */
export async function beforeContent(store: AsyncConversationStore, conversationId: string, principal: string, change: PlannedChange): Promise<string | null | undefined> {
  const page = await store.entriesPage(conversationId, principal, { afterSeq: change.beforeSeq - 1, limit: 1, types: ['file_snapshot'] });
  const entry = page?.entries[0];
  const before = (entry?.payload as { before?: unknown } | undefined)?.before;
  if (entry === undefined || entry.seq !== change.beforeSeq || (typeof before !== 'string' && before !== null) || digestOf(before) !== change.before) return undefined;
  return before;
}
