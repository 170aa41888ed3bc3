// The `read` tool: raw text, windows by offset/limit, pi's truncation notices, refusals, bounded streaming.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, open, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { readSmallFileSync, readTool } from '../../src/tools/read.ts';
import { readDefinition } from '../../src/tools/definitions/read.ts';
import { context, failure, sandboxPerTest } from './sandbox.ts';

const box = sandboxPerTest(test);

const numbered = (n: number, from = 1): string[] => Array.from({ length: n }, (_, i) => `line${i + from}`);

test('returns a small file exactly as it is, final newline included', async () => {
  await writeFile(path.join(box.ws, 'a.txt'), 'alpha\n  beta\tgamma\n');
  const r = await readTool({ path: 'a.txt' }, box.ctx);
  assert.is(r.text, 'alpha\n  beta\tgamma\n');
  assert.is(r.isError, undefined);
  assert.equal(r.structured, { path: 'a.txt', content: 'alpha\n  beta\tgamma\n', offset: 1, lines: 2, totalLines: 2, totalLinesKnown: true, truncated: false, notices: [] });
});

test('returns an empty string for an empty file', async () => {
  await writeFile(path.join(box.ws, 'empty.txt'), '');
  assert.is((await readTool({ path: 'empty.txt' }, box.ctx)).text, '');
});

test('reads from a 1-indexed offset and says how many lines are left when limit stops early', async () => {
  await writeFile(path.join(box.ws, 'a.txt'), numbered(10).join('\n') + '\n');
  const r = await readTool({ path: 'a.txt', offset: 3, limit: 2 }, box.ctx);
  assert.is(r.text, 'line3\nline4\n\n[6 more lines in file. Use offset=5 to continue.]');
});

test('adds no notice when offset and limit reach the end of the file', async () => {
  await writeFile(path.join(box.ws, 'a.txt'), numbered(10).join('\n'));
  assert.is((await readTool({ path: 'a.txt', offset: 9, limit: 5 }, box.ctx)).text, 'line9\nline10');
  assert.is((await readTool({ path: 'a.txt', limit: 10 }, box.ctx)).text, numbered(10).join('\n'));
});

test('cuts at 2000 lines with a notice giving the offset to continue, and the continuation ends cleanly', async () => {
  await writeFile(path.join(box.ws, 'long.txt'), numbered(2500).join('\n') + '\n');
  const first = await readTool({ path: 'long.txt' }, box.ctx);
  assert.is(first.text, numbered(2000).join('\n') + '\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]');
  const rest = await readTool({ path: 'long.txt', offset: 2001 }, box.ctx);
  assert.is(rest.text, numbered(500, 2001).join('\n') + '\n');
});

test('a limit above 2000 is still cut at 2000 lines', async () => {
  await writeFile(path.join(box.ws, 'long.txt'), numbered(2500).join('\n'));
  const r = await readTool({ path: 'long.txt', limit: 2400 }, box.ctx);
  assert.ok(r.text.endsWith('line2000\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]'));
});

test('cuts at 50KB without splitting a line and says so in the notice', async () => {
  // 1000 lines of 99 bytes: 512 lines take 512*99 + 511 = 51199 bytes, the 513th would pass 51200.
  await writeFile(path.join(box.ws, 'wide.txt'), Array.from({ length: 1000 }, () => 'x'.repeat(99)).join('\n'));
  const r = await readTool({ path: 'wide.txt' }, box.ctx);
  const [body, notice] = r.text.split('\n\n');
  assert.is(body?.split('\n').length, 512);
  assert.is(notice, '[Showing lines 1-512 of 1000 (50.0KB limit). Use offset=513 to continue.]');
});

