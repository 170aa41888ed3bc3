// A tool's error message is at most TOOL_ERROR_MAX_CHARS, cut where it is made (the ToolError), so every
// path that answers one — the tool runner, the tool pool, the connection actor's inline read — is bounded:
// messages quote the caller's arguments, and a 1 MB `path` made a 2 MB error. Generated paths (fast-check).

import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ToolError } from '../../src/tools/contract.ts';
import { readSmallFileSync } from '../../src/tools/read.ts';
import { runTool } from '../../src/tools/tool-runner.ts';
import { TOOL_ERROR_MAX_CHARS } from '../../src/limits.ts';
import { context, inSandbox } from './sandbox.ts';

const SEED = 20_261_208;
/** The cut message and the note saying it was cut. */
const MOST_CHARS = TOOL_ERROR_MAX_CHARS + 100;

test('a long message is cut, says so, and never ends inside a surrogate pair', () => {
  assert.is(new ToolError('short').message, 'short');
  const cut = new ToolError(`${'x'.repeat(TOOL_ERROR_MAX_CHARS - 1)}😀${'y'.repeat(10)}`).message;
  assert.ok(cut.startsWith(`${'x'.repeat(TOOL_ERROR_MAX_CHARS - 1)}… [message cut: ${TOOL_ERROR_MAX_CHARS + 11} characters`), cut.slice(TOOL_ERROR_MAX_CHARS - 5));
});

test('read, ls, edit, write, grep and find refuse a path of any length with an error of at most TOOL_ERROR_MAX_CHARS', () =>
  inSandbox({ 'a.txt': 'hi\n' }, async ({ ws }) => {
    const long = fc.array(fc.constantFrom('\u0001', 'a', '/', '..', '😀', '"'), { minLength: 20_000, maxLength: 60_000 }).map((a) => a.join(''));
    const call = fc.constantFrom<[string, (p: string) => Record<string, unknown>]>(
      ['read', (p) => ({ path: p })],
      ['ls', (p) => ({ path: p })],
      ['edit', (p) => ({ path: p, oldText: 'a', newText: 'b' })],
      ['write', (p) => ({ path: `${p}/x`, content: '' })],
      ['grep', (p) => ({ pattern: 'x', path: p })],
      ['find', (p) => ({ pattern: 'x', path: p })],
    );
    await fc.assert(fc.asyncProperty(call, long, async ([tool, args], p) => {
      const r = await runTool(tool as 'read', args(p), 'super-pi-code', context(ws));
      assert.ok(r.isError, r.text.slice(0, 100));
      assert.ok(r.text.length <= MOST_CHARS, `${tool}: ${r.text.length} characters`);
    }), { seed: SEED, numRuns: 40 });
    // The connection actor's inline read throws the same ToolError.
    try {
      readSmallFileSync({ path: '\u0001'.repeat(100_000) }, ws, 1024);
      assert.unreachable('a 100,000-character path was read');
    } catch (err) {
      assert.instance(err, ToolError);
      assert.ok((err as Error).message.length <= MOST_CHARS, `${(err as Error).message.length} characters`);
    }
  }));

test.run();
