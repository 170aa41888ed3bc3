// What the observer page reads of a task's transcript: a page of at most MAX_TRANSCRIPT_PAGE entries and
// OBSERVER_TRANSCRIPT_PAGE_BYTES of payload, cut by the store (a real SQLite file), so one request of the
// page never loads a conversation's large entries at once; the page walks on from the last seq it has.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { sqliteBackend } from '../store/backends.ts';
import { MAX_TRANSCRIPT_PAGE, ObservedTasks } from '../../src/observer/observed-tasks.ts';
import { OBSERVER_TRANSCRIPT_PAGE_BYTES } from '../../src/limits.ts';

const payloadBytes = (payload: unknown): number => Buffer.byteLength(JSON.stringify(payload), 'utf8');

test('a transcript page holds at most OBSERVER_TRANSCRIPT_PAGE_BYTES of payload; walking it gets every entry once', async () => {
  const db = await sqliteBackend.database();
  const store = await db.open({});
  try {
    const c = await store.createConversation({ principal: 'alice', sessionId: 's', harness: 'super-pi-code' });
    // 12 entries of 300 KiB: 3.5 MiB in all, a few pages' worth; then small ones past the last large one.
    const big = 'x'.repeat(300 * 1024);
    for (let i = 0; i < 12; i++) await store.append(c.id, 'tool_result', `${i}:${big}`);
    for (let i = 0; i < 5; i++) await store.append(c.id, 'user', `small ${i}`);
    const tasks = new ObservedTasks(() => 0);
    tasks.started({ id: 'task-1', conversationId: c.id, session: 'session-1', principal: { kind: 'local' }, ownerKey: 'alice', harness: 'super-pi-code' });

    const seen: number[] = [];
    let after = 0;
    let pages = 0;
    for (;;) {
      const page = await tasks.transcript(store, 'task-1', after);
      assert.ok(page !== null);
      if (page.length === 0) break;
      pages++;
      const bytes = page.reduce((sum, e) => sum + payloadBytes(e.payload), 0);
      assert.ok(page.length === 1 || bytes <= OBSERVER_TRANSCRIPT_PAGE_BYTES, `page ${pages}: ${bytes} bytes in ${page.length} entries`);
      assert.ok(page.length <= MAX_TRANSCRIPT_PAGE);
      seen.push(...page.map((e) => e.seq));
      after = page.at(-1)?.seq ?? after;
    }
    assert.equal(seen, Array.from({ length: 17 }, (_, i) => seen[0]! + i), 'every entry once, in order');
    assert.ok(pages >= 4, `3.5 MiB come in pages of at most 1 MiB (got ${pages})`);
    assert.is(await tasks.transcript(store, 'task-2', 0), null, 'no such task');
  } finally {
    await store.close();
    await db.drop();
  }
});

test.run();
