// A POST's reply: plain JSON when every answer comes before anything needs streaming; an SSE stream
// opened by the first progress notification or server request, or after SSE_OPEN_AFTER_MS of silence.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ReplyTarget } from '../../src/transports/web-reply.ts';
import type { Outgoing } from '../../src/mcp/outgoing.ts';
import { Exchange } from '../../src/transports/http-session.ts';
import { SSE_OPEN_AFTER_MS } from '../../src/limits.ts';
import { EventLog, MemoryEventIds } from '../../src/transports/sse-stream.ts';

/** Just enough of a ServerResponse to see what was written. */
class FakeResponse {
  status = 0;
  headers: Record<string, string> = {};
  body = '';
  ended = false;
  destroyed = false;
  writeHead(status: number, headers: Record<string, string>) {
    this.status = status;
    this.headers = headers;
    return this;
  }
  flushHeaders() {}
  write(chunk: string) {
    this.body += chunk;
    return true;
  }
  end(chunk?: string) {
    if (chunk) this.body += chunk;
    this.ended = true;
    return this;
  }
  on() {
    return this;
  }
}

const line = (id: number) => `{"jsonrpc":"2.0","id":${id},"result":{}}`;
const answer = (id: number): Outgoing => ({ line: line(id), inReplyTo: id });
const progress = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}';

function exchange(mode: 'json' | 'sse', ids: number[], batch = false) {
  const res = new FakeResponse();
  const ex = new Exchange(res as unknown as ReplyTarget, new Set(ids.map((i) => `n:${i}`)), mode, batch, { 'Mcp-Session-Id': 's' }, new MemoryEventIds(new EventLog()));
  return { res, ex };
}

test('a tools/call answered at once gets one JSON reply: no stream', () => {
  const { res, ex } = exchange('sse', [1]);
  ex.answer('n:1', answer(1));
  assert.is(res.status, 200);
  assert.is(res.headers['Content-Type'], 'application/json');
  assert.is(res.headers['Mcp-Session-Id'], 's');
  assert.is(res.body, line(1));
  assert.ok(res.ended && ex.finished);
});

test('a batch answered at once gets one JSON array', () => {
  const { res, ex } = exchange('sse', [1, 2], true);
  ex.answer('n:2', answer(2));
  assert.not.ok(res.ended);
  ex.answer('n:1', answer(1));
  assert.is(res.body, `[${line(2)},${line(1)}]`);
});

test('a push opens the stream: earlier answers go first, then the push, then the rest, each as an event', () => {
  const { res, ex } = exchange('sse', [1, 2], true);
  ex.answer('n:1', answer(1));
  assert.ok(ex.push(progress));
  assert.is(res.headers['Content-Type'], 'text/event-stream');
  ex.answer('n:2', answer(2));
  assert.is(res.body, `id: 1\nevent: message\ndata: ${line(1)}\n\nid: 2\nevent: message\ndata: ${progress}\n\nid: 3\nevent: message\ndata: ${line(2)}\n\n`);
  assert.ok(res.ended);
});

test('a POST without a tools/call never streams: pushes go elsewhere', () => {
  const { res, ex } = exchange('json', [1]);
  assert.is(ex.push(progress), false);
  ex.answer('n:1', answer(1));
  assert.is(res.body, line(1));
});

test(`a silent call opens its stream after ${SSE_OPEN_AFTER_MS} ms, so headers and keep-alives flow`, async () => {
  const { res, ex } = exchange('sse', [1]);
  await new Promise((r) => setTimeout(r, SSE_OPEN_AFTER_MS + 100));
  assert.is(res.headers['Content-Type'], 'text/event-stream');
  ex.answer('n:1', answer(1));
  assert.is(res.body, `id: 1\nevent: message\ndata: ${line(1)}\n\n`);
  assert.ok(res.ended);
});

test('an abandoned exchange (client gone) writes nothing and opens nothing', async () => {
  const { res, ex } = exchange('sse', [1]);
  ex.abandon();
  assert.is(ex.push(progress), false);
  await new Promise((r) => setTimeout(r, SSE_OPEN_AFTER_MS + 100));
  assert.is(res.status, 0);
  assert.is(res.body, '');
});

test.run();
