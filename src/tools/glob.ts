// Globs (`find`'s pattern, `grep`'s glob) translated to RE2 and matched by re2js in time linear in the
// path: picomatch compiles them to JavaScript RegExps that backtrack (`*?` twelve times and a `Z` held a
// thread until the tool's deadline). The syntax is picomatch's, with its `dot: true` rule.

import { RE2JS } from 're2js';
import { GLOB_MAX_CHARS, GLOB_MAX_SOURCE_CHARS } from '../limits.ts';

/** A glob that cannot be translated; the message says what is wrong with it. */
export class GlobSyntaxError extends Error {
  override readonly name = 'GlobSyntaxError';
}

/** What a translated glob answers: whether a whole `/`-separated path matches. */
export type PathMatcher = (path: string) => boolean;

/** The POSIX classes picomatch knows inside brackets, all of which RE2 has as well. */
const POSIX_CLASSES: ReadonlySet<string> = new Set([
  'alnum', 'alpha', 'ascii', 'blank', 'cntrl', 'digit', 'graph', 'lower', 'print', 'punct', 'space', 'upper', 'word', 'xdigit',
]);
/** `?(..)`, `*(..)`, `+(..)`, `@(..)`: the extglob operator and what it becomes after the group. */
const EXTGLOB_SUFFIX: ReadonlyMap<string, string> = new Map([['?', '?'], ['*', '*'], ['+', '+'], ['@', '']]);

/**
 * Compiles `glob` to a full-path matcher. Supported: `*` (any run of characters but `/`), `**` as a
 * whole segment (any number of directories, none included), `?`, `[...]` (ranges, `!` or `^` negation,
 * POSIX classes), `{a,b}` (nested) and `{1..5}` ranges, extglobs `?() *() +() @()`, `\` escapes and a
 * leading `!` that negates the whole glob. Dotfiles match like any other name. `!(...)` is refused: a
 * negated group has no linear-time translation.
 */
export function compileGlobMatcher(glob: string): PathMatcher {
  if (glob.length > GLOB_MAX_CHARS) throw new GlobSyntaxError(`it is ${glob.length} characters long, over the ${GLOB_MAX_CHARS} a glob may have (GLOB_MAX_CHARS)`);
  const negated = glob.startsWith('!') && !glob.startsWith('!(');
  let body = negated ? glob.slice(1) : glob;
  // As picomatch: `./x` names x.
  while (body.startsWith('./')) body = body.slice(2);
  const plain = plainMatcher(body);
  if (plain !== null) return negated ? (p) => !plain(p) : plain;
  let re: RE2JS;
  try {
    // DOTALL: `**`'s `.` must match a newline too, which a name may hold; no other `.` is left unescaped.
    re = RE2JS.compile(translate(body), RE2JS.DOTALL);
  } catch (err) {
    if (err instanceof GlobSyntaxError) throw err;
    throw new GlobSyntaxError((err as Error).message, { cause: err });
  }
  return negated ? (p) => !re.matches(p) : (p) => re.matches(p);
}

/** Characters with a meaning in a glob (picomatch's, extglob operators included). */
const GLOB_SYNTAX = /[*?[\]{}()!+@\\]/;

/**
 * The commonest globs as string comparisons (RE2 costs about ten times a V8 RegExp per path): a name
 * with no syntax at all, and `*` followed by one (`*.ts`). Null for every other glob.
 */
function plainMatcher(glob: string): PathMatcher | null {
  if (!GLOB_SYNTAX.test(glob)) return (p) => p === glob;
  const suffix = glob.slice(1);
  if (glob[0] !== '*' || suffix.includes('/') || GLOB_SYNTAX.test(suffix)) return null;
  // `*` spans no `/`: the part before the suffix must have none.
  return (p) => p.endsWith(suffix) && p.lastIndexOf('/', p.length - suffix.length - 1) === -1;
}

/**
 * Which glob syntax: picomatch's (find, grep), or .gitignore's, which has no braces or extglobs and
 * whose trailing `/**` matches what is below a directory but not the directory itself.
 */
export type GlobDialect = 'picomatch' | 'gitignore';

