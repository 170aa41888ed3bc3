// edit's diff summary reads the lines around each change, never the file split whole: an edit of a file
// of many short lines (workspace content, within EDIT_MAX_FILE_BYTES) is decided on a small tool thread,
// where the two whole-file splits (millions of strings) overran its heap.

import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ToolPool } from '../../src/tools/tool-pool.ts';

/** A thread heap far below TOOL_THREAD_MEMORY_MB; the 6,000,000-line file's two splits took more. */
const SMALL_HEAP_MB = 64;
const BLANK_LINES = 6_000_000;

test(`an edit of a file of ${BLANK_LINES.toLocaleString('en-US')} blank lines is decided on a ${SMALL_HEAP_MB} MB tool thread, its diff with three lines of context`, async () => {
  const ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-edit-memory-')));
  const pool = new ToolPool({ maxThreads: 1, memoryMb: SMALL_HEAP_MB });
  try {
    await writeFile(path.join(ws, 'blank.txt'), `${'\n'.repeat(BLANK_LINES)}old\n${'\n'.repeat(5)}`);
    const r = await pool.execute('edit', { path: 'blank.txt', oldText: 'old', newText: 'new' }, 'super-pi-code', { workspace: ws, signal: new AbortController().signal });
    assert.not.ok(r.isError, r.text);
    assert.is(r.structured?.firstChangedLine, BLANK_LINES + 1);
    assert.match(r.text, `@@ -${BLANK_LINES - 2},7 +${BLANK_LINES - 2},7 @@\n \n \n \n-old\n+new\n \n \n `);
    assert.is(await readFile(path.join(ws, 'blank.txt'), 'utf8'), `${'\n'.repeat(BLANK_LINES)}new\n${'\n'.repeat(5)}`);
  } finally {
    await pool.destroy();
    await rm(ws, { recursive: true, force: true });
  }
});

test.run();
