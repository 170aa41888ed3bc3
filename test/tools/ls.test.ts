// The `ls` tool: sorted listing with '/' on directories, dotfiles, entry and byte limits, structured copy.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { lsTool, type LsListing } from '../../src/tools/ls.ts';
import { lsDefinition } from '../../src/tools/definitions/ls.ts';
import { context, failure, sandboxPerTest } from './sandbox.ts';

const box = sandboxPerTest(test);

const validOutput = new Ajv2020({ strict: true, allErrors: true }).compile(lsDefinition.outputSchema ?? {});

test('lists entries sorted case-insensitively, directories with a slash, dotfiles included', async () => {
  await writeFile(path.join(box.ws, 'b.txt'), '');
  await writeFile(path.join(box.ws, 'A.md'), '');
  await writeFile(path.join(box.ws, '.env'), '');
  await mkdir(path.join(box.ws, 'src'));
  await mkdir(path.join(box.ws, 'Docs'));
  const r = await lsTool({}, box.ctx);
  assert.is(r.text, '.env\nA.md\nb.txt\nDocs/\nsrc/');
  assert.equal(r.structured, {
    path: '.',
    entries: [
      { name: '.env', type: 'file' },
      { name: 'A.md', type: 'file' },
      { name: 'b.txt', type: 'file' },
      { name: 'Docs', type: 'directory' },
      { name: 'src', type: 'directory' },
    ],
    truncated: false,
    notices: [],
  });
  assert.ok(validOutput(r.structured), JSON.stringify(validOutput.errors));
});

test('lists a subdirectory given by path, naming it relative to the workspace', async () => {
  await mkdir(path.join(box.ws, 'src/lib'), { recursive: true });
  await writeFile(path.join(box.ws, 'src/index.ts'), '');
  const r = await lsTool({ path: 'src' }, box.ctx);
  assert.is(r.text, 'index.ts\nlib/');
  assert.is(r.structured?.path, 'src');
});

test('says "(empty directory)" for an empty directory', async () => {
  await mkdir(path.join(box.ws, 'void'));
  const r = await lsTool({ path: 'void' }, box.ctx);
  assert.is(r.text, '(empty directory)');
  assert.equal(r.structured, { path: 'void', entries: [], truncated: false, notices: [] });
  assert.ok(validOutput(r.structured));
});

test('stops at the entry limit with a notice suggesting a doubled limit', async () => {
  for (const name of ['e', 'd', 'c', 'b', 'a']) await writeFile(path.join(box.ws, name), '');
  const r = await lsTool({ limit: 2 }, box.ctx);
  assert.is(r.text, 'a\nb\n\n[2 entries limit reached. Use limit=4 for more]');
  const listing = r.structured as LsListing;
  assert.equal(listing.entries.map((e) => e.name), ['a', 'b']);
  assert.is(listing.truncated, true);
});

test('defaults to 500 entries', async () => {
  await Promise.all(Array.from({ length: 510 }, (_, i) => writeFile(path.join(box.ws, `f${String(i).padStart(3, '0')}`), '')));
  const r = await lsTool({}, box.ctx);
  assert.ok(r.text.endsWith('f499\n\n[500 entries limit reached. Use limit=1000 for more]'));
  assert.is((r.structured as LsListing).entries.length, 500);
});

test('cuts the text at 50KB and keeps the structured entries to the ones shown', async () => {
  // 300 names of 200 bytes: about 60 KB of listing.
  await Promise.all(Array.from({ length: 300 }, (_, i) => writeFile(path.join(box.ws, `${String(i).padStart(3, '0')}${'n'.repeat(197)}`), '')));
  const r = await lsTool({}, box.ctx);
  const [body, notice] = r.text.split('\n\n');
  const shown = body?.split('\n') ?? [];
  // 255 lines take 255*200 + 254 = 51254 bytes, more than 51200; 254 fit.
  assert.is(shown.length, 254);
  assert.is(notice, '[50.0KB limit reached]');
  const listing = r.structured as LsListing;
  assert.is(listing.entries.length, 254);
  assert.is(listing.truncated, true);
  assert.ok(validOutput(listing), JSON.stringify(validOutput.errors));
});

test('reports symlinks as such, with a slash only for one leading to a directory inside the workspace', async () => {
  await mkdir(path.join(box.ws, 'real'));
  await symlink('real', path.join(box.ws, 'inner'));
  await symlink(box.outside, path.join(box.ws, 'outer'));
  await symlink('missing', path.join(box.ws, 'dangling'));
  const r = await lsTool({}, box.ctx);
  assert.is(r.text, 'dangling\ninner/\nouter\nreal/');
  assert.equal((r.structured as LsListing).entries, [
    { name: 'dangling', type: 'symlink' },
    { name: 'inner', type: 'symlink' },
    { name: 'outer', type: 'symlink' },
    { name: 'real', type: 'directory' },
  ]);
});

test('refuses a file, pointing to read', async () => {
  await writeFile(path.join(box.ws, 'a.txt'), 'x');
  const err = await failure(lsTool({ path: 'a.txt' }, box.ctx));
  assert.is(err.message, "Not a directory: a.txt; use read to see a file's contents");
});

test('reports a missing path as not found', async () => {
  const err = await failure(lsTool({ path: 'ghost' }, box.ctx));
  assert.is(err.message, 'Path not found: ghost');
});

test('refuses a limit below 1', async () => {
  const err = await failure(lsTool({ limit: 0 }, box.ctx));
  assert.match(err.message, /^limit must be a whole number of at least 1/);
});

test('stops with a cancelled error when the signal is already aborted', async () => {
  const controller = new AbortController();
  controller.abort();
  const err = await failure(lsTool({}, context(box.ws, { signal: controller.signal })));
  assert.is(err.message, 'cancelled');
});

test('the definition is read-only with an object outputSchema and no required inputs', () => {
  assert.is(lsDefinition.name, 'ls');
  assert.is(lsDefinition.outputSchema?.type, 'object');
  assert.is(lsDefinition.inputSchema.required, undefined);
  assert.is(lsDefinition.inputSchema.additionalProperties, false);
  assert.is(lsDefinition.annotations.readOnlyHint, true);
  assert.is(lsDefinition.annotations.idempotentHint, true);
  assert.is(lsDefinition.annotations.openWorldHint, false);
});

test.run();
