// Globs translated to RE2 (src/tools/glob.ts): the same answers as picomatch (`dot: true`, what find and
// grep used) on generated globs and paths over a small alphabet, and the pattern that made picomatch's
// RegExp backtrack until the tool deadline answered at once, on a real tool-pool thread.

import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import picomatch from 'picomatch';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { compileGlobMatcher, GlobSyntaxError } from '../../src/tools/glob.ts';
import { ToolPool } from '../../src/tools/tool-pool.ts';
import { guarded } from '../hang-guard.ts';

const SEED = 20_261_205;

/**
 * Pieces of globs callers write. Left out, where picomatch answers oddly: `[!...]` (picomatch reads
 * `!` as a member, not as negation) and a bracket matching its own text (`[ab]` matching "[ab]").
 */
const atoms = ['a', 'b', '.', '-', '*', '*', '?', '[ab]', '[a-c]', '[^a]', '{a,b}', '{a,bc}', '{b,a*}', '{1..3}', '\\*', '\\{', '+(a|b)', '@(a|.b)'];
const segment = fc.array(fc.constantFrom(...atoms), { minLength: 1, maxLength: 4 }).map((a) => a.join(''));
const glob = fc.tuple(fc.constantFrom('', '', '**/', '!'), fc.array(fc.oneof({ weight: 5, arbitrary: segment }, { weight: 1, arbitrary: fc.constant('**') }), { minLength: 1, maxLength: 3 }))
  .map(([head, segs]) => head + segs.join('/'))
  // picomatch quirk: `x*/**` at the end needs the `/`, though `x/**` matches x itself; ours treats both as `x/**`.
  .filter((g) => !/\*[^/]*\/\*\*$/.test(g))
  // and `**` inside a segment, which picomatch sometimes lets cross `/` (`**@(a|b)` matches "a/a"); ours is `*` there.
  .filter((g) => g.split('/').every((seg) => seg === '**' || !seg.includes('**')))
  // and `?` right after an extglob group, which picomatch reads as a regex `?` (the group optional: `@(a|b)?`
  // matches "a", not "aa"); ours is one more character, as bash's extglob (an example test below). Seed 424242 drew it.
  .filter((g) => !g.includes(')?'))
  // and a last segment that is exactly `*.*`, which picomatch's shortcut for it reads as needing a character after
  // the dot ("a." unmatched); ours matches "a." as bash does (an example test below). Seed 424242 drew it too.
  .filter((g) => !/(?:^|\/)\*\.\*$/.test(g.replace(/^!/, '')))
  // and a `.` in a glob with a range, which picomatch often leaves unescaped (`b.{1..3}a` is /b.[1-3]a/, "ba3a"
  // matches; `{1..3}-.` matches "3-a"); ours keeps it a dot, as bash does (examples below). Seeds 7 and 123456789.
  .filter((g) => !(g.includes('{1..3}') && g.includes('.')));
/** Paths as a walk gives them: relative, no empty segment, no trailing `/`, names with dots and glob characters. */
const name = fc.array(fc.constantFrom('a', 'b', 'c', '.', '1', '3', '-', '*', '{'), { minLength: 1, maxLength: 4 }).map((a) => a.join('')).filter((n) => n !== '.' && n !== '..');
const filePath = fc.array(name, { minLength: 1, maxLength: 4 }).map((a) => a.join('/'));

test('a translated glob matches exactly the paths picomatch matches (dot: true)', () => {
  fc.assert(fc.property(glob, fc.array(filePath, { minLength: 1, maxLength: 8 }), (g, paths) => {
    const mine = compileGlobMatcher(g);
    const theirs = picomatch.makeRe(g, { dot: true });
    for (const p of paths) assert.is(mine(p), theirs.test(p), JSON.stringify({ g, p }));
  }), { seed: SEED, numRuns: 4000 });
});

test('paths built to match a glob (each * and ? filled in) are matched, as picomatch matches them', () => {
  const filled = fc.array(fc.constantFrom('a', 'b', '*', '?', '.c'), { minLength: 1, maxLength: 6 }).chain((parts) =>
    fc.tuple(fc.constant(parts.join('')), fc.tuple(...parts.map((p) => (p === '*' ? name : p === '?' ? fc.constantFrom('a', '.', '-') : fc.constant(p)))).map((xs) => xs.join(''))));
  fc.assert(fc.property(filled, ([g, p]) => {
    assert.ok(picomatch.makeRe(g, { dot: true }).test(p), JSON.stringify({ g, p }));
    assert.ok(compileGlobMatcher(g)(p), JSON.stringify({ g, p }));
  }), { seed: SEED, numRuns: 1000 });
});