test('a first line larger than 50KB is not shown; the notice suggests bash with sed and head', async () => {
  await writeFile(path.join(box.ws, 'min.js'), 'y'.repeat(60 * 1024) + '\nshort\n');
  const r = await readTool({ path: 'min.js' }, box.ctx);
  assert.is(r.text, "[Line 1 is 60.0KB, exceeds 50.0KB limit. Use bash: sed -n '1p' min.js | head -c 51200]");
  assert.is((await readTool({ path: 'min.js', offset: 2 }, box.ctx)).text, 'short\n');
});

test('refuses an offset past the end of the file, saying how many lines it has', async () => {
  await writeFile(path.join(box.ws, 'a.txt'), numbered(10).join('\n') + '\n');
  const err = await failure(readTool({ path: 'a.txt', offset: 11 }, box.ctx));
  assert.is(err.message, 'Offset 11 is beyond end of file (10 lines total); use an offset between 1 and 10');
});

test('refuses a non-integer or zero offset and limit', async () => {
  await writeFile(path.join(box.ws, 'a.txt'), 'x\n');
  assert.match((await failure(readTool({ path: 'a.txt', offset: 0 }, box.ctx))).message, /offset must be a whole number of at least 1/);
  assert.match((await failure(readTool({ path: 'a.txt', limit: 1.5 }, box.ctx))).message, /limit must be a whole number of at least 1/);
});

test('refuses a binary file, naming its size', async () => {
  await writeFile(path.join(box.ws, 'blob.bin'), Buffer.from([0x41, 0x00, 0x42, 0x43]));
  const err = await failure(readTool({ path: 'blob.bin' }, box.ctx));
  assert.is(err.message, 'blob.bin is a binary file (4B); not shown. read returns text files only, and png, jpeg, gif and webp images.');
});

test('names the image type a file claims when its bytes do not decode as one', async () => {
  const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(2040, 1)]);
  await writeFile(path.join(box.ws, 'pic.png'), png);
  const err = await failure(readTool({ path: 'pic.png' }, box.ctx));
  assert.match(err.message, /^pic\.png is not a readable png image \(2\.0KB\): /);
});

test('refuses a directory and points to ls', async () => {
  await mkdir(path.join(box.ws, 'src'));
  const err = await failure(readTool({ path: 'src' }, box.ctx));
  assert.is(err.message, 'src is a directory, not a file; use ls to list its entries');
});

test('reports a missing file as not found', async () => {
  const err = await failure(readTool({ path: 'nope.txt' }, box.ctx));
  assert.is(err.message, 'File not found: nope.txt');
});

test('drops a UTF-8 BOM and keeps CRLF line ends as they are', async () => {
  await writeFile(path.join(box.ws, 'win.txt'), '\uFEFFone\r\ntwo\r\n');
  assert.is((await readTool({ path: 'win.txt' }, box.ctx)).text, 'one\r\ntwo\r\n');
});

test('decodes multi-byte characters split across read chunks', async () => {
  // Lines of 'a' + 1000 × 'é' (2002 bytes with the newline): the 64 KB chunk edge falls inside an 'é' of line 33.
  const line = 'a' + 'é'.repeat(1000);
  await writeFile(path.join(box.ws, 'utf8.txt'), Array.from({ length: 100 }, () => line).join('\n'));
  const r = await readTool({ path: 'utf8.txt', offset: 31, limit: 5 }, box.ctx);
  assert.is(r.text, `${Array.from({ length: 5 }, () => line).join('\n')}\n\n[65 more lines in file. Use offset=36 to continue.]`);
});

test('streams a 24 MB file: shows the first window and still counts every line', async () => {
  const line = 'z'.repeat(79);
  const total = 300_000;
  await writeFile(path.join(box.ws, 'big.log'), `${line}\n`.repeat(total));
  const before = process.memoryUsage().heapUsed;
  const r = await readTool({ path: 'big.log', offset: 150_001, limit: 3 }, box.ctx);
  const grown = process.memoryUsage().heapUsed - before;
  assert.is(r.text, `${line}\n${line}\n${line}\n\n[149997 more lines in file. Use offset=150004 to continue.]`);
  // Holding the file as a string would take at least 24 MB of heap.
  assert.ok(grown < 16 * 1024 * 1024, `heap grew by ${grown} bytes`);
});

