// The log's bounded stderr queue, on a stream whose queue the test controls: records are written while the
// stream holds less than the limit, dropped past it (every one, until the stream drained, so the order
// stays true), and once it drained one line says how many; a stream that failed (EPIPE) takes nothing more,
// and each write first makes the descriptor non-blocking. The real process: test/e2e/stderr-unread.test.ts.

import { EventEmitter } from 'node:events';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BoundedSink, type QueuedStream } from '../../src/log/stderr-sink.ts';

/** A stream that takes nothing until `drain()`: its queue is what was written since. */
class StalledStream extends EventEmitter implements QueuedStream {
  readonly writes: string[] = [];
  writableLength = 0;
  readonly writableHighWaterMark = 16;
  blockingCalls: boolean[] = [];
  readonly _handle = { setBlocking: (b: boolean) => { this.blockingCalls.push(b); return 0; } };
  write(text: string): boolean {
    this.writes.push(text);
    this.writableLength += text.length;
    return this.writableLength < this.writableHighWaterMark;
  }
  drain(): void {
    this.writableLength = 0;
    this.emit('drain');
  }
}

const at = () => new Date(Date.UTC(2026, 0, 1));

test('writes while under the limit, drops past it, and says how many once drained; then writes again', () => {
  const stream = new StalledStream();
  const sink = new BoundedSink(stream, 100, at);
  for (let i = 0; i < 9; i++) sink.write(`record ${i} ..\n`); // 12 characters each: 8 fit in 100
  assert.equal(stream.writes, Array.from({ length: 8 }, (_, i) => `record ${i} ..\n`));
  assert.is(sink.dropped, 1);
  sink.write('short\n');
  assert.is(sink.dropped, 2, 'a record that would fit is dropped too while records are being dropped: no gap in the middle of the log');
  assert.is(stream.writes.length, 8);
  stream.drain();
  assert.is(stream.writes[8], '2026-01-01T00:00:00.000Z super-pi warning: 2 log records were dropped: stderr was not read while 100 characters of log waited for it (LOG_QUEUE_MAX_BYTES) {"dropped":2}\n');
  assert.is(sink.dropped, 0);
  stream.drain();
  sink.write('after\n');
  assert.is(stream.writes[9], 'after\n');
});

test('records lost before the queue (a thread\'s output): counted with the queue\'s own drops while it drops, else said in their own line', () => {
  const stream = new StalledStream();
  const sink = new BoundedSink(stream, 100, at);
  sink.lost(3, 'lost 3\n');
  assert.equal(stream.writes, ['lost 3\n'], 'the queue was not dropping: the line is written');
  for (let i = 0; i < 9; i++) sink.write(`record ${i} ..\n`);
  assert.is(sink.dropped, 2);
  sink.lost(5, 'lost 5\n');
  assert.is(sink.dropped, 7, 'counted with the drops under way');
  sink.lost(0, 'nothing\n');
  stream.drain();
  assert.match(stream.writes.at(-1) as string, '7 log records were dropped');
  assert.not.ok(stream.writes.includes('lost 5\n'));
});

test('records lost before the queue whose own line does not fit: all of them counted, not one (a full queue not yet dropping took 1,003 lost pieces of a thread\'s output as one dropped record)', () => {
  const stream = new StalledStream();
  const sink = new BoundedSink(stream, 100, at);
  for (let i = 0; i < 8; i++) sink.write(`record ${i} ..\n`); // 96 of 100: full, nothing dropped yet
  assert.is(sink.dropped, 0);
  sink.lost(1003, `${'a line saying 1003 pieces were lost'.padEnd(40, '.')}\n`);
  assert.is(sink.dropped, 1003);
  stream.drain();
  assert.match(stream.writes.at(-1) as string, '{"dropped":1003}');
});

test('never holds more than the limit whatever the records (the queue is checked before each write)', () => {
  const stream = new StalledStream();
  const sink = new BoundedSink(stream, 1000, at);
  let most = 0;
  for (let i = 0; i < 500; i++) {
    sink.write(`${'r'.repeat(i % 97)}\n`);
    most = Math.max(most, stream.writableLength);
  }
  assert.ok(most <= 1000, `held ${most}`);
  assert.ok(sink.dropped > 0);
});

test('a record alone in an empty queue is written whatever its size; a limit under the high-water mark is raised to it', () => {
  const stream = new StalledStream();
  const sink = new BoundedSink(stream, 4, at);
  sink.write('0123456789\n');
  assert.equal(stream.writes, ['0123456789\n']);
  sink.write('abc\n');
  assert.is(stream.writes.length, 2, 'the limit is the high-water mark (16): 15 fit');
});

test('each write makes the descriptor non-blocking first, not once per stream (any process sharing it may make it blocking again, as a thread started through tsx does)', () => {
  const stream = new StalledStream();
  const sink = new BoundedSink(stream, 100, at);
  sink.write('a\n');
  sink.write('b\n');
  assert.equal(stream.blockingCalls, [false, false]);
  for (let i = 0; i < 20; i++) sink.write(`${'c'.repeat(30)}\n`);
  assert.is(stream.writes.length, 5, 'a, b and three of 31 characters fit in 100');
  assert.equal(stream.blockingCalls.length, 5, 'one per write made, none for a record dropped');
  stream.drain();
  assert.equal(stream.blockingCalls.length, 6, 'and one for the line saying how many were dropped');
});

test('a stream that failed (its reader went away) takes nothing more, and the failure is not thrown', () => {
  const stream = new StalledStream();
  const sink = new BoundedSink(stream, 100, at);
  stream.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
  sink.write('lost\n');
  assert.equal(stream.writes, []);
});

test.run();
