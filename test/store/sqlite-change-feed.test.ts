// SqliteChangeFeed (src/store/sqlite-change-feed.ts) on a real SQLite file with two stores (two
// connections, as two processes have): a change the other connection commits to a watched conversation
// is heard once (an append as a transcript change, a status as a status change); this connection's own
// changes, heard here, are not told again; nothing watched polls nothing and arms no timer; a tick reads
// at most `maxIds` conversations; close stops it.

import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type ChangeSource, SqliteChangeFeed } from '../../src/store/sqlite-change-feed.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import { FakeClock } from '../../src/time/fake-clock.ts';
import { removeHome, tempHome } from './helpers.ts';

const POLL_MS = 250;

interface Rig {
  /** This process's store: the feed polls its connection. */
  readonly here: SqliteConversationStore;
  /** Another process's store on the same file. */
  readonly there: SqliteConversationStore;
  readonly feed: SqliteChangeFeed;
  readonly clock: FakeClock;
  readonly watched: Set<string>;
  /** What the feed told, in order: `entry:<id>` or `status:<id>`. */
  readonly heard: string[];
  /** The feed's reads of the store: `version`, or `marks:<n ids>`. */
  readonly reads: string[];
  readonly errors: Error[];
  /** One poll interval passes. */
  tick(n?: number): void;
  /** A new conversation, created by `by`. */
  conversation(by?: SqliteConversationStore): string;
}

const t = suite('SqliteChangeFeed');
let home: string;
let rig: Rig;

function makeRig(maxIds?: number): Rig {
  const file = path.join(home, 'super-pi.db');
  const here = SqliteConversationStore.open(file);
  const there = SqliteConversationStore.open(file);
  const clock = new FakeClock();
  const watched = new Set<string>();
  const heard: string[] = [];
  const reads: string[] = [];
  const errors: Error[] = [];
  const counted: ChangeSource = {
    dataVersion: () => (reads.push('version'), here.dataVersion()),
    conversationMarks: (ids) => (reads.push(`marks:${ids.length}`), here.conversationMarks(ids)),
  };
  const feed = new SqliteChangeFeed({
    clock, intervalMs: POLL_MS, ...(maxIds === undefined ? {} : { maxIds }),
    watched: { count: () => watched.size, ids: () => watched },
    transcriptChanged: (id) => heard.push(`entry:${id}`),
    taskStatusChanged: (id) => heard.push(`status:${id}`),
    onError: (error) => errors.push(error),
  });
  feed.attach(counted);
  return {
    here, there, feed, clock, watched, heard, reads, errors,
    tick: (n = 1) => clock.advance(POLL_MS * n),
    conversation: (by = there) => by.createConversation({ principal: 'local', sessionId: 's', harness: 'super-pi-assistant' }).id,
  };
}

const watch = (id: string) => {
  rig.watched.add(id);
  rig.feed.watch(id);
};

t.before.each(async () => {
  home = await tempHome();
});
t.after.each(async () => {
  rig.feed.close();
  rig.here.close();
  rig.there.close();
  await removeHome(home);
});

t('nothing watched: no timer is armed and nothing is read, whatever the other connection commits', () => {
  rig = makeRig();
  const id = rig.conversation();
  rig.there.append(id, 'user', { text: 'hi' });
  rig.tick(20);
  assert.is(rig.feed.polling, false);
  assert.is(rig.clock.pendingTimers, 0);
  assert.equal(rig.reads, []);
  assert.equal(rig.heard, []);
});

t('another connection\'s append is heard once as a transcript change, its status change as a status change', () => {
  rig = makeRig();
  const id = rig.conversation();
  watch(id);
  assert.is(rig.feed.polling, true);
  rig.tick(3);
  assert.equal(rig.heard, [], 'nothing changed yet');
  rig.there.append(id, 'user', { text: 'hi' });
  rig.tick();
  assert.equal(rig.heard, [`entry:${id}`]);
  rig.there.setStatus(id, 'completed');
  rig.tick(3);
  assert.equal(rig.heard, [`entry:${id}`, `status:${id}`], 'each change once');
  const other = rig.conversation();
  rig.there.cancelRunningTask(other, 'local', { message: 'x' });
  rig.tick(3);
  assert.equal(rig.heard, [`entry:${id}`, `status:${id}`], 'an unwatched conversation is not told');
  assert.equal(rig.errors, []);
});

