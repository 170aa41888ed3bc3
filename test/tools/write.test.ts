// The `write` tool: creates and overwrites files, makes parent directories, refuses directories.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, readFile, readdir, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { writeTool } from '../../src/tools/write.ts';
import { writeDefinition } from '../../src/tools/definitions/write.ts';
import { context, failure, sandboxPerTest } from './sandbox.ts';

const box = sandboxPerTest(test);

test('creates a new file and reports the UTF-8 bytes written', async () => {
  const r = await writeTool({ path: 'hello.txt', content: 'héllo\n' }, box.ctx);
  assert.is(r.text, 'Successfully wrote 7 bytes to hello.txt');
  assert.is(await readFile(path.join(box.ws, 'hello.txt'), 'utf8'), 'héllo\n');
});

test('overwrites an existing file completely', async () => {
  await writeFile(path.join(box.ws, 'a.txt'), 'a much longer original content\n');
  await writeTool({ path: 'a.txt', content: 'short' }, box.ctx);
  assert.is(await readFile(path.join(box.ws, 'a.txt'), 'utf8'), 'short');
});

test('creates missing parent directories', async () => {
  const r = await writeTool({ path: 'src/deep/er/mod.ts', content: 'export {};\n' }, box.ctx);
  assert.is(r.text, 'Successfully wrote 11 bytes to src/deep/er/mod.ts');
  assert.is(await readFile(path.join(box.ws, 'src/deep/er/mod.ts'), 'utf8'), 'export {};\n');
  assert.ok((await stat(path.join(box.ws, 'src/deep'))).isDirectory());
});

test('writes an empty file for empty content', async () => {
  const r = await writeTool({ path: 'empty', content: '' }, box.ctx);
  assert.is(r.text, 'Successfully wrote 0 bytes to empty');
  assert.is((await stat(path.join(box.ws, 'empty'))).size, 0);
});

test('refuses to write a directory path, the workspace root included', async () => {
  await mkdir(path.join(box.ws, 'src'));
  const err = await failure(writeTool({ path: 'src', content: 'x' }, box.ctx));
  assert.is(err.message, 'src is a directory; give the path of a file to write (for example src/file.txt)');
  const root = await failure(writeTool({ path: '.', content: 'x' }, box.ctx));
  assert.match(root.message, /^\. is a directory/);
  assert.equal(await readdir(path.join(box.ws, 'src')), []);
});

test('refuses when a file stands where a parent directory should be', async () => {
  await writeFile(path.join(box.ws, 'notes'), 'a file\n');
  const err = await failure(writeTool({ path: 'notes/today.md', content: 'x' }, box.ctx));
  assert.match(err.message, /^Cannot create the parent directory of notes\/today\.md: a file is in the way/);
  assert.is(await readFile(path.join(box.ws, 'notes'), 'utf8'), 'a file\n');
});

test('writes through a symlink that stays inside the workspace to its target', async () => {
  await mkdir(path.join(box.ws, 'real'));
  await writeFile(path.join(box.ws, 'real/target.txt'), 'old');
  await symlink('real/target.txt', path.join(box.ws, 'alias.txt'));
  await writeTool({ path: 'alias.txt', content: 'new' }, box.ctx);
  assert.is(await readFile(path.join(box.ws, 'real/target.txt'), 'utf8'), 'new');
});

test('writing through a dangling symlink inside the workspace creates its target', async () => {
  await symlink('made-later.txt', path.join(box.ws, 'pending'));
  await writeTool({ path: 'pending', content: 'now here' }, box.ctx);
  assert.is(await readFile(path.join(box.ws, 'made-later.txt'), 'utf8'), 'now here');
});

test('writes nothing once the signal is aborted', async () => {
  const controller = new AbortController();
  controller.abort();
  const err = await failure(writeTool({ path: 'x.txt', content: 'x' }, context(box.ws, { signal: controller.signal })));
  assert.is(err.message, 'cancelled');
  assert.equal(await readdir(box.ws), []);
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
