// The store-backed effects behind transcript read, subscribe and completion: the caller's principal sees
// its conversations from any session; another principal's conversation gets exactly the answer a
// missing one gets; completion offers only the caller's, newest first, at most the MCP limit; a 2026-07-28
// listing pages only the caller's; a listen watches what it names for as long as it lasts.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Effect, EffectResult } from '../../src/mcp/effects.ts';
import { MAX_COMPLETION_VALUES } from '../../src/limits.ts';
import { EffectRunner } from '../../src/connection/effect-runner.ts';
import type { TaskContext } from '../../src/task/task-context.ts';
import { createLogger } from '../../src/log/logger.ts';
import { TranscriptWatch } from '../../src/task/transcript-watch.ts';
import { SyncStoreAdapter } from '../../src/store/async-store.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import type { ConversationStore } from '../../src/store/store.ts';

let now = 1_000;
const store: ConversationStore = SqliteConversationStore.open(':memory:', { now: () => now });
const logger = createLogger('error', { write: () => true });

function context(principal: string, sessionId: string, watch?: TranscriptWatch, heard?: string[]): TaskContext {
  return {
    store: () => new SyncStoreAdapter(store), principal, local: false, forbidWrites: false, sessionId, env: {},
    supervise: async () => undefined,
    ...(watch ? { watchTranscript: (c: string) => watch.watch(c, sessionId, (x) => heard?.push(x)), transcriptChanged: (c: string) => watch.changed(c) } : {}),
  };
}

/** Runs one effect in a runner for this caller and returns its result. */
async function run(task: TaskContext, effect: Effect): Promise<EffectResult> {
  return new Promise((resolve) => {
    const runner = new EffectRunner({ workspace: '/nonexistent', logger, toolTimeoutMs: 1000, task }, resolve);
    runner.run(effect);
  });
}

/**
 * The adapter with its getConversation replaced by `lookup` (a test's gate or failure before the real one);
 * every other method is the adapter's own, bound to it (its private fields are read through `this`).
 */
