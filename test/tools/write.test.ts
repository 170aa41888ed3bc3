// The `write` tool: creates and overwrites files, makes parent directories, refuses directories.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, readFile, readdir, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ToolError, type ToolContext } from '../../src/tools/contract.ts';
import { writeTool } from '../../src/tools/write.ts';
import { writeDefinition } from '../../src/tools/definitions/write.ts';

let ws = '';
let ctx: ToolContext;

test.before.each(async () => {
  ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'super-pi-write-')));
  ctx = { workspace: ws, signal: new AbortController().signal };
});

test.after.each(async () => {
  await rm(ws, { recursive: true, force: true });
});

async function failure(p: Promise<unknown>): Promise<ToolError> {
  try {
    await p;
  } catch (err) {
    assert.instance(err, ToolError);
    return err as ToolError;
  }
  throw new Error('expected a ToolError, but the call succeeded');
}

test('creates a new file and reports the UTF-8 bytes written', async () => {
  const r = await writeTool({ path: 'hello.txt', content: 'héllo\n' }, ctx);
  assert.is(r.text, 'Successfully wrote 7 bytes to hello.txt');
  assert.is(await readFile(path.join(ws, 'hello.txt'), 'utf8'), 'héllo\n');
});

test('overwrites an existing file completely', async () => {
  await writeFile(path.join(ws, 'a.txt'), 'a much longer original content\n');
  await writeTool({ path: 'a.txt', content: 'short' }, ctx);
  assert.is(await readFile(path.join(ws, 'a.txt'), 'utf8'), 'short');
});

test('creates missing parent directories', async () => {
  const r = await writeTool({ path: 'src/deep/er/mod.ts', content: 'export {};\n' }, ctx);
  assert.is(r.text, 'Successfully wrote 11 bytes to src/deep/er/mod.ts');
  assert.is(await readFile(path.join(ws, 'src/deep/er/mod.ts'), 'utf8'), 'export {};\n');
  assert.ok((await stat(path.join(ws, 'src/deep'))).isDirectory());
});

test('writes an empty file for empty content', async () => {
  const r = await writeTool({ path: 'empty', content: '' }, ctx);
  assert.is(r.text, 'Successfully wrote 0 bytes to empty');
  assert.is((await stat(path.join(ws, 'empty'))).size, 0);
});

test('refuses to write a directory path, the workspace root included', async () => {
  await mkdir(path.join(ws, 'src'));
  const err = await failure(writeTool({ path: 'src', content: 'x' }, ctx));
  assert.is(err.message, 'src is a directory; give the path of a file to write (for example src/file.txt)');
  const root = await failure(writeTool({ path: '.', content: 'x' }, ctx));
  assert.match(root.message, /^\. is a directory/);
  assert.equal(await readdir(path.join(ws, 'src')), []);
});

test('refuses when a file stands where a parent directory should be', async () => {
  await writeFile(path.join(ws, 'notes'), 'a file\n');
  const err = await failure(writeTool({ path: 'notes/today.md', content: 'x' }, ctx));
  assert.match(err.message, /^Cannot create the parent directory of notes\/today\.md: a file is in the way/);
  assert.is(await readFile(path.join(ws, 'notes'), 'utf8'), 'a file\n');
});

test('writes through a symlink that stays inside the workspace to its target', async () => {
  await mkdir(path.join(ws, 'real'));
  await writeFile(path.join(ws, 'real/target.txt'), 'old');
  await symlink('real/target.txt', path.join(ws, 'alias.txt'));
  await writeTool({ path: 'alias.txt', content: 'new' }, ctx);
  assert.is(await readFile(path.join(ws, 'real/target.txt'), 'utf8'), 'new');
});

test('writing through a dangling symlink inside the workspace creates its target', async () => {
  await symlink('made-later.txt', path.join(ws, 'pending'));
  await writeTool({ path: 'pending', content: 'now here' }, ctx);
  assert.is(await readFile(path.join(ws, 'made-later.txt'), 'utf8'), 'now here');
});

test('writes nothing once the signal is aborted', async () => {
  const controller = new AbortController();
  controller.abort();
  const err = await failure(writeTool({ path: 'x.txt', content: 'x' }, { workspace: ws, signal: controller.signal }));
  assert.is(err.message, 'cancelled');
  assert.equal(await readdir(ws), []);
});

test('the definition requires path and content and is destructive but idempotent', () => {
  assert.is(writeDefinition.name, 'write');
  assert.equal(writeDefinition.inputSchema.required, ['path', 'content']);
  assert.is(writeDefinition.inputSchema.additionalProperties, false);
  assert.is(writeDefinition.annotations.readOnlyHint, false);
  assert.is(writeDefinition.annotations.destructiveHint, true);
  assert.is(writeDefinition.annotations.idempotentHint, true);
  assert.is(writeDefinition.annotations.openWorldHint, false);
});

test.run();
