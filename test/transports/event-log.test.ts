// The in-memory replay buffer of a session's GET stream (no store): bounded by events and by bytes, the
// oldest going first, and an event past the per-event cap kept as a small notice.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EventLog } from '../../src/transports/sse-stream.ts';

const remembered = (log: EventLog, n: number, data: (i: number) => string): string[] => {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = log.nextId();
    log.remember(id, data(i));
    ids.push(id);
  }
  return ids;
};

test('past its byte budget the oldest events are dropped, and the rest stay within it', () => {
  const log = new EventLog({ events: 1000, bytes: 1000, eventBytes: 500 });
  const ids = remembered(log, 9, (i) => `${i}`.repeat(300));
  assert.ok(log.bytes <= 1000, `kept ${log.bytes} bytes`);
  assert.equal(log.after(ids[6] as string)?.map((e) => e.id), ['8', '9'], 'the newest three are kept');
  assert.is(log.after(ids[5] as string), null, 'an id dropped for bytes reads as gone');
});

test('bytes are UTF-8 bytes: multi-byte characters count as what they take', () => {
  const log = new EventLog({ events: 1000, bytes: 1000, eventBytes: 1000 });
  const ids = remembered(log, 3, () => 'é'.repeat(200));
  assert.is(log.bytes, 800);
  assert.equal(log.after(ids[1] as string)?.map((e) => e.id), ['3']);
  assert.is(log.after(ids[0] as string), null, 'the first of three 400-byte events went');
});

test('past its count the oldest events are dropped, whatever their size', () => {
  const log = new EventLog({ events: 2, bytes: 1000, eventBytes: 1000 });
  const ids = remembered(log, 3, () => 'x');
  assert.is(log.after(ids[0] as string), null);
  assert.equal(log.after(ids[1] as string)?.map((e) => e.data), ['x']);
});

test('an event past the per-event cap is kept as a small notice, and does not push the others out', () => {
  const log = new EventLog({ events: 1000, bytes: 2000, eventBytes: 1000 });
  const [first] = remembered(log, 1, () => 'small');
  remembered(log, 1, () => JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { pad: 'x'.repeat(50_000) } }));
  const [notice] = log.after(first as string) ?? [];
  assert.ok(notice, 'the large event has its place');
  assert.ok(log.bytes < 2000, 'the notice is small');
  assert.match(notice?.data ?? '', 'too large to replay');
  assert.is((JSON.parse(notice?.data ?? '{}') as { method?: string }).method, 'notifications/message');
});

test.run();
