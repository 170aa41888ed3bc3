// Threat model rule: confinement is checked on the descriptor, not on a name looked up earlier. While a
// directory of the workspace is swapped for a symbolic link to an outside directory in a tight loop,
// `read` (asynchronous and inline), `write` and `edit` on a file below it, and `grep`, `find` and `ls` over
// it, never read (or list) outside content and never create or change anything outside: on Linux the real path of every opened descriptor
// (/proc/self/fd/N) is checked, and writes happen inside a checked directory descriptor.
// Caller classes: any caller of the file tools (local user, token principals) racing with workspace
// content changed by another process (a build, a second client, a `bash` command).
// SUPERPI_RACE_SECONDS shortens the 20 s default for local runs.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolError } from '../../src/tools/contract.ts';
import { editTool } from '../../src/tools/edit.ts';
import { findTool } from '../../src/tools/find.ts';
import { grepTool } from '../../src/tools/grep.ts';
import { lsTool } from '../../src/tools/ls.ts';
import { readSmallFileSync, readTool } from '../../src/tools/read.ts';
import { writeTool } from '../../src/tools/write.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SECONDS = Number(process.env.SUPERPI_RACE_SECONDS ?? 20);
const SECRET = 'OUTSIDE-SECRET-91c2 marker';

test(`a directory swapped for an outside symlink for ${SECONDS} s: zero reads or writes outside`, async () => {
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'super-pi-race-')));
  const ws = path.join(root, 'ws');
  const outside = path.join(root, 'outside');
  try {
    await mkdir(path.join(ws, 'd'), { recursive: true });
    await mkdir(outside);
    await writeFile(path.join(ws, 'd', 'f'), 'inside marker\n');
    await writeFile(path.join(outside, 'f'), `${SECRET}\n`);
    await writeFile(path.join(outside, 'outside-only.txt'), 'a name that must never be listed\n');
    const ctx = { workspace: ws, signal: new AbortController().signal };

    const swapper = spawn(process.execPath, [path.join(HERE, 'fixtures', 'swap-loop.mjs'), ws, outside, String(SECONDS)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let swaps = '';
    swapper.stdout.setEncoding('utf8');
    swapper.stdout.on('data', (c: string) => (swaps += c));
    const finished = new Promise<number | null>((resolve) => swapper.on('exit', (code) => resolve(code)));
    let running = true;
    void finished.then(() => (running = false));

    const leaks: string[] = [];
    const counts = new Map<string, { ok: number; refused: number }>();
    const tally = async (name: string, work: () => Promise<string> | string): Promise<void> => {
      const c = counts.get(name) ?? { ok: 0, refused: 0 };
      counts.set(name, c);
      try {
        const out = await work();
        if (out.includes('OUTSIDE-SECRET') || out.includes('outside-only')) leaks.push(`${name}: ${out.slice(0, 80)}`);
        c.ok++;
      } catch (err) {
        // Refusals and vanished paths are the expected outcome of a lost race; anything else is a bug.
        if (!(err instanceof ToolError)) throw err;
        if (err.message.includes('OUTSIDE-SECRET')) leaks.push(`${name} (error): ${err.message.slice(0, 80)}`);
        c.refused++;
      }
    };
    let n = 0;
    while (running) {
      n++;
      await tally('write', async () => (await writeTool({ path: 'd/f', content: `inside ${n} marker\n` }, ctx)).text);
      await tally('read', async () => (await readTool({ path: 'd/f' }, ctx)).text);
      await tally('read inline', () => readSmallFileSync({ path: 'd/f' }, ws, 1024)?.text ?? '');
      await tally('edit', async () => (await editTool({ path: 'd/f', oldText: 'marker', newText: 'marker!' }, ctx)).text);
      await tally('write new file', async () => (await writeTool({ path: `d/new-${n % 5}.txt`, content: 'new' }, ctx)).text);
      await tally('grep', async () => (await grepTool({ pattern: 'OUTSIDE-SECRET' }, ctx)).text);
      await tally('find', async () => (await findTool({ pattern: '*' }, ctx)).text);
      await tally('ls', async () => (await lsTool({ path: 'd' }, ctx)).text);
    }
    assert.is(await finished, 0, 'the swapper ran to its end');
    assert.ok(Number(swaps) > 100, `the directory was swapped (${swaps.trim()} times)`);

    assert.equal(leaks, [], 'outside content was read');
    assert.is(await readFile(path.join(outside, 'f'), 'utf8'), `${SECRET}\n`, 'the outside file was changed');
    assert.equal((await readdir(outside)).sort(), ['f', 'outside-only.txt'], 'something was created outside');
    for (const [name, c] of counts) assert.ok(c.ok > 0, `${name} never succeeded (${c.refused} refusals): the race left it nothing to test`);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test.run();
