// grep's output is bounded where it is built, not only where it is cut: whatever `limit` and `context` a
// caller gives (neither has a maximum), a search of files within GREP_MAX_FILE_BYTES answers within a
// small tool thread's heap, with the text cut at DEFAULT_MAX_BYTES and the structured matches in step.

import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { grepTool } from '../../src/tools/grep.ts';
import { ToolPool } from '../../src/tools/tool-pool.ts';
import { DEFAULT_MAX_BYTES } from '../../src/limits.ts';
import { truncateHead } from '../../src/tools/truncate.ts';
import { context, inSandbox } from './sandbox.ts';

/** A thread heap far below TOOL_THREAD_MEMORY_MB, which the 4 MB file's every line kept as a match overran. */
const SMALL_HEAP_MB = 64;

let ws: string;
let pool: ToolPool;

test.before(async () => {
  ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-grep-bound-')));
  await writeFile(path.join(ws, 'lines.txt'), 'a\n'.repeat(2_000_000));
  pool = new ToolPool({ maxThreads: 1, memoryMb: SMALL_HEAP_MB });
});

test.after(async () => {
  await pool.destroy();
  await rm(ws, { recursive: true, force: true });
});

const ctx = () => ({ workspace: ws, signal: new AbortController().signal });

for (const [what, args] of [
  ['a limit of a billion matches', { pattern: 'a', limit: 1e9 }],
  ['a context of a hundred million lines', { pattern: 'a', limit: 2, context: 1e8 }],
  ['both', { pattern: 'a', limit: 1e9, context: 1e8 }],
] as const) {
  test(`grep with ${what} over a 4 MB file of 2,000,000 matching lines answers on a ${SMALL_HEAP_MB} MB tool thread`, async () => {
    const r = await pool.execute('grep', { ...args }, 'super-pi-code', ctx());
    assert.not.ok(r.isError, r.text);
    const [body] = r.text.split('\n\n');
    assert.ok(Buffer.byteLength(body as string) <= DEFAULT_MAX_BYTES);
    assert.match(r.text, '50.0KB output limit reached; showing the first');
    assert.is(r.structured?.truncated, true);
  });
}

test('stopping at the output limit shows exactly the head of the whole output, and the structured matches of it', () =>
  inSandbox({ 'a.txt': Array.from({ length: 3000 }, (_, i) => `hit ${i} ${'z'.repeat(i % 700)}`).join('\n'), 'b.txt': 'hit b\n' }, async ({ ws: dir }) => {
    const r = await grepTool({ pattern: 'hit', limit: 1e9 }, context(dir));
    const cutLine = (l: string) => (l.length > 500 ? `${l.slice(0, 500)}... [truncated]` : l);
    const whole = Array.from({ length: 3000 }, (_, i) => `a.txt:${i + 1}: ${cutLine(`hit ${i} ${'z'.repeat(i % 700)}`)}`).concat('b.txt:1: hit b').join('\n');
    const head = truncateHead(whole, { maxLines: Number.MAX_SAFE_INTEGER });
    assert.is(r.text.split('\n\n')[0], head.content);
    assert.is((r.structured?.matches as unknown[]).length, head.outputLines);
  }));

test.run();
