// grep's matcher: a caller's pattern compiled once into the test each line is run through (String#includes,
// a literal RegExp, or RE2 — linear time in the text), the whole-file test when no match can span a
// newline, and the literal bytes every match must contain, looked for before a file is decoded.
// The walk and the output are grep.ts.

import { RE2JS, RE2JSSyntaxException } from 're2js';
import { ToolError } from './contract.ts';
import { argumentExcerpt } from './name-in-text.ts';

/** Shortest literal worth a byte search before decoding. */
const MIN_REQUIRED_LITERAL = 3;

/** Whether a text holds a match: a line, or (for `Search.wholeText`) a whole file. */
export interface TextTest {
  test(text: string): boolean;
}

/** A compiled `grep` pattern: its RE2 source, the test run on each line, and the whole-file test. */
export interface Pattern {
  /** RE2 syntax; a literal search's text with its metacharacters escaped. */
  readonly source: string;
  readonly ignoreCase: boolean;
  readonly line: TextTest;
  /** Run once over a whole file when no match can span a newline (see `lineBound`); else null. */
  readonly whole: TextTest | null;
}

const RE2_METACHARACTERS = /[.*+?^${}()|[\]\\]/g;

/**
 * Longest plain word searched case-insensitively with a JavaScript RegExp instead of RE2. A RegExp
 * made of a literal alone cannot backtrack past its own length, so its cost is at most this many
 * steps per character of text; RE2 is linear but about ten times slower on such a search.
 */
export const FOLDED_WORD_MAX_CHARS = 64;

export function compilePattern(pattern: string, ignoreCase: boolean, literal: boolean): Pattern {
  const source = literal ? pattern.replace(RE2_METACHARACTERS, '\\$&') : pattern;
  const bound = lineBound(source);
  // A pattern without metacharacters is the same literal in RE2 and in JavaScript.
  const plain = literal || !/[.*+?^${}()|[\]\\]/.test(pattern);
  if (plain && !ignoreCase) {
    // A case-sensitive literal needs no automaton: String#includes is linear and the fastest there is.
    const includes: TextTest = { test: (text) => text.includes(pattern) };
    return { source, ignoreCase, line: includes, whole: bound ? includes : null };
  }
  if (plain && pattern.length <= FOLDED_WORD_MAX_CHARS) {
    // `iu` folds case by Unicode simple case folding, as RE2's (?i) does (ſ matches s, K matches k).
    const escaped = pattern.replace(RE2_METACHARACTERS, '\\$&');
    const line = new RegExp(escaped, 'iu');
    return { source, ignoreCase, line, whole: bound ? line : null };
  }
  const flags = ignoreCase ? RE2JS.CASE_INSENSITIVE : 0;
  const line = compileRE2(pattern, source, flags);
  return { source, ignoreCase, line, whole: bound ? wholeTextTest(source, flags) : null };
}

function compileRE2(pattern: string, source: string, flags: number): RE2JS {
  try {
    return RE2JS.compile(source, flags);
  } catch (err) {
    if (!(err instanceof RE2JSSyntaxException)) throw err;
    const construct = unsupportedConstruct(source, err.input ?? '');
    // RE2's input is the rest of the pattern from the error on: quoted within bounds, as the pattern is.
    const detail = err.input ? `${err.error}: ${argumentExcerpt(err.input)}` : err.error;
    const head = `invalid regular expression ${argumentExcerpt(pattern)}: `;
    throw new ToolError(construct === null
      ? `${head}${detail}. grep uses RE2 syntax (linear-time matching; see https://github.com/google/re2/wiki/Syntax)`
      : `${head}${construct} is not supported: grep uses RE2 syntax, which matches in linear time and has no backreferences or lookaround (RE2: ${detail})`,
    { cause: err });
  }
}

/**
 * Names the backtracking-only (or JavaScript-only) construct an RE2 syntax error points at, so the
 * caller learns what to rewrite; null when the pattern is simply malformed.
 */
