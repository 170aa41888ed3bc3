import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Ajv } from 'ajv';
import { grepDefinition } from '../../src/tools/definitions/grep.ts';
import { grepTool, type GrepArgs, lineBound, requiredLiterals, searchNeedle } from '../../src/tools/grep.ts';
import { runTool } from '../../src/tools/tool-runner.ts';
import { context, failure, inSandbox, rejection } from './sandbox.ts';

const validateOutput = new Ajv().compile(grepDefinition.outputSchema as object);

async function grep(ws: string, args: GrepArgs) {
  const outcome = await grepTool(args, context(ws));
  assert.ok(validateOutput(outcome.structured), JSON.stringify(validateOutput.errors));
  return outcome;
}

test('grep prints path:line: text for each match and returns them as structured data', () =>
  inSandbox({ 'src/a.ts': 'const x = 1;\nconst needle = 2;\n', 'b.txt': 'needle here\nno\n' }, async ({ ws }) => {
    const r = await grep(ws, { pattern: 'needle' });
    assert.is(r.text, 'b.txt:1: needle here\nsrc/a.ts:2: const needle = 2;');
    assert.equal(r.structured, {
      matches: [
        { path: 'b.txt', line: 1, text: 'needle here' },
        { path: 'src/a.ts', line: 2, text: 'const needle = 2;' },
      ],
      truncated: false,
      notices: [],
    });
    assert.not.ok(r.isError);
  }));

test('grep says "No matches found" when nothing matches', () =>
  inSandbox({ 'a.txt': 'hello\n' }, async ({ ws }) => {
    const r = await grep(ws, { pattern: 'absent' });
    assert.is(r.text, 'No matches found');
    assert.equal(r.structured, { matches: [], truncated: false, notices: [] });
  }));

test('grep respects the root .gitignore, a nested .gitignore and a negation (!keep.log)', () =>
  inSandbox({
    '.gitignore': '*.log\n!keep.log\n',
    'app.log': 'token\n', 'keep.log': 'token\n',
    'pkg/.gitignore': 'gen/\n', 'pkg/gen/out.ts': 'token\n', 'pkg/src.ts': 'token\n',
    'gen/top.ts': 'token\n',
    'node_modules/dep/index.js': 'token\n',
  }, async ({ ws }) => {
    const r = await grep(ws, { pattern: 'token' });
    assert.equal((r.structured?.matches as { path: string }[]).map((m) => m.path), ['gen/top.ts', 'keep.log', 'pkg/src.ts']);
  }));

test('grep filters files with a glob that matches names at any depth, or paths when it has a slash', () =>
  inSandbox({ 'a.ts': 'hit\n', 'src/b.ts': 'hit\n', 'src/c.js': 'hit\n', 'src/x/d.spec.ts': 'hit\n' }, async ({ ws }) => {
    const ts = await grep(ws, { pattern: 'hit', glob: '*.ts' });
    assert.equal((ts.structured?.matches as { path: string }[]).map((m) => m.path), ['a.ts', 'src/b.ts', 'src/x/d.spec.ts']);
    const spec = await grep(ws, { pattern: 'hit', glob: 'src/**/*.spec.ts' });
    assert.equal((spec.structured?.matches as { path: string }[]).map((m) => m.path), ['src/x/d.spec.ts']);
  }));

test('grep with ignoreCase matches regardless of case; without it, case matters', () =>
  inSandbox({ 'a.txt': 'Hello\nHELLO\nhello\n' }, async ({ ws }) => {
    assert.is((await grep(ws, { pattern: 'hello' })).text, 'a.txt:3: hello');
    assert.is((await grep(ws, { pattern: 'hello', ignoreCase: true })).text, 'a.txt:1: Hello\na.txt:2: HELLO\na.txt:3: hello');
  }));

