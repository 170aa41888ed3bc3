// Several writers on one database file, as several server processes would be: each conversation's seqs
// stay unique and increasing (1..n, whoever wrote them), each writer's order is kept, and everyone reads
// everyone's committed entries.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { databasePath, openStore } from '../../src/store/location.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import type { Entry } from '../../src/store/store.ts';
import { removeHome, startAppendChild, tempHome } from './helpers.ts';

let home: string;
test.before.each(async () => {
  home = await tempHome();
});
test.after.each(async () => {
  await removeHome(home);
});

const alice = { principal: 'alice', sessionId: 's', harness: 'super-pi-code' };

function assertStrictlyIncreasing(seqs: number[]): void {
  for (let i = 1; i < seqs.length; i++) assert.ok(seqs[i]! > seqs[i - 1]!, `seq ${seqs[i]} follows ${seqs[i - 1]}`);
}

function byTag(entries: Entry[], tag: string): Entry[] {
  return entries.filter((e) => (e.payload as { tag: string }).tag === tag);
}

test('two stores on one file, appending interleaved, share each conversation\'s sequence', () => {
  const one = openStore({ home });
  const two = SqliteConversationStore.open(databasePath(home));
  const a = one.createConversation(alice);
  const b = two.createConversation(alice);
  assert.is(two.getConversation(a.id, 'alice')?.id, a.id, 'the second store sees the first one\'s conversation');
  const written: Entry[] = [];
  for (let i = 0; i < 50; i++) {
    written.push(one.append(a.id, 'model', { tag: 'one', i }));
    written.push(two.append(a.id, 'model', { tag: 'two', i }));
    written.push(two.append(b.id, 'model', { tag: 'two-b', i }));
  }
  const ofA = written.filter((e) => e.conversationId === a.id);
  const ofB = written.filter((e) => e.conversationId === b.id);
  assert.equal(ofA.map((e) => e.seq), Array.from({ length: 100 }, (_, k) => k + 1), 'one sequence for a, across both stores');
  assert.equal(ofB.map((e) => e.seq), Array.from({ length: 50 }, (_, k) => k + 1));
  assert.equal(one.entries(a.id, 'alice'), ofA);
  assert.equal(one.entries(b.id, 'alice'), ofB);
  assert.equal(two.entries(a.id, 'alice'), one.entries(a.id, 'alice'));
  assert.equal(one.lastEntry(a.id), two.lastEntry(a.id));
  one.close();
  two.close();
});

test('two processes appending to one conversation at once: unique seqs, each process in its own order', async () => {
  const store = openStore({ home });
  const c = store.createConversation(alice);
  const count = 300;
  const children = [
    startAppendChild(home, c.id, count, 'p1', { ending: 'exit', waitForGo: true, pauseMs: 1 }),
    startAppendChild(home, c.id, count, 'p2', { ending: 'exit', waitForGo: true, pauseMs: 1 }),
  ];
  await Promise.all(children.map((child) => child.ready));
  for (const child of children) child.go();
  const runs = await Promise.all(children.map((child) => child.done));
  for (const run of runs) {
    assert.is(run.code, 0, run.stderr);
    assert.is(run.seqs.length, count);
    assertStrictlyIncreasing(run.seqs);
  }
  const entries = store.entries(c.id, 'alice', { limit: 10_000 }) ?? [];
  assert.is(entries.length, 2 * count);
  assertStrictlyIncreasing(entries.map((e) => e.seq));
  assert.equal(entries.map((e) => e.seq), Array.from({ length: 2 * count }, (_, k) => k + 1), 'the conversation counts 1..n across both processes');
  // The writes really were interleaved (not one process after the other), or the test proves little.
  const tags = entries.map((e) => (e.payload as { tag: string }).tag);
  const switches = tags.filter((t, k) => k > 0 && t !== tags[k - 1]).length;
  assert.ok(switches >= 10, `only ${switches} switches between the two writers`);
  for (const [i, tag] of ['p1', 'p2'].entries()) {
    const mine = byTag(entries, tag);
    assert.equal(mine.map((e) => (e.payload as { i: number }).i), Array.from({ length: count }, (_, k) => k));
    assert.equal(mine.map((e) => e.seq), runs[i]!.seqs, `${tag}: the seqs it was given are the ones stored`);
  }
  store.close();
});

test.run();