function unsupportedConstruct(source: string, at: string): string | null {
  if (/^\\[1-9]/.test(at) || at === '\\k' || (at === '(?P' && source.includes('(?P='))) return 'a backreference (`\\1`, `\\k<name>`, `(?P=name)`)';
  if (at === '(?=' || at === '(?!') return `a lookahead (\`${at}…)\`)`;
  if (at.startsWith('(?<=') || at.startsWith('(?<!')) return `a lookbehind (\`${at.slice(0, 4)}…)\`)`;
  if (at === '(?>') return 'an atomic group (`(?>…)`)';
  if (/^[*+?}]\+$/.test(at) || /^\{[\d,]*\}\+$/.test(at)) return 'a possessive quantifier (`*+`, `++`, `?+`)';
  if (at === '\\u') return 'the `\\u` escape (write `\\x{2603}` instead)';
  if (at === '\\c') return 'the `\\c` control escape (write `\\x01` instead)';
  return null;
}

/**
 * The whole-file test: the pattern with `^`/`$` at line ends. RE2's `$` ends a line only before `\n`,
 * while lines are matched without their `\r`: a file with CRs, when the pattern has a `$`, is let
 * through to the line-by-line match rather than wrongly refused.
 */
function wholeTextTest(source: string, flags: number): TextTest {
  const multiline = RE2JS.compile(source, flags | RE2JS.MULTILINE);
  const dollar = source.includes('$');
  return { test: (text) => (dollar && text.includes('\r')) || multiline.test(text) };
}

/**
 * Runs of ASCII characters that every match of the pattern contains, each at least MIN_REQUIRED_LITERAL
 * long. Conservative: an alternation, a quoted run (`\Q…\E`, whose backslashes are literal) or an
 * inline flag that could turn on case folding (`(?i)`) anywhere gives none; a group, class, escape
 * sequence or assertion ends a run; a quantified character leaves it. (An ASCII character in the
 * decoded text always comes from that byte in the file, so a search of the raw bytes is exact.)
 */
