import { PassThrough, Writable } from 'node:stream';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Outgoing } from '../../src/mcp/outgoing.ts';
import type { FrameEvent } from '../../src/transports/line-framer.ts';
import type { SessionHost } from '../../src/transports/session-host.ts';
import { serveStdio } from '../../src/transports/stdio.ts';
import { EOF_DRAIN_MS, STDIO_REPLIES_PER_WRITE } from '../../src/limits.ts';
import { guarded } from '../hang-guard.ts';

/** What these tests record of a session: the frames, drains, answers and close the transport asks for. */
interface LineSession {
  receiveFrame(frame: FrameEvent): void;
  drain?(ms: number): Promise<void>;
  answerInFlight?(reason: string): void;
  close(): Promise<void>;
}

/** A session host whose one session is `make`'s: serveStdio opens it, delivers to it, closes it. */
function hostFor(make: (send: (out: Outgoing) => void) => LineSession): Pick<SessionHost, 'open' | 'close'> {
  let session: LineSession | null = null;
  return {
    open: async (options) => {
      const opened = make(options.send);
      session = opened;
      return {
        id: 'stdio-session', principal: options.principal, transport: options.transport, lastActivity: 0, inFlight: 0, pendingInput: 0,
        whenInputBelow: () => Promise.resolve(),
        deliver: (frame) => opened.receiveFrame(frame),
        touch: () => undefined,
        busy: () => false,
        watching: () => false,
        drain: (ms) => opened.drain?.(ms) ?? Promise.resolve(),
        answerInFlight: (reason) => opened.answerInFlight?.(reason),
      };
    },
    close: async () => {
      await session?.close();
    },
  };
}

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
  const served = serveStdio({ input, output, maxMessageBytes: 1024 }, hostFor((send) => ({
    receiveFrame: (frame) => {
      // One frame, three replies in the same turn.
      if (frame.kind === 'line') for (const n of [1, 2, 3]) send({ line: `{"n":${n}}` });
    },
    close: async () => undefined,
  })));
  await new Promise((r) => setImmediate(r));
  input.end('{"go":1}\n');
  await served;
  assert.equal(writes, ['{"n":1}\n{"n":2}\n{"n":3}\n']);
});

test('many lines in one turn leave in writes of STDIO_REPLIES_PER_WRITE, the rest at the end of the turn, all in order', async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  const writes: string[] = [];
  output.on('data', (d: Buffer) => writes.push(d.toString()));
  const count = STDIO_REPLIES_PER_WRITE * 2 + 3;
  const served = serveStdio({ input, output, maxMessageBytes: 1024 }, hostFor((send) => ({
    receiveFrame: (frame) => {
      if (frame.kind === 'line') for (let n = 0; n < count; n++) send({ line: `{"n":${n}}` });
    },
    close: async () => undefined,
  })));
  await new Promise((r) => setImmediate(r));
  input.end('{"go":1}\n');
  await served;
  assert.equal(writes.map((w) => w.split('\n').length - 1), [STDIO_REPLIES_PER_WRITE, STDIO_REPLIES_PER_WRITE, 3]);
  assert.is(writes.join(''), Array.from({ length: count }, (_, n) => `{"n":${n}}\n`).join(''));
});

test('stop: reading ends at once, then the session drains for stopDrainMs, answers what is left, closes', async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  const stop = new AbortController();
  const events: string[] = [];
  const served = serveStdio({ input, output, maxMessageBytes: 1024, stop: stop.signal, stopDrainMs: 1234 }, hostFor(() => recordingSession(events)));
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
  const served = serveStdio({ input, output, maxMessageBytes: 1024 }, hostFor(() => recordingSession(events)));
  await new Promise((r) => setImmediate(r));
  input.end('{"a":1}\n{"b":2}');
  await served;
  assert.equal(events, ['frame {"a":1}', 'frame {"b":2}', `drain ${EOF_DRAIN_MS}`, 'answer the host closed the input', 'close']);
});

test('a stop after the end of input changes nothing: the session is closed once', async () => {
  const input = new PassThrough();
  const stop = new AbortController();
  const events: string[] = [];
  const served = serveStdio({ input, output: new PassThrough(), maxMessageBytes: 1024, stop: stop.signal }, hostFor(() => recordingSession(events)));
  await new Promise((r) => setImmediate(r));
  input.end();
  await new Promise((r) => setImmediate(r));
  stop.abort();
  await served;
  assert.is(events.filter((e) => e === 'close').length, 1);
});

/**
 * A host that reads its end of stdout only when told to: each chunk is held until `readOne`. Counts the
 * writes made while the stream had asked the writer to wait for 'drain'.
 */
function slowReader() {
  const received: string[] = [];
  const held: (() => void)[] = [];
  const output = new Writable({
    highWaterMark: 16,
    write(chunk: Buffer, _encoding, callback) {
      received.push(String(chunk));
      held.push(() => callback());
    },
  });
  let writesWhileFull = 0;
  const write = output.write.bind(output) as (...args: unknown[]) => boolean;
  output.write = ((...args: unknown[]) => {
    if (output.writableNeedDrain) writesWhileFull++;
    return write(...args);
  }) as typeof output.write;
  const readOne = async (): Promise<boolean> => {
    const next = held.shift();
    next?.();
    await new Promise((r) => setImmediate(r));
    return next !== undefined;
  };
  return { output, received, readOne, writesWhileFull: () => writesWhileFull };
}

test('a slow host: no write while stdout is full, no request read until it drains, every line delivered in order', async () => {
  const input = new PassThrough();
  const reader = slowReader();
  const frames: string[] = [];
  const session: LineSession = {
    receiveFrame: (frame) => {
      const text = frame.kind === 'line' ? frame.text : frame.kind;
      frames.push(text);
      for (const n of [1, 2, 3]) send({ line: `reply ${n} to ${text}` });
    },
    close: async () => undefined,
  };
  let send: (out: Outgoing) => void = () => undefined;
  const served = serveStdio({ input, output: reader.output, maxMessageBytes: 1024 }, hostFor((s) => {
    send = s;
    return session;
  }));
  await new Promise((r) => setImmediate(r));
  input.write('{"a":1}\n');
  await new Promise((r) => setImmediate(r));
  input.write('{"b":2}\n');
  await new Promise((r) => setImmediate(r));
  assert.equal(frames, ['{"a":1}'], 'the second request waits while the first replies cannot leave');
  assert.equal(reader.received, ['reply 1 to {"a":1}\nreply 2 to {"a":1}\nreply 3 to {"a":1}\n'], 'the turn\'s lines in one write, then the transport waits for drain');
  input.end();
  let ended = false;
  void served.then(() => (ended = true));
  // The host reads one chunk at a time until the transport has flushed and ended.
  await guarded((async () => {
    while (!ended) await reader.readOne();
  })(), 'serveStdio ending while the slow host reads');
  assert.equal(frames, ['{"a":1}', '{"b":2}']);
  assert.equal(reader.received.join(''), ['a":1}', 'b":2}'].flatMap((id) => [1, 2, 3].map((n) => `reply ${n} to {"${id}\n`)).join(''));
  assert.is(reader.writesWhileFull(), 0);
});

test.run();