test('grep with literal treats regex metacharacters as plain text', () =>
  inSandbox({ 'a.txt': 'call foo(a.b)*[1]\ncall fooXa-b\n' }, async ({ ws }) => {
    const r = await grep(ws, { pattern: 'foo(a.b)*[1]', literal: true });
    assert.is(r.text, 'a.txt:1: call foo(a.b)*[1]');
    assert.is((await grep(ws, { pattern: 'a.b', literal: true })).text, 'a.txt:1: call foo(a.b)*[1]');
    assert.is((await grep(ws, { pattern: 'a.b' })).text, 'a.txt:1: call foo(a.b)*[1]\na.txt:2: call fooXa-b');
  }));

test('grep shows context lines as path-line- text, merges overlaps and separates groups with --', () =>
  inSandbox({ 'a.txt': ['l1', 'l2 hit', 'l3', 'l4 hit', 'l5', 'l6', 'l7', 'l8 hit', 'l9'].join('\n') + '\n' }, async ({ ws }) => {
    const r = await grep(ws, { pattern: 'hit', context: 1 });
    assert.is(r.text, [
      'a.txt-1- l1', 'a.txt:2: l2 hit', 'a.txt-3- l3', 'a.txt:4: l4 hit', 'a.txt-5- l5',
      '--',
      'a.txt-7- l7', 'a.txt:8: l8 hit', 'a.txt-9- l9',
    ].join('\n'));
    assert.equal((r.structured?.matches as { line: number }[]).map((m) => m.line), [2, 4, 8]);
  }));

test('grep stops at limit and tells how to get more', () =>
  inSandbox({ 'a.txt': Array.from({ length: 10 }, (_, i) => `match ${i + 1}`).join('\n') }, async ({ ws }) => {
    const r = await grep(ws, { pattern: 'match', limit: 3 });
    assert.is(r.text, 'a.txt:1: match 1\na.txt:2: match 2\na.txt:3: match 3\n\n[3 matches limit reached. Use limit=6 for more, or refine pattern]');
    assert.is((r.structured?.matches as unknown[]).length, 3);
    assert.is(r.structured?.truncated, true);
  }));

test('grep with exactly limit matches reports no truncation', () =>
  inSandbox({ 'a.txt': 'match\nmatch\nmatch\n' }, async ({ ws }) => {
    const r = await grep(ws, { pattern: 'match', limit: 3 });
    assert.not.match(r.text, 'limit reached');
    assert.is(r.structured?.truncated, false);
  }));

test('grep refuses an invalid regex with a ToolError naming the regex error', () =>
  inSandbox({ 'a.txt': 'x\n' }, async ({ ws }) => {
    const err = await failure(grepTool({ pattern: 'foo(' }, context(ws)));
    assert.match(err.message, 'invalid regular expression "foo("');
    assert.match(err.message, /missing closing \)/);
    assert.match(err.message, /grep uses RE2 syntax/);
  }));

test('grep finishes a catastrophic-backtracking pattern in linear time: ^(a+)+$ against a 40-a line ending in b', () =>
  // A backtracking engine tries 2^40 splits of the a's for that line (days); RE2 reads it once.
  inSandbox({ 'evil.txt': `${'a'.repeat(40)}b\n`.repeat(200), 'fine.txt': 'aaaa\n' }, async ({ ws }) => {
    const r = await grep(ws, { pattern: '^(a+)+$' });
    assert.equal(lines(r), ['fine.txt:1']);
  }));

test('grep refuses what RE2 cannot match in linear time, naming the construct and the syntax it uses', () =>
  inSandbox({ 'a.txt': 'aa\n' }, async ({ ws }) => {
    const cases: [string, RegExp][] = [
      ['(a)\\1', /a backreference/],
      ['(?<n>a)\\k<n>', /a backreference/],
      ['(?=a)', /a lookahead \(`\(\?=…\)`\)/],
      ['a(?!b)', /a lookahead \(`\(\?!…\)`\)/],
      ['(?<=a)a', /a lookbehind/],
      ['(?<!b)a', /a lookbehind/],
      ['(?>a)', /an atomic group/],
      ['a++', /a possessive quantifier/],
    ];
    for (const [pattern, construct] of cases) {
      const err = await failure(grepTool({ pattern }, context(ws)));
      assert.match(err.message, `invalid regular expression ${JSON.stringify(pattern)}`, pattern);
      assert.match(err.message, construct, err.message);
      assert.match(err.message, 'is not supported: grep uses RE2 syntax, which matches in linear time', pattern);
    }
    // As a tool call: a result the model reads (isError), not a protocol error.
    const r = await runTool('grep', { pattern: '(a)\\1' }, 'super-pi-code', context(ws));
    assert.is(r.isError, true);
    assert.match(r.text, 'a backreference');
  }));

