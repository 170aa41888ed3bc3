// The rules of one .gitignore, compiled to RE2 (./glob.ts): a .gitignore is workspace content, and the
// `ignore` package compiles it to JavaScript RegExps that backtrack (`a/**/` eight times and a `z` took
// 8 s on one 40-level path). Git's rules: comments, `!` to re-include, a trailing `/` for directories
// only, a `/` at the start or in the middle anchors the pattern to the file's directory.
//
// A walk tests every entry against every rule, so the cost is rules x entries. The common shapes (a name,
// a path, `*.ext`, `name*`) are looked up in Maps, at a cost that does not grow with their number; only
// the rest run through RE2 one by one, and at most IGNORE_MAX_GLOB_RULES of them are applied (10,000
// wildcard rules held a `find` over 1,000 files for seconds, and a cloned repository can ship them).

import { RE2JS } from 're2js';
import { GlobSyntaxError, translate } from './glob.ts';
import { GLOB_MAX_CHARS, IGNORE_MAX_GLOB_RULES, IGNORE_MAX_LINES } from '../limits.ts';

/** What the rules say of one path: as the `ignore` package's `test`, the last matching rule decides. */
export interface IgnoreVerdict {
  readonly ignored: boolean;
  readonly unignored: boolean;
}

const NONE: IgnoreVerdict = Object.freeze({ ignored: false, unignored: false });
const IGNORED: IgnoreVerdict = Object.freeze({ ignored: true, unignored: false });
const UNIGNORED: IgnoreVerdict = Object.freeze({ ignored: false, unignored: true });

