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

test.run();
