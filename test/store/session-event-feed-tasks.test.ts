// The node's change feed (src/store/session-event-feed.ts) for task status listeners: another node's
// status change (the `superpi_task_status` NOTIFY) reaches `taskStatusChanged`, and listening again after a
// lost connection calls `relistened`, so the watched tasks are read again (what was announced meanwhile
// was missed). The LISTEN connection is a stand-in: its handlers are called as the listener would.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type FeedStore, SessionEventFeed } from '../../src/store/session-event-feed.ts';
import { MemoryLog } from '../transports/memory-event-log.ts';

type Handlers = Parameters<FeedStore['listen']>[0];

test('a status NOTIFY goes to taskStatusChanged, a transcript one to transcriptChanged; each (re)connection calls relistened', async () => {
  let handlers: Handlers | null = null;
  const log = new MemoryLog();
  const store: FeedStore = Object.assign(log, {
    listen(h: Handlers) {
      handlers = h;
      return { ready: Promise.resolve(), close: async () => undefined };
    },
  });
  const heard: string[] = [];
  const feed = new SessionEventFeed(store, {
    transcriptChanged: (c) => heard.push(`transcript ${c}`),
    taskStatusChanged: (c) => heard.push(`status ${c}`),
    relistened: () => heard.push('relistened'),
    onError: (what, error) => heard.push(`error ${what}: ${error.message}`),
  });
  const h = handlers as Handlers | null;
  assert.ok(h, 'the feed listens');
  h.taskStatus?.('conv-1');
  h.transcript('conv-2');
  h.onConnected();
  assert.equal(heard, ['status conv-1', 'transcript conv-2', 'relistened']);
  await feed.close();
});

test.run();