t('a cancel and an interruption by the other connection are heard (each moves the seq: an entry says why)', () => {
  rig = makeRig();
  const a = rig.conversation();
  const b = rig.conversation();
  watch(a);
  watch(b);
  rig.there.cancelRunningTask(a, 'local', { message: 'cancelled', status: 'cancelled' });
  rig.there.claimTask(b, {});
  rig.tick();
  assert.equal(rig.heard.sort(), [`entry:${a}`, `status:${b}`].sort());
  rig.there.setStatus(b, 'input_required');
  rig.tick();
  assert.equal(rig.heard.filter((h) => h === `status:${b}`).length, 2, 'parked is heard too');
});

t('without another connection committing, a tick reads the version and nothing else', () => {
  rig = makeRig();
  const id = rig.conversation(rig.here);
  watch(id);
  rig.reads.length = 0;
  rig.here.append(id, 'user', { text: 'mine' });
  rig.feed.heardHere(id, 'entry');
  rig.reads.length = 0;
  rig.tick(4);
  assert.equal(rig.reads, ['version', 'version', 'version', 'version'], 'this connection\'s own commits do not move data_version');
  assert.equal(rig.heard, []);
});

t('this process\'s own change, heard here, is not told again when the other connection commits something else', () => {
  rig = makeRig();
  const id = rig.conversation(rig.here);
  watch(id);
  rig.here.append(id, 'user', { text: 'mine' });
  rig.feed.heardHere(id, 'entry');
  rig.here.setStatus(id, 'completed');
  rig.feed.heardHere(id, 'status');
  rig.conversation(rig.there); // the version moves: the watched conversation is compared
  rig.tick(2);
  assert.ok(rig.reads.includes('marks:1'), 'compared');
  assert.equal(rig.heard, []);
});

t('an own change not heard here is told once (harmless: the watches read the store and send only what moved)', () => {
  rig = makeRig();
  const id = rig.conversation(rig.here);
  watch(id);
  rig.here.append(id, 'user', { text: 'mine' });
  rig.conversation(rig.there);
  rig.tick(3);
  assert.equal(rig.heard, [`entry:${id}`]);
});

t('the other connection\'s append absorbed by a status heard here is still told to the transcript\'s listeners', () => {
  rig = makeRig();
  const id = rig.conversation();
  watch(id);
  rig.there.append(id, 'model', { text: 'theirs' });
  rig.feed.heardHere(id, 'status'); // this process told only the status's listeners
  assert.equal(rig.heard, [`entry:${id}`]);
  rig.tick(3);
  assert.equal(rig.heard, [`entry:${id}`], 'and not again at the next tick');
});

t('a second watch of a conversation keeps the first one\'s start: a change not yet compared is still told', () => {
  rig = makeRig();
  const id = rig.conversation();
  watch(id);
  rig.there.append(id, 'user', { text: 'hi' });
  watch(id);
  rig.tick();
  assert.equal(rig.heard, [`entry:${id}`]);
});

t('a tick reads at most maxIds conversations; the rest are read over the next ticks', () => {
  rig = makeRig(2);
  const ids = [1, 2, 3, 4, 5].map(() => rig.conversation());
  for (const id of ids) watch(id);
  for (const id of ids) rig.there.append(id, 'user', { text: 'hi' });
  rig.reads.length = 0;
  rig.tick();
  assert.equal(rig.reads, ['version', 'marks:2']);
  rig.tick(2);
  assert.equal(rig.reads.filter((r) => r.startsWith('marks')), ['marks:2', 'marks:2', 'marks:1']);
  assert.equal(rig.heard.sort(), ids.map((id) => `entry:${id}`).sort());
});

t('once nothing is watched the timer stops and nothing more is read; close stops it too', () => {
  rig = makeRig();
  const id = rig.conversation();
  watch(id);
  rig.watched.delete(id);
  rig.tick();
  assert.is(rig.feed.polling, false);
  assert.is(rig.clock.pendingTimers, 0);
  rig.reads.length = 0;
  rig.there.append(id, 'user', { text: 'hi' });
  rig.tick(5);
  assert.equal(rig.reads, []);
  watch(id);
  assert.is(rig.feed.polling, true);
  rig.feed.close();
  assert.is(rig.feed.polling, false);
  assert.is(rig.clock.pendingTimers, 0);
  rig.feed.watch(id);
  assert.is(rig.feed.polling, false, 'a closed feed polls nothing');
});

t('a failing poll is reported and the next one tries again', () => {
  rig = makeRig();
  const id = rig.conversation();
  watch(id);
  rig.here.close();
  rig.tick();
  assert.is(rig.errors.length, 1);
  assert.match(rig.errors[0]!.message, 'closed');
});

t.run();
