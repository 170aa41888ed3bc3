// The `edit` tool: exact-text replacements in one file, all matched against the original and applied
// together or not at all, keeping the file's line endings and BOM; answers with a unified diff summary.

import { type ConfinedWording, FileRefusedError, readConfinedFile, writeConfinedFile } from './confined-file.ts';
import { ToolError, type ToolBody } from './contract.ts';
import { throwIfCancelled } from './fs-errors.ts';
import { truncateHead } from './truncate.ts';
import { displayPath } from './workspace.ts';
import { findNeedles, type NeedleHits } from './edit-match.ts';
import type { EditArgs, EditPlan, EditPlanner, EditRefused, EditReplacement, EditSummary } from './edit-plan.ts';
import { EDIT_MAX_EDITS, EDIT_MAX_TEXT_BYTES, MAX_CONFINED_FILE_BYTES } from '../limits.ts';

export type { EditArgs, EditReplacement, EditSummary } from './edit-plan.ts';

/** Lines of unchanged context around each change in the diff. */
const CONTEXT_LINES = 3;
/** A NUL byte this early means the file is not text, and a text edit would corrupt it. */
const BINARY_SNIFF_BYTES = 8 * 1024;
/** A missing file is most likely one the model meant to create, so the message points at write. */
const EDIT_WORDING: ConfinedWording = {
  notFound: (shown) => `File not found: ${shown}. To create a new file, use write.`,
  isDirectory: (shown) => `${shown} is a directory; edit changes files (use ls to see what is inside it)`,
  swappedWhile: 'edited',
  usedAs: 'edited',
};
/** Occurrences of an ambiguous oldText counted for its message; past it the message says "more than". */
const SHOWN_OCCURRENCES = 100;
/** Largest file edit reads whole (it needs all of it in memory to match and rewrite). */
export const EDIT_MAX_FILE_BYTES = MAX_CONFINED_FILE_BYTES;

/**
 * The `edit` body, deciding with `planner`: planEdit in this thread, or the tool pool's for a large file.
 * Only the deciding moves: the write stays here, where no thread stopped by a deadline can interrupt it.
 */
export function editToolWith(planner: EditPlanner): ToolBody<EditArgs> {
  return async (args, ctx) => {
    const plan = await planner(args, ctx.workspace, ctx.signal);
    if (plan.kind === 'refused') throw new ToolError(plan.message);
    throwIfCancelled(ctx.signal);
    const output = Buffer.from(plan.bytes.buffer, plan.bytes.byteOffset, plan.bytes.byteLength);
    // Atomic and confined: the old content or the new after any crash, never a mix, and never outside.
    await writeConfinedFile(ctx.workspace, args.path, output, { wording: EDIT_WORDING });
    return { text: plan.text, structured: plan.structured };
  };
}

export const editTool: ToolBody<EditArgs> = editToolWith((args, workspace, signal) => planEdit(args, workspace, signal));

/** Reads the file and decides the edit: every check that can refuse it, and the bytes to write. Writes nothing. */
export async function planEdit(args: EditArgs, workspace: string, signal?: AbortSignal): Promise<EditPlan | EditRefused> {
  try {
    return await decideEdit(args, workspace, signal, EDIT_MAX_FILE_BYTES);
  } catch (err) {
    if (err instanceof ToolError) return { kind: 'refused', message: err.message };
    throw err;
  }
}

/**
 * planEdit for a file of at most `maxFileBytes`, by the size of the descriptor it opened (not of a name
 * looked up earlier, which a leading `@`, a link or a swap can make another file): null for a larger one,
 * of which nothing was read, so the caller decides it where a large file's matching belongs.
 */
export async function planSmallEdit(args: EditArgs, workspace: string, maxFileBytes: number, signal?: AbortSignal): Promise<EditPlan | EditRefused | null> {
  try {
    return await decideEdit(args, workspace, signal, maxFileBytes);
  } catch (err) {
    if (err instanceof FileRefusedError && err.reason === 'too-large' && maxFileBytes < EDIT_MAX_FILE_BYTES) return null;
    if (err instanceof ToolError) return { kind: 'refused', message: err.message };
    throw err;
  }
}

