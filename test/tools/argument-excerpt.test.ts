// A caller's pattern or glob refused by grep or find is quoted in the error within bounds
// (ARGUMENT_EXCERPT_CHARS, JSON-escaped): whatever its length and characters, the error result stays small.
// The whole argument was quoted, and RE2's message quoted the rest of it again: a 1 MB pattern of control
// characters came back as a 7 MB error. Generated arguments (fast-check, fixed seed).

import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { argumentExcerpt } from '../../src/tools/name-in-text.ts';
import { runTool } from '../../src/tools/tool-runner.ts';
import { ARGUMENT_EXCERPT_CHARS } from '../../src/limits.ts';
import { context, inSandbox } from './sandbox.ts';

const SEED = 20_261_208;
/** An excerpt escapes each character to six at most; two of them and the message's own words fit in this. */
const MOST_ERROR_CHARS = 16 * ARGUMENT_EXCERPT_CHARS;

test('a short argument is quoted whole, as JSON; a long one cut, counted, never inside a surrogate pair', () => {
  assert.is(argumentExcerpt('a"b\u0001'), JSON.stringify('a"b\u0001'));
  const long = `${'x'.repeat(ARGUMENT_EXCERPT_CHARS - 1)}😀tail`;
  assert.is(argumentExcerpt(long), `${JSON.stringify('x'.repeat(ARGUMENT_EXCERPT_CHARS - 1))}… (${long.length} characters; the first ${ARGUMENT_EXCERPT_CHARS - 1} shown)`);
});

test('grep and find answer an invalid pattern or glob of any length with a small error naming it', () =>
  inSandbox({ 'a.txt': 'hi\n' }, async ({ ws }) => {
    const filler = fc.array(fc.constantFrom('\u0001', '"', '\\', 'a', '(', '\u2028', '😀'), { minLength: 1000, maxLength: 3000 }).map((a) => a.join(''));
    // Each refused by its start, whatever follows.
    const calls = fc.tuple(fc.constantFrom<[string, (s: string) => Record<string, unknown>]>(
      ['grep', (s) => ({ pattern: `(${s}` })],
      ['grep', (s) => ({ pattern: `\\1${s}` })],
      ['grep', (s) => ({ pattern: 'x', glob: `[z-a]${s}` })],
      ['find', (s) => ({ pattern: `[z-a]${s}` })],
    ), filler);
    await fc.assert(fc.asyncProperty(calls, async ([[tool, args], s]) => {
      const r = await runTool(tool as 'grep' | 'find', args(s), 'super-pi-code', context(ws));
      assert.ok(r.isError, r.text.slice(0, 200));
      assert.match(r.text, /^invalid (regular expression|glob) "/);
      assert.ok(r.text.length <= MOST_ERROR_CHARS, `${tool}: ${r.text.length} characters`);
    }), { seed: SEED, numRuns: 60 });
  }));

test.run();