test('stops counting lines 64 MB past the window and says the total is a lower bound', async () => {
  const block = Buffer.from(`${'q'.repeat(1023)}\n`.repeat(1024));
  const handle = await open(path.join(box.ws, 'huge.log'), 'w');
  try {
    for (let i = 0; i < 72; i++) await handle.write(block);
  } finally {
    await handle.close();
  }
  const r = await readTool({ path: 'huge.log', limit: 1 }, box.ctx);
  const m = /^q{1023}\n\n\[More than (\d+) more lines in file\. Use offset=2 to continue\.\]$/.exec(r.text);
  assert.ok(m, r.text.slice(1020));
  const counted = Number(m?.[1]);
  assert.ok(counted >= 64 * 1024 && counted < 72 * 1024, `counted ${counted}`);
});

test('accepts an absolute path inside the workspace', async () => {
  await writeFile(path.join(box.ws, 'abs.txt'), 'inside\n');
  assert.is((await readTool({ path: path.join(box.ws, 'abs.txt') }, box.ctx)).text, 'inside\n');
});

test('stops with a cancelled error when the signal is already aborted', async () => {
  await writeFile(path.join(box.ws, 'a.txt'), 'x\n');
  const controller = new AbortController();
  controller.abort();
  const err = await failure(readTool({ path: 'a.txt' }, context(box.ws, { signal: controller.signal })));
  assert.is(err.message, 'cancelled');
});

test('the definition is read-only, names path as required and mentions the limits', () => {
  assert.is(readDefinition.name, 'read');
  assert.equal(readDefinition.inputSchema.required, ['path']);
  assert.is(readDefinition.inputSchema.additionalProperties, false);
  assert.is(readDefinition.annotations.readOnlyHint, true);
  assert.is(readDefinition.annotations.destructiveHint, false);
  assert.is(readDefinition.annotations.openWorldHint, false);
  assert.match(readDefinition.description, /2000 lines/);
  assert.match(readDefinition.description, /50KB/);
  assert.match(readDefinition.description, /offset/);
});

test('the synchronous read reads a file within its bound and declines (null) a larger one, refusals first', async () => {
  await writeFile(path.join(box.ws, 'small.txt'), 'one\ntwo\n');
  await writeFile(path.join(box.ws, 'large.txt'), 'z'.repeat(5000));
  assert.is(readSmallFileSync({ path: 'small.txt' }, box.ws, 4096)?.text, 'one\ntwo\n');
  assert.is(readSmallFileSync({ path: 'large.txt' }, box.ws, 4096), null);
  assert.is(readSmallFileSync({ path: 'large.txt' }, box.ws, 5000)?.text, 'z'.repeat(5000));
  await mkdir(path.join(box.ws, 'd'));
  assert.throws(() => readSmallFileSync({ path: 'd' }, box.ws, 4096), /is a directory/);
  assert.throws(() => readSmallFileSync({ path: '../x' }, box.ws, 4096), /outside the workspace/);
});

test('a file of many chunks gives the same window read synchronously or asynchronously', async () => {
  const text = Array.from({ length: 3000 }, (_, i) => `row ${i} ${'ü'.repeat(i % 40)}`).join('\n');
  await writeFile(path.join(box.ws, 'rows.txt'), text);
  const r = await readTool({ path: 'rows.txt', offset: 1500, limit: 300 }, box.ctx);
  assert.is(r.text.split('\n')[0], `row 1499 ${'ü'.repeat(1499 % 40)}`);
  assert.is(readSmallFileSync({ path: 'rows.txt', offset: 1500, limit: 300 }, box.ws, 1 << 20)?.text, r.text);
});

test.run();