async function decideEdit(args: EditArgs, workspace: string, signal: AbortSignal | undefined, maxFileBytes: number): Promise<EditPlan> {
  const requested = replacementsOf(args);
  const shown = args.path;
  // Read through the confined path: a regular file inside the workspace, checked on its descriptor, bounded.
  const { bytes, opened } = await readConfinedFile(workspace, args.path, maxFileBytes, EDIT_WORDING);
  const real = opened.real;
  if (signal) throwIfCancelled(signal);

  const raw = decodeText(bytes, shown);
  const bom = raw.startsWith('\uFEFF') ? '\uFEFF' : '';
  const withoutBom = raw.slice(bom.length);
  const ending = detectLineEnding(withoutBom);
  const original = toLF(withoutBom);
  const edits = requested.map((r) => ({ label: r.label, oldText: toLF(r.oldText), newText: toLF(r.newText) }));
  for (const e of edits) {
    if (e.oldText === e.newText) throw new ToolError(`${prefix(e.label)}oldText and newText are identical, so nothing would change in ${shown}.`);
  }

  const matches = locate(original, edits, shown, requested.length > 1);
  const updated = applyMatches(original, matches);
  if (updated === original) {
    throw new ToolError(`No changes made to ${shown}: the replacement produced identical content.`);
  }
  const summary = summarise(original, updated, matches, displayPath(workspace, real));
  const output = bom + applyToFileText(withoutBom, matches, ending);
  const what = matches.length === 1 ? `Successfully replaced text in ${shown}.` : `Successfully applied ${matches.length} edits to ${shown}.`;
  const text = `${what} Lines +${summary.linesAdded} -${summary.linesRemoved}, first change at line ${summary.firstChangedLine}.\n\n${summary.diff}`;
  return { kind: 'plan', bytes: Buffer.from(output, 'utf8'), text, structured: summary };
}

interface Requested extends EditReplacement {
  /** `edits[i]` when the caller sent an array, empty for the single oldText/newText form. */
  label: string;
}

/** Checks the argument shape the schema cannot express: exactly one of the pair or a non-empty `edits`. */
function replacementsOf(args: EditArgs): Requested[] {
  const hasPair = args.oldText !== undefined || args.newText !== undefined;
  const hasEdits = args.edits !== undefined;
  if (hasPair && hasEdits) {
    throw new ToolError('Give either oldText and newText (one replacement) or edits (several), not both.');
  }
  if (!hasPair && !hasEdits) {
    throw new ToolError('Nothing to edit: give oldText and newText, or edits, a non-empty array of {oldText, newText}.');
  }
  let list: Requested[];
  if (hasPair) {
    if (typeof args.oldText !== 'string' || typeof args.newText !== 'string') {
      throw new ToolError('oldText and newText must both be given as strings (newText may be empty to delete the text).');
    }
    list = [{ label: '', oldText: args.oldText, newText: args.newText }];
  } else {
    if (!Array.isArray(args.edits) || args.edits.length === 0) {
      throw new ToolError('edits must be a non-empty array of {oldText, newText}.');
    }
    // The schema says so too (maxItems); checked again because a body can be called without it.
    if (args.edits.length > EDIT_MAX_EDITS) {
      throw new ToolError(`edits has ${args.edits.length} items, over the limit of ${EDIT_MAX_EDITS} (EDIT_MAX_EDITS) for one edit call; ` +
        'split the change into several calls.');
    }
    list = args.edits.map((e: unknown, i) => {
      const item = e as Partial<EditReplacement> | null;
      if (typeof item !== 'object' || item === null || typeof item.oldText !== 'string' || typeof item.newText !== 'string') {
        throw new ToolError(`edits[${i}] must be an object with string oldText and newText.`);
      }
      return { label: `edits[${i}]`, oldText: item.oldText, newText: item.newText };
    });
  }
  let textBytes = 0;
  for (const r of list) {
    if (r.oldText.length === 0) throw new ToolError(`${prefix(r.label)}oldText is empty; give the exact text to replace.`);
    textBytes += Buffer.byteLength(r.oldText) + Buffer.byteLength(r.newText);
  }
  if (textBytes > EDIT_MAX_TEXT_BYTES) {
    throw new ToolError(`The edits' oldText and newText come to ${textBytes} bytes, over the limit of ${EDIT_MAX_TEXT_BYTES} ` +
      '(EDIT_MAX_TEXT_BYTES) for one edit call; split the change into several calls, or use write for a whole new file.');
  }
  return list;
}

