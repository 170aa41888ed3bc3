// Threat model rule: the server never loses data — `write` and `edit` replace a file atomically
// (temporary file in the same directory, fsync, rename, directory fsync), so after the server is killed
// with SIGKILL mid-write every file holds its old content or a complete new one, never a mix or nothing,
// and at most the one in-flight temporary file (named `.superpi-tmp-*`) is left behind.
// Caller classes: every caller that may write (local user, token principals), and the operator whose
// server is killed.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { TEMP_FILE_PREFIX } from '../../src/tools/confined-file.ts';
import { writeTool } from '../../src/tools/write.ts';
import { versionContent, versionOf } from './fixtures/versions.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FILES = 4;
const WRITES = 200;
const BYTES = 3 * 1024 * 1024;
/** Writes the child completes before it is killed: well into the run, with more in flight. */
const KILL_AFTER = 12;

/** Runs the writing child and kills it `delayMs` after it announces write KILL_AFTER (or later); resolves the writes finished. */
async function killMidWrite(ws: string, delayMs: number): Promise<number> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(HERE, 'fixtures', 'write-loop.ts'), ws, String(FILES), String(WRITES), String(BYTES)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let done = 0;
  let armed = false;
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    for (const line of chunk.split('\n')) {
      if (line.startsWith('wrote')) done++;
      if (!armed && line.startsWith('start') && Number(line.slice(6)) >= KILL_AFTER) {
        armed = true;
        setTimeout(() => child.kill('SIGKILL'), delayMs);
      }
    }
  });
  const signal = await exited;
  assert.is(signal, 'SIGKILL', 'the child was killed mid-run (not finished)');
  return done;
}

test('SIGKILL during 200 writes of 3 MB leaves every file old or complete-new, never a mix', async () => {
  // Several kills at different moments of a write: the old in-place write tore a file in most of them.
  for (const delayMs of [0, 1, 2, 4]) {
    const ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'super-pi-atomic-')));
    try {
      for (let f = 0; f < FILES; f++) await writeFile(path.join(ws, `f${f}.txt`), versionContent(`f${f}.txt`, 0, BYTES));
      const done = await killMidWrite(ws, delayMs);
      assert.ok(done < WRITES, `killed after ${done} writes`);
      for (let f = 0; f < FILES; f++) {
        const file = `f${f}.txt`;
        const content = await readFile(path.join(ws, file), 'utf8');
        const version = versionOf(file, content, BYTES);
        assert.ok(version !== null, `${file} is torn, mixed or empty after a kill ${delayMs} ms into a write (${content.length} bytes, starts ${JSON.stringify(content.slice(0, 30))})`);
      }
      const leftovers = (await readdir(ws)).filter((n) => n.startsWith(TEMP_FILE_PREFIX));
      assert.ok(leftovers.length <= 1, `temporary files left: ${leftovers.join(', ')}`);
    } finally {
      await rm(ws, { recursive: true, force: true });
    }
  }
});

test('a write keeps the mode of the file it replaces, and a new file gets 0o666 less the umask', async () => {
  const ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'super-pi-atomic-')));
  try {
    const ctx = { workspace: ws, signal: new AbortController().signal };
    await writeFile(path.join(ws, 'script.sh'), '#!/bin/sh\n', { mode: 0o750 });
    await writeTool({ path: 'script.sh', content: '#!/bin/sh\necho hi\n' }, ctx);
    assert.is((await stat(path.join(ws, 'script.sh'))).mode & 0o777, 0o750);
    await writeTool({ path: 'new.txt', content: 'x' }, ctx);
    const umask = process.umask();
    assert.is((await stat(path.join(ws, 'new.txt'))).mode & 0o777, 0o666 & ~umask);
  } finally {
    await rm(ws, { recursive: true, force: true });
  }
});

test('a write that fails after its temporary file was made removes it', async () => {
  const ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'super-pi-atomic-')));
  try {
    const ctx = { workspace: ws, signal: new AbortController().signal };
    await writeFile(path.join(ws, 'target'), 'old');
    const writing = writeTool({ path: 'target', content: 'y'.repeat(64 * 1024 * 1024) }, ctx).then(
      () => null,
      (err: unknown) => err,
    );
    // Once the temporary file exists, the target turns into a directory: the write can no longer land.
    let temp: string | undefined;
    const giveUp = Date.now() + 10_000;
    while (temp === undefined && Date.now() < giveUp) {
      temp = (await readdir(ws)).find((n) => n.startsWith(TEMP_FILE_PREFIX));
      if (temp === undefined) await new Promise((r) => setImmediate(r));
    }
    assert.ok(temp !== undefined, 'the write made a temporary file beside its target');
    await rm(path.join(ws, 'target'));
    await mkdir(path.join(ws, 'target'));
    const failure = await writing;
    assert.instance(failure, Error, 'the write over a directory failed');
    assert.equal((await readdir(ws)).filter((n) => n.startsWith(TEMP_FILE_PREFIX)), []);
  } finally {
    await rm(ws, { recursive: true, force: true });
  }
});

test.run();