/** Characters that make a pattern more than a literal name. */
const GLOB_SYNTAX = /[*?[\\]/;

/** How a rule is matched: by key in one of the Maps, or by its own RE2 expression. */
type Shape = { readonly kind: 'name' | 'path' | 'suffix' | 'prefix'; readonly key: string } | { readonly kind: 'glob' };

interface ParsedRule {
  readonly negated: boolean;
  readonly directoryOnly: boolean;
  readonly pattern: string;
  readonly anchored: boolean;
}

interface GlobRule {
  /** Position among the file's rules: the greatest that matches decides. */
  readonly index: number;
  readonly directoryOnly: boolean;
  readonly matches: (path: string) => boolean;
}

/** What the rules sharing one key say: the position of the last of them, and of the last that also applies to files. */
interface Slot {
  last: number;
  lastForFiles: number;
}

/** Rules keyed by a string: the last one whose key is the given string, in time independent of how many there are. */
class KeyedRules {
  readonly #slots = new Map<string, Slot>();
  readonly #lengthSet = new Set<number>();
  /** The distinct key lengths, ascending (sorted once, at the first lookup): an affix lookup tries only these. */
  #lengths: number[] | null = null;

  add(key: string, index: number, directoryOnly: boolean): void {
    let slot = this.#slots.get(key);
    if (slot === undefined) {
      slot = { last: -1, lastForFiles: -1 };
      this.#slots.set(key, slot);
      this.#lengthSet.add(key.length);
      this.#lengths = null;
    }
    slot.last = index;
    if (!directoryOnly) slot.lastForFiles = index;
  }

  /** The last rule keyed `key`, or -1. */
  find(key: string, isDirectory: boolean): number {
    const slot = this.#slots.get(key);
    if (slot === undefined) return -1;
    return isDirectory ? slot.last : slot.lastForFiles;
  }

  /** The last rule whose key ends `name` (`atEnd`) or starts it, or -1. */
  findAffix(name: string, isDirectory: boolean, atEnd: boolean): number {
    let best = -1;
    this.#lengths ??= [...this.#lengthSet].sort((a, b) => a - b);
    for (const length of this.#lengths) {
      if (length > name.length) break;
      const found = this.find(atEnd ? name.slice(name.length - length) : name.slice(0, length), isDirectory);
      if (found > best) best = found;
    }
    return best;
  }
}

/** The limits past which a .gitignore's rules are not applied. */
export type IgnoreLimit = 'IGNORE_MAX_LINES' | 'IGNORE_MAX_GLOB_RULES';

export interface IgnoreOptions {
  /** Whether names compare without case (as the file system does); then every rule goes through RE2. */
  readonly ignoreCase?: boolean;
  /** Rules that need RE2 applied at most: what the .gitignore files above left of IGNORE_MAX_GLOB_RULES. */
  readonly maxGlobRules?: number;
  /** False: every rule through RE2, none looked up by key (tests compare the two). */
  readonly keyed?: boolean;
}

export class IgnoreRules {
  readonly #names = new KeyedRules();
  readonly #paths = new KeyedRules();
  readonly #suffixes = new KeyedRules();
  readonly #prefixes = new KeyedRules();
  readonly #globs: GlobRule[] = [];
  /** Whether the rule at each position is a `!` one. */
  readonly #negated: boolean[] = [];
  #unapplied = 0;
  #cutBy: IgnoreLimit | null = null;

  /** `text`: the file's content. Rules past IGNORE_MAX_LINES, and RE2 ones past `maxGlobRules`, are not applied. */
  constructor(text: string, options: IgnoreOptions = {}) {
    const { ignoreCase = false, maxGlobRules = IGNORE_MAX_GLOB_RULES, keyed = true } = options;
    const lines = text.split(/\r?\n/);
    if (lines.length > IGNORE_MAX_LINES) {
      this.#unapplied += lines.filter((line, i) => i >= IGNORE_MAX_LINES && parseRule(line) !== null).length;
      if (this.#unapplied > 0) this.#cutBy = 'IGNORE_MAX_LINES';
      lines.length = IGNORE_MAX_LINES;
    }
    for (const line of lines) {
      const rule = parseRule(line);
      if (rule === null) continue;
      const shape = shapeOf(rule, ignoreCase, keyed);
      const index = this.#negated.length;
      if (shape.kind === 'glob') {
        // Counted before it is compiled: compiling is most of what a rule costs until the walk tests it.
        if (this.#globs.length >= maxGlobRules) {
          this.#unapplied++;
          this.#cutBy ??= 'IGNORE_MAX_GLOB_RULES';
          continue;
        }
        const matches = compileRule(rule, ignoreCase);
        if (matches === null) continue;
        this.#globs.push({ index, directoryOnly: rule.directoryOnly, matches });
      } else {
        const table = shape.kind === 'name' ? this.#names : shape.kind === 'path' ? this.#paths : shape.kind === 'suffix' ? this.#suffixes : this.#prefixes;
        table.add(shape.key, index, rule.directoryOnly);
      }
      this.#negated.push(rule.negated);
    }
  }

  /** Rules applied through RE2: what counts against IGNORE_MAX_GLOB_RULES. */
  get globRules(): number { return this.#globs.length; }

  /** Rules of the file not applied: past IGNORE_MAX_LINES, or past the RE2 rules it was allowed. */
  get unapplied(): number { return this.#unapplied; }

  /** The limit that left rules unapplied (the first met); null when every rule is. */
  get cutBy(): IgnoreLimit | null { return this.#cutBy; }

  /** `path`: relative to the .gitignore's directory, `/`-separated, ending in `/` for a directory. */
  test(path: string): IgnoreVerdict {
    const isDirectory = path.endsWith('/');
    const bare = isDirectory ? path.slice(0, -1) : path;
    const name = bare.slice(bare.lastIndexOf('/') + 1);
    let best = Math.max(
      this.#names.find(name, isDirectory),
      this.#paths.find(bare, isDirectory),
      this.#suffixes.findAffix(name, isDirectory, true),
      this.#prefixes.findAffix(name, isDirectory, false),
    );
    // Only a later rule can overrule what the Maps found.
    for (let i = this.#globs.length - 1; i >= 0; i--) {
      const rule = this.#globs[i] as GlobRule;
      if (rule.index < best) break;
      if (rule.directoryOnly && !isDirectory) continue;
      if (rule.matches(bare)) {
        best = rule.index;
        break;
      }
    }
    if (best < 0) return NONE;
    return this.#negated[best] === true ? UNIGNORED : IGNORED;
  }
}

/** One line as a rule; null for a blank line, a comment, or a pattern git would not match anything with. */
function parseRule(line: string): ParsedRule | null {
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
  return { negated, directoryOnly, pattern, anchored };
}

/**
 * Most real rules are a name (`dist`), a path (`/out`, `docs/build`), `*` and a suffix (`*.log`) or a name
 * and `*` (`npm-debug.log*`): those are looked up by key; the rest need RE2.
 */
function shapeOf({ pattern, anchored }: ParsedRule, ignoreCase: boolean, keyed: boolean): Shape {
  if (keyed && !ignoreCase) {
    if (!GLOB_SYNTAX.test(pattern)) return { kind: anchored ? 'path' : 'name', key: pattern };
    if (!anchored && pattern.startsWith('*') && !GLOB_SYNTAX.test(pattern.slice(1))) return { kind: 'suffix', key: pattern.slice(1) };
    if (!anchored && pattern.endsWith('*') && !GLOB_SYNTAX.test(pattern.slice(0, -1))) return { kind: 'prefix', key: pattern.slice(0, -1) };
  }
  return { kind: 'glob' };
}

/** The rule's pattern as an RE2 matcher of the path; null for a pattern git matches nothing with. */
function compileRule({ pattern, anchored }: ParsedRule, ignoreCase: boolean): ((path: string) => boolean) | null {
  try {
    const body = translate(pattern, 'gitignore');
    // Unanchored: the name at any depth below the file's directory.
    const source = anchored || pattern.startsWith('**/') ? body : `(?:.*/)?${body}`;
    // DOTALL: the `.` of `(?:.*/)?` and of `**` must cross a newline, which a directory's name may hold.
    const re = RE2JS.compile(source, RE2JS.DOTALL | (ignoreCase ? RE2JS.CASE_INSENSITIVE : 0));
    return (path) => re.matches(path);
  } catch (err) {
    // A range running backwards or a class RE2 refuses: git matches nothing with it either.
    if (err instanceof GlobSyntaxError || (err as Error).name === 'RE2JSSyntaxException') return null;
    throw err;
  }
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
