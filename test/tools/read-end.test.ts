// Where `read` finds the end of a file (src/tools/read.ts, scan): it asks for one byte more than fstat
// saw, and a read that returns exactly what fstat saw is the end, so no probe read follows. Driven with
// real system calls through a driver that counts the reads and can make them short (as some file systems
// do) or grow the file after fstat: whatever the reads do, the text read is the file's.

import { appendFileSync, readSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { answerSync, type FsAnswer, type FsRequest, type FsSteps, runSync } from '../../src/tools/fs-steps.ts';
import { readSteps } from '../../src/tools/read.ts';
import type { ToolOutcome } from '../../src/tools/contract.ts';
import { sandboxPerTest } from './sandbox.ts';

const box = sandboxPerTest(test);

interface Driving {
  /** The most bytes any one read returns (a short-reading file system); default: what was asked. */
  readonly readAtMost?: number;
  /** Called once, right after the fstat of the opened file. */
  readonly afterFstat?: () => void;
}

/** Runs the steps with real synchronous calls (runSync with answerSync underneath), counting the reads. */
function drive<T>(steps: FsSteps<T>, how: Driving = {}): { value: T; reads: number } {
  let reads = 0;
  let fstatted = false;
  const value = runSync(steps, (req: FsRequest): FsAnswer => {
    if (req.op === 'read') {
      reads++;
      return readSync(req.file as number, req.buffer, 0, Math.min(req.buffer.length, how.readAtMost ?? Infinity), null);
    }
    const answer = answerSync(req);
    if (req.op === 'fstat' && !fstatted) {
      fstatted = true;
      how.afterFstat?.();
    }
    return answer;
  });
  return { value, reads };
}

function readText(file: string, how?: Driving): { text: string; reads: number } {
  const { value, reads } = drive(readSteps({ path: file }, box.ws, null, 1 << 20, false), how);
  return { text: (value as ToolOutcome).text, reads };
}

test('a small file is read with one read: the end is where fstat said, no probe after it', () => {
  writeFileSync(path.join(box.ws, 'a.txt'), 'line of a small file\n'.repeat(18));
  const { text, reads } = readText('a.txt');
  assert.is(text, 'line of a small file\n'.repeat(18));
  assert.is(reads, 1);
});

test('an empty file is one read that finds nothing', () => {
  writeFileSync(path.join(box.ws, 'empty.txt'), '');
  assert.equal(readText('empty.txt'), { text: '', reads: 1 });
});

test('a file that grew after fstat is read on to its new end', () => {
  writeFileSync(path.join(box.ws, 'grows.txt'), 'first\n');
  const { text, reads } = readText('grows.txt', { afterFstat: () => appendFileSync(path.join(box.ws, 'grows.txt'), 'second\n') });
  assert.is(text, 'first\nsecond\n');
  assert.ok(reads >= 2, String(reads));
});

test('property: whatever the size and however short the reads, the text is the file\'s', () => {
  fc.assert(fc.property(fc.string({ unit: 'grapheme-ascii', maxLength: 12_000 }), fc.integer({ min: 1, max: 9000 }), (content, readAtMost) => {
    const body = content.replace(/\0/g, ' ');
    writeFileSync(path.join(box.ws, 'p.txt'), body);
    const window = readText('p.txt').text;
    const short = readText('p.txt', { readAtMost }).text;
    assert.is(short, window);
    // The window is the file's text up to read's own line and byte limits.
    assert.ok(body.startsWith(window.replace(/\n\n\[[^\]]*\]$/, '')), 'the window is the start of the file');
  }), { numRuns: 150 });
});

test.run();
