import { PassThrough } from 'node:stream';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EOF_DRAIN_MS, type LineSession, serveStdio } from '../../src/transports/stdio.ts';

/** A session that records what the transport does to it, in order. */
function recordingSession(events: string[]): LineSession {
  return {
    receiveFrame: (frame) => events.push(`frame ${frame.kind === 'line' ? frame.text : frame.kind}`),
    drain: async (ms) => { events.push(`drain ${ms}`); },
    answerInFlight: (reason) => events.push(`answer ${reason}`),
    close: async () => { events.push('close'); },
  };
}

test('the lines a session sends in one turn leave in one write, in order, each ending in a newline', async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  const writes: string[] = [];
  output.on('data', (d: Buffer) => writes.push(d.toString()));
  const served = serveStdio({ input, output, maxMessageBytes: 1024 }, (send) => ({
    receiveFrame: (frame) => {
      // One frame, three replies in the same turn.
      if (frame.kind === 'line') for (const n of [1, 2, 3]) send(`{"n":${n}}`);
    },
    close: async () => undefined,
  }));
  await new Promise((r) => setImmediate(r));
  input.end('{"go":1}\n');
  await served;
  assert.equal(writes, ['{"n":1}\n{"n":2}\n{"n":3}\n']);
});

test('stop: reading ends at once, then the session drains for stopDrainMs, answers what is left, closes', async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  const stop = new AbortController();
  const events: string[] = [];
  const served = serveStdio({ input, output, maxMessageBytes: 1024, stop: stop.signal, stopDrainMs: 1234 }, () => recordingSession(events));
  await new Promise((r) => setImmediate(r));
  input.write('{"a":1}\n{"partial');
  await new Promise((r) => setImmediate(r));
  stop.abort();
  input.write('":2}\n{"b":3}\n');
  await served;
  assert.equal(events, ['frame {"a":1}', 'drain 1234', 'answer the server is shutting down', 'close']);
  assert.ok(input.destroyed, 'the input is no longer read');
});

test('end of input: the last line is delivered, the session drains for EOF_DRAIN_MS, answers what is left, closes', async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  const events: string[] = [];
  const served = serveStdio({ input, output, maxMessageBytes: 1024 }, () => recordingSession(events));
  await new Promise((r) => setImmediate(r));
  input.end('{"a":1}\n{"b":2}');
  await served;
  assert.equal(events, ['frame {"a":1}', 'frame {"b":2}', `drain ${EOF_DRAIN_MS}`, 'answer the host closed the input', 'close']);
});

test('a stop after the end of input changes nothing: the session is closed once', async () => {
  const input = new PassThrough();
  const stop = new AbortController();
  const events: string[] = [];
  const served = serveStdio({ input, output: new PassThrough(), maxMessageBytes: 1024, stop: stop.signal }, () => recordingSession(events));
  await new Promise((r) => setImmediate(r));
  input.end();
  await new Promise((r) => setImmediate(r));
  stop.abort();
  await served;
  assert.is(events.filter((e) => e === 'close').length, 1);
});

test.run();
