// edit's diff summary against the file it changed (fast-check, fixed seed): each hunk's header counts and
// places its old lines, its context and removed lines are the old file's lines at those numbers (as a split
// of the whole file reads them; the summary reads only the lines it needs), and firstChangedLine is a line
// of the new file. (The new side is not checked: a change ending in a final newline shows one `+` line more
// than the new file has, as it did before the summary stopped splitting files.)

import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { planEdit } from '../../src/tools/edit.ts';
import { inSandbox } from './sandbox.ts';

const SEED = 20_261_208;

const fileLines = (s: string): string[] => {
  const lines = s.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
};

const token = fc.constantFrom('a', 'b', 'c', '\n', '\n', '\n');
const text = fc.array(token, { maxLength: 40 }).map((t) => t.join(''));

test('every hunk shows the old file\'s own lines at the numbers its header gives', () =>
  inSandbox({}, async ({ ws }) => {
    await fc.assert(fc.asyncProperty(text, text, text, fc.constantFrom('', '\n', 'x\n', '\nx'), async (before, after, replacement, end) => {
      const file = `${before}MARK${after}${end}`;
      await writeFile(path.join(ws, 'f.txt'), file);
      const plan = await planEdit({ path: 'f.txt', oldText: 'MARK', newText: replacement }, ws);
      if (plan.kind !== 'plan') return;
      const oldLines = fileLines(file);
      const newLineCount = fileLines(Buffer.from(plan.bytes).toString('utf8')).length;
      const { diff, firstChangedLine } = plan.structured as { diff: string; firstChangedLine: number };
      assert.ok(firstChangedLine >= 1 && firstChangedLine <= newLineCount, JSON.stringify({ file, replacement, firstChangedLine }));
      const body = diff.split('\n').slice(2);
      for (let i = 0; i < body.length;) {
        const header = /^@@ -(\d+),(\d+) \+(\d+),(\d+) @@$/.exec(body[i] as string);
        assert.ok(header, JSON.stringify({ file, replacement, line: body[i] }));
        const [oldStart, oldCount] = header.slice(1).map(Number) as [number, number];
        let o = oldCount === 0 ? oldStart : oldStart - 1;
        for (i++; i < body.length && !(body[i] as string).startsWith('@@'); i++) {
          const line = body[i] as string;
          const rest = line.slice(1);
          if (line[0] !== '+') assert.is(rest, oldLines[o++], JSON.stringify({ file, replacement, diff }));
        }
        assert.is(o - (oldCount === 0 ? oldStart : oldStart - 1), oldCount);
      }
    }), { seed: SEED, numRuns: 400 });
  }));

test.run();