test('grep speaks RE2 syntax: named groups, \\x{…}, POSIX classes, inline flags, \\Q…\\E', () =>
  inSandbox({ 'a.txt': 'Hello World\nsnowman \u2603\nfoo.bar(1)\nplain\n' }, async ({ ws }) => {
    assert.equal(lines(await grep(ws, { pattern: '(?P<w>World)' })), ['a.txt:1']);
    assert.equal(lines(await grep(ws, { pattern: '(?<w>World)' })), ['a.txt:1']);
    assert.equal(lines(await grep(ws, { pattern: '\\x{2603}' })), ['a.txt:2']);
    assert.equal(lines(await grep(ws, { pattern: '^[[:upper:]][[:lower:]]+ ' })), ['a.txt:1']);
    assert.equal(lines(await grep(ws, { pattern: '(?i)HELLO' })), ['a.txt:1']);
    assert.equal(lines(await grep(ws, { pattern: '\\Qfoo.bar(1)\\E' })), ['a.txt:3']);
  }));

test('grep refuses a path outside the workspace', () =>
  inSandbox({ 'a.txt': 'x\n' }, async ({ ws }) => {
    const err = await failure(grepTool({ pattern: 'x', path: '../' }, context(ws)));
    assert.match(err.message, /outside the workspace/);
  }));

test('grep reports a missing path', () =>
  inSandbox({ 'a.txt': 'x\n' }, async ({ ws }) => {
    const err = await failure(grepTool({ pattern: 'x', path: 'nope' }, context(ws)));
    assert.is(err.message, 'Path not found: nope');
  }));

test('grep does not follow a symlink out of the workspace while walking, and refuses it as a path', () =>
  inSandbox({ 'a.txt': 'password=ok\n' }, async ({ ws, outside }) => {
    await writeFile(path.join(outside, 'secret.txt'), 'password=hunter2\n');
    await symlink(outside, path.join(ws, 'linkdir'));
    await symlink(path.join(outside, 'secret.txt'), path.join(ws, 'link.txt'));
    const r = await grep(ws, { pattern: 'password' });
    assert.is(r.text, 'a.txt:1: password=ok');
    const err = await failure(grepTool({ pattern: 'password', path: 'linkdir' }, context(ws)));
    assert.match(err.message, /outside the workspace/);
  }));

test('grep searches a single file given as path', () =>
  inSandbox({ 'src/a.ts': 'one\ntwo\n', 'src/b.ts': 'two\n' }, async ({ ws }) => {
    const r = await grep(ws, { pattern: 'two', path: 'src/a.ts' });
    assert.is(r.text, 'src/a.ts:2: two');
  }));

test('grep skips binary files and counts them', () =>
  inSandbox({ 'bin.dat': Buffer.from([0x6b, 0x65, 0x79, 0x00, 0x01, 0x0a]), 'text.txt': 'key\n' }, async ({ ws }) => {
    const r = await grep(ws, { pattern: 'key' });
    assert.is(r.text, 'text.txt:1: key\n\n[Skipped 1 binary file]');
  }));

test('grep cuts long lines at 500 characters with a marker', () =>
  inSandbox({ 'a.txt': `needle${'x'.repeat(1000)}\n` }, async ({ ws }) => {
    const r = await grep(ws, { pattern: 'needle' });
    const match = (r.structured?.matches as { text: string }[])[0];
    assert.is(match?.text, `needle${'x'.repeat(494)}... [truncated]`);
    assert.match(r.text, '[Some lines truncated to 500 chars. Use the read tool to see full lines]');
  }));

