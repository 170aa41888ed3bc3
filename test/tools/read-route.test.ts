// Where `read` runs (src/tools/tool-pool.ts): a file over LARGE_READ_BYTES is read on a pool thread, and
// the size that decides it is the one of the descriptor the read opened, not of a name looked up before.
// Files are swapped at the moment between a look-up by name and the open (a hook on fs/promises, so the
// race is deterministic): whatever this thread reads was within its bound when opened. `pool.threads`
// tells whether a call reached a pool thread (none exists before the first pooled call).

import type * as FsPromises from 'node:fs/promises';
import { rename, symlink, unlink, writeFile } from 'node:fs/promises';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ToolPool } from '../../src/tools/tool-pool.ts';
import { sandboxPerTest } from './sandbox.ts';

const box = sandboxPerTest(test);
const fsp = createRequire(import.meta.url)('node:fs/promises') as typeof FsPromises;

/** A file past LARGE_READ_BYTES, and what its read answers begin with wherever it runs. */
const HUGE = 'line\n'.repeat(400_000);
const HUGE_NOTICE = /\[Showing lines 1-2000 of 400000\. Use offset=2001 to continue\.\]$/;

/**
 * Runs `run` with `swap` done once, right after the first `stat` of `target` answers or right before the
 * first `open` of it, whichever comes first: the moment between any routing by name and the read's open.
 * Returns whether the swap happened (a test whose swap never ran shows nothing).
 */
async function withSwap<T>(target: string, swap: () => Promise<void>, run: () => Promise<T>): Promise<{ value: T; swapped: boolean }> {
  const { stat, open } = fsp;
  let swapped = false;
  const once = async (): Promise<void> => {
    if (swapped) return;
    swapped = true;
    await swap();
  };
  fsp.stat = (async (p: Parameters<typeof stat>[0], opts?: Parameters<typeof stat>[1]) => {
    const answer = await stat(p, opts);
    if (String(p) === target) await once();
    return answer;
  }) as typeof stat;
  fsp.open = (async (p: Parameters<typeof open>[0], ...rest: [Parameters<typeof open>[1]?, Parameters<typeof open>[2]?]) => {
    if (String(p) === target) await once();
    return open(p, ...rest);
  }) as typeof open;
  syncBuiltinESMExports();
  try {
    return { value: await run(), swapped };
  } finally {
    fsp.stat = stat;
    fsp.open = open;
    syncBuiltinESMExports();
  }
}

async function withPool<T>(use: (pool: ToolPool) => Promise<T>): Promise<T> {
  const pool = new ToolPool({ maxThreads: 1 });
  try {
    return await use(pool);
  } finally {
    await pool.destroy();
  }
}

const ctx = () => ({ workspace: box.ws, signal: new AbortController().signal });

test('a small file renamed over by a huge one after any look-up by name is read on a pool thread', async () => {
  const target = path.join(box.ws, 'swapped.txt');
  await writeFile(target, 'small\n');
  await writeFile(path.join(box.ws, 'huge.tmp'), HUGE);
  await withPool(async (pool) => {
    const { value: r, swapped } = await withSwap(target, () => rename(path.join(box.ws, 'huge.tmp'), target), () => pool.execute('read', { path: 'swapped.txt' }, 'super-pi-code', ctx()));
    assert.ok(swapped, 'the file was swapped between the look-up and the open');
    assert.not.ok(r.isError, r.text);
    assert.match(r.text, HUGE_NOTICE);
    assert.is(pool.threads, 1, 'the huge file that was opened is read on a pool thread, not on the calling thread');
  });
});

test('a link retargeted from a small file to a huge one: the calling thread reads only the small file it opened', async () => {
  await writeFile(path.join(box.ws, 'small.txt'), 'small\n');
  await writeFile(path.join(box.ws, 'huge.txt'), HUGE);
  const link = path.join(box.ws, 'link.txt');
  await symlink('small.txt', link);
  await withPool(async (pool) => {
    const retarget = async () => {
      await unlink(link);
      await symlink('huge.txt', link);
    };
    const { value: r, swapped } = await withSwap(path.join(box.ws, 'small.txt'), retarget, () => pool.execute('read', { path: 'link.txt' }, 'super-pi-code', ctx()));
    assert.ok(swapped, 'the link was retargeted between the look-up and the open');
    assert.not.ok(r.isError, r.text);
    if (pool.threads === 0) assert.is(r.text, 'small\n', 'what the calling thread read is the small file it opened');
    else assert.match(r.text, HUGE_NOTICE);
  });
});

test('a small file read on the calling thread, a huge one on a pool thread, whatever the name', async () => {
  await writeFile(path.join(box.ws, 'small.txt'), 'small\n');
  await writeFile(path.join(box.ws, 'huge.txt'), HUGE);
  await symlink('huge.txt', path.join(box.ws, 'to-huge.txt'));
  await withPool(async (pool) => {
    assert.is((await pool.execute('read', { path: '@small.txt' }, 'super-pi-code', ctx())).text, 'small\n');
    const missing = await pool.execute('read', { path: 'nope.txt' }, 'super-pi-code', ctx());
    assert.equal([missing.isError, missing.text], [true, 'File not found: nope.txt']);
    assert.is(pool.threads, 0);
    assert.match((await pool.execute('read', { path: '@to-huge.txt' }, 'super-pi-code', ctx())).text, HUGE_NOTICE);
    assert.is(pool.threads, 1);
  });
});

test.run();
