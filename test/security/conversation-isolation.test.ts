// Threat model rule: a principal learns nothing about another principal's conversations — not their
// content, not whether they exist, not how busy they are. (1) Transcript `seq` numbers count 1, 2, 3…
// within each conversation, so one's transcript is the same whatever others do in between (issue 10,
// item 16). (2) Read, subscribe and completion ask the store by (principal, id) in one lookup, so another
// principal's conversation gets byte for byte the answer a nonexistent id gets (issue 12). (3) So do the
// Tasks extension's reads and writes (tasks/get, tasks/update, tasks/cancel, a listen naming a task or its
// transcript), which also change nothing of the task and watch nothing. (4) A 2026-07-28 `resources/list`
// cursor, whatever the caller sends, pages only the caller's conversations, or is -32602. Anonymous
// callers being one principal per session, across restarts too, is checked end to end in
// test/e2e/conversation-ownership.test.ts.
// Caller classes: token principals and anonymous remote callers (each other's neighbours on one server);
// the local user is one principal and has no neighbour to learn about.

import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Effect, EffectResult } from '../../src/mcp/effects.ts';
import { EffectRunner } from '../../src/connection/effect-runner.ts';
import type { TaskContext } from '../../src/task/task-context.ts';
import { createLogger } from '../../src/log/logger.ts';
import { SyncStoreAdapter } from '../../src/store/async-store.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import type { ConversationStore, EntryType } from '../../src/store/store.ts';
import { encodeListCursor } from '../../src/store/list-cursor.ts';
import { sealCursor } from '../../src/mcp/methods/conversation-list.ts';
import { handleEffectResult, handleMcpLine } from '../../src/mcp/handle.ts';
import { initialState } from '../../src/mcp/state.ts';
import { DetachedTasks } from '../../src/task/detached-tasks.ts';
import { readStoredTask } from '../../src/task/task-status.ts';

/** A small deterministic generator, so a failing case can be replayed from its seed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const harness = 'super-pi-assistant';

test('rule 1: a principal\'s seqs are 1..n whatever any other principal appends in between (200 random interleavings)', () => {
  for (let seed = 1; seed <= 200; seed++) {
    const next = random(seed);
    const store = SqliteConversationStore.open(':memory:');
    const mine = store.createConversation({ principal: 'token:alice', sessionId: 's1', harness });
    const theirs = Array.from({ length: 1 + Math.floor(next() * 3) }, (_, i) => store.createConversation({ principal: i % 2 ? 'token:bob' : 'anonymous:s2:x', sessionId: 's2', harness }));
    const n = 1 + Math.floor(next() * 12);
    for (let i = 0; i < n; i++) {
      const noise = Math.floor(next() * 6);
      for (let k = 0; k < noise; k++) store.append(theirs[Math.floor(next() * theirs.length)]!.id, 'model', { k });
      store.append(mine.id, 'model', { i });
    }
    const seqs = (store.entries(mine.id, 'token:alice') ?? []).map((e) => e.seq);
    assert.equal(seqs, Array.from({ length: n }, (_, i) => i + 1), `seed ${seed}`);
    store.close();
  }
});

test('rule 2: another principal\'s conversation answers read, subscribe and completion exactly as a nonexistent id does', async () => {
  const store: ConversationStore = SqliteConversationStore.open(':memory:');
  const logger = createLogger('error', { write: () => true });
  const caller: TaskContext = { store: () => new SyncStoreAdapter(store), principal: 'token:bob', local: false, forbidWrites: false, sessionId: 's', env: {}, supervise: async () => undefined };
  const run = (effect: Effect) => new Promise<EffectResult>((resolve) => new EffectRunner({ workspace: '/nonexistent', logger, toolTimeoutMs: 1000, task: caller }, resolve).run(effect));
  const next = random(7);
  for (let i = 0; i < 20; i++) {
    const owner = next() < 0.5 ? 'token:alice' : `anonymous:session-${i}:r`;
    const theirs = store.createConversation({ principal: owner, sessionId: 'session-1', harness });
    store.append(theirs.id, 'user', { text: 'private' });
    const missing = theirs.id.replace(/^./, (c) => (c === 'f' ? '0' : 'f'));
    for (const make of [
      (id: string): Effect => ({ kind: 'readTranscript', ticket: 1, conversationId: id, afterSeq: 0 }),
      (id: string): Effect => ({ kind: 'watchTranscript', ticket: 1, conversationId: id }),
      (id: string): Effect => ({ kind: 'completeConversation', ticket: 1, prefix: id.slice(0, 1 + Math.floor(next() * 8)) }),
    ]) {
      const a = make(theirs.id);
      const b = a.kind === 'completeConversation' ? { ...a, prefix: missing.slice(0, a.prefix.length) } : make(missing);
      assert.is(JSON.stringify(await run(a)), JSON.stringify(await run(b)), `${a.kind} for ${owner}'s conversation`);
    }
  }
  store.close();
});

/** A turn that reads a file, then one that asks to run `bash` (a task of super-pi-code parks before it). */
const askingRun: [EntryType, Record<string, unknown>][] = [
  ['user', { text: 'append with bash' }],
  ['model', { text: '', toolCalls: [{ id: 'r0', name: 'read', arguments: { path: 'notes.txt' } }] }],
  ['tool_call', { id: 'r0', name: 'read', arguments: { path: 'notes.txt' } }],
  ['tool_result', { id: 'r0', name: 'read', text: 'notes', isError: false }],
  ['model', { text: '', toolCalls: [{ id: 'b', name: 'bash', arguments: { command: 'echo once >> out.txt' } }] }],
];

