// What a glob (a caller's `find` pattern or `grep` glob) and a .gitignore rule (workspace content) can make
// the translation to RE2 do is bounded: GLOB_MAX_CHARS of glob, GLOB_MAX_SOURCE_CHARS of RE2 (a brace range
// counts each member), and unclosed brackets scanned in linear time, with the same translation as the
// scan of each bracket to its end (a reference below). The slow cases run on a real tool-pool thread,
// stopped by a signal far from both outcomes if they hang.

import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { RE2JS } from 're2js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { compileGlobMatcher, GlobSyntaxError, translate } from '../../src/tools/glob.ts';
import { ToolPool } from '../../src/tools/tool-pool.ts';
import { GLOB_MAX_CHARS, GLOB_MAX_SOURCE_CHARS } from '../../src/limits.ts';

const SEED = 20_261_208;
/** Far from both outcomes: the bounded calls answer in milliseconds, the unbounded ones took minutes. */
const HANG_MS = 20_000;

/** The bracket expression at `open` scanned to its end every time (how glob.ts read it before its memo). */
function referenceBracket(glob: string, open: number): { source: string; end: number } | null {
  let i = open + 1;
  const negate = glob[i] === '!' || glob[i] === '^';
  if (negate) i++;
  let members = '';
  let first = true;
  const member = (c: string) => (/[A-Za-z0-9]/.test(c) ? c : `\\x{${(c.codePointAt(0) as number).toString(16)}}`);
  for (; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === ']' && !first) return { source: negate ? `[^/${members}]` : `[${members}]`, end: i + 1 };
    first = false;
    if (c === '[' && glob[i + 1] === ':') {
      const end = glob.indexOf(':]', i + 2);
      if (end !== -1 && glob.slice(i + 2, end) === 'alpha') {
        members += '[:alpha:]';
        i = end + 1;
        continue;
      }
    }
    let m = c;
    if (c === '\\' && i + 1 < glob.length) m = glob[++i] as string;
    if (glob[i + 1] === '-' && glob[i + 2] !== undefined && glob[i + 2] !== ']') {
      let high = glob[i + 2] as string;
      let skip = 2;
      if (high === '\\' && glob[i + 3] !== undefined) {
        high = glob[i + 3] as string;
        skip = 3;
      }
      if (high < m) throw new GlobSyntaxError('backwards');
      members += `${member(m)}-${member(high)}`;
      i += skip;
      continue;
    }
    members += member(m);
  }
  return null;
}

/** The .gitignore translation of a glob without `*` or `/`: brackets, escapes and literals only. */
function referenceTranslate(glob: string): string {
  let out = '';
  for (let i = 0; i < glob.length;) {
    const c = glob[i] as string;
    if (c === '[') {
      const bracket = referenceBracket(glob, i);
      if (bracket !== null) {
        out += bracket.source;
        i = bracket.end;
        continue;
      }
    }
    if (c === '\\' && i + 1 < glob.length) {
      out += RE2JS.quote(glob[i + 1] as string);
      i += 2;
      continue;
    }
    out += RE2JS.quote(c);
    i++;
  }
  return out;
}

test('brackets translate as a scan of each to its end does, closed or not, escaped, negated, with ranges and POSIX classes', () => {
  const piece = fc.constantFrom('[', '[', '[', ']', ']', '!', '^', '\\', ':', 'a', 'b', '-', '[:alpha:]', '[:', ':]');
  fc.assert(fc.property(fc.array(piece, { maxLength: 24 }).map((p) => p.join('')), (glob) => {
    let expected: string | Error;
    try {
      expected = referenceTranslate(glob);
    } catch (err) {
      expected = err as Error;
    }
    if (expected instanceof Error) assert.throws(() => translate(glob, 'gitignore'), (e: unknown) => e instanceof GlobSyntaxError, glob);
    else assert.is(translate(glob, 'gitignore'), expected, JSON.stringify(glob));
  }), { seed: SEED, numRuns: 3000 });
});

test('a glob past GLOB_MAX_CHARS, and one translating past GLOB_MAX_SOURCE_CHARS, are refused naming the limit; {1..1000} is not', () => {
  assert.throws(() => compileGlobMatcher('a'.repeat(GLOB_MAX_CHARS + 1)), (e: unknown) => e instanceof GlobSyntaxError && (e as Error).message.includes('GLOB_MAX_CHARS'));
  for (const glob of ['{-999999..999999}', `{1..${GLOB_MAX_SOURCE_CHARS / 2 + 1}}`, `{${'{1..9000},'.repeat(40)}x}`, '{1..9999}'.repeat(20)]) {
    assert.throws(() => compileGlobMatcher(glob), (e: unknown) => e instanceof GlobSyntaxError && (e as Error).message.includes('GLOB_MAX_SOURCE_CHARS'), glob.slice(0, 40));
  }
  const range = compileGlobMatcher('{1..1000}.txt');
  assert.ok(range('500.txt'));
  assert.not.ok(range('1001.txt'));
  assert.ok(compileGlobMatcher('['.repeat(1000))('['.repeat(1000)));
});

async function withWorkspace(files: Record<string, string>, body: (ws: string, pool: ToolPool) => Promise<void>): Promise<void> {
  const ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-glob-bounds-')));
  const pool = new ToolPool({ maxThreads: 1 });
  try {
    for (const [name, content] of Object.entries(files)) await writeFile(path.join(ws, name), content);
    await body(ws, pool);
  } finally {
    await pool.destroy();
    await rm(ws, { recursive: true, force: true });
  }
}

test('find with {-999999..999999} is refused naming GLOB_MAX_SOURCE_CHARS (it held a tool thread 45 s, then ran it out of memory)', () =>
  withWorkspace({ '5': '' }, async (ws, pool) => {
    const r = await pool.execute('find', { pattern: '{-999999..999999}' }, 'super-pi-code', { workspace: ws, signal: AbortSignal.timeout(HANG_MS) });
    assert.ok(r.isError);
    assert.match(r.text, 'GLOB_MAX_SOURCE_CHARS');
  }));

test('a .gitignore of unclosed brackets (one line of 200,000, 200 of 4,000) is read in linear time: find answers and honours its other rules', () =>
  withWorkspace({
    '.gitignore': `${'['.repeat(200_000)}\n${`${'['.repeat(4000)}\n`.repeat(200)}ignored.txt\n`,
    'kept.txt': '',
    'ignored.txt': '',
  }, async (ws, pool) => {
    const r = await pool.execute('find', { pattern: '*.txt' }, 'super-pi-code', { workspace: ws, signal: AbortSignal.timeout(HANG_MS) });
    assert.not.ok(r.isError, r.text);
    assert.equal(r.structured?.paths, ['kept.txt']);
  }));

test.run();