interface Match {
  /** Position in the caller's list, for messages. */
  index: number;
  label: string;
  start: number;
  end: number;
  newText: string;
}

/** Finds each edit's single occurrence in the original; all must match exactly once and not overlap. */
function locate(content: string, edits: Requested[], shown: string, several: boolean): Match[] {
  const untouched = several ? ' No edits were applied.' : '';
  // One pass for all edits: checking them one by one made the work edits × file size.
  const hits = findNeedles(content, edits.map((e) => e.oldText));
  const matches: Match[] = [];
  for (const [index, e] of edits.entries()) {
    const hit = hits[index] as NeedleHits;
    if (hit.count === 0) {
      throw new ToolError(`${prefix(e.label)}oldText was not found in ${shown}. It must match the file exactly, ` +
        `including all whitespace, indentation and line breaks; read the file again and copy the text.${untouched}`);
    }
    if (hit.count > 1) {
      throw new ToolError(`${prefix(e.label)}Found ${occurrences(content, e.oldText, hit.first)} of the oldText in ${shown}. The text must be unique: ` +
        `include more surrounding lines to make it unique.${untouched}`);
    }
    matches.push({ index, label: e.label, start: hit.first, end: hit.first + e.oldText.length, newText: e.newText });
  }
  matches.sort((a, b) => a.start - b.start);
  for (let i = 1; i < matches.length; i++) {
    const before = matches[i - 1] as Match;
    const after = matches[i] as Match;
    if (after.start < before.end) {
      const [first, second] = before.index < after.index ? [before.label, after.label] : [after.label, before.label];
      throw new ToolError(`${first} and ${second} overlap in ${shown}; each edit must replace a separate part of the file. ` +
        `Merge them into one edit.${untouched}`);
    }
  }
  return matches;
}

/**
 * How many times the refused oldText occurs, overlapping ones too, for the message only: counted for
 * this one edit and up to SHOWN_OCCURRENCES, so the count costs one bounded scan, not one per edit.
 */
function occurrences(haystack: string, needle: string, first: number): string {
  let count = 0;
  for (let at = first; at !== -1; at = haystack.indexOf(needle, at + 1)) {
    if (++count > SHOWN_OCCURRENCES) return `more than ${SHOWN_OCCURRENCES} occurrences`;
  }
  return `${count} occurrences`;
}

function applyMatches(content: string, matches: Match[]): string {
  let out = '';
  let pos = 0;
  for (const m of matches) {
    out += content.slice(pos, m.start) + m.newText;
    pos = m.end;
  }
  return out + content.slice(pos);
}

/**
 * `matches` (places in the file's LF text) applied to the file's own text: every byte outside them is kept
 * as it is, so a file of mixed line endings keeps each line's own, and each newText is written with the
 * file's ending (its first line's). One pass over the file's CRLFs, nothing kept per line.
 */
function applyToFileText(raw: string, matches: Match[], ending: '\r\n' | '\n'): string {
  let out = '';
  let copied = 0;
  let crlfs = 0;
  let next = raw.indexOf('\r\n');
  // A CRLF at `next` is the LF at `next - crlfs` of the LF text; a place before it there is `crlfs` earlier.
  const inRaw = (p: number): number => {
    while (next !== -1 && next - crlfs < p) {
      crlfs++;
      next = raw.indexOf('\r\n', next + 2);
    }
    return p + crlfs;
  };
  for (const m of matches) {
    const start = inRaw(m.start);
    const end = inRaw(m.end);
    out += raw.slice(copied, start) + (ending === '\r\n' ? m.newText.replace(/\n/g, '\r\n') : m.newText);
    copied = end;
  }
  return out + raw.slice(copied);
}

