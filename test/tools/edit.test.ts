// The `edit` tool: exact, unique matches; several edits checked against the original and applied together;
// line endings and BOM kept; a diff summary that validates against the declared outputSchema.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { editTool, type EditArgs } from '../../src/tools/edit.ts';
import { editDefinition } from '../../src/tools/definitions/edit.ts';
import { context, failure, sandboxPerTest } from './sandbox.ts';
import { EDIT_MAX_EDITS, EDIT_MAX_TEXT_BYTES } from '../../src/limits.ts';

const box = sandboxPerTest(test);

const ajv = new Ajv2020({ strict: true, allErrors: true });
const validOutput = ajv.compile(editDefinition.outputSchema ?? {});
const validInput = ajv.compile(editDefinition.inputSchema);

const file = (name: string): string => path.join(box.ws, name);
const lines = (n: number): string => Array.from({ length: n }, (_, i) => `line${i + 1}`).join('\n') + '\n';

test('replaces a unique text, writes the file and returns a diff summary matching the outputSchema', async () => {
  await writeFile(file('a.ts'), 'const a = 1;\nconst b = 2;\nconst c = 3;\n');
  const r = await editTool({ path: 'a.ts', oldText: 'const b = 2;', newText: 'const b = 20;' }, box.ctx);
  assert.is(await readFile(file('a.ts'), 'utf8'), 'const a = 1;\nconst b = 20;\nconst c = 3;\n');
  const diff = '--- a/a.ts\n+++ b/a.ts\n@@ -1,3 +1,3 @@\n const a = 1;\n-const b = 2;\n+const b = 20;\n const c = 3;';
  assert.equal(r.structured, { path: 'a.ts', replacements: 1, firstChangedLine: 2, linesAdded: 1, linesRemoved: 1, diff });
  assert.ok(validOutput(r.structured), JSON.stringify(validOutput.errors));
  assert.is(r.text, `Successfully replaced text in a.ts. Lines +1 -1, first change at line 2.\n\n${diff}`);
});

test('refuses an oldText that is not in the file, saying it must match exactly, and leaves the file alone', async () => {
  await writeFile(file('a.txt'), 'hello world\n');
  const err = await failure(editTool({ path: 'a.txt', oldText: 'hello  world', newText: 'bye' }, box.ctx));
  assert.is(err.message, 'oldText was not found in a.txt. It must match the file exactly, including all whitespace, ' +
    'indentation and line breaks; read the file again and copy the text.');
  assert.is(await readFile(file('a.txt'), 'utf8'), 'hello world\n');
});

test('refuses an oldText that matches twice, saying how many times', async () => {
  await writeFile(file('a.txt'), 'x = 1\ny = 2\nx = 1\nx = 1\n');
  const err = await failure(editTool({ path: 'a.txt', oldText: 'x = 1', newText: 'x = 9' }, box.ctx));
  assert.is(err.message, 'Found 3 occurrences of the oldText in a.txt. The text must be unique: include more surrounding lines to make it unique.');
  assert.is(await readFile(file('a.txt'), 'utf8'), 'x = 1\ny = 2\nx = 1\nx = 1\n');
});

test('counts overlapping occurrences as ambiguous', async () => {
  await writeFile(file('a.txt'), 'aaa');
  const err = await failure(editTool({ path: 'a.txt', oldText: 'aa', newText: 'b' }, box.ctx));
  assert.match(err.message, /^Found 2 occurrences/);
});

test('matches every edit against the original content, then applies them together', async () => {
  await writeFile(file('a.txt'), 'a\nb\nc\n');
  // After the first edit 'b' occurs twice, but against the original it is unique.
  const r = await editTool({ path: 'a.txt', edits: [{ oldText: 'a', newText: 'b' }, { oldText: 'b', newText: 'c' }] }, box.ctx);
  assert.is(await readFile(file('a.txt'), 'utf8'), 'b\nc\nc\n');
  assert.is(r.structured?.replacements, 2);
  assert.match(r.text, /^Successfully applied 2 edits to a\.txt\. Lines \+2 -2, first change at line 1\./);
  assert.ok(validOutput(r.structured), JSON.stringify(validOutput.errors));
});

test('writes nothing when one of several edits fails, and names the failing edit', async () => {
  await writeFile(file('a.txt'), 'one\ntwo\nthree\n');
  const err = await failure(editTool({ path: 'a.txt', edits: [
    { oldText: 'one', newText: '1' },
    { oldText: 'four', newText: '4' },
  ] }, box.ctx));
  assert.match(err.message, /^edits\[1\]: oldText was not found in a\.txt\./);
  assert.match(err.message, /No edits were applied\.$/);
  assert.is(await readFile(file('a.txt'), 'utf8'), 'one\ntwo\nthree\n');
});

