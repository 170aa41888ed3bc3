// `subscriptions/listen` in the pure core (src/mcp/methods/listen.ts): acknowledged first with what is
// honoured (the caller's own transcripts, as the store says), updates tagged with the listen's id and
// related to it, in flight until cancelled, refused with a clear error when malformed or too large, and
// absent from a 2025 session.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { handleEffectResult, handleMcpLine } from '../../src/mcp/handle.ts';
import type { ConnectionState } from '../../src/mcp/state.ts';
import { MAX_LISTEN_URIS, MAX_SUBSCRIPTION_URI_LENGTH } from '../../src/limits.ts';
import { feed, fold, fresh, ready, req } from './golden.ts';

type Msg = { id?: unknown; method?: string; result?: Record<string, unknown>; error?: { code: number; message: string }; params?: Record<string, unknown> };

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'modern', version: '2' },
};
const SUB = 'io.modelcontextprotocol/subscriptionId';
const listenReq = (id: number | string, notifications: unknown) => req(id, 'subscriptions/listen', { _meta: META, notifications });
const T = (c: string) => `superpi://conversation/${c}/transcript`;

function started(state: ConnectionState, id: number | string, notifications: unknown) {
  const r = feed(state, listenReq(id, notifications));
  return { ...r, watch: r.effects.find((e) => e.kind === 'watchTranscripts') as { ticket: number; conversationIds: string[] } | undefined };
}

test('a listen for transcripts asks the store which are the caller\'s, then is acknowledged for those alone, first', () => {
  const r = started(fresh(), 'L1', { resourceSubscriptions: [T('mine'), T('theirs'), 'superpi://workspace', T('mine')], toolsListChanged: true });
  assert.equal(r.replies, [], 'nothing before the store answered');
  assert.equal(r.watch?.conversationIds, ['mine', 'theirs'], 'transcripts only, each once');
  const acked = fold(r.state, { kind: 'transcriptsWatched', ticket: r.watch!.ticket, found: ['mine'] });
  assert.equal(acked.replies, [{
    jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged',
    params: { _meta: { [SUB]: 'L1' }, notifications: { resourceSubscriptions: [T('mine')] } },
  }], 'list changes are never honoured (the lists are fixed), nor another principal\'s transcript');
  assert.ok([...acked.state.pending.values()].some((p) => p.kind === 'listen'), 'still in flight');
});

test('updates of an honoured transcript go out tagged with the listen id and related to it; others are not sent', () => {
  const r = started(fresh(), 7, { resourceSubscriptions: [T('a')] });
  const acked = fold(r.state, { kind: 'transcriptsWatched', ticket: r.watch!.ticket, found: ['a'] });
  const step = handleEffectResult({ kind: 'resourceUpdated', uri: T('a') }, acked.state);
  assert.equal(step.replies.map((o) => [JSON.parse(o.line), o.relatedTo]), [[
    { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { _meta: { [SUB]: 7 }, uri: T('a') } }, 7,
  ]]);
  assert.equal(handleEffectResult({ kind: 'resourceUpdated', uri: T('b') }, acked.state).replies, []);
  // Two streams naming the same transcript each get it, with their own id.
  const second = started(acked.state, 8, { resourceSubscriptions: [T('a')] });
  const both = fold(second.state, { kind: 'transcriptsWatched', ticket: second.watch!.ticket, found: ['a'] });
  const ids = handleEffectResult({ kind: 'resourceUpdated', uri: T('a') }, both.state).replies.map((o) => (JSON.parse(o.line) as Msg).params?._meta);
  assert.equal(ids, [{ [SUB]: 7 }, { [SUB]: 8 }]);
});

test('no update reaches a stream before its acknowledgment', () => {
  const r = started(fresh(), 1, { resourceSubscriptions: [T('a')] });
  assert.equal(handleEffectResult({ kind: 'resourceUpdated', uri: T('a') }, r.state).replies, []);
});

test('a listen naming no transcript is acknowledged at once with nothing honoured, and stays open', () => {
  const r = feed(fresh(), listenReq(2, { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true }));
  assert.equal(r.replies, [{ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { _meta: { [SUB]: 2 }, notifications: {} } }]);
  assert.equal(r.effects, []);
  assert.is([...r.state.pending.values()].filter((p) => p.kind === 'listen').length, 1);
  assert.equal(feed(fresh(), listenReq(3, undefined)).replies.length, 1, 'notifications may be left out');
});

