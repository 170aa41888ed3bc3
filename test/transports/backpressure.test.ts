// Output flow control of the stdio transport, on streams held by the test: what waits, what is read,
// and what happens to a host that never reads.

import { PassThrough, Writable } from 'node:stream';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Backpressure } from '../../src/transports/backpressure.ts';
import { guarded } from '../hang-guard.ts';

/** A host that never reads its end: every chunk is held forever. */
function deafHost(): { output: Writable; chunks: string[] } {
  const chunks: string[] = [];
  const output = new Writable({ highWaterMark: 8, write(chunk: Buffer, _encoding, _callback) { chunks.push(String(chunk)); } });
  return { output, chunks };
}

test('a full stream pauses the input; lines wait in order instead of being written', () => {
  const input = new PassThrough();
  input.on('data', () => undefined);
  const host = deafHost();
  const out = new Backpressure(host.output, input, 1024);
  out.send('first line, longer than the stream takes\n');
  out.send('second\n');
  out.send('third\n');
  assert.equal(host.chunks, ['first line, longer than the stream takes\n']);
  assert.ok(input.isPaused(), 'no request is read while its replies could not leave');
});

test('a host that never reads: past the backlog limit it is treated as gone, the input is read again, flush does not wait', async () => {
  const input = new PassThrough();
  input.on('data', () => undefined);
  const host = deafHost();
  const out = new Backpressure(host.output, input, 32);
  out.send('first line, longer than the stream takes\n');
  for (const n of [1, 2, 3, 4, 5]) out.send(`notification ${n}\n`);
  assert.not.ok(input.isPaused(), 'the input flows again, so the host\'s requests are still answered for');
  await guarded(out.flush(60_000), 'flush of an output whose host is gone');
  out.send('after\n');
  assert.equal(host.chunks, ['first line, longer than the stream takes\n']);
});

test.run();