test('grep truncates its text output at 50KB and keeps the structured matches in step', () =>
  inSandbox({ 'a.txt': Array.from({ length: 300 }, (_, i) => `hit ${i} ${'y'.repeat(400)}`).join('\n') }, async ({ ws }) => {
    const r = await grep(ws, { pattern: 'hit', limit: 1000 });
    const [body] = r.text.split('\n\n');
    assert.ok(Buffer.byteLength(body as string) <= 50 * 1024);
    const shown = (body as string).split('\n').length;
    assert.ok(shown > 100 && shown < 300, `shown ${shown}`);
    // The search stops once its output is past the limit: how many more there are is not known.
    assert.match(r.text, `[50.0KB output limit reached; showing the first ${shown} matches.`);
    assert.is((r.structured?.matches as unknown[]).length, shown);
    assert.is(r.structured?.truncated, true);
  }));

test('grep honours an aborted signal between files', () =>
  inSandbox({ 'a.txt': 'x\n', 'b.txt': 'x\n' }, async ({ ws }) => {
    const controller = new AbortController();
    controller.abort(new Error('cancelled'));
    const thrown = await rejection(grepTool({ pattern: 'x' }, context(ws, { signal: controller.signal })));
    assert.is((thrown as Error).message, 'cancelled');
  }));

const lines = (r: { structured?: Record<string, unknown> }) => (r.structured?.matches as { path: string; line: number }[]).map((m) => `${m.path}:${m.line}`);

test('the literal runs every match must contain: none past an alternation, none from classes, groups, escapes or quantified characters', () => {
  assert.equal(requiredLiterals('quux_[0-9]{3}_handler\\('), ['quux_', '_handler(']);
  assert.equal(requiredLiterals('BENCH-NEEDLE\\(7f3a\\)'), ['BENCH-NEEDLE(7f3a)']);
  assert.equal(requiredLiterals('foo|barbaz'), []);
  assert.equal(requiredLiterals('abcd+ef'), ['abc']);
  assert.equal(requiredLiterals('(?:abcdef)?ghij'), ['ghij']);
  assert.equal(requiredLiterals('abc\\x41bcdef'), ['abc', 'bcdef']);
  assert.equal(requiredLiterals('\\u{1F600}xyz\\p{L}uvw'), ['xyz', 'uvw']);
  assert.equal(requiredLiterals('caf\u00e9 au lait'), ['caf', ' au lait']);
  assert.equal(requiredLiterals('a{2,3}bcd'), ['bcd']);
  assert.equal(searchNeedle('quux_[0-9]{3}_handler\\(')?.toString(), 'quux_');
  assert.is(searchNeedle('ab.cd'), null);
});

test('a whole-word search keeps its word as the required literal: an escape spans its own characters, not the word after it', () => {
  assert.equal(requiredLiterals('\\bneedle\\b'), ['needle']);
  // The byte search looks for the word's suffix from its rarest character (d ranks before n, e, l).
  assert.equal(searchNeedle('\\bneedle\\b')?.toString(), 'dle');
  assert.equal(requiredLiterals('\\sneedle\\s'), ['needle']);
  assert.equal(requiredLiterals('\\pLneedle'), ['needle']);
  assert.equal(requiredLiterals('\\x41needle'), ['needle']);
  assert.equal(requiredLiterals('\\101needle'), ['needle']);
  const oneLetterEscapes = ['b', 'B', 's', 'S', 'w', 'W', 'd', 'D', 'A', 'z', 'n', 't', 'r', 'f', 'v', 'a', 'C'];
  const lost = oneLetterEscapes.filter((e) => !requiredLiterals(`\\${e}needle`).includes('needle'));
  assert.equal(lost, [], 'escapes that swallowed the word after them');
});

test('a whole-word search (\\bword\\b) takes the literal shortcut and finds exactly the lines with the whole word', () =>
  inSandbox({ 'a.txt': 'needle here\nneedles\na needle.\nhaystack\nneedle\n', 'b.txt': 'no match\n' }, async ({ ws }) => {
    assert.equal(lines(await grep(ws, { pattern: '\\bneedle\\b' })), ['a.txt:1', 'a.txt:3', 'a.txt:5']);
    assert.equal(lines(await grep(ws, { pattern: '\\sneedle\\.' })), ['a.txt:3']);
  }));

