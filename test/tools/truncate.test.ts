import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { truncateHead, truncateTail } from '../../src/tools/truncate.ts';

test('truncateHead keeps short text whole', () => {
  const r = truncateHead('a\nb\n');
  assert.is(r.truncated, false);
  assert.is(r.content, 'a\nb\n');
  assert.is(r.totalLines, 2);
});

test('truncateHead stops at the line limit', () => {
  const text = Array.from({ length: 10 }, (_, i) => `line${i}`).join('\n');
  const r = truncateHead(text, { maxLines: 3 });
  assert.is(r.truncated, true);
  assert.is(r.truncatedBy, 'lines');
  assert.is(r.content, 'line0\nline1\nline2');
  assert.is(r.totalLines, 10);
});

test('truncateHead stops at the byte limit without cutting a line', () => {
  const r = truncateHead('aaaa\nbbbb\ncccc', { maxBytes: 10 });
  assert.is(r.truncatedBy, 'bytes');
  assert.is(r.content, 'aaaa\nbbbb');
});

test('truncateHead flags a first line larger than the byte limit', () => {
  const r = truncateHead('x'.repeat(100), { maxBytes: 10 });
  assert.is(r.firstLineExceedsLimit, true);
  assert.is(r.content, '');
});

test('truncateTail keeps the last lines', () => {
  const text = Array.from({ length: 10 }, (_, i) => `line${i}`).join('\n');
  const r = truncateTail(text, { maxLines: 2 });
  assert.is(r.content, 'line8\nline9');
  assert.is(r.truncatedBy, 'lines');
});

test('truncateTail keeps the tail of one huge line, on a UTF-8 boundary', () => {
  const r = truncateTail('é'.repeat(100), { maxBytes: 11 });
  assert.ok(r.truncated);
  assert.ok(r.content.length > 0 && /^é+$/.test(r.content));
});

// The defaults are the README's ("2000 lines or 50 KB, whichever comes first"), written here as
// literals: a test that imported DEFAULT_MAX_LINES would follow any change to it.
const lines = (n: number) => Array.from({ length: n }, (_, i) => `line${i + 1}`).join('\n');

test('by default 2000 lines are kept whole and the 2001st is cut (head and tail)', () => {
  assert.is(truncateHead(lines(2000)).truncated, false);
  assert.is(truncateTail(lines(2000)).truncated, false);
  const head = truncateHead(lines(2001));
  assert.is(head.truncatedBy, 'lines');
  assert.is(head.outputLines, 2000);
  assert.ok(head.content.endsWith('\nline2000'));
  const tail = truncateTail(lines(2001));
  assert.is(tail.truncatedBy, 'lines');
  assert.is(tail.outputLines, 2000);
  assert.ok(tail.content.startsWith('line2\n'));
});

test('by default 50 KB (51,200 bytes) are kept whole and one byte more is cut', () => {
  assert.is(truncateHead('x'.repeat(51_200)).truncated, false);
  const over = truncateHead('x'.repeat(51_201));
  assert.is(over.truncatedBy, 'bytes');
  assert.is(over.firstLineExceedsLimit, true);
  // 51 lines of 1023 bytes and their newlines: the 51st would pass 51,200 bytes.
  const text = Array.from({ length: 51 }, () => 'y'.repeat(1023)).join('\n');
  for (const r of [truncateHead(text), truncateTail(text)]) {
    assert.is(r.truncatedBy, 'bytes');
    assert.is(r.outputLines, 50);
    assert.is(r.outputBytes, 50 * 1023 + 49);
  }
});

test.run();