/** One run of changed lines: old lines [oldStart, oldStart+removed.length) became `added` at newStart (0-based). */
interface Block {
  oldStart: number;
  removed: string[];
  newStart: number;
  added: string[];
}

function summarise(original: string, updated: string, matches: Match[], relPath: string): EditSummary {
  const blocks = changedBlocks(original, matches);
  // Counted and read where needed, never split whole: a 64 MB file of short lines split took a tool thread
  // past its 512 MB heap (66 MB of blank lines: 66 million strings).
  const oldLines = { count: lineCount(original), at: lineReader(original) };
  const newLineCount = lineCount(updated);
  const first = blocks[0] as Block;
  let diff = `--- a/${relPath}\n+++ b/${relPath}\n${hunks(blocks, oldLines).join('\n')}`;
  const cut = truncateHead(diff);
  if (cut.truncated) diff = `${cut.content}\n[Diff truncated: showing ${cut.outputLines} of ${cut.totalLines} lines]`;
  return {
    path: relPath,
    replacements: matches.length,
    firstChangedLine: Math.max(1, Math.min(first.newStart + 1, newLineCount)),
    linesAdded: blocks.reduce((n, b) => n + b.added.length, 0),
    linesRemoved: blocks.reduce((n, b) => n + b.removed.length, 0),
    diff,
  };
}

/**
 * The changed lines, derived from the known replacement spans rather than a general diff: each group
 * of matches sharing lines is widened to whole lines, then lines equal at both ends are trimmed off.
 */
function changedBlocks(content: string, matches: Match[]): Block[] {
  const blocks: Block[] = [];
  const lineEnd = lineEnds(content);
  let lineShift = 0;
  let linesBefore = 0;
  let counted = 0;
  for (let i = 0; i < matches.length; ) {
    const lineStart = content.lastIndexOf('\n', (matches[i] as Match).start - 1);
    const from = (matches[i] as Match).start === 0 || lineStart === -1 ? 0 : lineStart + 1;
    let to = lineEnd((matches[i] as Match).end);
    let replaced = content.slice(from, (matches[i] as Match).start) + (matches[i] as Match).newText;
    let pos = (matches[i] as Match).end;
    i++;
    while (i < matches.length && (matches[i] as Match).start <= to) {
      const m = matches[i] as Match;
      replaced += content.slice(pos, m.start) + m.newText;
      pos = m.end;
      to = lineEnd(m.end);
      i++;
    }
    replaced += content.slice(pos, to);

    linesBefore += countNewlines(content, counted, from);
    counted = from;
    const oldBlock = content.slice(from, to).split('\n');
    const newBlock = replaced.split('\n');
    let head = 0;
    while (head < oldBlock.length && head < newBlock.length && oldBlock[head] === newBlock[head]) head++;
    let tail = 0;
    while (tail < oldBlock.length - head && tail < newBlock.length - head &&
      oldBlock[oldBlock.length - 1 - tail] === newBlock[newBlock.length - 1 - tail]) tail++;
    blocks.push({
      oldStart: linesBefore + head,
      removed: oldBlock.slice(head, oldBlock.length - tail),
      newStart: linesBefore + lineShift + head,
      added: newBlock.slice(head, newBlock.length - tail),
    });
    lineShift += newBlock.length - oldBlock.length;
  }
  return blocks;
}

/**
 * End of the line holding each position asked, for positions asked in increasing order: remembers the
 * last line break found, so many edits on one long line scan it once, not once each.
 */
function lineEnds(content: string): (from: number) => number {
  let asked = -1;
  let end = -1;
  return (from) => {
    // No line break lies between the last position asked and the end found for it.
    if (from < asked || from > end) {
      const nl = content.indexOf('\n', from);
      end = nl === -1 ? content.length : nl;
    }
    asked = from;
    return end;
  };
}

