// Ownership of running conversations: a conversation left `running` by a process that is gone is marked
// `interrupted` (with an entry saying so) when a store is next opened; one whose process still runs — in
// particular another super-pi on the same SUPERPI_HOME — is left alone, and a reused pid is not taken
// for the owner.

import { spawn } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { databasePath, openStore } from '../../src/store/location.ts';
import { decodeOwner, encodeOwner, type ProcessProbe, processOwnership, systemProbe } from '../../src/store/ownership.ts';
import { openSqlite } from '../../src/store/sqlite-driver.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import type { ExpiredTask } from '../../src/store/task-lease.ts';
import { ORPHAN_TASK_PATIENCE_MS } from '../../src/limits.ts';
import { ManualClock, removeHome, tempHome } from './helpers.ts';

let home: string;
test.before.each(async () => {
  home = await tempHome();
});
test.after.each(async () => {
  await removeHome(home);
});

const alice = { principal: 'alice', sessionId: 's', harness: 'super-pi-code' };

/** A fake process table: pid → start marker. */
function probe(table: Map<number, string>, host = 'here'): ProcessProbe {
  return { host, exists: (pid) => table.has(pid), startOf: (pid) => table.get(pid) ?? '' };
}

test('an owner key round-trips; anything else is not a process owner', () => {
  const id = { host: 'h', pid: 42, start: 'boot/123' };
  assert.equal(decodeOwner(encodeOwner(id)), id);
  for (const bad of ['', 'process:v1:', 'process:v1:[1,2]', 'process:v1:["h",-1,""]', 'lease:x']) assert.is(decodeOwner(bad), null, bad);
});

test('liveness: gone pid, reused pid and legacy owners are dead; live, other-host and unknown owners are alive', () => {
  const table = new Map([[10, 'boot/1'], [11, 'boot/99']]);
  const me = processOwnership(probe(table), 10);
  assert.ok(me.isAlive(me.self), 'itself');
  assert.ok(me.isAlive(encodeOwner({ host: 'here', pid: 11, start: 'boot/99' })), 'a live process');
  assert.not.ok(me.isAlive(encodeOwner({ host: 'here', pid: 12, start: 'boot/5' })), 'no such pid');
  assert.not.ok(me.isAlive(encodeOwner({ host: 'here', pid: 11, start: 'boot/7' })), 'the pid was reused by a later process');
  assert.ok(me.isAlive(encodeOwner({ host: 'here', pid: 11, start: '' })), 'no start marker: a taken pid counts as alive');
  assert.ok(me.isAlive(encodeOwner({ host: 'elsewhere', pid: 12, start: 'x' })), 'another host cannot be checked from here');
  assert.ok(me.isAlive('lease:node-2'), 'an owner key of another kind');
  assert.not.ok(me.isAlive(''), 'written before owners were recorded');
});

test('the system probe sees this process, and not one that has exited', async () => {
  assert.ok(systemProbe.exists(process.pid));
  const child = spawn(process.execPath, ['-e', '0']);
  const pid = child.pid ?? 0;
  await new Promise((resolve) => child.on('close', resolve));
  assert.not.ok(systemProbe.exists(pid));
  if (process.platform === 'linux') {
    assert.match(systemProbe.startOf(process.pid), /^[0-9a-f-]+\/\d+$/);
    assert.is(systemProbe.startOf(pid), '');
  }
});

test('opening the store marks conversations of a dead owner interrupted, with an entry; live owners are untouched', () => {
  const file = databasePath(home);
  const table = new Map([[100, 'b/1'], [200, 'b/2']]);
  const dead = SqliteConversationStore.open(file, { ownership: processOwnership(probe(table), 100) });
  const orphan = dead.createConversation(alice);
  dead.append(orphan.id, 'user', { text: 'go' });
  const finished = dead.createConversation(alice);
  dead.setStatus(finished.id, 'completed');
  const live = SqliteConversationStore.open(file, { ownership: processOwnership(probe(table), 200) });
  const running = live.createConversation(alice);
  dead.close();
  table.delete(100); // process 100 dies without closing anything

  const third = SqliteConversationStore.open(file, { ownership: processOwnership(probe(table), 300) });
  assert.is(third.getConversation(orphan.id, 'alice')?.status, 'interrupted');
  const last = third.lastEntry(orphan.id);
  assert.is(last?.type, 'interrupted');
  assert.is(last?.seq, 2);
  assert.match(String((last?.payload as { message: string }).message), `Continue it with conversation_id ${orphan.id}`);
  assert.is(third.getConversation(finished.id, 'alice')?.status, 'completed', 'only running conversations');
  assert.is(third.getConversation(running.id, 'alice')?.status, 'running', 'the live process keeps its task');
  assert.is(third.lastEntry(running.id), null);
  third.close();

  // Marked once: the next open finds nothing to do.
  const fourth = SqliteConversationStore.open(file, { ownership: processOwnership(probe(table), 300) });
  assert.equal(fourth.entries(orphan.id, 'alice')?.map((e) => e.type), ['user', 'interrupted']);
  fourth.close();
  live.close();
});

