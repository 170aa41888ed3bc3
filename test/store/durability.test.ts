// Durability across processes: an entry whose append returned is on disk, even when its process then
// exits without closing the store or is killed with SIGKILL at any moment.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openStore } from '../../src/store/location.ts';
import type { Entry } from '../../src/store/store.ts';
import { type ChildRun, removeHome, startAppendChild, tempHome } from './helpers.ts';

let home: string;
let conversationId: string;
test.before.each(async () => {
  home = await tempHome();
  const store = openStore({ home });
  conversationId = store.createConversation({ principal: 'alice', sessionId: 's', harness: 'super-pi-code' }).id;
  store.close();
});
test.after.each(async () => {
  await removeHome(home);
});

/** Every entry of the conversation, read by a fresh store in this process. */
function reopenAndRead(): Entry[] {
  const store = openStore({ home });
  try {
    return store.entries(conversationId, 'alice', { limit: 100_000 }) ?? [];
  } finally {
    store.close();
  }
}

/** The entries are the child's appends 0..n-1, each exactly once, in order, with the seqs it reported. */
function assertPrefix(entries: Entry[], run: ChildRun, n: number): void {
  assert.is(entries.length, n, `${n} entries expected, ${entries.length} found; child stderr: ${run.stderr}`);
  assert.equal(entries.map((e) => (e.payload as { i: number }).i), Array.from({ length: n }, (_, i) => i));
  assert.equal(entries.slice(0, run.seqs.length).map((e) => e.seq), run.seqs);
}

const N = 200;

test('a process that appends N entries and exits without closing the store loses none', async () => {
  const run = await startAppendChild(home, conversationId, N, 'exit', { ending: 'exit' }).done;
  assert.is(run.code, 0, run.stderr);
  assert.is(run.seqs.length, N);
  assertPrefix(reopenAndRead(), run, N);
});

test('a process SIGKILLed right after its last append returns loses none', async () => {
  const run = await startAppendChild(home, conversationId, N, 'kill', { ending: 'sigkill' }).done;
  assert.is(run.signal, 'SIGKILL', run.stderr);
  assert.is(run.seqs.length, N);
  assertPrefix(reopenAndRead(), run, N);
});

test('a process SIGKILLed mid-stream keeps every entry whose append had returned, and nothing torn', async () => {
  const run = await startAppendChild(home, conversationId, 1_000_000, 'mid', { ending: 'exit', killAfter: 150 }).done;
  assert.is(run.signal, 'SIGKILL', run.stderr);
  const entries = reopenAndRead();
  // Reported appends are durable; at most the one in flight when the kill landed (committed, not yet
  // reported) is there too, plus any the child reported into the pipe after the parent decided to kill.
  assert.ok(entries.length >= run.seqs.length, `${entries.length} entries, ${run.seqs.length} reported`);
  assert.ok(entries.length <= run.seqs.length + 1, `${entries.length} entries, ${run.seqs.length} reported`);
  assertPrefix(entries, run, entries.length);
  // The database is consistent afterwards: a new writer continues the sequence.
  const store = openStore({ home });
  const next = store.append(conversationId, 'final', 'after the crash');
  assert.ok(next.seq > entries.at(-1)!.seq);
  store.close();
});

test.run();
