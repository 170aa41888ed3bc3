// SSE keep-alive on a FakeClock: a stream silent for the interval gets a `: keep-alive` comment (at most a
// quarter interval late), a write puts it off, a full socket buffer skips it, an ended or closed stream
// gets none; one unref'd timer serves every stream and runs only while there is one; comments take no
// event id. WebReply says when its body's reader is behind.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Clock, TimerOptions } from '../../src/time/clock.ts';
import { FakeClock } from '../../src/time/fake-clock.ts';
import { KEEPALIVE_COMMENT, KeepAlive, type StreamBacklog } from '../../src/transports/sse-keepalive.ts';
import { EventLog, MemoryEventIds, SseStream } from '../../src/transports/sse-stream.ts';
import { Exchange } from '../../src/transports/http-session.ts';
import { BODY_HIGH_WATER_BYTES, type ReplyTarget, WebReply } from '../../src/transports/web-reply.ts';
import { SSE_OPEN_AFTER_MS } from '../../src/limits.ts';

/** Enough of a ServerResponse: what was written, a settable full buffer, and its 'close'. */
class FakeResponse {
  body = '';
  ended = false;
  destroyed = false;
  headersSent = false;
  writableNeedDrain = false;
  writableLength = 0;
  destroyCalls = 0;
  #onClose: (() => void)[] = [];
  writeHead() {
    return this;
  }
  flushHeaders() {
    this.headersSent = true;
  }
  write(chunk: string) {
    this.body += chunk;
    return true;
  }
  end(chunk?: string) {
    if (chunk) this.body += chunk;
    this.ended = true;
    return this;
  }
  on(_event: 'close', f: () => void) {
    this.#onClose.push(f);
    return this;
  }
  destroy() {
    this.destroyCalls += 1;
    this.hangUp();
  }
  /** The client goes away. */
  hangUp() {
    this.destroyed = true;
    for (const f of this.#onClose) f();
  }
}

const INTERVAL = 100;
const comments = (body: string) => body.split(KEEPALIVE_COMMENT).length - 1;

function setup(backlog: StreamBacklog = { maxBytes: 1024 * 1024 }) {
  const clock = new FakeClock();
  const keepAlive = new KeepAlive(INTERVAL, clock, backlog);
  const open = () => {
    const res = new FakeResponse();
    const stream = new SseStream(res as unknown as ReplyTarget, {}, keepAlive);
    return { res, stream };
  };
  return { clock, keepAlive, open };
}

test('a stream silent for the interval gets a comment, at most a quarter interval late, then one per interval', () => {
  const { clock, open } = setup();
  const { res } = open();
  clock.advance(INTERVAL - 1);
  assert.is(comments(res.body), 0, 'none before the interval');
  clock.advance(INTERVAL / 4 + 1);
  assert.is(res.body, KEEPALIVE_COMMENT, 'one comment, nothing else');
  clock.advance(INTERVAL - 1);
  assert.is(comments(res.body), 1);
  clock.advance(1);
  assert.is(comments(res.body), 2, 'an idle stream gets one every interval');
  clock.advance(10 * INTERVAL);
  assert.is(comments(res.body), 12);
});

test('a write puts the comment off: a stream written at least once per interval gets none', () => {
  const { clock, open } = setup();
  const { res, stream } = open();
  for (let i = 0; i < 20; i++) {
    clock.advance(INTERVAL * 0.7);
    stream.send(String(i), '{}');
  }
  assert.is(comments(res.body), 0);
  // Last written at 1400 ms: silent from there, the comment comes within [1500, 1525].
  clock.advance(INTERVAL - 1);
  assert.is(comments(res.body), 0);
  clock.advance(INTERVAL / 4 + 1);
  assert.is(comments(res.body), 1);
  assert.ok(res.body.endsWith(`id: 19\nevent: message\ndata: {}\n\n${KEEPALIVE_COMMENT}`));
});

test('a full socket buffer gets no comment; it comes at the next sweep once the buffer drained', () => {
  const { clock, open } = setup();
  const { res } = open();
  res.writableNeedDrain = true;
  clock.advance(5 * INTERVAL);
  assert.is(comments(res.body), 0, 'nothing added to a full buffer');
  res.writableNeedDrain = false;
  clock.advance(INTERVAL / 4);
  assert.is(comments(res.body), 1, 'at the next sweep');
});

test('an ended stream and one whose client went get no comment, and leave the sweep', () => {
  const { clock, keepAlive, open } = setup();
  const ended = open();
  const gone = open();
  const kept = open();
  assert.is(keepAlive.size, 3);
  ended.stream.end();
  gone.res.hangUp();
  assert.is(keepAlive.size, 1);
  clock.advance(3 * INTERVAL);
  assert.is(ended.res.body, '');
  assert.is(gone.res.body, '');
  assert.is(comments(kept.res.body), 2);
  kept.stream.end();
  assert.is(keepAlive.size, 0);
  assert.is(clock.pendingTimers, 0, 'no timer once no stream is open');
});

test('a stream opened on a reply whose client already went is closed at once: no sweep holds it', () => {
  const { clock, keepAlive } = setup();
  const res = new FakeResponse();
  res.destroyed = true;
  const stream = new SseStream(res as unknown as ReplyTarget, {}, keepAlive);
  assert.not.ok(stream.open);
  assert.is(keepAlive.size, 0);
  assert.is(clock.pendingTimers, 0);
});

test('one timer for a thousand streams, armed unref\'d; cleared when the last closes, armed again by the next', () => {
  const fake = new FakeClock();
  const armed: (TimerOptions | undefined)[] = [];
  const clock: Clock = {
    now: () => fake.now(),
    setTimeout: (fn, ms) => fake.setTimeout(fn, ms),
    clearTimeout: (h) => fake.clearTimeout(h),
    setInterval: (fn, ms, options) => {
      armed.push(options);
      return fake.setInterval(fn, ms);
    },
    clearInterval: (h) => fake.clearInterval(h),
  };
  const keepAlive = new KeepAlive(INTERVAL, clock);
  const streams = Array.from({ length: 1000 }, () => {
    const res = new FakeResponse();
    return { res, stream: new SseStream(res as unknown as ReplyTarget, {}, keepAlive) };
  });
  assert.is(fake.pendingTimers, 1);
  assert.equal(armed, [{ unref: true }]);
  fake.advance(INTERVAL + INTERVAL / 4);
  assert.ok(streams.every((s) => s.res.body === KEEPALIVE_COMMENT));
  for (const s of streams) s.stream.end();
  assert.is(fake.pendingTimers, 0);
  const res = new FakeResponse();
  new SseStream(res as unknown as ReplyTarget, {}, keepAlive);
  assert.is(fake.pendingTimers, 1);
  assert.is(armed.length, 2);
  fake.advance(INTERVAL + INTERVAL / 4);
  assert.is(res.body, KEEPALIVE_COMMENT);
});

test('a comment on a POST\'s stream takes no event id: the answer after it is event 1', async () => {
  const clock = new FakeClock();
  const keepAlive = new KeepAlive(INTERVAL, clock);
  const res = new FakeResponse();
  const ex = new Exchange(res as unknown as ReplyTarget, new Set(['n:1']), 'sse', false, {}, new MemoryEventIds(new EventLog()), [], keepAlive);
  // The stream opens after SSE_OPEN_AFTER_MS of silence (a real timer).
  await new Promise((r) => setTimeout(r, SSE_OPEN_AFTER_MS + 100));
  assert.ok(res.headersSent);
  clock.advance(3 * INTERVAL);
  assert.is(comments(res.body), 2);
  ex.answer('n:1', { line: '{"jsonrpc":"2.0","id":1,"result":{}}', inReplyTo: 1 });
  assert.is(res.body, `${KEEPALIVE_COMMENT}${KEEPALIVE_COMMENT}id: 1\nevent: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n`);
  assert.ok(res.ended);
  assert.is(keepAlive.size, 0);
});

test('an interval under 1 ms is refused, and so is a backlog under 1 byte', () => {
  assert.throws(() => new KeepAlive(0), /at least 1 ms/);
  assert.throws(() => new KeepAlive(Number.NaN), /at least 1 ms/);
  assert.throws(() => new KeepAlive(100, new FakeClock(), { maxBytes: 0 }), /at least 1 byte/);
  assert.throws(() => new KeepAlive(100, new FakeClock(), { maxBytes: Number.NaN }), /at least 1 byte/);
});

test('a stream whose client leaves more than the backlog unread is ended: the reply destroyed, the overflow reported once, nothing written after', () => {
  const overflows: number[] = [];
  const { keepAlive, open } = setup({ maxBytes: 1000, onOverflow: (bytes) => overflows.push(bytes) });
  const { res, stream } = open();
  const closed: string[] = [];
  stream.onClose(() => closed.push('closed'));
  res.writableLength = 1000;
  stream.send('1', 'x');
  assert.ok(stream.open, 'at the limit: still open');
  assert.equal(overflows, []);
  res.writableLength = 1001;
  stream.send('2', 'y');
  assert.not.ok(stream.open, 'past it: ended');
  assert.is(res.destroyCalls, 1, 'its unread bytes dropped');
  assert.equal(overflows, [1001]);
  assert.equal(closed, ['closed'], 'its owner hears it closed, once');
  assert.is(keepAlive.size, 0, 'the sweep lets it go');
  const before = res.body;
  stream.send('3', 'z');
  stream.end();
  assert.is(res.body, before, 'nothing written to an ended stream');
  assert.is(res.destroyCalls, 1);
  assert.equal(overflows, [1001]);
});

test('a client that reads keeps its stream however much is sent: the backlog counts what is unread, not what was sent', () => {
  const overflows: number[] = [];
  const { open } = setup({ maxBytes: 100, onOverflow: (bytes) => overflows.push(bytes) });
  const { res, stream } = open();
  for (let i = 0; i < 1000; i++) stream.send(String(i), 'a'.repeat(50));
  assert.ok(res.body.length > 50_000);
  assert.ok(stream.open);
  assert.equal(overflows, []);
});

test('WebReply: its body is full while the reader has not taken what was written, and not once it has', async () => {
  const reply = new WebReply();
  assert.not.ok(reply.writableNeedDrain, 'nothing written yet');
  reply.writeHead(200, { 'Content-Type': 'text/event-stream' });
  reply.flushHeaders();
  const body = (await reply.response).body as ReadableStream<Uint8Array>;
  assert.not.ok(reply.writableNeedDrain, 'an empty queue');
  reply.write('data: 1\n\n');
  assert.ok(reply.writableNeedDrain, 'a chunk the reader has not taken');
  const reader = body.getReader();
  const first = await reader.read();
  assert.is(new TextDecoder().decode(first.value), 'data: 1\n\n');
  assert.not.ok(reply.writableNeedDrain, 'taken');
  reply.end();
  assert.not.ok(reply.writableNeedDrain, 'ended');
});

test('WebReply: a write past the body\'s high-water mark says false, and \'drain\' comes once the reader took enough (a forwarded reply waits for it)', async () => {
  const reply = new WebReply();
  reply.writeHead(200, { 'Content-Type': 'text/event-stream' });
  reply.flushHeaders();
  const body = (await reply.response).body as ReadableStream<Uint8Array>;
  const half = `data: ${'x'.repeat(BODY_HIGH_WATER_BYTES / 2)}\n\n`;
  assert.ok(reply.write(half), 'under the mark');
  assert.is(reply.write(half), false, 'past the mark: the writer should wait');
  let drained = 0;
  reply.once('drain', () => drained++);
  const reader = body.getReader();
  await reader.read();
  await reader.read();
  assert.is(drained, 1, "'drain' once the reader took what was queued");
  reply.end();
});

test('WebReply: writableLength counts the bytes its reader has not taken; destroy cuts the body with an error and closes the reply', async () => {
  const reply = new WebReply();
  const closed: string[] = [];
  reply.on('close', () => closed.push('close'));
  assert.is(reply.writableLength, 0);
  reply.writeHead(200, { 'Content-Type': 'text/event-stream' });
  reply.flushHeaders();
  const body = (await reply.response).body as ReadableStream<Uint8Array>;
  reply.write('é'.repeat(10));
  reply.write('x'.repeat(100_000));
  assert.is(reply.writableLength, 100_020, 'bytes, not characters or chunks, past the high-water mark');
  const reader = body.getReader();
  await reader.read();
  assert.is(reply.writableLength, 100_000, 'the first chunk taken');
  reply.destroy();
  assert.ok(reply.destroyed);
  assert.equal(closed, ['close']);
  assert.is(reply.writableLength, 0);
  try {
    await reader.read();
    assert.unreachable('the body errors');
  } catch (err) {
    assert.match((err as Error).message, /too much output unread/);
  }
  reply.write('more');
  reply.destroy();
  assert.equal(closed, ['close'], 'once');
});

test.run();