/**
 * The RE2 source matching exactly the paths `glob` matches (anchoring is the caller's: `matches` is
 * whole-input); a GlobSyntaxError past GLOB_MAX_SOURCE_CHARS.
 */
export function translate(glob: string, dialect: GlobDialect = 'picomatch'): string {
  return translatePart(glob, dialect);
}

function tooLarge(): GlobSyntaxError {
  return new GlobSyntaxError(`it translates to more than the ${GLOB_MAX_SOURCE_CHARS} characters of RE2 a glob may (GLOB_MAX_SOURCE_CHARS); a brace range ({1..9}) counts each of its members`);
}

function translatePart(glob: string, dialect: GlobDialect): string {
  const rich = dialect === 'picomatch';
  const sub = (part: string) => translatePart(part, dialect);
  // Positions from which a bracket expression is known never to close (see bracketClass).
  const unclosed = new Uint8Array(glob.length);
  let out = '';
  let i = 0;
  while (i < glob.length) {
    // Checked as it grows: the alternatives of nested braces, each within the bound, could add up past it.
    if (out.length > GLOB_MAX_SOURCE_CHARS) throw tooLarge();
    const c = glob[i] as string;
    if (c === '/' && isGlobstar(glob, i + 1)) {
      const slashAfter = glob[i + 3] === '/';
      // `a/**/b`: a/b or deeper; `a/**`: anything below a, and for picomatch a itself too.
      out += slashAfter ? '/(?:.*/)?' : rich ? '(?:/.*)?' : '/.+';
      i += slashAfter ? 4 : 3;
      continue;
    }
    if (isGlobstar(glob, i)) {
      // At the start, or right after another `**/`.
      const slashAfter = glob[i + 2] === '/';
      out += slashAfter ? '(?:.*/)?' : '.*';
      i += slashAfter ? 3 : 2;
      continue;
    }
    if (rich && (EXTGLOB_SUFFIX.has(c) || c === '!') && glob[i + 1] === '(') {
      const close = closing(glob, i + 1, '(', ')');
      if (close !== -1) {
        if (c === '!') throw new GlobSyntaxError('!(...) (a negated group) is not supported; negate the whole glob with a leading ! instead');
        const alternatives = splitTopLevel(glob.slice(i + 2, close), '|');
        out += `(?:${alternatives.map(sub).join('|')})${EXTGLOB_SUFFIX.get(c) as string}`;
        i = close + 1;
        continue;
      }
    }
    switch (c) {
      case '*':
        while (glob[i + 1] === '*') i++;
        out += '[^/]*';
        i++;
        continue;
      case '?':
        out += '[^/]';
        i++;
        continue;
      case '[': {
        const bracket = bracketClass(glob, i, unclosed);
        if (bracket !== null) {
          out += bracket.source;
          i = bracket.end;
          continue;
        }
        break;
      }
      case '{': {
        const close = rich ? closing(glob, i, '{', '}') : -1;
        if (close !== -1) {
          const inner = glob.slice(i + 1, close);
          const alternatives = splitTopLevel(inner, ',');
          const range = alternatives.length === 1 ? rangeOf(inner) : null;
          if (alternatives.length > 1 || range !== null) {
            out += range ?? `(?:${alternatives.map(sub).join('|')})`;
            i = close + 1;
            continue;
          }
        }
        break;
      }
      case '\\':
        if (i + 1 < glob.length) {
          out += literal(glob[i + 1] as string);
          i += 2;
          continue;
        }
        break;
    }
    out += literal(c);
    i++;
  }
  if (out.length > GLOB_MAX_SOURCE_CHARS) throw tooLarge();
  return out;
}

/** A `**` that is a whole segment (between slashes or the ends); elsewhere `**` is just `*`. */
function isGlobstar(glob: string, at: number): boolean {
  return glob[at] === '*' && glob[at + 1] === '*' && (at === 0 || glob[at - 1] === '/') && (at + 2 === glob.length || glob[at + 2] === '/');
}

function literal(c: string): string {
  return RE2JS.quote(c);
}

/** Index of the bracket closing the one at `open`, skipping escapes and nested pairs; -1 when it is never closed. */
function closing(glob: string, open: number, left: string, right: string): number {
  let depth = 0;
  for (let i = open; i < glob.length; i++) {
    const c = glob[i];
    if (c === '\\') i++;
    else if (c === left) depth++;
    else if (c === right && --depth === 0) return i;
  }
  return -1;
}