test('rule 3: another principal\'s task answers tasks/get, tasks/update, tasks/cancel and a listen exactly as a nonexistent id does, and is left as it was', async () => {
  const store: ConversationStore = SqliteConversationStore.open(':memory:');
  const logger = createLogger('error', { write: () => true });
  const heard: string[] = [];
  const caller: TaskContext = {
    store: () => new SyncStoreAdapter(store), principal: 'token:bob', local: false, forbidWrites: false, sessionId: 's', env: {}, supervise: async () => undefined,
    watchTranscript: (id) => heard.push(`watch transcript ${id}`), watchTask: (id) => heard.push(`watch task ${id}`),
    transcriptChanged: (id) => heard.push(`transcript changed ${id}`), taskStatusChanged: (id) => heard.push(`status changed ${id}`),
  };
  const detached = new DetachedTasks();
  const run = (effect: Effect) => new Promise<EffectResult>((resolve) => new EffectRunner({ workspace: '/nonexistent', logger, toolTimeoutMs: 1000, task: caller, detached }, resolve).run(effect));
  const statuses = ['running', 'asking', 'sampling', 'completed', 'failed', 'cancelled', 'interrupted'] as const;
  const owners = ['token:alice', 'anonymous:session-1:r', 'local'] as const;
  const kinds = ['readTask', 'updateTask', 'cancelTask', 'watchTranscripts'] as const;
  await fc.assert(fc.asyncProperty(fc.constantFrom(...statuses), fc.constantFrom(...owners), fc.constantFrom(...kinds), fc.boolean(), fc.boolean(), async (status, owner, kind, allowed, canAsk) => {
    const theirs = store.createConversation({ principal: owner, sessionId: 'session-1', harness: 'super-pi-code' });
    const lease = store.claimTask(theirs.id, null);
    if (status === 'asking' || status === 'sampling') {
      for (const [type, payload] of status === 'asking' ? askingRun : askingRun.slice(0, 4)) store.append(theirs.id, type, payload, lease.epoch);
      store.setStatus(theirs.id, 'input_required', lease.epoch, { text: '', isError: false, turns: status === 'asking' ? 2 : 1, toolCalls: 1, parkedAt: Date.now() });
    } else if (status !== 'running') {
      store.append(theirs.id, 'user', { text: 'private' }, lease.epoch);
      store.setStatus(theirs.id, status, lease.epoch, { text: 'private result', isError: status === 'failed', turns: 1, toolCalls: 0 });
    }
    const missing = theirs.id.replace(/^./, (c) => (c === 'f' ? '0' : 'f'));
    // The answers the owner's own client would send: the keys of what the task waits for.
    const own = await readStoredTask(new SyncStoreAdapter(store), owner, theirs.id);
    const question = own?.question ?? null;
    if (status === 'asking') assert.ok(question !== null && 'asks' in question && question.asks.length === 1, 'the owner sees the question it parked at');
    if (status === 'sampling') assert.ok(question !== null && !('asks' in question), 'the owner sees the model turn it parked at');
    const keys = question === null ? ['confirm-2-5-0', 'sample-2-4'] : 'asks' in question ? question.asks.map((a) => a.key) : [question.key];
    const answers = keys.map((key) => (key.startsWith('sample-') ? { key, sampled: { role: 'assistant', content: { type: 'text', text: 'done' }, model: 'm' } } : { key, person: { allowed, refusal: allowed ? '' : 'no' } }));
    const make = (id: string): Effect => {
      switch (kind) {
        case 'readTask': return { kind, ticket: 1, taskId: id, canAsk };
        case 'updateTask': return { kind, ticket: 1, taskId: id, answers, canAsk };
        case 'cancelTask': return { kind, ticket: 1, taskId: id };
        case 'watchTranscripts': return { kind, ticket: 1, conversationIds: [id], taskIds: [id] };
      }
    };
    const before = JSON.stringify([store.taskRecord(theirs.id, owner), store.entries(theirs.id, owner)]);
    heard.length = 0;
    const answer = JSON.stringify(await run(make(theirs.id)));
    assert.is(answer, JSON.stringify(await run(make(missing))), `${kind} of ${owner}'s ${status} task`);
    assert.is(JSON.stringify([store.taskRecord(theirs.id, owner), store.entries(theirs.id, owner)]), before, `${kind} changed ${owner}'s ${status} task`);
    assert.equal(heard, [], `${kind} watched or announced ${owner}'s ${status} task`);
  }), { numRuns: 150 });
  store.close();
});