test('continuing an interrupted conversation makes this process its owner', () => {
  const file = databasePath(home);
  const table = new Map([[100, 'b/1'], [300, 'b/3']]);
  const first = SqliteConversationStore.open(file, { ownership: processOwnership(probe(table), 100) });
  const c = first.createConversation(alice);
  first.close();
  table.delete(100);
  const second = SqliteConversationStore.open(file, { ownership: processOwnership(probe(table), 300) });
  assert.is(second.getConversation(c.id, 'alice')?.status, 'interrupted');
  second.setStatus(c.id, 'running');
  second.close();
  // Process 300 is alive: its running conversation stays running however often the store is opened.
  openStore({ home, ownership: processOwnership(probe(table), 400) }).close();
  const check = openStore({ home, ownership: processOwnership(probe(table), 400) });
  assert.is(check.getConversation(c.id, 'alice')?.status, 'running');
  check.close();
});

test('with the real probe, another live process\'s running conversation is never interrupted', async () => {
  const store = openStore({ home });
  const c = store.createConversation(alice);
  store.close();
  // A second super-pi on the same SUPERPI_HOME (another process) opens the store while this one lives.
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', `
    import { openStore } from ${JSON.stringify(new URL('../../src/store/location.ts', import.meta.url).pathname)};
    const s = openStore({ home: ${JSON.stringify(home)} });
    process.stdout.write(s.getConversation(${JSON.stringify(c.id)}, 'alice').status);
    s.close();
  `], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise((resolve) => child.on('close', resolve));
  assert.is(out, 'running');
});

test('a store whose process continues orphans releases a dead owner\'s lease at open instead of interrupting: its first takeover wins at once, a second taker loses', () => {
  const file = databasePath(home);
  const table = new Map([[100, 'b/1'], [200, 'b/2'], [300, 'b/3'], [400, 'b/4']]);
  // A lease far longer than the test: only the release can make it lapse now.
  const leaseMs = 3_600_000;
  const dead = SqliteConversationStore.open(file, { ownership: processOwnership(probe(table), 100), leaseMs });
  const kept = dead.createConversation(alice);
  const lease = dead.claimTask(kept.id, { maxTurns: 4, local: false, forbidWrites: false });
  dead.append(kept.id, 'user', { text: 'go' }, lease.epoch);
  const bare = dead.createConversation(alice);
  const live = SqliteConversationStore.open(file, { ownership: processOwnership(probe(table), 200), leaseMs });
  const running = live.createConversation(alice);
  dead.close();
  table.delete(100);

  const asked: ExpiredTask[] = [];
  const taker = SqliteConversationStore.open(file, { ownership: processOwnership(probe(table), 300), leaseMs, judgeOrphan: (task) => (asked.push(task), task.setup !== null ? 'continue' : 'interrupt') });
  assert.equal(asked.map((t) => t.conversationId).sort(), [kept.id, bare.id].sort(), 'asked about the dead owner\'s tasks only');
  const { lapsedMs, ...seen } = asked.find((t) => t.conversationId === kept.id) ?? { lapsedMs: 0 };
  assert.equal(seen, { conversationId: kept.id, principal: 'alice', harness: 'super-pi-code', epoch: lease.epoch, setup: { maxTurns: 4, local: false, forbidWrites: false } });
  assert.ok(lapsedMs < 0, 'its lease has not lapsed yet: the owner died within its term');
  assert.is(taker.getConversation(kept.id, 'alice')?.status, 'running', 'left for the takeover');
  assert.is(taker.lastEntry(kept.id)?.type, 'user', 'no entry added');
  assert.is(taker.getConversation(bare.id, 'alice')?.status, 'interrupted', 'one this process cannot continue is marked as before');
  assert.is(taker.lastEntry(bare.id)?.type, 'interrupted');
  assert.is(taker.getConversation(running.id, 'alice')?.status, 'running');
  assert.equal(taker.expiredTasks(10).map((t) => t.conversationId), [kept.id], 'the released lease lapsed; the live owner\'s did not');

  // A second process opened on the file meanwhile sees the same lapsed lease: the epoch lets one win.
  const other = SqliteConversationStore.open(file, { ownership: processOwnership(probe(table), 400), leaseMs, judgeOrphan: () => 'continue' });
  const [found] = other.expiredTasks(10);
  const won = taker.takeOverTask(kept.id, lease.epoch);
  assert.is(won?.epoch, lease.epoch + 1);
  assert.is(other.takeOverTask(kept.id, found?.epoch ?? -1), null, 'the loser finds the row moved on');
  assert.equal(other.expiredTasks(10), [], 'nothing left to take');
  for (const s of [taker, other, live]) s.close();
});

test('an orphan another process may continue is left running at open until ORPHAN_TASK_PATIENCE_MS past its lease; the next open after that marks it interrupted, saying why', () => {
  const file = databasePath(home);
  const table = new Map([[100, 'b/1'], [300, 'b/3'], [400, 'b/4'], [500, 'b/5']]);
  const clock = new ManualClock();
  const leaseMs = 1000;
  const dead = SqliteConversationStore.open(file, { ownership: processOwnership(probe(table), 100), now: clock.now, leaseMs });
  const c = dead.createConversation(alice);
  dead.claimTask(c.id, { maxTurns: 4, local: false, forbidWrites: false, workspace: '/srv/other-project' });
  dead.close();
  table.delete(100);
  const open = (pid: number, options: { orphanPatienceMs?: number } = {}) => SqliteConversationStore.open(file, { ownership: processOwnership(probe(table), pid), now: clock.now, leaseMs, judgeOrphan: () => 'leave', ...options });

  // The default patience, to the millisecond: the lease lapsed ORPHAN_TASK_PATIENCE_MS - 1 ago.
  clock.tick(leaseMs + ORPHAN_TASK_PATIENCE_MS - 1);
  const early = open(300);
  assert.is(early.getConversation(c.id, 'alice')?.status, 'running', 'left for a process of its workspace');
  assert.is(early.lastEntry(c.id), null);
  early.close();
  clock.tick(1);
  const late = open(400);
  assert.is(late.getConversation(c.id, 'alice')?.status, 'interrupted');
  const message = String((late.lastEntry(c.id)?.payload as { message: string }).message);
  assert.match(message, `no process that could continue it took it over within ${ORPHAN_TASK_PATIENCE_MS / 1000} s of its lease lapsing`);
  assert.match(message, `Continue it with conversation_id ${c.id}`);
  late.close();
  assert.throws(() => open(500, { orphanPatienceMs: -1 }), (err: unknown) => (err as { code?: string }).code === 'invalid_argument');
});

test('a setup damaged by hand does not keep the store from opening: that orphan is marked interrupted', () => {
  const file = databasePath(home);
  const table = new Map([[100, 'b/1'], [300, 'b/3']]);
  const dead = SqliteConversationStore.open(file, { ownership: processOwnership(probe(table), 100) });
  const c = dead.createConversation(alice);
  dead.claimTask(c.id, { maxTurns: 4, local: false, forbidWrites: false });
  dead.close();
  table.delete(100);
  const db = openSqlite(file, { busyTimeoutMs: 1000 });
  db.exec(`UPDATE conversations SET task_setup = '{not json' WHERE id = '${c.id}'`);
  db.close();
  const seen: unknown[] = [];
  const s = SqliteConversationStore.open(file, { ownership: processOwnership(probe(table), 300), judgeOrphan: (task) => (seen.push(task.setup), task.setup !== null ? 'continue' : 'interrupt') });
  assert.equal(seen, [null]);
  assert.is(s.getConversation(c.id, 'alice')?.status, 'interrupted');
  s.close();
});

test.run();