/** `text` split at `separator` where no `{}`, `()` or `[]` is open (escapes kept for the recursive translation). */
function splitTopLevel(text: string, separator: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === '{' || c === '(' || c === '[') depth++;
    else if ((c === '}' || c === ')' || c === ']') && depth > 0) depth--;
    else if (c === separator && depth === 0) {
      parts.push(text.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(text.slice(from));
  return parts;
}

/** `{1..12}` or `{a..e}`: the RE2 alternation of the range's members; null when `inner` is not a range. */
function rangeOf(inner: string): string | null {
  const numeric = /^(-?\d{1,6})\.\.(-?\d{1,6})$/.exec(inner);
  if (numeric) {
    const [from, to] = [Number(numeric[1]), Number(numeric[2])];
    // Each member takes two characters at least (itself and a `|`): a larger range cannot fit.
    if (Math.abs(to - from) + 1 > GLOB_MAX_SOURCE_CHARS / 2) throw tooLarge();
    const members: string[] = [];
    for (let n = Math.min(from, to); n <= Math.max(from, to); n++) members.push(String(n));
    return `(?:${members.map((m) => RE2JS.quote(m)).join('|')})`;
  }
  const letters = /^([a-zA-Z])\.\.([a-zA-Z])$/.exec(inner);
  if (letters) {
    const [a, b] = [(letters[1] as string).charCodeAt(0), (letters[2] as string).charCodeAt(0)];
    return `[${literal(String.fromCharCode(Math.min(a, b)))}-${literal(String.fromCharCode(Math.max(a, b)))}]`;
  }
  return null;
}

/**
 * The bracket expression starting at `open` as an RE2 class that never matches `/`; null when it is not closed
 * (then `[` is literal). Past its first member, where a scan goes from a position does not depend on where it
 * began, so the positions a scan that found no `]` went through are marked in `unclosed`, and a later scan
 * reaching one stops there: the unclosed brackets of a glob are scanned in time linear in its length, not
 * once each to its end (a .gitignore line of 40,000 `[` held a tool thread 38 s).
 */
function bracketClass(glob: string, open: number, unclosed: Uint8Array): { source: string; end: number } | null {
  let i = open + 1;
  const negate = glob[i] === '!' || glob[i] === '^';
  if (negate) i++;
  let members = '';
  let first = true;
  const went: number[] = [];
  const fail = (): null => {
    for (const at of went) unclosed[at] = 1;
    return null;
  };
  for (; i < glob.length; i++) {
    if (!first) {
      if (unclosed[i] === 1) return fail();
      went.push(i);
    }
    const c = glob[i] as string;
    if (c === ']' && !first) {
      // RE2 refuses an empty class; a negated one excludes `/` as `*` does.
      return { source: negate ? `[^/${members}]` : `[${members}]`, end: i + 1 };
    }
    first = false;
    if (c === '[' && glob[i + 1] === ':') {
      const end = glob.indexOf(':]', i + 2);
      const name = end === -1 ? '' : glob.slice(i + 2, end);
      if (POSIX_CLASSES.has(name)) {
        members += `[:${name}:]`;
        i = end + 1;
        continue;
      }
    }
    let member = c;
    if (c === '\\' && i + 1 < glob.length) member = glob[++i] as string;
    if (glob[i + 1] === '-' && glob[i + 2] !== undefined && glob[i + 2] !== ']') {
      let high = glob[i + 2] as string;
      let skip = 2;
      if (high === '\\' && glob[i + 3] !== undefined) {
        high = glob[i + 3] as string;
        skip = 3;
      }
      if (high < member) throw new GlobSyntaxError(`the range ${member}-${high} in [...] runs backwards`);
      members += `${classMember(member)}-${classMember(high)}`;
      i += skip;
      continue;
    }
    members += classMember(member);
  }
  return fail();
}

function classMember(c: string): string {
  return /[A-Za-z0-9]/.test(c) ? c : `\\x{${(c.codePointAt(0) as number).toString(16)}}`;
}
