// A directory of tens of thousands of long names (workspace content: a hard link costs no disk and no
// inode) must not make a listing hold it whole: `ls`, path completion and the workspace resource's layout
// run on the thread that serves every session (the main thread), where a heap run out kills the node. Each
// is run in a child process whose heap (16 MB) is far below the directory's names (~15 MB of text, twice
// that as Dirent objects) and must still answer, with the first entries by name.

import { spawn } from 'node:child_process';
import { linkSync, mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { LAYOUT_LIMIT, PATH_COMPLETION_LIMIT } from '../../src/limits.ts';

/** Names in the directory; a file system allows ~65,000 links to one file, so they share two. */
const NAMES = 60_000;
const PAD = 'n'.repeat(240);
const HEAP_MB = 16;
const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'list-huge-directory.ts');

const huge = suite('huge directory');
let base = '';

huge.before(async () => {
  base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-huge-dir-')));
  mkdirSync(path.join(base, 'big'));
  writeFileSync(path.join(base, 'one'), '');
  writeFileSync(path.join(base, 'two'), '');
  for (let i = 0; i < NAMES; i++) linkSync(path.join(base, i % 2 === 0 ? 'one' : 'two'), path.join(base, 'big', nameOf(i)));
});
huge.after(async () => {
  await rm(base, { recursive: true, force: true });
});

function nameOf(i: number): string {
  return `${PAD}${String(i).padStart(8, '0')}`;
}

/** Runs one listing in a child with a HEAP_MB heap; its answer, or a failure naming how it died. */
async function listInSmallHeap(what: string): Promise<unknown> {
  const child = spawn(process.execPath, [`--max-old-space-size=${HEAP_MB}`, '--import', 'tsx', CHILD, base, what], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (c, s) => resolve([c, s])));
  assert.ok(code === 0, `${what} of ${NAMES} names in a ${HEAP_MB} MB heap died (exit ${code}, ${signal}): ${err.slice(-600)}`);
  return JSON.parse(out);
}

huge(`ls answers with the first entries by name, and says the limit was reached`, async () => {
  const listing = await listInSmallHeap('ls') as { entries: { name: string }[]; truncated: boolean; notices: string[] };
  assert.equal(listing.entries.map((e) => e.name), [nameOf(0), nameOf(1), nameOf(2)]);
  assert.is(listing.truncated, true);
  assert.equal(listing.notices, ['3 entries limit reached. Use limit=6 for more']);
});

huge(`path completion answers with the first ${PATH_COMPLETION_LIMIT} names and hasMore`, async () => {
  const completed = await listInSmallHeap('complete') as { values: string[]; hasMore: boolean };
  assert.equal(completed.values, Array.from({ length: PATH_COMPLETION_LIMIT }, (_, i) => `big/${nameOf(i)}`));
  assert.is(completed.hasMore, true);
});

huge(`the workspace resource lists the first ${LAYOUT_LIMIT} names and counts the rest`, async () => {
  const layout = await listInSmallHeap('context') as string[];
  assert.equal(layout, [...Array.from({ length: LAYOUT_LIMIT }, (_, i) => nameOf(i)), `... and ${NAMES - LAYOUT_LIMIT} more`]);
});

huge.run();
