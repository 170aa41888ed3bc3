// A conversation belongs to its principal, not to the connection that started it: the core asks the
// store (an effect) whether a transcript is the caller's for read, subscribe and completion, and answers
// "not found" the same way whatever the reason; resources/list still shows this connection's own.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_COMPLETION_VALUES } from '../../src/limits.ts';
import { feed, fold, ready, req } from './golden.ts';

const uri = (id: string) => `superpi://conversation/${id}/transcript`;

test('reading a transcript this connection did not start asks the store, not the connection', () => {
  const r = feed(ready(), req(1, 'resources/read', { uri: uri('from-another-connection') }));
  assert.equal(r.replies, [], 'no answer before the store was asked');
  assert.equal(r.effects.map((e) => e.kind), ['readTranscript']);
  const effect = r.effects[0] as { ticket: number; conversationId: string };
  assert.is(effect.conversationId, 'from-another-connection');
  const read = fold(r.state, { kind: 'transcript', ticket: effect.ticket, jsonl: '{"seq":1,"type":"user"}' });
  assert.equal((read.replies[0] as { result: unknown }).result, { contents: [{ uri: uri('from-another-connection'), mimeType: 'application/jsonl', text: '{"seq":1,"type":"user"}' }] });
});

test('subscribing to a transcript this connection did not start asks the store; found, it is subscribed', () => {
  const r = feed(ready(), req(1, 'resources/subscribe', { uri: uri('c2') }));
  assert.equal(r.replies, []);
  const effect = r.effects[0] as { kind: string; ticket: number; conversationId: string };
  assert.equal([effect.kind, effect.conversationId], ['watchTranscript', 'c2']);
  const done = fold(r.state, { kind: 'transcriptFound', ticket: effect.ticket, found: true });
  assert.equal(done.replies, [{ jsonrpc: '2.0', id: 1, result: {} }]);
  assert.equal(done.state.subscriptions, [uri('c2')]);
  assert.equal(fold(done.state, { kind: 'resourceUpdated', uri: uri('c2') }).replies, [{ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: uri('c2') } }]);
});

/** A session subscribed to `uris` (each found by the store). */
function subscribedTo(...uris: string[]) {
  let state = ready();
  for (const [i, u] of uris.entries()) {
    const r = feed(state, req(`s${i}`, 'resources/subscribe', { uri: u }));
    state = fold(r.state, { kind: 'transcriptFound', ticket: (r.effects[0] as { ticket: number }).ticket, found: true }).state;
  }
  return state;
}

test('unsubscribing from a subscribed transcript asks the runtime to release the session\'s watch of it; from one not subscribed, nothing', () => {
  const off = feed(subscribedTo(uri('c2')), req(1, 'resources/unsubscribe', { uri: uri('c2') }));
  assert.equal(off.replies, [{ jsonrpc: '2.0', id: 1, result: {} }]);
  assert.equal(off.state.subscriptions, []);
  assert.equal(off.effects, [{ kind: 'unwatchTranscript', conversationId: 'c2' }]);
  const again = feed(off.state, req(2, 'resources/unsubscribe', { uri: uri('c2') }));
  assert.equal(again.replies, [{ jsonrpc: '2.0', id: 2, result: {} }]);
  assert.equal(again.effects, [], 'not subscribed: no watch of the session\'s to release');
});

test('two spellings of one transcript\'s URI are one subscription: the later spelling replaces the earlier, and unsubscribing under either releases the watch', () => {
  const spelled = 'superpi://conversation/%632/transcript'; // c2, its "c" percent-encoded
  const state = subscribedTo(uri('c2'), spelled);
  assert.equal(state.subscriptions, [spelled], 'one subscription, under the spelling last used');
  for (const by of [uri('c2'), spelled, 'superpi://conversation/c%32/transcript']) {
    const off = feed(state, req(1, 'resources/unsubscribe', { uri: by }));
    assert.equal(off.state.subscriptions, [], by);
    assert.equal(off.effects, [{ kind: 'unwatchTranscript', conversationId: 'c2' }], by);
  }
});

