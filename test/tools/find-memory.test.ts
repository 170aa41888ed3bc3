// find keeps the matches its answer can show, not every match: a workspace (a cloned repository) of many
// files deep under long directory names, whose paths sorted whole overran a tool thread's heap, is
// answered on a small thread, with the count of matches exact.

import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ToolPool } from '../../src/tools/tool-pool.ts';

/** A thread heap far below TOOL_THREAD_MEMORY_MB, which the 30,000 paths of 3,800 characters (114 MB) overran. */
const SMALL_HEAP_MB = 64;
const FILES = 30_000;

let ws: string;
let deep: string;
let pool: ToolPool;

test.before(async () => {
  ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-find-memory-')));
  const dirs = Array.from({ length: 15 }, (_, i) => String.fromCharCode(97 + i).repeat(250));
  deep = dirs.join('/');
  await mkdir(path.join(ws, deep), { recursive: true });
  for (let i = 0; i < FILES; i += 500) {
    await Promise.all(Array.from({ length: Math.min(500, FILES - i) }, (_, k) => writeFile(path.join(ws, deep, `f${String(i + k).padStart(5, '0')}`), '')));
  }
  pool = new ToolPool({ maxThreads: 1, memoryMb: SMALL_HEAP_MB });
});

test.after(async () => {
  await pool.destroy();
  await rm(ws, { recursive: true, force: true });
});

test(`find over ${FILES.toLocaleString('en-US')} files 15 directories of 250-character names deep answers on a ${SMALL_HEAP_MB} MB tool thread`, async () => {
  const r = await pool.execute('find', { pattern: 'f?????', limit: 3 }, 'super-pi-code', { workspace: ws, signal: new AbortController().signal });
  assert.not.ok(r.isError, r.text);
  assert.equal(r.structured?.paths, [0, 1, 2].map((i) => `${deep}/f0000${i}`));
  assert.is(r.structured?.truncated, true);
  assert.match(r.text, '[3 results limit reached. Use limit=6 for more, or refine pattern]');
});

test('with a limit past what 50 KB can show, the text is cut and says how many matched in all', async () => {
  const r = await pool.execute('find', { pattern: 'f?????', limit: 1e9 }, 'super-pi-code', { workspace: ws, signal: new AbortController().signal });
  assert.not.ok(r.isError, r.text);
  assert.match(r.text, `results. Narrow it with path or a more specific pattern]`);
  assert.match(r.text, ` of ${FILES} results.`);
  assert.is(r.structured?.truncated, true);
});

test.run();