export function requiredLiterals(source: string): string[] {
  if (source.includes('|') || source.includes('\\Q') || /\(\?[imsU-]*i/.test(source)) return [];
  const runs: string[] = [];
  let run = '';
  const end = () => {
    if (run.length >= MIN_REQUIRED_LITERAL) runs.push(run);
    run = '';
  };
  for (let i = 0; i < source.length; i++) {
    const c = source[i] as string;
    if (c === '\\') {
      const next = source[i + 1];
      if (next === undefined) return [];
      i++;
      if (!/[A-Za-z0-9]/.test(next)) {
        // An escaped punctuation character stands for itself; anything else outside ASCII ends the run.
        if (next.charCodeAt(0) >= 0x20 && next.charCodeAt(0) <= 0x7e) run += next;
        else end();
        continue;
      }
      // \d, \x41, \u{1F600}, \p{L}, \k<name>, \12...: not literal; skip what the escape spans, and no
      // more: in `\bword\b` or `\sword` the word after the escape is a literal every match contains.
      end();
      const open = source[i + 1];
      if (open === '{' || open === '<') {
        const close = source.indexOf(open === '{' ? '}' : '>', i + 1);
        if (close < 0) return [];
        i = close;
      } else if (next === 'x') {
        // RE2's \x takes exactly two hex digits (longer codes are written \x{…}).
        for (let k = 0; k < 2 && i + 1 < source.length && /[0-9A-Fa-f]/.test(source[i + 1] as string); k++) i++;
      } else if (next === 'p' || next === 'P') {
        // \pL: a one-letter class name.
        if (i + 1 < source.length) i++;
      } else if (/[0-9]/.test(next)) {
        // An octal code: its digits (more than RE2 reads, which only shortens a run).
        while (i + 1 < source.length && /[0-9]/.test(source[i + 1] as string)) i++;
      }
      continue;
    }
    if (c === '[' || c === '(') {
      end();
      const close = c === '[' ? classEnd(source, i) : groupEnd(source, i);
      if (close < 0) return [];
      i = close;
      continue;
    }
    if (c === '*' || c === '+' || c === '?' || c === '{') {
      // The quantified character is optional or repeated: it leaves the run, which ends here.
      run = run.slice(0, -1);
      end();
      if (c === '{') {
        const close = source.indexOf('}', i);
        if (close >= 0 && /^\{\d+(,\d*)?\}$/.test(source.slice(i, close + 1))) i = close;
      }
      continue;
    }
    if (c === '.' || c === '^' || c === '$' || c === ')' || c === ']' || c === '}' || c.charCodeAt(0) > 0x7e || c.charCodeAt(0) < 0x20) {
      end();
      continue;
    }
    run += c;
  }
  end();
  return runs;
}

/** Printable ASCII from (roughly) rarest to commonest in source code and prose; a guess that only steers speed. */
const RARE_TO_COMMON = '`~^|@#%!?&$\\QZJXKVYWqzjxkBGPFUMHLDCNROSIETAvywbgpfmu9876543210<>[]{}+*-/=:;\'"hldcnrosiat_().,e ';

/**
 * The bytes to look for before decoding a file: the suffix of a required literal that begins with its
 * rarest character (Buffer#indexOf scans for the first byte, then compares), the rarest of all; or null.
 */
export function searchNeedle(source: string): Buffer | null {
  let best: string | null = null;
  let bestRank = Infinity;
  for (const run of requiredLiterals(source)) {
    for (let i = 0; i + MIN_REQUIRED_LITERAL <= run.length; i++) {
      const found = RARE_TO_COMMON.indexOf(run[i] as string);
      const rank = found < 0 ? RARE_TO_COMMON.length / 2 : found;
      if (rank < bestRank || (rank === bestRank && best !== null && run.length - i > best.length)) {
        best = run.slice(i);
        bestRank = rank;
      }
    }
  }
  return best === null ? null : Buffer.from(best, 'latin1');
}

/**
 * Index of the `]` closing the class opened at `open`, or -1. As in RE2, a `]` first in the class (after
 * any `^`) stands for itself, and a POSIX class `[:name:]` inside it is skipped whole.
 */
function classEnd(source: string, open: number): number {
  let i = open + 1;
  if (source[i] === '^') i++;
  if (source[i] === ']') i++;
  for (; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') i++;
    else if (c === '[' && source[i + 1] === ':') {
      const close = source.indexOf(':]', i + 2);
      if (close < 0) return -1;
      i = close + 1;
    } else if (c === ']') return i;
  }
  return -1;
}

/** Index of the `)` closing the group opened at `open` (classes and escapes inside skipped), or -1. */
function groupEnd(source: string, open: number): number {
  let depth = 0;
  for (let i = open; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') i++;
    else if (c === '[') {
      i = classEnd(source, i);
      if (i < 0) return -1;
    } else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  return -1;
}

/**
 * True when no match of the pattern can contain a newline, so that running it in multi-line mode over
 * a whole file finds a match whenever some line has one: no lookaround (it could look past a line's
 * end), no negated class, no POSIX class (`[[:space:]]` holds a newline), no `s` flag (a `.` that
 * matches a newline), no escape that can stand for a newline (\s, \W, \D, \n, \x0a, \p…, \Q…,
 * octal), no control character, escaped or not (a range from one could span a newline).
 * The converse need not hold: a hit is then confirmed line by line.
 */
export function lineBound(source: string): boolean {
  if (/\(\?<?[=!]/.test(source) || source.includes('[^') || source.includes('[:') || /\(\?[imsU-]*s/.test(source)) return false;
  for (let i = 0; i < source.length; i++) {
    if (isControl(source.charCodeAt(i))) return false;
    if (source[i] !== '\\') continue;
    const next = source[++i];
    if (next === undefined || isControl(next.charCodeAt(0))) return false;
    if (/[A-Za-z0-9]/.test(next) && !/[dwbBS]/.test(next)) return false;
  }
  return true;
}

function isControl(code: number): boolean {
  return code < 0x20 || code === 0x2028 || code === 0x2029;
}