test('** as a whole segment spans directories, none included; elsewhere it is *', () => {
  const m = compileGlobMatcher('src/**/*.ts');
  assert.equal(['src/a.ts', 'src/x/y/a.ts', 'srca.ts', 'src/x/a.js'].map(m), [true, true, false, false]);
  assert.equal(['a', 'a/b/c', 'ab'].map(compileGlobMatcher('a/**')), [true, true, false]);
  assert.equal(['ab', 'axxb', 'a/b'].map(compileGlobMatcher('a**b')), [true, true, false]);
});

test('brackets, braces, escapes, extglobs and a leading ! mean what they mean in picomatch', () => {
  assert.equal(['a', 'b', '/'].map(compileGlobMatcher('[^a]')), [false, true, false]);
  assert.equal(['a', '!'].map(compileGlobMatcher('[!a]')), [false, true]);
  assert.equal(['ax', 'cx', 'x'].map(compileGlobMatcher('{a,{b,c}}x')), [true, true, false]);
  assert.equal(['2', '12', '13'].map(compileGlobMatcher('{1..12}')), [true, true, false]);
  assert.equal(['*', 'a'].map(compileGlobMatcher('\\*')), [true, false]);
  assert.equal(['1', 'a'].map(compileGlobMatcher('[[:digit:]]')), [true, false]);
  assert.equal(['abba', 'c'].map(compileGlobMatcher('+(a|b)')), [true, false]);
  // `?` after a group is one more character, as in bash (`[[ aa == @(a|.b)? ]]`); picomatch makes the group optional.
  assert.equal(['aa', '.bx', 'a', '.b', ''].map(compileGlobMatcher('@(a|.b)?')), [true, true, false, false, false]);
  assert.equal(['aa', 'aba', 'a'].map(compileGlobMatcher('+(a|b)?')), [true, true, false]);
  // `*.*` matches a name ending in a dot, as bash's does; picomatch's shortcut for `*.*` wants a character after it.
  assert.equal(['a.', 'a.b', '.a', 'x/a.', 'a'].map(compileGlobMatcher('*.*')), [true, true, true, false, false]);
  assert.equal(['a.', 'x/a.'].map(compileGlobMatcher('**/*.*')), [true, true]);
  // A dot before a range is a dot (bash: `echo b.{1..3}a`); picomatch's regex lets it match any character.
  assert.equal(['b.3a', 'ba3a', 'b-1a', 'b.4a'].map(compileGlobMatcher('b.{1..3}a')), [true, false, false, false]);
  assert.equal(['3-.', '3-a'].map(compileGlobMatcher('{1..3}-.')), [true, false]);
  assert.equal(['a.ts', 'a.js'].map(compileGlobMatcher('!*.ts')), [false, true]);
  assert.equal(['{a', '[a'].map((p) => compileGlobMatcher(p)(p)), [true, true]);
});

test('a negated group and a backwards range are refused with a message saying what is wrong', () => {
  assert.throws(() => compileGlobMatcher('!(a)'), (e: unknown) => e instanceof GlobSyntaxError && /negated group/.test((e as Error).message));
  assert.throws(() => compileGlobMatcher('[z-a]'), (e: unknown) => e instanceof GlobSyntaxError && /runs backwards/.test((e as Error).message));
});

test('find with *? twelve times and a Z, over 36-character names, answers (picomatch backtracked until the deadline)', async () => {
  const ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-glob-')));
  const pool = new ToolPool({ maxThreads: 1 });
  try {
    for (let i = 0; i < 20; i++) await writeFile(path.join(ws, `${String(i).padStart(2, '0')}${'a'.repeat(34)}`), '');
    const r = await guarded(pool.execute('find', { pattern: `${'*?'.repeat(12)}Z` }, 'super-pi-code', { workspace: ws, signal: new AbortController().signal }), 'find with a backtracking glob');
    assert.is(r.text, 'No files found matching pattern');
  } finally {
    await pool.destroy();
    await rm(ws, { recursive: true, force: true });
  }
});

test.run();
