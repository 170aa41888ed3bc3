// Where `read` finds the end of a file (src/tools/read.ts, scan): it asks for one byte more than fstat
// saw, and a read that returns exactly what fstat saw is the end, so no probe read follows. Driven with
// real system calls through a driver that counts the reads and can make them short (as some file systems
// do) or grow the file after fstat: whatever the reads do, the text read is the file's.

import { appendFileSync, readSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { answerSync, type FsAnswer, type FsRequest, type FsSteps, runSync } from '../../src/tools/fs-steps.ts';
import { COUNT_SCAN_LIMIT, readSteps } from '../../src/tools/read.ts';
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
function drive<T>(steps: FsSteps<T>, how: Driving = {}): { value: T; reads: number; bytes: number } {
  let reads = 0;
  let bytes = 0;
  let fstatted = false;
  const value = runSync(steps, (req: FsRequest): FsAnswer => {
    if (req.op === 'read') {
      reads++;
      const n = readSync(req.file as number, req.buffer, 0, Math.min(req.buffer.length, how.readAtMost ?? Infinity), null);
      bytes += n;
      return n;
    }
    const answer = answerSync(req);
    if (req.op === 'fstat' && !fstatted) {
      fstatted = true;
      how.afterFstat?.();
    }
    return answer;
  });
  return { value, reads, bytes };
}

function readText(file: string, how?: Driving): { text: string; reads: number } {
  const { value, reads } = drive(readSteps({ path: file }, box.ws, null, 1 << 20, false), how);
  return { text: (value as ToolOutcome).text, reads };
}

/** The whole outcome (text and structured result), or the refusal's message. */
function readOutcome(file: string, how?: Driving, limit?: number): ToolOutcome | string {
  try {
    return drive(readSteps({ path: file, ...(limit === undefined ? {} : { limit }) }, box.ws, null, 1 << 20, false), how).value as ToolOutcome;
  } catch (err) {
    return (err as Error).message;
  }
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

// A file read whole in its first read is decoded at once (scan's whole-file window); short reads make the
// same file go line by line. Both must give the same outcome for any bytes: CR, BOM, multi-byte and
// invalid UTF-8 (a sequence cut by a newline), empty lines, no final newline, and a line limit it may pass.
test('property: a file decoded whole gives what the line-by-line walk gives, for any bytes', () => {
  const piece = fc.constantFrom('a', 'line', '\n', '\n', '\r\n', '\uFEFF', 'é', '😀', '\xC3', '\xE2\x82', '\xF0\x9F\x98', '\x80', ' ');
  const bytesOf = (parts: string[]) => Buffer.concat(parts.map((p) => (/^[\x80-\xff]+$/.test(p) ? Buffer.from(p, 'latin1') : Buffer.from(p, 'utf8'))));
  fc.assert(fc.property(fc.array(piece, { maxLength: 60 }), fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined }), (parts, limit) => {
    writeFileSync(path.join(box.ws, 'w.txt'), bytesOf(parts));
    const whole = drive(readSteps({ path: 'w.txt', ...(limit === undefined ? {} : { limit }) }, box.ws, null, 1 << 20, false));
    assert.equal(whole.value, readOutcome('w.txt', { readAtMost: 3 }, limit));
  }), { numRuns: 400 });
});

test('a file with a BOM, CRLF lines and no final newline reads the same whole as line by line', () => {
  writeFileSync(path.join(box.ws, 'bom.txt'), '\uFEFFfirst\r\nsecond\r\nlast');
  const whole = readOutcome('bom.txt');
  assert.equal(whole, readOutcome('bom.txt', { readAtMost: 4 }));
  assert.is((whole as ToolOutcome).text, 'first\r\nsecond\r\nlast');
  assert.is((whole as ToolOutcome).structured?.lines, 3);
});

/** A sparse file (no disk) whose last line never ends within COUNT_SCAN_LIMIT: zeros are no newline. */
const ENDLESS_LINE_FILE_BYTES = 8 * COUNT_SCAN_LIMIT;
/** The zeros must start past read's binary sniff (its first 8 KiB), or the file is refused as binary. */
const BINARY_SNIFF = 8 * 1024;
/** What one read asks for at most (read.ts's CHUNK_BYTES): the count stops within one of them past its bound. */
const READ_CHUNK_BYTES = 64 * 1024;

test('property: a line that does not end costs at most COUNT_SCAN_LIMIT past the window, wherever the window is', () => {
  fc.assert(fc.property(fc.array(fc.stringMatching(/^[a-z ]{0,30}$/), { maxLength: 3 }), fc.nat({ max: 4 }), fc.option(fc.integer({ min: 1, max: 4 })), fc.integer({ min: BINARY_SNIFF + 1, max: 70_000 }),
    (lines, offsetPick, limit, headOfLong) => {
      const file = path.join(box.ws, 'endless.txt');
      const head = lines.map((l) => `${l}\n`).join('') + 'L'.repeat(headOfLong);
      writeFileSync(file, head);
      truncateSync(file, ENDLESS_LINE_FILE_BYTES);
      const offset = Math.min(offsetPick, lines.length) + 1;
      const args = { path: 'endless.txt', offset, ...(limit === null ? {} : { limit }) };
      let outcome: ToolOutcome | string;
      let bytes = 0;
      try {
        const driven = drive(readSteps(args, box.ws, null, Number.POSITIVE_INFINITY, false));
        outcome = driven.value as ToolOutcome;
        bytes = driven.bytes;
      } catch (err) {
        outcome = (err as Error).message;
      }
      assert.type(outcome, 'object', `${JSON.stringify(args)}: ${String(outcome)}`);
      const text = (outcome as ToolOutcome).text;
      assert.ok(bytes <= head.length + COUNT_SCAN_LIMIT + 2 * READ_CHUNK_BYTES, `${JSON.stringify(args)} read ${bytes} bytes of ${ENDLESS_LINE_FILE_BYTES}: ${text.slice(-200)}`);
      assert.is((outcome as ToolOutcome).structured?.totalLinesKnown, false, text.slice(-200));
      assert.match(text, /more than|More than/);
    }), { seed: 20261207, numRuns: 40 });
});

test('a line that does not end, read from its start: its size is a lower bound, and the notice says so', () => {
  const file = path.join(box.ws, 'endless.txt');
  writeFileSync(file, `first\n${'L'.repeat(10_000)}`);
  truncateSync(file, ENDLESS_LINE_FILE_BYTES);
  const { value } = drive(readSteps({ path: 'endless.txt', offset: 2 }, box.ws, null, Number.POSITIVE_INFINITY, false));
  assert.match((value as ToolOutcome).text, /^\[Line 2 is more than 64\.\dMB, exceeds 50\.0KB limit\./);
});

test.run();
