// The README is the front door (issue 26): read in five minutes, at most 300 lines; it opens with the two
// set-up commands; it never hands a reader a command that runs whatever is published as `super-pi` on the
// npm registry without saying the package is not published yet.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { repoRoot } from './markdown.ts';

/** The most lines the README may have: what fits in a five-minute read. */
const README_MAX_LINES = 300;

const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
const lines = readme.replace(/\n$/, '').split('\n');

/** Lines that run the package from the registry (`npx -y super-pi`, `npx super-pi`), not from a path given with --package. */
const registryRuns = (text: string): string[] => text.split('\n').filter((l) => /\bnpx\b[^|"\]]*?(?:-y\s+)?super-pi\b(?!-)/.test(l) && !/--package/.test(l));

test(`README.md is at most ${README_MAX_LINES} lines`, () => {
  assert.ok(lines.length > 20, 'the README is read');
  assert.ok(lines.length <= README_MAX_LINES, `README.md has ${lines.length} lines; move detail to a page of docs/`);
});

test('README.md opens with the two set-up commands: npm ci && npm start, npm ci && npm test', () => {
  const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  assert.ok(readme.indexOf('```sh') < readme.indexOf('\n## '), 'the commands come before the first section');
  assert.match(firstBlock, /^npm ci && npm start\b/m);
  assert.match(firstBlock, /^npm ci && npm test\b/m);
});

test('every README line that runs super-pi from the npm registry says it is not published yet', () => {
  const runs = registryRuns(readme);
  assert.ok(runs.length > 0, 'the registry form is shown (marked for when it is published)');
  for (const line of runs) assert.match(line, /not (?:yet|published)|is not yet|once the package is published/i, line);
});

test('the registry-run finder tells the registry form from a tarball given with --package', () => {
  assert.equal(registryRuns('a `npx -y super-pi --stdio` here\n`npx -y --package /p/super-pi-0.1.0.tgz super-pi --stdio`\nnpx tsx examples/stdio.ts'), ['a `npx -y super-pi --stdio` here']);
});

test.run();
