// A planted .gitignore cannot hold a search: `a/**/` eight times and a `z`, over a 60-level tree of
// directories named `a`, made the `ignore` package's RegExp backtrack for seconds on every entry. The
// find runs on a real tool-pool thread; the hang guard is what fails if it backtracks again.

import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ToolPool } from '../../src/tools/tool-pool.ts';
import { guarded } from '../hang-guard.ts';

const DEPTH = 60;

test('find over a 60-level tree with a planted a/**/ x8 + z .gitignore answers, and applies the rule', async () => {
  const ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-planted-')));
  const pool = new ToolPool({ maxThreads: 1 });
  try {
    await writeFile(path.join(ws, '.gitignore'), `${'a/**/'.repeat(8)}z\n`);
    const deepest = path.join(ws, ...Array<string>(DEPTH).fill('a'));
    await mkdir(deepest, { recursive: true });
    await writeFile(path.join(deepest, 'z'), '');
    await writeFile(path.join(deepest, 'kept.txt'), '');
    const r = await guarded(pool.execute('find', { pattern: '*.txt' }, 'super-pi-code', { workspace: ws, signal: new AbortController().signal }), 'find under a planted .gitignore');
    assert.is(r.text, `${Array<string>(DEPTH).fill('a').join('/')}/kept.txt`);
    const z = await guarded(pool.execute('find', { pattern: 'z' }, 'super-pi-code', { workspace: ws, signal: new AbortController().signal }), 'find of the ignored file');
    assert.is(z.text, 'No files found matching pattern');
  } finally {
    await pool.destroy();
    await rm(ws, { recursive: true, force: true });
  }
});

test.run();
