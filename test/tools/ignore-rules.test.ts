// .gitignore rules compiled to RE2 (src/tools/ignore-rules.ts): the same verdicts as the `ignore` package
// (what the walk used) on generated files of rules and paths, git's own rules one case each, and the
// planted pattern that made the package's RegExp backtrack for seconds answered in linear time. The rules
// looked up by key give RE2's verdicts, and the rules past IGNORE_MAX_LINES and IGNORE_MAX_GLOB_RULES are
// counted, not applied.

import fc from 'fast-check';
import ignore from 'ignore';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { IgnoreRules } from '../../src/tools/ignore-rules.ts';
import { IGNORE_MAX_GLOB_RULES, IGNORE_MAX_LINES } from '../../src/limits.ts';

const SEED = 20_261_205;

const atoms = ['a', 'b', '.', '*', '*', '?', '[ab]', '[!a]', '\\*', '{a,b}', ' '];
const segment = fc.array(fc.constantFrom(...atoms), { minLength: 1, maxLength: 3 }).map((a) => a.join(''));
const pattern = fc.tuple(
  fc.constantFrom('', '', '', '!', '/', '**/', '#'),
  fc.array(fc.oneof({ weight: 5, arbitrary: segment }, { weight: 1, arbitrary: fc.constant('**') }), { minLength: 1, maxLength: 3 }),
  fc.constantFrom('', '', '/', '/**'),
).map(([head, segs, tail]) => head + segs.join('/') + tail)
  // `**` inside a segment is `*` for git; the package lets some of those cross `/`.
  .filter((p) => p.split('/').every((seg) => seg === '**' || !seg.includes('**')));
const name = fc.array(fc.constantFrom('a', 'b', '.', '*', 'c'), { minLength: 1, maxLength: 3 }).map((a) => a.join('')).filter((n) => n !== '.' && n !== '..');
const entry = fc.tuple(fc.array(name, { minLength: 1, maxLength: 4 }), fc.boolean()).map(([parts, dir]) => parts.join('/') + (dir ? '/' : ''));

test('compiled rules give the `ignore` package\'s verdict for every path, directories with a trailing /', () => {
  let compared = 0;
  let decided = 0;
  fc.assert(fc.property(fc.array(pattern, { minLength: 1, maxLength: 5 }), fc.array(entry, { minLength: 1, maxLength: 8 }), (lines, paths) => {
    const text = lines.join('\n');
    const mine = new IgnoreRules(text);
    const theirs = ignore().add(text);
    for (const p of paths) {
      // The package also checks every parent directory; the walk never enters an ignored one, so only
      // paths whose parents the rules leave alone are compared.
      const parents = p.replace(/\/$/, '').split('/').slice(0, -1).map((_, i, all) => `${all.slice(0, i + 1).join('/')}/`);
      if (!parents.every((d) => !mine.test(d).ignored && !mine.test(d).unignored)) continue;
      const { ignored, unignored } = theirs.test(p);
      assert.equal(mine.test(p), { ignored, unignored }, JSON.stringify({ text, p }));
      compared++;
      if (ignored || unignored) decided++;
    }
  }), { seed: SEED, numRuns: 3000 });
  // Not vacuous: most paths were compared, and many of them matched some rule.
  assert.ok(compared > 5_000 && decided > 500, JSON.stringify({ compared, decided }));
});

test('git\'s rules: comments, negation, directory-only, anchoring, trailing spaces and /** below a directory', () => {
  const rules = new IgnoreRules('# comment\n*.log\n!keep.log\nbuild/\n/top.txt\ndoc/*.md\nout/**\nspace\\ \ntrail   \n');
  const ignored = (p: string) => rules.test(p).ignored;
  assert.equal(['a.log', 'x/a.log', 'keep.log', '# comment'].map(ignored), [true, true, false, false]);
  assert.equal(rules.test('keep.log'), { ignored: false, unignored: true });
  assert.equal(['build/', 'x/build/', 'build'].map(ignored), [true, true, false]);
  assert.equal(['top.txt', 'x/top.txt', 'doc/a.md', 'x/doc/a.md'].map(ignored), [true, false, true, false]);
  assert.equal(['out', 'out/', 'out/a', 'out/a/b'].map(ignored), [false, false, true, true]);
  assert.equal(['space ', 'space', 'trail', 'trail '].map(ignored), [true, false, true, false]);
});

