// The house in rooms: no file in src/ over MAX_SOURCE_LINES lines (issue 26). A file that grows past it
// is split along a seam it already has (docs/architecture.md, "Files stay one concept each").

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { sourceFiles } from './import-graph.ts';

const MAX_SOURCE_LINES = 500;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Lines as `wc -l` counts them, plus a last line with no newline. */
function counted(text: string): number {
  return text.length === 0 ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

function linesOf(file: string): number {
  return counted(readFileSync(path.join(root, file), 'utf8'));
}

test(`no file in src/ is over ${MAX_SOURCE_LINES} lines`, () => {
  const files = sourceFiles(root, 'src');
  assert.ok(files.length > 100, `src/ read (${files.length} files)`);
  const over = files.map((f) => [f, linesOf(f)] as const).filter(([, n]) => n > MAX_SOURCE_LINES);
  assert.equal(over.map(([f, n]) => `${f}: ${n} lines`), [], 'split these along a seam they already have');
});

test('the line count is what wc -l says (a file of three lines, with and without its last newline)', () => {
  assert.is(counted('a\nb\nc\n'), 3);
  assert.is(counted('a\nb\nc'), 3);
  assert.is(counted(''), 0);
});

test.run();