test('a plain word searched with ignoreCase folds case exactly as an RE2 pattern does (ſ for s, the Kelvin sign for k)', () =>
  inSandbox({ 'a.txt': '\u017ftop here\nSTOP\n\u212aelvin\nkelvin\nnothing\n' }, async ({ ws }) => {
    // `stop` and `kelvin` take the plain-word path; `st[o]p` and `k[e]lvin` go through RE2.
    assert.equal(lines(await grep(ws, { pattern: 'stop', ignoreCase: true })), ['a.txt:1', 'a.txt:2']);
    assert.equal(lines(await grep(ws, { pattern: 'st[o]p', ignoreCase: true })), ['a.txt:1', 'a.txt:2']);
    assert.equal(lines(await grep(ws, { pattern: 'kelvin', ignoreCase: true })), ['a.txt:3', 'a.txt:4']);
    assert.equal(lines(await grep(ws, { pattern: 'k[e]lvin', ignoreCase: true })), ['a.txt:3', 'a.txt:4']);
    assert.equal(lines(await grep(ws, { pattern: 'KELVIN', ignoreCase: true, literal: true })), ['a.txt:3', 'a.txt:4']);
  }));

test('the required literals follow RE2 syntax: a leading ] is in the class, POSIX classes, (?i) and \\Q…\\E give none', () => {
  assert.equal(requiredLiterals('[]abc]xyz'), ['xyz']);
  assert.equal(requiredLiterals('[^]abc]xyz'), ['xyz']);
  assert.equal(requiredLiterals('[[:alpha:]abc]xyz'), ['xyz']);
  assert.equal(requiredLiterals('(?i)abcdef'), []);
  assert.equal(requiredLiterals('x(?i:y)abcdef'), []);
  assert.equal(requiredLiterals('\\Qa\\.bcd\\E'), []);
});

test('grep never refuses a file its pattern matches because of a literal shortcut (class with ], (?i), \\Q…\\E)', () =>
  inSandbox({ 'a.txt': 'bxyz\n', 'b.txt': 'SAY HELLO\n', 'c.txt': 'path a\\.bcd here\n' }, async ({ ws }) => {
    assert.equal(lines(await grep(ws, { pattern: '[]abc]xyz' })), ['a.txt:1']);
    assert.equal(lines(await grep(ws, { pattern: '(?i)hello' })), ['b.txt:1']);
    assert.equal(lines(await grep(ws, { pattern: '\\Qa\\.bcd\\E' })), ['c.txt:1']);
  }));

test('a pattern is line-bound unless it can match a newline or look past the end of a line', () => {
  for (const p of ['foo', 'a.*b', '^\\w+\\d$', '\\bword\\B', '[a-z]+', '(?P<n>x)y', 'x\\S+y', '(?i)ab']) assert.ok(lineBound(p), p);
  for (const p of ['a\\sb', 'a[^z]*z', 'foo(?!bar)', '(?<=x)y', 'a\\nb', 'a\\Wb', 'a\\Db', '\\x0a', '\\x{0a}', '\\pC', '(a)\\1', '[\\t-z]', 'a\tb',
    'a[[:space:]]b', '(?s)a.b', 'x(?is:.)y', '\\Qa\nb\\E', 'a\\\nb']) assert.not.ok(lineBound(p), p);
});

test('grep matches by lines whatever shortcut it takes: anchors at a line end, negated classes, CRLF, ignoreCase', () =>
  inSandbox({
    'a.txt': 'foo\nbar foo bar\n',
    'b.txt': 'key = 1\r\nkey = 2 \r\n',
    'c.txt': 'Some TOKEN here\nnone\n',
  }, async ({ ws }) => {
    assert.equal(lines(await grep(ws, { pattern: 'foo$' })), ['a.txt:1']);
    assert.equal(lines(await grep(ws, { pattern: '(?s)foo.bar' })), ['a.txt:2']);
    assert.equal(lines(await grep(ws, { pattern: 'foo[^z]*bar' })), ['a.txt:2']);
    assert.equal(lines(await grep(ws, { pattern: '= \\d$' })), ['b.txt:1']);
    assert.equal(lines(await grep(ws, { pattern: 'some token', ignoreCase: true })), ['c.txt:1']);
    assert.equal(lines(await grep(ws, { pattern: 'TOKEN here', literal: true })), ['c.txt:1']);
  }));