test('a rule matches below a directory whose name holds a newline, as git does (unanchored, **, and by name)', () => {
  const rules = new IgnoreRules('*.py[cod]\n**/x/*.t?t\n*.log\n');
  assert.equal(['a\nb/c.pyc', 'a\nb/x/y.txt', 'a\nb/c.log', 'a\nb/c.pyz'].map((p) => rules.test(p).ignored), [true, true, true, false]);
});

test('a planted a/**/ x8 + z over a 40-level path answers; the package took seconds on it', () => {
  const rules = new IgnoreRules(`${'a/**/'.repeat(8)}z\n`);
  const deep = Array(40).fill('a').join('/');
  // RE2 has no backtracking to count; what is checked is that it answers, and answers right.
  assert.equal(rules.test(deep), { ignored: false, unignored: false });
  assert.equal(rules.test(`${deep}/z`), { ignored: true, unignored: false });
});

// Shapes the Maps take (a name, a path, `*` and a suffix, a name and `*`) mixed with ones only RE2 takes,
// over names with dots and newlines (a name may hold one; git matches it like any other character).
const letters = fc.array(fc.constantFrom('a', 'b', '.', ' ', '\\ '), { minLength: 1, maxLength: 3 }).map((a) => a.join(''));
const keyedShape = fc.oneof(
  letters,
  letters.map((l) => `*${l}`),
  letters.map((l) => `${l}*`),
  fc.tuple(letters, letters).map(([a, b]) => `${a}/${b}`),
  fc.constantFrom('*', '**', 'a*b', '*a*', '[ab]', 'a?', '**/a', 'a/**', '*.[ab]', '\\*a', 'a\\*'),
);
const mixedRule = fc.tuple(fc.constantFrom('', '', '!', '/', '**/', '#'), keyedShape, fc.constantFrom('', '', '/'))
  .map(([head, body, tail]) => head + body + tail);
const pathName = fc.constantFrom('a', 'b', 'ab', 'ba', '.a', 'a.', 'a.b', 'b.a', 'a ', ' a', 'a\nb', '\n', 'a.\n');
const mixedPath = fc.tuple(fc.array(pathName, { minLength: 1, maxLength: 4 }), fc.boolean()).map(([parts, dir]) => parts.join('/') + (dir ? '/' : ''));

test('the rules looked up by key give RE2\'s verdict on every path: negation, directory-only and the last match win', () => {
  let decided = 0;
  fc.assert(fc.property(fc.array(mixedRule, { minLength: 1, maxLength: 8 }), fc.array(mixedPath, { minLength: 1, maxLength: 8 }), (lines, paths) => {
    const text = lines.join('\n');
    const keyed = new IgnoreRules(text);
    const regex = new IgnoreRules(text, { keyed: false });
    for (const p of paths) {
      const verdict = regex.test(p);
      assert.equal(keyed.test(p), verdict, JSON.stringify({ text, p }));
      if (verdict.ignored || verdict.unignored) decided++;
    }
  }), { seed: SEED, numRuns: 3000 });
  assert.ok(decided > 2_000, String(decided));
});

test('RE2 rules past the budget are counted and not applied; later rules looked up by key still are', () => {
  const rules = new IgnoreRules('*a*\n*b*\n*c*\nkeep.txt\n!*d*\n', { maxGlobRules: 2 });
  assert.is(rules.globRules, 2);
  assert.is(rules.unapplied, 2);
  assert.is(rules.cutBy, 'IGNORE_MAX_GLOB_RULES');
  assert.equal(['xa', 'xb', 'xc', 'keep.txt'].map((p) => rules.test(p).ignored), [true, true, false, true]);
  // The `!*d*` past the budget re-includes nothing.
  assert.equal(rules.test('xad'), { ignored: true, unignored: false });
  const whole = new IgnoreRules(`${Array.from({ length: IGNORE_MAX_GLOB_RULES }, (_, i) => `*x${i}*`).join('\n')}\n`);
  assert.equal([whole.globRules, whole.unapplied, whole.cutBy], [IGNORE_MAX_GLOB_RULES, 0, null]);
});

test('lines past IGNORE_MAX_LINES are counted and not applied', () => {
  const text = `${'# filler\n'.repeat(IGNORE_MAX_LINES - 1)}first\nsecond\nthird\n`;
  const rules = new IgnoreRules(text);
  assert.equal([rules.test('first').ignored, rules.test('second').ignored, rules.test('third').ignored], [true, false, false]);
  assert.equal([rules.unapplied, rules.cutBy], [2, 'IGNORE_MAX_LINES']);
});

test.run();