test('notifications/cancelled ends the stream: later updates are not sent and the connection holds nothing of it', () => {
  const r = started(fresh(), 'L', { resourceSubscriptions: [T('a')] });
  const acked = fold(r.state, { kind: 'transcriptsWatched', ticket: r.watch!.ticket, found: ['a'] });
  const cancelled = feed(acked.state, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'L' } });
  assert.equal(cancelled.replies, [], 'a cancelled request is not answered');
  assert.is(cancelled.state.pending.size, 0);
  assert.equal(handleEffectResult({ kind: 'resourceUpdated', uri: T('a') }, cancelled.state).replies, []);
});

test('a store failure while it is opened answers the listen with the error and drops it', () => {
  const r = started(fresh(), 4, { resourceSubscriptions: [T('a')] });
  const failed = fold(r.state, { kind: 'effectFailed', ticket: r.watch!.ticket, code: -32603, message: 'Internal error: the store is gone' });
  assert.is((failed.replies[0] as Msg).id, 4);
  assert.is((failed.replies[0] as Msg).error?.code, -32603);
  assert.is(failed.state.pending.size, 0);
});

test('bad filters get -32602 naming what is wrong; more than MAX_LISTEN_URIS is refused naming the limit', () => {
  const error = (notifications: unknown) => (feed(fresh(), listenReq(5, notifications)).replies[0] as Msg).error;
  assert.is(error('all')?.code, -32602);
  assert.match(error('all')?.message ?? '', /params\.notifications \(an object\)/);
  assert.match(error({ resourceSubscriptions: 'superpi://x' })?.message ?? '', /array of resource URIs/);
  assert.match(error({ resourceSubscriptions: [T('a'), 7] })?.message ?? '', /array of resource URIs/);
  const many = Array.from({ length: MAX_LISTEN_URIS + 1 }, (_, i) => T(`c${i}`));
  assert.match(error({ resourceSubscriptions: many })?.message ?? '', /MAX_LISTEN_URIS \(64\)/);
  assert.is(feed(fresh(), listenReq(6, { resourceSubscriptions: many.slice(1) })).effects.length, 1, 'exactly the limit is accepted');
});

test('a URI longer than MAX_SUBSCRIPTION_URI_LENGTH is refused naming the limit and its index; nothing is held or asked of the store', () => {
  const long = `${T('a')}${'x'.repeat(MAX_SUBSCRIPTION_URI_LENGTH)}`;
  const refused = feed(fresh(), listenReq(7, { resourceSubscriptions: [T('b'), long] }));
  const error = (refused.replies[0] as Msg).error;
  assert.is(error?.code, -32602);
  assert.match(error?.message ?? '', /resourceSubscriptions\[1\] is longer than MAX_SUBSCRIPTION_URI_LENGTH \(256\)/);
  assert.is(refused.effects.length, 0);
  assert.is(refused.state.pending.size, 0);
  const atLimit = `superpi://${'x'.repeat(MAX_SUBSCRIPTION_URI_LENGTH - 'superpi://'.length)}`;
  assert.is((feed(fresh(), listenReq(8, { resourceSubscriptions: [atLimit] })).replies[0] as Msg).error, undefined, 'exactly the limit is not refused');
});

test('a 2025 session has no subscriptions/listen: method not found, pointing at resources/subscribe', () => {
  const step = handleMcpLine(JSON.stringify(req(9, 'subscriptions/listen', { notifications: { resourceSubscriptions: [T('a')] } })), ready('2025-11-25'));
  const reply = JSON.parse(step.replies[0]!.line) as Msg;
  assert.is(reply.error?.code, -32601);
  assert.match(reply.error?.message ?? '', /resources\/subscribe/);
});

test('server/discover says resources can be subscribed to (through listen) and lists never change', () => {
  const r = feed(fresh(), req(1, 'server/discover', { _meta: META }));
  assert.equal((r.replies[0] as Msg).result?.capabilities, { tools: { listChanged: false }, prompts: { listChanged: false }, resources: { subscribe: true, listChanged: false }, completions: {}, logging: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } });
});

test.run();