test('grep reads files larger than its first buffer, and no bytes of a longer file leak into the next', () =>
  inSandbox({
    'a-big.txt': `${'filler line\n'.repeat(60_000)}the needle at the end\n`,
    'b-small.txt': 'short\n',
    'c-bin.dat': Buffer.concat([Buffer.from('needle'), Buffer.alloc(4, 0)]),
    'd-text.txt': 'needle\n',
  }, async ({ ws }) => {
    const r = await grep(ws, { pattern: 'needle' });
    assert.equal(lines(r), ['a-big.txt:60001', 'd-text.txt:1']);
    assert.match(r.text, '[Skipped 1 binary file]');
  }));

test('grep skips and counts a file over 10 MB', () =>
  inSandbox({ 'huge.txt': Buffer.alloc(10 * 1024 * 1024 + 1, 0x61), 'small.txt': 'aaa\n' }, async ({ ws }) => {
    const r = await grep(ws, { pattern: 'aaa' });
    assert.equal(lines(r), ['small.txt:1']);
    assert.match(r.text, '[Skipped 1 file larger than 10.0MB]');
  }));

test('grep honours an abort that arrives while it walks', () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 3000; i++) files[`d${i % 30}/f${i}.txt`] = 'x\n';
  return inSandbox(files, async ({ ws }) => {
    const controller = new AbortController();
    const call = grepTool({ pattern: 'absent' }, context(ws, { signal: controller.signal }));
    setImmediate(() => controller.abort(new Error('cancelled mid-walk')));
    const settled = await call.then(() => 'finished', (err: Error) => err.message);
    // On a fast machine the search may finish within its first slice; it must never hang or misreport.
    assert.ok(settled === 'cancelled mid-walk' || settled === 'finished', settled);
  });
});

test('the grep input schema accepts every documented parameter and rejects bad or unknown ones', () => {
  const validate = new Ajv({ strict: true }).compile(grepDefinition.inputSchema);
  assert.ok(validate({ pattern: 'x', path: 'src', glob: '*.ts', ignoreCase: true, literal: false, context: 2, limit: 5 }), JSON.stringify(validate.errors));
  for (const bad of [{ pattern: 'x', limit: 0 }, { pattern: 'x', context: -1 }, { path: '.' }, { pattern: 'x', regex: true }]) assert.not.ok(validate(bad), JSON.stringify(bad));
});

test('grep\'s structured context repeats each match\'s window only up to 50 KB in all, and says so; the text keeps every line', () =>
  inSandbox({ 'dense.txt': Array.from({ length: 400 }, (_, i) => `needle ${i} ${'p'.repeat(40)}`).join('\n') + '\n' }, async ({ ws }) => {
    // 400 matching lines with context 400: each window is the whole file, 400 × 400 lines if repeated in full.
    const r = await grep(ws, { pattern: 'needle', context: 400, limit: 400 });
    const matches = (r.structured as { matches: { context?: { before: { text: string }[]; after: { text: string }[] } }[] }).matches;
    const chars = matches.reduce((n, m) => n + [...(m.context?.before ?? []), ...(m.context?.after ?? [])].reduce((k, l) => k + l.text.length, 0), 0);
    assert.ok(chars <= 50 * 1024, `${chars} characters of context`);
    assert.ok(matches[0]?.context && !matches[399]?.context, 'the first matches have their context, the later ones not');
    assert.ok((r.structured as { notices: string[] }).notices.some((n) => n.startsWith('Context lines of later matches are left out of the structured result')));
    assert.not.match(r.text, /Context lines of later matches/);
  }));

test.run();