test('names the edit whose oldText is ambiguous among several', async () => {
  await writeFile(file('a.txt'), 'k\nk\nv\n');
  const err = await failure(editTool({ path: 'a.txt', edits: [{ oldText: 'v', newText: 'w' }, { oldText: 'k', newText: 'j' }] }, box.ctx));
  assert.match(err.message, /^edits\[1\]: Found 2 occurrences of the oldText in a\.txt\./);
  assert.is(await readFile(file('a.txt'), 'utf8'), 'k\nk\nv\n');
});

test('refuses overlapping edits, naming both, and writes nothing', async () => {
  await writeFile(file('a.txt'), 'function f() { return 1; }\n');
  const err = await failure(editTool({ path: 'a.txt', edits: [
    { oldText: 'return 1;', newText: 'return 2;' },
    { oldText: 'f() { return', newText: 'g() { return' },
  ] }, box.ctx));
  assert.is(err.message, 'edits[0] and edits[1] overlap in a.txt; each edit must replace a separate part of the file. ' +
    'Merge them into one edit. No edits were applied.');
  assert.is(await readFile(file('a.txt'), 'utf8'), 'function f() { return 1; }\n');
});

test('accepts edits that touch without overlapping, even on the same line', async () => {
  await writeFile(file('a.txt'), 'abcdef\n');
  const r = await editTool({ path: 'a.txt', edits: [{ oldText: 'abc', newText: 'ABC' }, { oldText: 'def', newText: 'DEF' }] }, box.ctx);
  assert.is(await readFile(file('a.txt'), 'utf8'), 'ABCDEF\n');
  assert.is(r.structured?.diff, '--- a/a.txt\n+++ b/a.txt\n@@ -1,1 +1,1 @@\n-abcdef\n+ABCDEF');
  assert.is(r.structured?.linesRemoved, 1);
});

test('refuses both forms at once, neither form, a half pair and an empty edits array', async () => {
  await writeFile(file('a.txt'), 'x\n');
  const both = await failure(editTool({ path: 'a.txt', oldText: 'x', newText: 'y', edits: [{ oldText: 'x', newText: 'y' }] }, box.ctx));
  assert.is(both.message, 'Give either oldText and newText (one replacement) or edits (several), not both.');
  const neither = await failure(editTool({ path: 'a.txt' }, box.ctx));
  assert.is(neither.message, 'Nothing to edit: give oldText and newText, or edits, a non-empty array of {oldText, newText}.');
  const half = await failure(editTool({ path: 'a.txt', oldText: 'x' }, box.ctx));
  assert.match(half.message, /^oldText and newText must both be given/);
  const empty = await failure(editTool({ path: 'a.txt', edits: [] }, box.ctx));
  assert.is(empty.message, 'edits must be a non-empty array of {oldText, newText}.');
  const blank = await failure(editTool({ path: 'a.txt', edits: [{ oldText: '', newText: 'y' }] }, box.ctx));
  assert.is(blank.message, 'edits[0]: oldText is empty; give the exact text to replace.');
  assert.is(await readFile(file('a.txt'), 'utf8'), 'x\n');
});

test('the input schema itself rejects a half pair, an empty edits array and unknown properties', () => {
  const ok = (args: unknown): boolean => validInput(args) as boolean;
  assert.ok(ok({ path: 'a', oldText: 'x', newText: '' }));
  assert.ok(ok({ path: 'a', edits: [{ oldText: 'x', newText: 'y' }] }));
  assert.not.ok(ok({ path: 'a', oldText: 'x' }));
  assert.not.ok(ok({ path: 'a', edits: [] }));
  assert.not.ok(ok({ path: 'a', edits: [{ oldText: 'x' }] }));
  assert.not.ok(ok({ path: 'a', oldText: '', newText: 'y' }));
  assert.not.ok(ok({ path: 'a', oldText: 'x', newText: 'y', replaceAll: true }));
});

test('refuses an oldText equal to its newText', async () => {
  await writeFile(file('a.txt'), 'same\n');
  const err = await failure(editTool({ path: 'a.txt', oldText: 'same', newText: 'same' }, box.ctx));
  assert.is(err.message, 'oldText and newText are identical, so nothing would change in a.txt.');
});

