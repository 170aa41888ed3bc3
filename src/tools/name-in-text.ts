// How a workspace name or path is printed in a tool's text. A name is workspace content (a caller's
// `write` or `bash`, a cloned repository can make any name), and the text is read a line at a time: a name
// that could break a line, pass for a notice, or pass for the quoting below is printed as a JSON string
// literal instead, so every line names one entry and the text can always be told apart from the names.

import { ARGUMENT_EXCERPT_CHARS } from '../limits.ts';

/**
 * What breaks or hides a line: C0 controls, DEL, C1 controls (U+0085 is NEXT LINE), the line and
 * paragraph separators.
 */
const BREAKS_LINE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
/** What JSON.stringify leaves as it is of the characters above. */
const LEFT_BY_JSON = /[\u007f-\u009f\u2028\u2029]/g;
/**
 * A name the text could mistake for a quoted name (its first visible character is `"`) or for a notice (it
 * is bracketed, `[…]`). `[id].tsx` is neither, and stays as it is.
 */
const LOOKS_LIKE_TEXT = /^[ \t]*"|^[ \t]*\[.*\][ \t]*$/;

/** True when `name` is printed quoted: see the header. */
export function isQuotedInText(name: string): boolean {
  return BREAKS_LINE.test(name) || LOOKS_LIKE_TEXT.test(name);
}

/** `name` as the text shows it: as it is, or as a JSON string literal (JSON.parse gives the name back). */
export function nameInText(name: string): string {
  return isQuotedInText(name) ? quoted(name) : name;
}

/** `name` as a JSON string literal with every character of BREAKS_LINE escaped (lone surrogates too, as JSON.stringify does). */
export function quoted(name: string): string {
  return JSON.stringify(name).replace(LEFT_BY_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * How a name whose bytes are not UTF-8 is shown: its decoding (each bad byte U+FFFD, as Node reads it),
 * quoted, and a note outside the quotes, which no name can forge. No tool can open it by that name: the
 * decoding names a different file, or none.
 */
export function notUtf8InText(decoded: string, suffix = ''): string {
  return `${quoted(decoded)}${suffix} (name is not valid UTF-8; no tool can name it)`;
}

/**
 * A caller's argument quoted in an error message: its first ARGUMENT_EXCERPT_CHARS characters as a JSON
 * string (never half a surrogate pair), and how long it is when that is not all of it.
 */
export function argumentExcerpt(text: string): string {
  if (text.length <= ARGUMENT_EXCERPT_CHARS) return JSON.stringify(text);
  let end = ARGUMENT_EXCERPT_CHARS;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${JSON.stringify(text.slice(0, end))}… (${text.length} characters; the first ${end} shown)`;
}