test('rule 4: whatever cursor a caller sends to a 2026-07-28 resources/list, the answer is -32602 or a page of its own conversations alone', async () => {
  const store: ConversationStore = SqliteConversationStore.open(':memory:');
  const logger = createLogger('error', { write: () => true });
  const alice = Array.from({ length: 5 }, () => store.createConversation({ principal: 'token:alice', sessionId: 's1', harness }));
  const bob = Array.from({ length: 5 }, () => store.createConversation({ principal: 'token:bob', sessionId: 's2', harness }));
  const aliceUris = new Set(alice.map((c) => `superpi://conversation/${c.id}/transcript`));
  const caller: TaskContext = { store: () => new SyncStoreAdapter(store), principal: 'token:alice', local: false, forbidWrites: false, sessionId: 's', env: {}, supervise: async () => undefined };
  const run = (effect: Effect) => new Promise<EffectResult>((resolve) => new EffectRunner({ workspace: '/nonexistent', logger, toolTimeoutMs: 1000, task: caller }, resolve).run(effect));
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
  // Positions in the store's keyset: of bob's conversations and alice's, and made up.
  const position = fc.oneof(
    fc.constantFrom(...bob, ...alice).map((c) => encodeListCursor({ updatedAt: c.updatedAt, id: c.id })),
    fc.record({ updatedAt: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), id: fc.string() }).map(encodeListCursor),
    fc.string(),
  );
  const cursor = fc.oneof(
    fc.anything(),
    fc.string(),
    position.map((p) => sealCursor('token:alice', p)),
    position.map((p) => sealCursor('token:bob', p)),
    fc.tuple(fc.constantFrom('token:alice', 'token:bob', 'anonymous', 'local'), position, fc.string({ maxLength: 3 })).map(([who, p, junk]) => sealCursor(who, p) + junk),
  );
  await fc.assert(fc.asyncProperty(cursor, fc.integer({ min: 1, max: 4 }), async (sent, pageSize) => {
    const state = initialState({ workspace: '/ws', principal: { kind: 'token', name: 'alice' }, pageSize });
    const step = handleMcpLine(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/list', params: { _meta: meta, cursor: sent } }), state);
    let replies = step.replies;
    const listing = step.effects.find((e) => e.kind === 'listConversations');
    if (listing !== undefined) replies = handleEffectResult(await run(listing), step.state).replies;
    assert.is(replies.length, 1);
    const reply = JSON.parse(replies[0]!.line) as { result?: { resources: { uri: string }[] }; error?: { code: number } };
    if (reply.error !== undefined) {
      assert.is(reply.error.code, -32602);
      return;
    }
    const listed = reply.result!.resources.map((r) => r.uri).filter((u) => u.startsWith('superpi://conversation/'));
    for (const uri of listed) assert.ok(aliceUris.has(uri), `${uri} is not the caller's`);
  }), { numRuns: 300 });
  store.close();
});

test.run();
