// Threat model rule: a principal learns nothing about another principal's conversations — not their
// content, not whether they exist, not how busy they are. (1) Transcript `seq` numbers count 1, 2, 3…
// within each conversation, so one's transcript is the same whatever others do in between (issue 10,
// item 16). (2) Read, subscribe and completion ask the store by (principal, id) in one lookup, so another
// principal's conversation gets byte for byte the answer a nonexistent id gets (issue 12). Anonymous
// callers being one principal per session, across restarts too, is checked end to end in
// test/e2e/conversation-ownership.test.ts.
// Caller classes: token principals and anonymous remote callers (each other's neighbours on one server);
// the local user is one principal and has no neighbour to learn about.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Effect, EffectResult } from '../../src/mcp/effects.ts';
import { EffectRunner } from '../../src/connection/effect-runner.ts';
import type { TaskContext } from '../../src/task/task-context.ts';
import { createLogger } from '../../src/log/logger.ts';
import { SyncStoreAdapter } from '../../src/store/async-store.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import type { ConversationStore } from '../../src/store/store.ts';

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
      (id: string): Effect => ({ kind: 'readTranscript', ticket: 1, conversationId: id }),
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

test.run();
