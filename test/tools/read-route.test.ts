// Where `read` runs (src/tools/tool-pool.ts): a file over LARGE_READ_BYTES is read on a pool thread, and
// the size that decides it is the one of the descriptor the read opened, not of a name looked up before.
// Files are swapped at the moment between a look-up by name and the open (a hook on fs/promises, so the
// race is deterministic), and grown by a real writer while they are read: whatever a bounded thread reads
// was within its bound when opened and stays within it however the file grows. `pool.threads` tells
// whether a call reached a pool thread (none exists before the first pooled call).

import { spawn } from 'node:child_process';
import { appendFileSync, readSync, writeFileSync } from 'node:fs';
import type * as FsPromises from 'node:fs/promises';
import { rename, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { answerSync, type FsAnswer, type FsRequest, runSync } from '../../src/tools/fs-steps.ts';
import { readSteps } from '../../src/tools/read.ts';
import { ToolPool } from '../../src/tools/tool-pool.ts';
import { INLINE_READ_BYTES } from '../../src/connection/inline-effects.ts';
import { LARGE_READ_BYTES } from '../../src/limits.ts';
import { guarded } from '../hang-guard.ts';
import { sandboxPerTest } from './sandbox.ts';

const box = sandboxPerTest(test);
const fsp = createRequire(import.meta.url)('node:fs/promises') as typeof FsPromises;

/** A file past LARGE_READ_BYTES, and what its read answers begin with wherever it runs. */
const HUGE = 'line\n'.repeat(400_000);
const HUGE_NOTICE = /\[Showing lines 1-2000 of 400000\. Use offset=2001 to continue\.\]$/;
/** Far past any line the tests' files reach: the read scans the whole file for it. */
const FAR_OFFSET = 2 ** 40;

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

test('a file of exactly LARGE_READ_BYTES is read on the calling thread, one byte more on a pool thread', async () => {
  const line = 'x'.repeat(1023) + '\n';
  await writeFile(path.join(box.ws, 'edge.txt'), line.repeat(LARGE_READ_BYTES / 1024));
  await withPool(async (pool) => {
    const at = await pool.execute('read', { path: 'edge.txt', offset: 1024 }, 'super-pi-code', ctx());
    assert.is(at.text, line);
    assert.is(pool.threads, 0);
    await writeFile(path.join(box.ws, 'edge.txt'), 'y', { flag: 'a' });
    const past = await pool.execute('read', { path: 'edge.txt', offset: 1024 }, 'super-pi-code', ctx());
    assert.is(past.text, `${line}y`);
    assert.is(pool.threads, 1);
  });
});

/** A driver for the read's steps that appends `grow` to the file before every read (real appends), up to `upTo` bytes added. */
function growingRead(args: { path: string; offset?: number }, maxFileBytes: number, images: boolean, grow: Buffer, upTo: number) {
  const file = path.join(box.ws, args.path);
  let added = 0;
  let bytes = 0;
  const value = runSync(readSteps(args, box.ws, null, maxFileBytes, images), (req: FsRequest): FsAnswer => {
    if (req.op !== 'read') return answerSync(req);
    if (added < upTo) {
      appendFileSync(file, grow);
      added += grow.length;
    }
    const n = readSync(req.file as number, req.buffer, 0, req.buffer.length, null);
    bytes += n;
    return n;
  });
  return { value, bytes, added };
}

/** The connection actor's own bound (a synchronous read on its scheduler thread). */
const BOUND = INLINE_READ_BYTES;
const GROWTH = 8 * 1024 * 1024;

test('a file that grows on every read is read at most its bound plus one byte on a bounded read, then declined', () => {
  const lines = Buffer.from('grown line\n'.repeat(6_000));
  for (const args of [{ path: 'grows.txt' }, { path: 'grows.txt', offset: FAR_OFFSET }]) {
    // Each read finds more than it asked for: without a bound the read never reaches an end until the writer stops.
    writeFileSync(path.join(box.ws, 'grows.txt'), 'first line\n');
    const { value, bytes, added } = growingRead(args, BOUND, false, lines, GROWTH);
    assert.ok(added > 0);
    assert.ok(value === null, `${JSON.stringify(args)}: a file grown past the bound is handed back, not answered (${bytes} bytes read)`);
    assert.ok(bytes <= BOUND + 1, `${JSON.stringify(args)}: read ${bytes} bytes with a bound of ${BOUND}`);
  }
});

test('an image that grows on every read is read at most its bound plus one byte on a bounded read, then declined', () => {
  const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(1000, 7)]);
  writeFileSync(path.join(box.ws, 'grows.png'), png);
  const { value, bytes } = growingRead({ path: 'grows.png' }, BOUND, true, Buffer.alloc(64 * 1024, 7), GROWTH);
  assert.ok(value === null, `an image grown past the bound is handed back (${bytes} bytes read)`);
  assert.ok(bytes <= BOUND + 1, `read ${bytes} bytes with a bound of ${BOUND}`);
});

test('a file a real process keeps appending to while it is read: the calling thread reads at most LARGE_READ_BYTES + 1 of it', async () => {
  const target = path.join(box.ws, 'appended.log');
  await writeFile(target, 'first\n');
  // Appends 64 KiB of newlines at a time, up to 8 MiB, once told to start; says so after its first block.
  const writer = spawn(process.execPath, ['-e', `
    const fs = require('node:fs');
    const fd = fs.openSync(${JSON.stringify(target)}, 'a');
    const block = Buffer.alloc(64 * 1024, 10);
    process.stdin.once('data', () => {
      fs.writeSync(fd, block);
      process.stdout.write('started\\n');
      for (let i = 1; i < 128; i++) fs.writeSync(fd, block);
      fs.closeSync(fd);
      process.exit(0);
    });`], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => writer.once('exit', () => resolve()));
  const started = new Promise<void>((resolve) => writer.stdout.once('data', () => resolve()));
  // Bytes this thread reads (the pool's threads have their own fs module, unpatched).
  const probe = await fsp.open(target);
  const proto = Object.getPrototypeOf(probe) as FsPromises.FileHandle;
  await probe.close();
  const { read } = proto;
  let hereBytes = 0;
  proto.read = async function (this: FsPromises.FileHandle, ...args: unknown[]) {
    const answer = await (read as (...a: unknown[]) => Promise<FsPromises.FileReadResult<Buffer>>).apply(this, args);
    hereBytes += answer.bytesRead;
    return answer;
  } as typeof read;
  try {
    await withPool(async (pool) => {
      // The writer starts once the read has opened the file: it was small when opened, and grows meanwhile.
      const startWriter = async () => {
        writer.stdin.write('go');
        await started;
      };
      const { value: r, swapped } = await withSwap(target, startWriter, () => guarded(pool.execute('read', { path: 'appended.log', offset: FAR_OFFSET }, 'super-pi-code', ctx()), 'the read of a growing file', 60_000));
      assert.ok(swapped, 'the writer started at the open');
      assert.match(r.text, /^Offset \d+ is beyond end of file \(\d+ lines total\)/);
      assert.ok(hereBytes <= LARGE_READ_BYTES + 1, `the calling thread read ${hereBytes} bytes of a growing file (bound ${LARGE_READ_BYTES})`);
    });
  } finally {
    proto.read = read;
    writer.kill();
    await exited;
    await rm(target, { force: true });
  }
});

test.run();
