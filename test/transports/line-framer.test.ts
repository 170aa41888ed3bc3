import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { LineFramer } from '../../src/transports/line-framer.ts';

const b = (s: string) => Buffer.from(s, 'utf8');

test('parses a message spanning two chunks', () => {
  const f = new LineFramer(1024);
  assert.equal(f.push(b('{"a":')), []);
  assert.equal(f.push(b('1}\n')), [{ kind: 'line', text: '{"a":1}' }]);
});

test('parses several messages in one chunk, and strips CR before LF', () => {
  const f = new LineFramer(1024);
  assert.equal(f.push(b('1\r\n2\n3')), [{ kind: 'line', text: '1' }, { kind: 'line', text: '2' }]);
  assert.equal(f.end(), [{ kind: 'line', text: '3' }]);
});

test('accepts a multi-byte character split between chunks', () => {
  const f = new LineFramer(1024);
  const bytes = b('"é"\n');
  assert.equal(f.push(bytes.subarray(0, 2)), []);
  assert.equal(f.push(bytes.subarray(2)), [{ kind: 'line', text: '"é"' }]);
});

test('skips blank lines', () => {
  const f = new LineFramer(1024);
  assert.equal(f.push(b('\n  \n\r\n1\n')), [{ kind: 'line', text: '1' }]);
});

test('discards a line over the limit as it arrives and reports its size once', () => {
  const f = new LineFramer(10);
  assert.equal(f.push(b('x'.repeat(8))), []);
  assert.equal(f.push(b('x'.repeat(8))), []);
  assert.equal(f.push(b('x'.repeat(4) + '\n{"ok":1}\n')), [{ kind: 'oversized', bytes: 20, limit: 10 }, { kind: 'line', text: '{"ok":1}' }]);
});

test('reports invalid UTF-8 and carries on with the next line', () => {
  const f = new LineFramer(1024);
  const bad = Buffer.concat([b('{"a":"'), Buffer.from([0xff, 0xfe]), b('"}\n2\n')]);
  assert.equal(f.push(bad), [{ kind: 'invalid-utf8', bytes: 10 }, { kind: 'line', text: '2' }]);
});

test.run();
