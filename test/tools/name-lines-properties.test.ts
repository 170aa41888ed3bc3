// Properties of how `ls` and `find` print names (fast-check, fixed seed): a name is workspace content, so
// whatever it holds — control characters, line separators, quotes, brackets, any Unicode — each line of the
// text names exactly one entry, no entry's line can pass for a notice (`[…]`), and a quoted line is a JSON
// string literal that gives back the exact name the structured result carries.

import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { findTool } from '../../src/tools/find.ts';
import { lsTool, type LsListing } from '../../src/tools/ls.ts';
import { inSandbox } from './sandbox.ts';

/** Fixed, so a failure reproduces; fast-check prints the counterexample. */
const SEED = 20_260_517;
const RUNS = 150;

/** What breaks, hides or imitates a line or the text around the names, mixed with plain characters and any code point. */
const special = ['\n', '\r', '\r\n', '\t', '\u000b', '\u000c', '\u001b', '\u007f', '\u0085', '\u2028', '\u2029', '"', '[', ']', ':', ' ', '\\', '/', '.', '\ufeff', '\u202e'];
const unit = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...special) },
  { weight: 2, arbitrary: fc.constantFrom('a', 'B', '1', '-', '_', 'é') },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
);
/** A name a file can have: no '/' or NUL, not '.' or '..', at most 255 bytes. */
const fileName = fc.string({ unit, minLength: 1, maxLength: 12 })
  .map((s) => s.replaceAll('/', '\u2215').replaceAll('\0', '0'))
  .filter((s) => s !== '.' && s !== '..' && Buffer.byteLength(s) <= 255);
const entries = fc.uniqueArray(fc.tuple(fileName, fc.boolean()), { minLength: 1, maxLength: 5, selector: ([name]) => name });

/** The name a printed entry line stands for: the line itself, or the JSON literal it is; a directory's '/' dropped. */
function nameOf(line: string, directory: boolean): string {
  const bare = directory ? line.slice(0, -1) : line;
  if (directory) assert.ok(line.endsWith('/'), `a directory's line ends in '/': ${JSON.stringify(line)}`);
  return bare.startsWith('"') ? (JSON.parse(bare) as string) : bare;
}

/** An entry line must not look like a notice: bracketed, `[…]`, give or take spaces. */
function assertNotNotice(line: string): void {
  assert.not.ok(/^\s*\[.*\]\s*$/.test(line), `an entry's line looks like a notice: ${JSON.stringify(line)}`);
}

test('ls: each line names one entry, none passes for a notice, and a quoted line parses back to the name', async () => {
  await fc.assert(fc.asyncProperty(entries, fc.integer({ min: 1, max: 6 }), async (made, limit) => {
    await inSandbox({}, async (box) => {
      for (const [name, directory] of made) {
        if (directory) await mkdir(path.join(box.ws, name));
        else await writeFile(path.join(box.ws, name), '');
      }
      const r = await lsTool({ limit }, box.ctx);
      const listing = r.structured as LsListing;
      assert.is(listing.entries.length, Math.min(limit, made.length));
      const lines = r.text.split('\n');
      const entryLines = lines.slice(0, listing.entries.length);
      // Whatever follows the entries is the notice block, exactly: a blank line, then the bracketed notices.
      assert.equal(lines.slice(listing.entries.length), listing.notices.length > 0 ? ['', `[${listing.notices.join('. ')}]`] : []);
      entryLines.forEach((line, i) => {
        const entry = listing.entries[i] as LsListing['entries'][number];
        assertNotNotice(line);
        assert.is(nameOf(line, entry.type === 'directory'), entry.name);
      });
      assert.equal(new Set(listing.entries.map((e) => e.name)).size, listing.entries.length);
      for (const e of listing.entries) assert.ok(made.some(([name]) => name === e.name), `listed a name that was made: ${JSON.stringify(e.name)}`);
    });
  }), { seed: SEED, numRuns: RUNS });
});

test('find: each line names one path, none passes for a notice, and a quoted line parses back to the path', async () => {
  await fc.assert(fc.asyncProperty(entries, async (made) => {
    await inSandbox({}, async (box) => {
      await mkdir(path.join(box.ws, 'd'));
      for (const [name, directory] of made) {
        if (directory) await mkdir(path.join(box.ws, 'd', name));
        else await writeFile(path.join(box.ws, 'd', name), '');
      }
      const r = await findTool({ pattern: '**' }, box.ctx);
      const paths = (r.structured as { paths: string[] }).paths;
      assert.is(paths.length, made.length + 1);
      const lines = r.text.split('\n');
      assert.is(lines.length, paths.length);
      lines.forEach((line, i) => {
        const p = paths[i] as string;
        assertNotNotice(line);
        const directory = p.endsWith('/');
        assert.is(nameOf(line, directory), directory ? p.slice(0, -1) : p);
      });
    });
  }), { seed: SEED, numRuns: RUNS });
});

test.run();