function withLookup(adapter: SyncStoreAdapter, lookup: SyncStoreAdapter['getConversation']): SyncStoreAdapter {
  return new Proxy(adapter, {
    get(target, key) {
      if (key === 'getConversation') return lookup;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

const aliceOther = context('token:alice', 'session-2');
const bob = context('token:bob', 'session-3');
const a1 = store.createConversation({ principal: 'token:alice', sessionId: 'session-1', harness: 'super-pi-assistant' });
store.append(a1.id, 'user', { text: 'hello' });

test('a transcript reads from another session of the same principal', async () => {
  const r = await run(aliceOther, { kind: 'readTranscript', ticket: 1, conversationId: a1.id, afterSeq: 0 });
  assert.is(r.kind, 'transcript');
  assert.equal((r as { jsonl: string }).jsonl.split('\n').map((l) => JSON.parse(l) as { seq: number; type: string }).map((e) => [e.seq, e.type]), [[1, 'user']]);
});

test('another principal\'s conversation and a missing one get identical answers on read, subscribe and completion', async () => {
  const missing = '00000000-0000-4000-8000-000000000000';
  for (const effect of [
    (id: string): Effect => ({ kind: 'readTranscript', ticket: 7, conversationId: id, afterSeq: 0 }),
    (id: string): Effect => ({ kind: 'watchTranscript', ticket: 7, conversationId: id }),
    (id: string): Effect => ({ kind: 'completeConversation', ticket: 7, prefix: id }),
  ]) {
    const theirs = await run(bob, effect(a1.id));
    const none = await run(bob, effect(missing));
    assert.equal(theirs, none, effect('x').kind);
  }
  assert.equal(await run(bob, { kind: 'readTranscript', ticket: 7, conversationId: a1.id, afterSeq: 0 }), { kind: 'transcript', ticket: 7, jsonl: null });
  assert.equal(await run(bob, { kind: 'watchTranscript', ticket: 7, conversationId: a1.id }), { kind: 'transcriptFound', ticket: 7, found: false });
});

test('a subscribe the store allows routes the conversation\'s updates to that session; a refused one does not', async () => {
  const watch = new TranscriptWatch();
  const heardByAlice: string[] = [];
  const heardByBob: string[] = [];
  assert.equal(await run(context('token:alice', 'session-2', watch, heardByAlice), { kind: 'watchTranscript', ticket: 1, conversationId: a1.id }), { kind: 'transcriptFound', ticket: 1, found: true });
  assert.equal(await run(context('token:bob', 'session-3', watch, heardByBob), { kind: 'watchTranscript', ticket: 1, conversationId: a1.id }), { kind: 'transcriptFound', ticket: 1, found: false });
  watch.changed(a1.id);
  assert.equal(heardByAlice, [a1.id]);
  assert.equal(heardByBob, [], 'bob was never added');
  watch.forget('session-2');
  watch.changed(a1.id);
  assert.equal(heardByAlice, [a1.id], 'a closed session hears nothing more');
  assert.is(watch.sessions, 0);
});

test('completion offers only the principal\'s conversations, newest first, at most the MCP limit, with the total', async () => {
  const mine: string[] = [a1.id];
  for (let i = 0; i < MAX_COMPLETION_VALUES + 20; i++) {
    now += 1;
    mine.push(store.createConversation({ principal: 'token:carol', sessionId: 'session-9', harness: 'super-pi-assistant' }).id);
  }
  store.createConversation({ principal: 'token:dave', sessionId: 'session-8', harness: 'super-pi-assistant' });
  const carol = context('token:carol', 'session-10');
  const all = await run(carol, { kind: 'completeConversation', ticket: 2, prefix: '' }) as { values: string[]; total: number };
  const carols = mine.slice(1).reverse();
  assert.equal(all.values, carols.slice(0, MAX_COMPLETION_VALUES));
  assert.is(all.total, MAX_COMPLETION_VALUES + 20);
  const target = carols[5]!;
  const one = await run(carol, { kind: 'completeConversation', ticket: 3, prefix: target.slice(0, 12) }) as { values: string[]; total: number };
  assert.equal(one.values, [target]);
  assert.is(one.total, 1);
});

test('a listing pages the principal\'s conversations from the store, newest first; another principal\'s never appear; a forged cursor is told', async () => {
  const erin: string[] = [];
  for (let i = 0; i < 5; i++) {
    now += 1;
    erin.push(store.createConversation({ principal: 'token:erin', sessionId: `session-${20 + i}`, harness: 'super-pi-assistant' }).id);
  }
  store.createConversation({ principal: 'token:frank', sessionId: 'session-30', harness: 'super-pi-assistant' });
  const fromAnySession = context('token:erin', 'session-99');
  const seen: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const r = await run(fromAnySession, { kind: 'listConversations', ticket: 4, limit: 2, ...(cursor === undefined ? {} : { cursor }) });
    assert.is(r.kind, 'conversationList');
    const page = (r as Extract<EffectResult, { kind: 'conversationList' }>).page;
    if (page === 'invalid-cursor') throw new Error('the store refused its own cursor');
    assert.ok(page.ids.length <= 2);
    seen.push(...page.ids);
    cursor = page.nextCursor;
    pages++;
  } while (cursor !== undefined);
  assert.equal(seen, [...erin].reverse(), 'every one of erin\'s, from sessions other than the caller\'s, newest first');
  assert.is(pages, 3);
  assert.equal(await run(context('token:nobody', 'session-31'), { kind: 'listConversations', ticket: 5, limit: 2 }), { kind: 'conversationList', ticket: 5, page: { ids: [] } });
  assert.equal(await run(fromAnySession, { kind: 'listConversations', ticket: 6, limit: 2, cursor: 'made-up' }), { kind: 'conversationList', ticket: 6, page: 'invalid-cursor' });
});

test.after(() => store.close());
test('a listen naming tasks: only the caller\'s are watched and read, each told again after the acknowledgment; the listen\'s cancel unwatches them', async () => {
  const mine = store.createConversation({ principal: 'token:alice', sessionId: 'session-1', harness: 'super-pi-assistant' });
  const theirs = store.createConversation({ principal: 'token:bob', sessionId: 'session-3', harness: 'super-pi-assistant' });
  const calls: string[] = [];
  const alice: TaskContext = {
    ...context('token:alice', 'session-2'),
    watchTask: (id) => calls.push(`watch ${id}`),
    unwatchTask: (id) => calls.push(`unwatch ${id}`),
    taskStatusChanged: (id) => calls.push(`changed ${id}`),
  };
  const results: EffectResult[] = [];
  const runner = new EffectRunner({ workspace: '/nonexistent', logger, toolTimeoutMs: 1000, task: alice }, (r) => {
    results.push(r);
    calls.push(`delivered ${r.kind}`);
  });
  runner.run({ kind: 'watchTranscripts', ticket: 9, conversationIds: [], taskIds: [mine.id, theirs.id, '00000000-0000-4000-8000-000000000000'] });
  while (results.length === 0) await new Promise((r) => setImmediate(r));
  const watched = results[0] as Extract<EffectResult, { kind: 'transcriptsWatched' }>;
  assert.equal(watched.tasks?.map((t) => [t.taskId, t.status]), [[mine.id, 'running']]);
  assert.equal(calls, [`watch ${mine.id}`, 'delivered transcriptsWatched', `changed ${mine.id}`], 'watched before read, told again after the acknowledgment');
  runner.run({ kind: 'cancel', ticket: 9 });
  assert.equal(calls.at(-1), `unwatch ${mine.id}`);
  runner.run({ kind: 'cancel', ticket: 9 });
  assert.is(calls.filter((c) => c.startsWith('unwatch')).length, 1, 'once');
});

test('a connection actor\'s exit unwatches the tasks of its listens; the old ticket\'s cancel does nothing more; a listen still reading when its actor exits watches nothing', async () => {
  const mine = store.createConversation({ principal: 'token:alice', sessionId: 'session-1', harness: 'super-pi-assistant' });
  const calls: string[] = [];
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let gated = false;
  const adapter = new SyncStoreAdapter(store);
  // The second listen's lookup waits at the gate, so the actor can exit while it is under way.
  const slowStore = withLookup(adapter, async (id, principal) => {
    if (gated) await gate;
    return adapter.getConversation(id, principal);
  });
  const alice: TaskContext = {
    ...context('token:alice', 'session-2'),
    store: () => slowStore,
    watchTask: (id) => calls.push(`watch ${id}`),
    unwatchTask: (id) => calls.push(`unwatch ${id}`),
  };
  const results: EffectResult[] = [];
  const runner = new EffectRunner({ workspace: '/nonexistent', logger, toolTimeoutMs: 1000, task: alice }, (r) => results.push(r));
  runner.run({ kind: 'watchTranscripts', ticket: 9, conversationIds: [], taskIds: [mine.id] });
  while (results.length === 0) await new Promise((r) => setImmediate(r));
  assert.is(results[0]?.kind, 'transcriptsWatched');
  assert.equal(calls, [`watch ${mine.id}`]);
  runner.incarnationEnded();
  assert.equal(calls, [`watch ${mine.id}`, `unwatch ${mine.id}`], 'the exit unwatches what the listen watched');
  runner.run({ kind: 'cancel', ticket: 9 });
  assert.is(calls.length, 2, 'a late cancel of the old ticket unwatches nothing twice');

  gated = true;
  runner.run({ kind: 'watchTranscripts', ticket: 10, conversationIds: [], taskIds: [mine.id] });
  runner.incarnationEnded();
  open();
  while (results.length === 1) await new Promise((r) => setImmediate(r));
  assert.is(calls.length, 2, 'the listen of the dead incarnation watched nothing');
});

test('a listen naming transcripts watches each for its stream alone: its cancel, a cancel while it still looks them up, and its failure each leave none watched', async () => {
  const first = store.createConversation({ principal: 'token:alice', sessionId: 'session-1', harness: 'super-pi-assistant' });
  const second = store.createConversation({ principal: 'token:alice', sessionId: 'session-1', harness: 'super-pi-assistant' });
  const theirs = store.createConversation({ principal: 'token:bob', sessionId: 'session-3', harness: 'super-pi-assistant' });
  const calls: string[] = [];
  let gated = false;
  let failing = false;
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const adapter = new SyncStoreAdapter(store);
  const slowStore = withLookup(adapter, async (id, principal) => {
    if (gated && id === second.id) await gate;
    if (failing && id === second.id) throw new Error('the store went away');
    return adapter.getConversation(id, principal);
  });
  const alice: TaskContext = {
    ...context('token:alice', 'session-2'),
    store: () => slowStore,
    watchTranscript: (id, stream) => calls.push(`watch ${id}${stream === true ? ' (stream)' : ''}`),
    unwatchTranscript: (id, stream) => calls.push(`unwatch ${id}${stream === true ? ' (stream)' : ''}`),
  };
  const results: EffectResult[] = [];
  const runner = new EffectRunner({ workspace: '/nonexistent', logger, toolTimeoutMs: 1000, task: alice }, (r) => results.push(r));
  const settled = async (n: number) => { while (results.length < n) await new Promise((r) => setImmediate(r)); };

  runner.run({ kind: 'watchTranscripts', ticket: 1, conversationIds: [first.id, theirs.id, second.id], taskIds: [] });
  await settled(1);
  assert.equal((results[0] as Extract<EffectResult, { kind: 'transcriptsWatched' }>).found, [first.id, second.id], 'another principal\'s is not watched');
  assert.equal(calls, [`watch ${first.id} (stream)`, `watch ${second.id} (stream)`], 'watched for the stream, not for the session');
  runner.run({ kind: 'cancel', ticket: 1 });
  assert.equal(calls.slice(2), [`unwatch ${first.id} (stream)`, `unwatch ${second.id} (stream)`], 'the cancel unwatches each, as the stream\'s');
  runner.run({ kind: 'cancel', ticket: 1 });
  assert.is(calls.length, 4, 'a second cancel unwatches nothing twice');

  // Cancelled while it waits on its second lookup: the first is unwatched by the cancel, the second never watched.
  calls.length = 0;
  gated = true;
  runner.run({ kind: 'watchTranscripts', ticket: 2, conversationIds: [first.id, second.id], taskIds: [] });
  while (calls.length === 0) await new Promise((r) => setImmediate(r));
  runner.run({ kind: 'cancel', ticket: 2 });
  open();
  await settled(2);
  assert.equal(calls, [`watch ${first.id} (stream)`, `unwatch ${first.id} (stream)`], 'nothing is watched after the cancel');

  // A lookup that fails answers the listen with the error, which ends it: what it had watched is unwatched.
  calls.length = 0;
  gated = false;
  failing = true;
  runner.run({ kind: 'watchTranscripts', ticket: 3, conversationIds: [first.id, second.id], taskIds: [] });
  await settled(3);
  assert.is(results[2]?.kind, 'effectFailed');
  assert.equal(calls, [`watch ${first.id} (stream)`, `unwatch ${first.id} (stream)`]);
});

test('a subscription\'s watch is the session\'s until the core asks to release it; a subscribe cancelled during its lookup watches nothing', async () => {
  const mine = store.createConversation({ principal: 'token:alice', sessionId: 'session-1', harness: 'super-pi-assistant' });
  const calls: string[] = [];
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let gated = false;
  const adapter = new SyncStoreAdapter(store);
  const slowStore = withLookup(adapter, async (id, principal) => {
    if (gated) await gate;
    return adapter.getConversation(id, principal);
  });
  const alice: TaskContext = {
    ...context('token:alice', 'session-2'),
    store: () => slowStore,
    watchTranscript: (id, stream) => calls.push(`watch ${id}${stream === true ? ' (stream)' : ''}`),
    unwatchTranscript: (id, stream) => calls.push(`unwatch ${id}${stream === true ? ' (stream)' : ''}`),
  };
  const results: EffectResult[] = [];
  const runner = new EffectRunner({ workspace: '/nonexistent', logger, toolTimeoutMs: 1000, task: alice }, (r) => results.push(r));
  runner.run({ kind: 'watchTranscript', ticket: 1, conversationId: mine.id });
  while (results.length < 1) await new Promise((r) => setImmediate(r));
  assert.equal(results[0], { kind: 'transcriptFound', ticket: 1, found: true });
  assert.equal(calls, [`watch ${mine.id}`], 'watched for the session, not for a stream');
  runner.run({ kind: 'unwatchTranscript', conversationId: mine.id });
  assert.equal(calls, [`watch ${mine.id}`, `unwatch ${mine.id}`], 'released as the subscription\'s');

  calls.length = 0;
  gated = true;
  runner.run({ kind: 'watchTranscript', ticket: 2, conversationId: mine.id });
  runner.run({ kind: 'cancel', ticket: 2 });
  runner.run({ kind: 'unwatchTranscript', conversationId: mine.id });
  open();
  await runner.close('test over');
  assert.equal(calls, [`unwatch ${mine.id}`], 'the lookup that ended after the cancel watched nothing');
  assert.is(results.length, 1, 'and answered nothing');
});

test.run();
