// A message's nesting read from its text, before it is parsed: JSON.parse reads a line of brackets millions
// deep (4 MiB) in about a second and 120 MB, on the thread that received it, which for every transport is
// the main thread. A line nesting past the limit is parsed as a stand-in instead, which the core refuses
// exactly as it refuses the deep message (handle.ts `tooDeep`): the stand-in is the line cut at one level
// past the limit (each container opening there emptied), so it keeps every member shallower, all a refusal
// or an HTTP envelope check reads (id, method, `_meta` and its version), and nests exactly past the limit.
// Deep members are never read, so a line that is not JSON inside one is refused for its depth, not as a
// parse error.

import { DEPTH_SCAN_MIN_CHARS, MAX_JSON_DEPTH } from '../limits.ts';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * The text a message line is parsed as, on every thread that parses one: itself, or its stand-in when it
 * nests past MAX_JSON_DEPTH. Lines under DEPTH_SCAN_MIN_CHARS are not read: the deepest of them parses
 * quickly, and the core refuses it after parsing with the same answer.
 */
export function messageTextToParse(text: string): string {
  return text.length < DEPTH_SCAN_MIN_CHARS ? text : depthBoundedText(text, MAX_JSON_DEPTH);
}

/**
 * How deep `text` nests objects and arrays outside its strings, stopping as soon as it passes `stopAbove`
 * (the depth returned is then `stopAbove + 1`). For JSON text this is the depth of what JSON.parse gives
 * (a scalar 0, `[]` 1). One pass over the characters; it allocates nothing.
 */
export function textDepth(text: string, stopAbove = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEnd(text, i);
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > stopAbove) return deepest;
      }
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return deepest;
}

/**
 * `text` itself when no message in it (the line, or each element of a batch) nests deeper than `max`; else
 * the stand-in described above, whose parse the core refuses as it would refuse the parse of `text`. Linear
 * in the text's length whatever its depth.
 */
export function depthBoundedText(text: string, max: number): string {
  // A batch's elements are messages of their own, one level down: a batch of messages at the limit passes.
  if (textDepth(text, max) <= max) return text;
  let i = 0;
  while (i < text.length && text.charCodeAt(i) <= 0x20) i++;
  const batch = text.charCodeAt(i) === OPEN_BRACKET;
  if (batch && textDepth(text, max + 1) <= max + 1) return text;
  // The depth (in the text) of a container one level past the limit: a message's max + 1, a batch element's
  // max + 2. Each such container is emptied; everything shallower is copied as it is, so the stand-in keeps
  // every member a check before the depth's reads (the id, the method, an HTTP request's _meta version).
  const cut = max + 1 + (batch ? 1 : 0);
  let out = '';
  let copied = 0;
  let depth = 0;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEnd(text, i);
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth === cut) {
        const end = closingOf(text, i);
        out += text.slice(copied, i) + (c === OPEN_BRACKET ? '[]' : '{}');
        copied = end;
        i = end - 1;
        depth--;
      }
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return out + text.slice(copied);
}

/** The index just past the container opened at `open` (the text's end when it never closes). */
function closingOf(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEnd(text, i);
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
    } else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0) {
      return i + 1;
    }
  }
  return text.length;
}

/**
 * The index of the quote that ends the string opened at `open` (the text's end when none does). The search
 * for a quote is the engine's, much faster than a loop over characters (most of a line is strings); a
 * quote is escaped when an odd run of backslashes precedes it, and each run is read once.
 */
function stringEnd(text: string, open: number): number {
  for (let q = text.indexOf('"', open + 1); q !== -1; q = text.indexOf('"', q + 1)) {
    let b = q - 1;
    while (text.charCodeAt(b) === BACKSLASH) b--;
    if ((q - 1 - b) % 2 === 0) return q;
  }
  return text.length;
}
