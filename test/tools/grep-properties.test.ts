// Properties of grep's shortcuts over generated patterns and files (fast-check, fixed seed): whatever
// shortcut a search takes — the byte search for a required literal, the one pass over a whole file, the
// plain-word paths — grep reports exactly the lines that the pattern, compiled by RE2 and run on each
// line alone (without its `\r`), matches. A shortcut that refuses a file it should search is caught here.

import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { RE2JS } from 're2js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { grepTool } from '../../src/tools/grep.ts';
import { context, inSandbox } from './sandbox.ts';

/** Fixed, so a failure reproduces; fast-check prints the counterexample. */
const SEED = 20_261_203;
const RUNS = 1500;
const FILES = 3;

/** Pieces of RE2 syntax, chosen to reach every shortcut: literals of 3+ characters, classes, escapes, anchors, flags. */
const atoms = [
  'abc', 'abc', 'ab', 'a', 'b', 'k', 's', 'K', 'ſ', ' ', 'x.y', 'a\\.b', '.', '[^a]', '[]abc]', '[^]abc]', '[[:space:]]', '[[:alpha:]abc]',
  '\\s', '\\S', '\\w', '\\b', '^', '$', '(?i:ab)', '\\Qa.b\\E', '\\x{61}', '\\pL', '(a|b)', '\\r',
];
const quantifiers = ['', '', '', '*', '+', '?', '{2}', '{1,2}'];
const piece = fc.tuple(fc.constantFrom(...atoms), fc.constantFrom(...quantifiers)).map(([a, q]) => a + q);
const sequence = fc.tuple(fc.constantFrom('', '', '(?i)', '(?s)', '^'), fc.array(piece, { minLength: 1, maxLength: 3 }), fc.constantFrom('', '', '$'))
  .map(([flags, ps, end]) => flags + ps.join('') + end);
const pattern = fc.oneof({ weight: 4, arbitrary: sequence }, { weight: 1, arbitrary: fc.tuple(sequence, sequence).map(([x, y]) => `${x}|${y}`) });

/** Pieces of file text: the characters above, CRLF and lone CR, and whole words that patterns contain. */
const tokens = ['a', 'b', 'c', 'K', 'k', '\u212a', 'ſ', 's', ' ', '\t', '\n', '\n', '\r\n', '\r\n', '\r', 'abc', 'ABC', 'AbC', ']abc', 'x.y', 'a.b', 'é'];
const text = fc.array(fc.constantFrom(...tokens), { maxLength: 16 }).map((ts) => ts.join(''));

/** The lines RE2 matches one at a time, as `file:line`. */
function expected(files: string[], source: string, flags: number): string[] {
  const re = RE2JS.compile(source, flags);
  const out: string[] = [];
  files.forEach((content, f) => {
    const lines = content.split('\n');
    if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
    lines.forEach((line, i) => {
      if (re.test(line.endsWith('\r') ? line.slice(0, -1) : line)) out.push(`f${f}.txt:${i + 1}`);
    });
  });
  return out;
}

function compiles(source: string): boolean {
  try {
    RE2JS.compile(source);
    return true;
  } catch {
    // Not valid RE2 (e.g. `^*`): grep refuses it, which grep.test.ts covers; not a shortcut question.
    return false;
  }
}

test('grep reports exactly the lines RE2 matches line by line, whatever shortcut it takes', () =>
  inSandbox({}, async ({ ws }) => {
    await fc.assert(
      fc.asyncProperty(pattern, fc.array(text, { minLength: FILES, maxLength: FILES }), fc.boolean(), fc.boolean(), async (p, files, ignoreCase, literal) => {
        const source = literal ? RE2JS.quote(p) : p;
        fc.pre(compiles(source));
        for (let f = 0; f < FILES; f++) await writeFile(path.join(ws, `f${f}.txt`), files[f] as string);
        const r = await grepTool({ pattern: p, ignoreCase, literal, limit: 10_000 }, context(ws));
        const found = (r.structured?.matches as { path: string; line: number }[]).map((m) => `${m.path}:${m.line}`);
        assert.equal(found, expected(files, source, ignoreCase ? RE2JS.CASE_INSENSITIVE : 0), JSON.stringify({ p, ignoreCase, literal, files }));
      }),
      { seed: SEED, numRuns: RUNS },
    );
  }));

test.run();