function countNewlines(s: string, from: number, to: number): number {
  let n = 0;
  for (let at = s.indexOf('\n', from); at !== -1 && at < to; at = s.indexOf('\n', at + 1)) n++;
  return n;
}

/** The file's lines counted; a final newline ends the last line rather than starting an empty one. */
function lineCount(content: string): number {
  const breaks = countNewlines(content, 0, content.length);
  return breaks > 0 && content.endsWith('\n') ? breaks : breaks + 1;
}

/** Line `n` (0-based) of `content`, asked in increasing order (as hunks asks): one forward scan in all. */
function lineReader(content: string): (n: number) => string | undefined {
  let line = 0;
  let at = 0;
  return (n) => {
    if (n < line) {
      line = 0;
      at = 0;
    }
    for (; line < n && at <= content.length; line++) {
      const nl = content.indexOf('\n', at);
      at = nl === -1 ? content.length + 1 : nl + 1;
    }
    if (at > content.length) return undefined;
    const nl = content.indexOf('\n', at);
    return content.slice(at, nl === -1 ? content.length : nl);
  };
}

/** Unified-diff hunks with CONTEXT_LINES of context; blocks whose context would touch share a hunk. */
function hunks(blocks: Block[], oldLines: { count: number; at: (n: number) => string | undefined }): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < blocks.length) {
    const group: Block[] = [blocks[i] as Block];
    i++;
    while (i < blocks.length) {
      const last = group[group.length - 1] as Block;
      const next = blocks[i] as Block;
      if (next.oldStart - (last.oldStart + last.removed.length) > 2 * CONTEXT_LINES) break;
      group.push(next);
      i++;
    }
    const firstBlock = group[0] as Block;
    const lastBlock = group[group.length - 1] as Block;
    const oldFrom = Math.max(0, firstBlock.oldStart - CONTEXT_LINES);
    const oldTo = Math.min(oldLines.count, lastBlock.oldStart + lastBlock.removed.length + CONTEXT_LINES);
    const newFrom = firstBlock.newStart - (firstBlock.oldStart - oldFrom);
    const body: string[] = [];
    let oldCount = 0;
    let newCount = 0;
    let cursor = oldFrom;
    for (const b of group) {
      for (; cursor < b.oldStart; cursor++) {
        body.push(` ${oldLines.at(cursor) ?? ''}`);
        oldCount++;
        newCount++;
      }
      for (const line of b.removed) body.push(`-${line}`);
      for (const line of b.added) body.push(`+${line}`);
      oldCount += b.removed.length;
      newCount += b.added.length;
      cursor = b.oldStart + b.removed.length;
    }
    for (; cursor < oldTo; cursor++) {
      body.push(` ${oldLines.at(cursor) ?? ''}`);
      oldCount++;
      newCount++;
    }
    // Unified-diff convention: an empty side names the line before it.
    const oldStartShown = oldCount === 0 ? oldFrom : oldFrom + 1;
    const newStartShown = newCount === 0 ? newFrom : newFrom + 1;
    out.push(`@@ -${oldStartShown},${oldCount} +${newStartShown},${newCount} @@`, ...body);
  }
  return out;
}

function decodeText(bytes: Buffer, shown: string): string {
  if (bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) {
    throw new ToolError(`${shown} is a binary file; edit only changes text files.`);
  }
  try {
    // fatal: invalid UTF-8 would otherwise be replaced by U+FFFD and corrupt the file on write.
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch (err) {
    throw new ToolError(`${shown} is not valid UTF-8 text; edit would corrupt it, so it was left unchanged.`, { cause: err });
  }
}

/** The file's line ending, judged by its first line break. */
function detectLineEnding(text: string): '\r\n' | '\n' {
  const nl = text.indexOf('\n');
  return nl > 0 && text[nl - 1] === '\r' ? '\r\n' : '\n';
}

/** CRLF → LF only; a lone CR is content, not a line break, and is left as it is. */
function toLF(text: string): string {
  return text.replace(/\r\n/g, '\n');
}

function prefix(label: string): string {
  return label ? `${label}: ` : '';
}