test('a file of mixed line endings keeps every line it does not edit as it was; the new text takes the first line\'s ending', async () => {
  await writeFile(file('mixed.txt'), 'one\r\ntwo\nthree\r\nfour\nfive\n');
  await editTool({ path: 'mixed.txt', oldText: 'three\nfour', newText: 'drei\nvier' }, box.ctx);
  assert.is(await readFile(file('mixed.txt'), 'utf8'), 'one\r\ntwo\ndrei\r\nvier\nfive\n');
  await writeFile(file('mixed-lf.txt'), 'one\ntwo\r\nthree\n');
  await editTool({ path: 'mixed-lf.txt', oldText: 'one', newText: 'uno\nmas' }, box.ctx);
  assert.is(await readFile(file('mixed-lf.txt'), 'utf8'), 'uno\nmas\ntwo\r\nthree\n');
});

test('matches LF oldText in a CRLF file and writes CRLF back', async () => {
  await writeFile(file('win.txt'), 'first\r\nsecond\r\nthird\r\n');
  const r = await editTool({ path: 'win.txt', oldText: 'second\nthird', newText: 'zwei\ndrei\nvier' }, box.ctx);
  assert.is(await readFile(file('win.txt'), 'utf8'), 'first\r\nzwei\r\ndrei\r\nvier\r\n');
  assert.is(r.structured?.linesAdded, 3);
  assert.is(r.structured?.linesRemoved, 2);
});

