// The rules of one .gitignore, compiled to RE2 (./glob.ts): a .gitignore is workspace content, and the
// `ignore` package compiles it to JavaScript RegExps that backtrack (`a/**/` eight times and a `z` took
// 8 s on one 40-level path). Git's rules: comments, `!` to re-include, a trailing `/` for directories
// only, a `/` at the start or in the middle anchors the pattern to the file's directory.

import { RE2JS } from 're2js';
import { GlobSyntaxError, translate } from './glob.ts';
import { GLOB_MAX_CHARS } from '../limits.ts';

/** What the rules say of one path: as the `ignore` package's `test`, the last matching rule decides. */
export interface IgnoreVerdict {
  readonly ignored: boolean;
  readonly unignored: boolean;
}

interface Rule {
  readonly negated: boolean;
  readonly directoryOnly: boolean;
  /** Whether the rule's pattern matches the path (without its trailing `/`). */
  readonly matches: (path: string) => boolean;
}

/** Characters that make a pattern more than a literal name. */
const GLOB_SYNTAX = /[*?[\\]/;

/** Lines of one .gitignore kept at most; the rest are not read (no real one comes near). */
export const MAX_IGNORE_RULES = 10_000;

export class IgnoreRules {
  readonly #rules: readonly Rule[];

  /** `text`: the file's content. `ignoreCase`: whether names compare without case (as the file system does). */
  constructor(text: string, ignoreCase = false) {
    const rules: Rule[] = [];
    for (const line of text.split(/\r?\n/).slice(0, MAX_IGNORE_RULES)) {
      const rule = compileRule(line, ignoreCase);
      if (rule !== null) rules.push(rule);
    }
    this.#rules = rules;
  }

  /** `path`: relative to the .gitignore's directory, `/`-separated, ending in `/` for a directory. */
  test(path: string): IgnoreVerdict {
    const isDirectory = path.endsWith('/');
    const bare = isDirectory ? path.slice(0, -1) : path;
    for (let i = this.#rules.length - 1; i >= 0; i--) {
      const rule = this.#rules[i] as Rule;
      if (rule.directoryOnly && !isDirectory) continue;
      if (rule.matches(bare)) return { ignored: !rule.negated, unignored: rule.negated };
    }
    return { ignored: false, unignored: false };
  }
}

/** One line as a rule; null for a blank line, a comment, or a pattern git would not match anything with. */
function compileRule(line: string, ignoreCase: boolean): Rule | null {
  // Longer than any path: skipped as a malformed rule is (its translation, workspace content, stays bounded).
  if (line.length > GLOB_MAX_CHARS) return null;
  let pattern = trimTrailingSpaces(line);
  if (pattern === '' || pattern.startsWith('#')) return null;
  const negated = pattern.startsWith('!');
  if (negated) pattern = pattern.slice(1);
  // `\!` and `\#` at the start name a file; the translator reads the escape as the literal.
  const directoryOnly = pattern.endsWith('/') && !pattern.endsWith('\\/');
  if (directoryOnly) pattern = pattern.slice(0, -1);
  if (pattern === '' || pattern === '/') return null;
  const anchored = pattern.includes('/');
  if (pattern.startsWith('/')) pattern = pattern.slice(1);
  const literal = ignoreCase ? null : literalMatcher(pattern, anchored);
  if (literal !== null) return { negated, directoryOnly, matches: literal };
  try {
    const body = translate(pattern, 'gitignore');
    // Unanchored: the name at any depth below the file's directory.
    const source = anchored || pattern.startsWith('**/') ? body : `(?:.*/)?${body}`;
    // DOTALL: the `.` of `(?:.*/)?` and of `**` must cross a newline, which a directory's name may hold.
    const re = RE2JS.compile(source, RE2JS.DOTALL | (ignoreCase ? RE2JS.CASE_INSENSITIVE : 0));
    return { negated, directoryOnly, matches: (path) => re.matches(path) };
  } catch (err) {
    // A range running backwards or a class RE2 refuses: git matches nothing with it either.
    if (err instanceof GlobSyntaxError || (err as Error).name === 'RE2JSSyntaxException') return null;
    throw err;
  }
}

/**
 * Most real rules are a name (`dist`), a path (`/out`, `docs/build`) or `*` and a suffix (`*.log`):
 * those are compared as strings, several times faster than RE2 on every entry of a walk.
 */
function literalMatcher(pattern: string, anchored: boolean): ((path: string) => boolean) | null {
  if (!GLOB_SYNTAX.test(pattern)) {
    if (anchored) return (path) => path === pattern;
    const below = `/${pattern}`;
    return (path) => path === pattern || path.endsWith(below);
  }
  if (!anchored && pattern.startsWith('*') && !GLOB_SYNTAX.test(pattern.slice(1))) {
    const suffix = pattern.slice(1);
    return (path) => path.endsWith(suffix) && path.length - path.lastIndexOf('/') - 1 >= suffix.length;
  }
  return null;
}

/** Trailing spaces are dropped unless escaped with a backslash (git's rule). */
function trimTrailingSpaces(line: string): string {
  let end = line.length;
  while (end > 0 && line[end - 1] === ' ') {
    let backslashes = 0;
    for (let i = end - 2; i >= 0 && line[i] === '\\'; i--) backslashes++;
    if (backslashes % 2 === 1) break;
    end--;
  }
  return line.slice(0, end);
}