test('a subscribe cancelled while the store is asked releases the watch its lookup may have made, unless the session is subscribed to it', () => {
  const asked = feed(ready(), req(1, 'resources/subscribe', { uri: uri('c3') }));
  const ticket = (asked.effects[0] as { ticket: number }).ticket;
  const cancelled = feed(asked.state, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } });
  assert.equal(cancelled.effects, [{ kind: 'cancel', ticket }, { kind: 'unwatchTranscript', conversationId: 'c3' }]);
  assert.equal(fold(cancelled.state, { kind: 'transcriptFound', ticket, found: true }).state.subscriptions, [], 'a late answer subscribes nothing');
  const resubscribe = feed(subscribedTo(uri('c3')), req(2, 'resources/subscribe', { uri: uri('c3') }));
  const kept = feed(resubscribe.state, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } });
  assert.equal(kept.effects.map((e) => e.kind), ['cancel'], 'still subscribed: its watch stays');
  // Another subscribe to the same transcript still in flight will keep the watch its own lookup makes.
  const two = feed(ready(), req(3, 'resources/subscribe', { uri: uri('c4') }), req(4, 'resources/subscribe', { uri: uri('c4') }));
  const one = feed(two.state, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3 } });
  assert.equal(one.effects.map((e) => e.kind), ['cancel'], 'the other lookup still needs the watch');
});

test('not found is one reply for read and subscribe: the same code, message and data', () => {
  const r = feed(ready(), req(1, 'resources/read', { uri: uri('x') }), req(2, 'resources/subscribe', { uri: uri('x') }));
  const [read, sub] = r.effects as { ticket: number }[];
  const out = fold(r.state, { kind: 'transcript', ticket: read!.ticket, jsonl: null }, { kind: 'transcriptFound', ticket: sub!.ticket, found: false });
  const expected = (id: number) => ({ jsonrpc: '2.0', id, error: { code: -32002, message: `Resource not found: ${uri('x')}`, data: { uri: uri('x') } } });
  assert.equal(out.replies, [expected(1), expected(2)]);
  assert.equal(out.state.subscriptions, [], 'nothing subscribed');
  assert.is(out.state.pending.size, 0);
});

test('resources/list still lists only the conversations this connection started', () => {
  const r = feed(ready(), req(1, 'tools/call', { name: 'harness_task', arguments: { harness: 'super-pi-assistant', prompt: 'p' } }));
  const run = r.effects.find((e) => e.kind === 'runTool') as { ticket: number };
  const done = fold(r.state, { kind: 'toolDone', ticket: run.ticket, outcome: { text: 'ok', structured: { conversation_id: 'mine' } } });
  const read = feed(done.state, req(2, 'resources/read', { uri: uri('elsewhere') }));
  const t = read.effects[0] as { ticket: number };
  const after = fold(read.state, { kind: 'transcript', ticket: t.ticket, jsonl: '' });
  const listed = feed(after.state, req(3, 'resources/list'));
  const uris = (listed.replies[0] as { result: { resources: { uri: string }[] } }).result.resources.map((x) => x.uri).filter((u) => u.startsWith('superpi://conversation/'));
  assert.equal(uris, [uri('mine')], 'reading another connection\'s conversation does not list it here');
});

test('completing the template id asks the store for the principal\'s conversations, newest first', () => {
  const r = feed(ready(), req(1, 'completion/complete', { ref: { type: 'ref/resource', uri: 'superpi://conversation/{id}/transcript' }, argument: { name: 'id', value: 'ab' } }));
  assert.equal(r.replies, []);
  const effect = r.effects[0] as { kind: string; ticket: number; prefix: string };
  assert.equal([effect.kind, effect.prefix], ['completeConversation', 'ab']);
  const some = fold(r.state, { kind: 'conversationCompletions', ticket: effect.ticket, values: ['ab2', 'ab1'], total: 2 });
  assert.equal((some.replies[0] as { result: unknown }).result, { completion: { values: ['ab2', 'ab1'], total: 2, hasMore: false } });
  const many = Array.from({ length: MAX_COMPLETION_VALUES }, (_, i) => `ab${i}`);
  const more = fold(r.state, { kind: 'conversationCompletions', ticket: effect.ticket, values: many, total: 250 });
  assert.equal((more.replies[0] as { result: unknown }).result, { completion: { values: many, total: 250, hasMore: true } });
});

test.run();