test('keeps a UTF-8 BOM that oldText does not mention', async () => {
  await writeFile(file('bom.txt'), '\uFEFFtitle\nbody\n');
  await editTool({ path: 'bom.txt', oldText: 'title', newText: 'Title' }, box.ctx);
  const bytes = await readFile(file('bom.txt'));
  assert.equal([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
  assert.is(bytes.subarray(3).toString('utf8'), 'Title\nbody\n');
});

test('inserts newText literally, $ patterns included', async () => {
  await writeFile(file('a.txt'), 'price\n');
  await editTool({ path: 'a.txt', oldText: 'price', newText: "$& costs $1 and $$ and $'" }, box.ctx);
  assert.is(await readFile(file('a.txt'), 'utf8'), "$& costs $1 and $$ and $'\n");
});

test('gives a unified diff with three lines of context and separate hunks for distant changes', async () => {
  await writeFile(file('a.txt'), lines(20));
  const r = await editTool({ path: 'a.txt', edits: [
    { oldText: 'line15\n', newText: 'fifteen\n' },
    { oldText: 'line3\n', newText: 'line3\nline3b\n' },
  ] }, box.ctx);
  assert.is(r.structured?.diff, [
    '--- a/a.txt', '+++ b/a.txt',
    '@@ -1,6 +1,7 @@', ' line1', ' line2', ' line3', '+line3b', ' line4', ' line5', ' line6',
    '@@ -12,7 +13,7 @@', ' line12', ' line13', ' line14', '-line15', '+fifteen', ' line16', ' line17', ' line18',
  ].join('\n'));
  assert.is(r.structured?.firstChangedLine, 4);
  assert.is(r.structured?.linesAdded, 2);
  assert.is(r.structured?.linesRemoved, 1);
  assert.ok(validOutput(r.structured), JSON.stringify(validOutput.errors));
});

test('reports a deletion of whole lines with no added lines', async () => {
  await writeFile(file('a.txt'), lines(5));
  const r = await editTool({ path: 'a.txt', oldText: 'line2\nline3\n', newText: '' }, box.ctx);
  assert.is(await readFile(file('a.txt'), 'utf8'), 'line1\nline4\nline5\n');
  assert.is(r.structured?.diff, '--- a/a.txt\n+++ b/a.txt\n@@ -1,5 +1,3 @@\n line1\n-line2\n-line3\n line4\n line5');
  assert.is(r.structured?.firstChangedLine, 2);
  assert.is(r.structured?.linesAdded, 0);
  assert.is(r.structured?.linesRemoved, 2);
});

test('refuses a missing file, pointing to write', async () => {
  const err = await failure(editTool({ path: 'nope.txt', oldText: 'a', newText: 'b' }, box.ctx));
  assert.is(err.message, 'File not found: nope.txt. To create a new file, use write.');
});

test('refuses a directory', async () => {
  await mkdir(file('dir'));
  const err = await failure(editTool({ path: 'dir', oldText: 'a', newText: 'b' }, box.ctx));
  assert.match(err.message, /^dir is a directory/);
});

test('refuses binary and non-UTF-8 files rather than corrupt them', async () => {
  await writeFile(file('bin'), Buffer.from([0x61, 0x00, 0x62]));
  assert.is((await failure(editTool({ path: 'bin', oldText: 'a', newText: 'c' }, box.ctx))).message,
    'bin is a binary file; edit only changes text files.');
  await writeFile(file('latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
  assert.match((await failure(editTool({ path: 'latin1.txt', oldText: 'caf', newText: 'CAF' }, box.ctx))).message,
    /^latin1\.txt is not valid UTF-8 text/);
  assert.equal([...(await readFile(file('latin1.txt')))], [0x63, 0x61, 0x66, 0xe9, 0x0a]);
});

test('edits nothing once the signal is aborted', async () => {
  await writeFile(file('a.txt'), 'keep\n');
  const controller = new AbortController();
  controller.abort();
  const args: EditArgs = { path: 'a.txt', oldText: 'keep', newText: 'lose' };
  const err = await failure(editTool(args, context(box.ws, { signal: controller.signal })));
  assert.is(err.message, 'cancelled');
  assert.is(await readFile(file('a.txt'), 'utf8'), 'keep\n');
});

test('the definition declares an object outputSchema and is destructive, not idempotent', () => {
  assert.is(editDefinition.name, 'edit');
  assert.is(editDefinition.outputSchema?.type, 'object');
  assert.equal(editDefinition.inputSchema.required, ['path']);
  assert.is(editDefinition.annotations.readOnlyHint, false);
  assert.is(editDefinition.annotations.destructiveHint, true);
  assert.is(editDefinition.annotations.idempotentHint, false);
  assert.is(editDefinition.annotations.openWorldHint, false);
});

test('refuses more than EDIT_MAX_EDITS edits, in the schema (maxItems) and in the body, naming the limit', async () => {
  await writeFile(file('a.txt'), 'x\n');
  const edits = Array.from({ length: EDIT_MAX_EDITS + 1 }, (_, i) => ({ oldText: `t${i}`, newText: 'u' }));
  assert.not.ok(validInput({ path: 'a.txt', edits }));
  assert.ok(validInput({ path: 'a.txt', edits: edits.slice(0, EDIT_MAX_EDITS) }));
  const err = await failure(editTool({ path: 'a.txt', edits }, box.ctx));
  assert.is(err.message, `edits has ${EDIT_MAX_EDITS + 1} items, over the limit of ${EDIT_MAX_EDITS} (EDIT_MAX_EDITS) for one edit call; split the change into several calls.`);
});

test('refuses oldText and newText adding up to more than EDIT_MAX_TEXT_BYTES, naming the limit, before reading the file', async () => {
  const half = 'é'.repeat(EDIT_MAX_TEXT_BYTES / 4 + 1);
  const err = await failure(editTool({ path: 'missing.txt', edits: [{ oldText: half, newText: 'x' }, { oldText: 'y', newText: half }] }, box.ctx));
  assert.match(err.message, new RegExp(`^The edits' oldText and newText come to ${EDIT_MAX_TEXT_BYTES + 6} bytes, over the limit of ${EDIT_MAX_TEXT_BYTES} \\(EDIT_MAX_TEXT_BYTES\\)`));
});

test('an oldText occurring very often is refused with "more than 100 occurrences", not an exact count', async () => {
  await writeFile(file('a.txt'), 'ab'.repeat(500));
  const err = await failure(editTool({ path: 'a.txt', oldText: 'ab', newText: 'c' }, box.ctx));
  assert.match(err.message, /^Found more than 100 occurrences of the oldText in a\.txt\./);
});

test('many edits on one long line are all applied and the diff shows the line once', async () => {
  const words = Array.from({ length: 300 }, (_, i) => `w${i}.`);
  await writeFile(file('a.txt'), `head\n${words.join(' ')}\ntail\n`);
  const r = await editTool({ path: 'a.txt', edits: words.map((w) => ({ oldText: ` ${w} `.trimStart(), newText: w.toUpperCase() + ' ' })).slice(0, 299) }, box.ctx);
  const expected = `${words.slice(0, 299).map((w) => w.toUpperCase()).join(' ')} ${words[299]}`;
  assert.is(await readFile(file('a.txt'), 'utf8'), `head\n${expected}\ntail\n`);
  assert.equal([r.structured?.linesAdded, r.structured?.linesRemoved, r.structured?.firstChangedLine], [1, 1, 2]);
});

test.run();
