// Threat model rule: a path means what POSIX says it means. `a.txt/` (a trailing slash on a file) names a
// directory that does not exist, so every file tool answers ENOTDIR ("Not a directory") instead of
// quietly using the file a.txt — and `write` does not create a file under a name that ends in '/'.
// Caller classes: every caller of the file tools (local user, token principals, anonymous callers that
// may read).

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ToolError, type ToolContext } from '../../src/tools/contract.ts';
import { editTool } from '../../src/tools/edit.ts';
import { grepTool } from '../../src/tools/grep.ts';
import { lsTool } from '../../src/tools/ls.ts';
import { readSmallFileSync, readTool } from '../../src/tools/read.ts';
import { writeTool } from '../../src/tools/write.ts';

async function withFile(body: (ws: string, ctx: ToolContext) => Promise<void>): Promise<void> {
  const ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'super-pi-slash-')));
  await writeFile(path.join(ws, 'a.txt'), 'content\n');
  try {
    await body(ws, { workspace: ws, signal: new AbortController().signal });
  } finally {
    await rm(ws, { recursive: true, force: true });
  }
}

async function assertNotADirectory(what: string, work: Promise<unknown>): Promise<void> {
  const err = await work.then(() => null, (e: unknown) => e);
  assert.instance(err, ToolError, `${what} accepted a.txt/`);
  assert.match((err as Error).message, /Not a directory/, what);
}

test('read, write, edit, ls and grep answer ENOTDIR for a.txt/', () => withFile(async (ws, ctx) => {
  await assertNotADirectory('read', readTool({ path: 'a.txt/' }, ctx));
  await assertNotADirectory('write', writeTool({ path: 'a.txt/', content: 'x' }, ctx));
  await assertNotADirectory('edit', editTool({ path: 'a.txt/', oldText: 'content', newText: 'changed' }, ctx));
  await assertNotADirectory('ls', lsTool({ path: 'a.txt/' }, ctx));
  await assertNotADirectory('grep', grepTool({ pattern: 'content', path: 'a.txt/' }, ctx));
  assert.throws(() => readSmallFileSync({ path: 'a.txt/' }, ws, 1024), /Not a directory/);
  assert.is(await readFile(path.join(ws, 'a.txt'), 'utf8'), 'content\n', 'the file was left as it was');
}));

test('write refuses a new path ending in / instead of creating a file there', () => withFile(async (ws, ctx) => {
  await assertNotADirectory('write', writeTool({ path: 'new.txt/', content: 'x' }, ctx));
  assert.equal((await readdir(ws)).sort(), ['a.txt']);
}));

test('a directory with a trailing slash still works', () => withFile(async (ws, ctx) => {
  await writeTool({ path: 'dir/b.txt', content: 'b' }, ctx);
  assert.match((await lsTool({ path: 'dir/' }, ctx)).text, /b\.txt/);
  assert.is((await readTool({ path: 'dir/b.txt' }, ctx)).text, 'b');
}));

test.run();
