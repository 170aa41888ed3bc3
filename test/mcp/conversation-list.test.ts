// `resources/list` over 2026-07-28 in the pure core (src/mcp/methods/conversation-list.ts): the caller
// principal's conversations come from the store (effect `listConversations`), a page at a time, the static
// resources first on the first page; the cursor is bound to the principal, so another caller's cursor, or
// one not made here, is -32602. A 2025 session still lists the conversations it started, with no effect.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Effect } from '../../src/mcp/effects.ts';
import { sealCursor } from '../../src/mcp/methods/conversation-list.ts';
import type { ConnectionState } from '../../src/mcp/state.ts';
import { MAX_LIST_CURSOR_LENGTH, MAX_LISTED_CONVERSATIONS, RESOURCE_CACHE_TTL_MS } from '../../src/limits.ts';
import { MAX_LIST_LIMIT } from '../../src/store/store.ts';
import { feed, fold, fresh, ready, req } from './golden.ts';

type Reply = { id?: unknown; result?: { resources?: { uri: string; name: string; mimeType?: string }[]; nextCursor?: string; [k: string]: unknown }; error?: { code: number; message: string } };
type Listing = Extract<Effect, { kind: 'listConversations' }>;

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'modern', version: '2' },
};
const list = (id: number | string, cursor?: unknown) => req(id, 'resources/list', { _meta: META, ...(cursor === undefined ? {} : { cursor }) });
const T = (c: string) => `superpi://conversation/${c}/transcript`;
const alice = (over: Parameters<typeof fresh>[0] = {}) => fresh({ principal: { kind: 'token', name: 'alice' }, ...over });

function asked(state: ConnectionState, id: number | string, cursor?: unknown) {
  const r = feed(state, list(id, cursor));
  const listing = r.effects.find((e): e is Listing => e.kind === 'listConversations');
  return { ...r, listing };
}

test('a modern resources/list asks the store for the principal\'s conversations; the answer lists them after the static resources', () => {
  const r = asked(alice(), 1);
  assert.equal(r.replies, [], 'nothing answered before the store');
  assert.ok(r.listing, 'a listConversations effect');
  assert.equal(r.listing, { kind: 'listConversations', ticket: r.listing!.ticket, limit: 50 }, 'the first page names no cursor; --page-size (default 50) per page');
  assert.is(r.state.pending.get(r.listing!.ticket)?.kind, 'resourceList');
  const done = fold(r.state, { kind: 'conversationList', ticket: r.listing!.ticket, page: { ids: ['c2', 'c1'] } });
  const result = (done.replies[0] as Reply).result!;
  assert.equal(result.resources!.map((x) => x.uri), ['superpi://workspace', 'superpi://loadout', T('c2'), T('c1')]);
  assert.equal(result.resources![2], { uri: T('c2'), name: 'conversation-c2', title: 'Transcript of conversation c2', mimeType: 'application/jsonl' }, 'the legacy listing\'s shape');
  assert.is(result.nextCursor, undefined, 'no more pages');
  assert.is(result.resultType, 'complete');
  assert.is(result.ttlMs, RESOURCE_CACHE_TTL_MS);
  assert.is(result.cacheScope, 'private', 'a per-principal list is never shared between callers');
  assert.is(done.state.pending.size, 0);
});

test('a page with more to follow gets a nextCursor; passing it back asks the store from its cursor, with no static resources again', () => {
  const first = asked(alice({ pageSize: 2 }), 1);
  assert.is(first.listing!.limit, 2);
  const page1 = fold(first.state, { kind: 'conversationList', ticket: first.listing!.ticket, page: { ids: ['c4', 'c3'], nextCursor: 'store-cursor-1' } });
  const cursor = (page1.replies[0] as Reply).result!.nextCursor;
  assert.ok(typeof cursor === 'string' && !cursor.includes('store-cursor-1'), 'the store\'s cursor travels wrapped');
  const second = asked(page1.state, 2, cursor);
  assert.equal(second.replies, []);
  assert.equal(second.listing, { kind: 'listConversations', ticket: second.listing!.ticket, limit: 2, cursor: 'store-cursor-1' });
  const page2 = fold(second.state, { kind: 'conversationList', ticket: second.listing!.ticket, page: { ids: ['c2'] } });
  const result = (page2.replies[0] as Reply).result!;
  assert.equal(result.resources!.map((x) => x.uri), [T('c2')], 'the static resources are on the first page only');
  assert.is(result.nextCursor, undefined);
});

test('the page size is --page-size, never more than MAX_LISTED_CONVERSATIONS (itself within the store\'s MAX_LIST_LIMIT)', () => {
  assert.ok(MAX_LISTED_CONVERSATIONS <= MAX_LIST_LIMIT, 'the store would lower a larger page silently');
  assert.is(asked(alice({ pageSize: 100_000 }), 1).listing!.limit, MAX_LISTED_CONVERSATIONS);
  assert.is(asked(alice({ pageSize: 7 }), 1).listing!.limit, 7);
});

test('a forged cursor is -32602 at once, asking nothing of the store', () => {
  for (const cursor of ['nope', 42, null, { a: 1 }, 'sc1.', 'sc1.!!!', `sc1.${btoa('not json')}`, `sc1.${btoa('["token:alice"]')}`, btoa('superpi:0')]) {
    const r = asked(alice(), 1, cursor);
    assert.is(r.listing, undefined, JSON.stringify(cursor));
    const error = (r.replies[0] as Reply).error;
    assert.is(error?.code, -32602, JSON.stringify(cursor));
    assert.match(error!.message, /Invalid cursor: pass a nextCursor from an earlier page of resources\/list/);
    assert.is(r.state.pending.size, 0);
  }
});

test('another principal\'s cursor is -32602 naming that; the store is not asked with it', () => {
  const bobs = sealCursor('token:bob', 'store-cursor');
  const r = asked(alice(), 1, bobs);
  assert.is(r.listing, undefined);
  assert.equal((r.replies[0] as Reply).error, { code: -32602, message: 'Invalid cursor: it was made for another caller; pass a nextCursor from one of your own pages of resources/list' });
  // The same cursor is alice's own when alice is its principal.
  assert.is(asked(alice(), 2, sealCursor('token:alice', 'store-cursor')).listing?.cursor, 'store-cursor');
  assert.is((asked(fresh({ principal: { kind: 'local' } }), 3, sealCursor('token:alice', 'x')).replies[0] as Reply).error?.code, -32602, 'local is another caller too');
});

test('a cursor the store refuses (well wrapped, not the store\'s) is -32602', () => {
  const r = asked(alice(), 1, sealCursor('token:alice', 'made-up'));
  const done = fold(r.state, { kind: 'conversationList', ticket: r.listing!.ticket, page: 'invalid-cursor' });
  assert.equal(done.replies, [{ jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'Invalid cursor: pass a nextCursor from an earlier page of resources/list, unchanged' } }]);
  assert.is(done.state.pending.size, 0);
});

test('a cancelled listing is not answered when the store replies', () => {
  const r = asked(alice(), 'L');
  const cancelled = feed(r.state, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'L' } });
  assert.equal(cancelled.effects, [{ kind: 'cancel', ticket: r.listing!.ticket }]);
  assert.equal(fold(cancelled.state, { kind: 'conversationList', ticket: r.listing!.ticket, page: { ids: ['c1'] } }).replies, []);
});

test('a 2025 session lists the conversations it started, from its own state, asking the store nothing', () => {
  const started = feed(ready('2025-11-25'), req(1, 'tools/call', { name: 'harness_task', arguments: { harness: 'super-pi-assistant', prompt: 'p' } }));
  const run = started.effects.find((e) => e.kind === 'runTool') as { ticket: number };
  const done = fold(started.state, { kind: 'toolDone', ticket: run.ticket, outcome: { text: 'ok', structured: { conversation_id: 'mine' } } });
  const listed = feed(done.state, req(2, 'resources/list'));
  assert.equal(listed.effects.filter((e) => e.kind !== 'log'), []);
  assert.equal((listed.replies[0] as Reply).result!.resources!.map((x) => x.uri), ['superpi://workspace', 'superpi://loadout', T('mine')]);
});

test('a cursor longer than any a store cursor of MAX_LIST_CURSOR_LENGTH seals into is refused before it is decoded: no store effect, -32602', () => {
  const longest = sealCursor('token:alice', 'c1.' + 'x'.repeat(MAX_LIST_CURSOR_LENGTH - 3));
  const atLimit = asked(alice(), 1, longest);
  assert.ok(atLimit.listing, 'the longest cursor a store cursor can be sealed into is still asked of the store');
  // A well-sealed cursor of this principal whose store cursor is past the store's bound: refused in the core.
  const over = asked(alice(), 2, sealCursor('token:alice', 'c1.' + 'x'.repeat(MAX_LIST_CURSOR_LENGTH)));
  assert.is(over.listing, undefined, 'nothing asked of the store');
  assert.is((over.replies[0] as Reply).error?.code, -32602);
  const huge = asked(alice(), 3, `sc1.${'A'.repeat(4 * 1024 * 1024)}`);
  assert.is(huge.listing, undefined);
  assert.match((huge.replies[0] as Reply).error?.message ?? '', /Invalid cursor/);
});

test.run();
