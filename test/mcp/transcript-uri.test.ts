// Transcript URIs in the pure core (src/mcp/resources.ts and its callers): a page is named by `?after=<seq>`,
// a malformed query is -32602 saying what is wrong (never a throw), a read names the next page in the
// content's `_meta` in both protocol eras, and every comparison of transcript URIs goes by the decoded
// conversation id — subscribe, unsubscribe, listen and update notifications — so any percent-encoding
// spelling of an id's URI reaches that conversation, and a spelling of another id never does.

import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { handleEffectResult } from '../../src/mcp/handle.ts';
import { META_NEXT_URI, parseTranscriptUri, transcriptConversation, transcriptPageUri, transcriptUri } from '../../src/mcp/resources.ts';
import type { ConnectionState } from '../../src/mcp/state.ts';
import { feed, fold, fresh, ready, req } from './golden.ts';

type Msg = { id?: unknown; method?: string; result?: { contents?: Record<string, unknown>[] } & Record<string, unknown>; error?: { code: number; message: string }; params?: Record<string, unknown> };
const parsed = (line: string) => JSON.parse(line) as Msg;

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'modern', version: '2' },
};
const T = (c: string) => `superpi://conversation/${c}/transcript`;

test('parseTranscriptUri: the bare URI, a page after a seq, not a transcript, and a malformed query', () => {
  assert.equal(parseTranscriptUri(T('c1')), { conversationId: 'c1', afterSeq: null });
  assert.equal(parseTranscriptUri(`${T('c1')}?after=0`), { conversationId: 'c1', afterSeq: 0 });
  assert.equal(parseTranscriptUri(`${T('c%2D1')}?after=42`), { conversationId: 'c-1', afterSeq: 42 });
  assert.equal(parseTranscriptUri(`${T('c1')}?after=${Number.MAX_SAFE_INTEGER}`), { conversationId: 'c1', afterSeq: Number.MAX_SAFE_INTEGER });
  for (const notOne of ['superpi://workspace', T(''), 'superpi://conversation/a/b/transcript', `${T('c1')}#frag`, T('%E0%A4%A'), `x${T('c1')}`]) {
    assert.is(parseTranscriptUri(notOne), null, notOne);
  }
  for (const query of ['', 'after=', 'after=-1', 'after=1.5', 'after=abc', 'after=1&after=2', 'before=3', 'after=%31', 'after=9007199254740992', 'after=12345678901234567', 'AFTER=1', 'after=1&x=2']) {
    const r = parseTranscriptUri(`${T('c1')}?${query}`);
    assert.ok(r !== null && 'problem' in r, `?${query}`);
    assert.match((r as { problem: string }).problem, 'after=<seq>');
  }
  assert.is(transcriptPageUri('a b', 7), 'superpi://conversation/a%20b/transcript?after=7');
  assert.equal(parseTranscriptUri(transcriptPageUri('a b', 7)), { conversationId: 'a b', afterSeq: 7 });
  assert.is(transcriptConversation(transcriptPageUri('c1', 7)), null, 'a page is not what subscriptions key by');
});

/** A resources/read of `uri`, 2025 session or 2026-07-28 request, and what it asked the runtime for. */
function read(era: '2025' | 'modern', uri: string) {
  const state = era === '2025' ? ready() : fresh();
  const r = feed(state, req(1, 'resources/read', era === '2025' ? { uri } : { uri, _meta: META }));
  return { ...r, effect: r.effects.find((e) => e.kind === 'readTranscript') as { ticket: number; conversationId: string; afterSeq: number } | undefined };
}

for (const era of ['2025', 'modern'] as const) {
  test(`${era}: reading a page asks for the entries after its seq; the reply names the next page in the content's _meta while more follow`, () => {
    const first = read(era, T('c%2D1'));
    assert.equal([first.effect?.conversationId, first.effect?.afterSeq], ['c-1', 0]);
    const more = fold(first.state, { kind: 'transcript', ticket: first.effect!.ticket, jsonl: '{"seq":1}\n{"seq":2}', nextAfterSeq: 2 });
    const content = (more.replies[0] as Msg).result?.contents?.[0];
    assert.equal(content, { uri: T('c%2D1'), mimeType: 'application/jsonl', text: '{"seq":1}\n{"seq":2}', _meta: { [META_NEXT_URI]: transcriptPageUri('c-1', 2) } });
    assert.is(META_NEXT_URI, 'superpi/nextUri');

    const next = read(era, transcriptPageUri('c-1', 2));
    assert.equal([next.effect?.conversationId, next.effect?.afterSeq], ['c-1', 2]);
    const last = fold(next.state, { kind: 'transcript', ticket: next.effect!.ticket, jsonl: '{"seq":3}' });
    assert.equal((last.replies[0] as Msg).result?.contents, [{ uri: transcriptPageUri('c-1', 2), mimeType: 'application/jsonl', text: '{"seq":3}' }], 'the last page names none');
  });

  test(`${era}: a transcript URI with a malformed query is -32602 saying what a page URI takes; nothing is read`, () => {
    const r = read(era, `${T('c1')}?after=-3`);
    assert.is(r.effect, undefined);
    const error = (r.replies[0] as Msg).error;
    assert.is(error?.code, -32602);
    assert.match(error?.message ?? '', 'after=<seq>');
  });
}

test('any text after the ? of a transcript URI is read as a page, or refused -32602, never a throw', () => {
  fc.assert(fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.nat().map((n) => `after=${n}`)), (query) => {
    const r = read('2025', `${T('c1')}?${query}`);
    if (r.effect !== undefined) {
      assert.ok(/^after=\d+$/.test(query), `?${query} was read`);
      assert.is(r.effect.afterSeq, Number(query.slice('after='.length)));
    } else {
      const reply = r.replies[0] as Msg | undefined;
      assert.ok(reply?.error?.code === -32602 || (query.includes('#') && reply?.error?.code === -32002), `?${query}: ${JSON.stringify(reply)}`);
    }
  }), { numRuns: 500 });
});

test('a subscribe to a page of a transcript is -32602: a subscription is to the transcript itself; a listen leaves the page out', () => {
  const r = feed(ready(), req(1, 'resources/subscribe', { uri: transcriptPageUri('c1', 3) }));
  assert.equal(r.effects, []);
  assert.is((r.replies[0] as Msg).error?.code, -32602);
  assert.match((r.replies[0] as Msg).error?.message ?? '', 'not one page of it');
  const malformed = feed(ready(), req(2, 'resources/subscribe', { uri: `${T('c1')}?after=x` }));
  assert.is((malformed.replies[0] as Msg).error?.code, -32602);
  const listened = feed(fresh(), req(3, 'subscriptions/listen', { _meta: META, notifications: { resourceSubscriptions: [transcriptPageUri('c1', 3)] } }));
  assert.equal(listened.effects, [], 'nothing to watch');
});

// ── Any spelling of an id's URI is that conversation's.

/** An id: any code points (no lone surrogates: ids are text a store keeps), at least one. */
const anyId = fc.string({ unit: 'binary', minLength: 1, maxLength: 12 });
/** How to spell each character: 0 as it is where it may be, 1 upper-case escapes, 2 lower-case, 3 mixed. */
const anyStyle = fc.array(fc.nat(3), { minLength: 1, maxLength: 16 });

/** `id`'s transcript URI, each character spelled by `style` (cycled): literal where it may be, else percent-encoded. */
function spell(id: string, style: readonly number[]): string {
  let segment = '';
  [...id].forEach((ch, i) => {
    const s = style[i % style.length] ?? 1;
    if (s === 0 && !'/?#%'.includes(ch)) {
      segment += ch;
      return;
    }
    for (const byte of Buffer.from(ch, 'utf8')) {
      const hex = byte.toString(16).padStart(2, '0').toUpperCase();
      segment += `%${s === 2 ? hex.toLowerCase() : s === 3 ? `${hex[0]!.toLowerCase()}${hex[1]}` : hex}`;
    }
  });
  return `superpi://conversation/${segment}/transcript`;
}

/** A 2025 session subscribed to `uri` (the store found its conversation). */
function subscribed(uri: string): ConnectionState {
  const r = feed(ready(), req('s', 'resources/subscribe', { uri }));
  const effect = r.effects[0] as { kind: string; ticket: number; conversationId: string };
  return fold(r.state, { kind: 'transcriptFound', ticket: effect.ticket, found: true }).state;
}

/** A 2026-07-28 listen on `uri`, acknowledged for `found` (conversation ids the store says are the caller's). */
function listening(uri: string, found: (asked: string[]) => string[]): ConnectionState {
  const r = feed(fresh(), req('L', 'subscriptions/listen', { _meta: META, notifications: { resourceSubscriptions: [uri] } }));
  const effect = r.effects.find((e) => e.kind === 'watchTranscripts') as { ticket: number; conversationIds: string[] };
  return fold(r.state, { kind: 'transcriptsWatched', ticket: effect.ticket, found: found(effect.conversationIds) }).state;
}

/** The URIs the notifications of a transcript update name, as the runtime reports it (its canonical URI). */
const updated = (state: ConnectionState, id: string) => handleEffectResult({ kind: 'resourceUpdated', uri: transcriptUri(id) }, state).replies
  .map((o) => parsed(o.line)).filter((m) => m.method === 'notifications/resources/updated').map((m) => m.params?.uri);

test('property: any percent-encoding spelling of an id\'s URI parses to that id, and subscribe, listen, updates and unsubscribe all reach it', () => {
  fc.assert(fc.property(anyId, anyStyle, (id, style) => {
    const uri = spell(id, style);
    assert.equal(parseTranscriptUri(uri), { conversationId: id, afterSeq: null });
    // subscribe: the store is asked about that conversation, and its updates name the URI as the client spelled it.
    const asked = feed(ready(), req('s', 'resources/subscribe', { uri })).effects[0] as { kind: string; conversationId: string };
    assert.equal([asked.kind, asked.conversationId], ['watchTranscript', id]);
    const state = subscribed(uri);
    assert.equal(updated(state, id), [uri]);
    // unsubscribe under the server's own spelling (or any other) ends it and releases the watch.
    const off = feed(state, req('u', 'resources/unsubscribe', { uri: transcriptUri(id) }));
    assert.equal(off.state.subscriptions, []);
    assert.equal(off.effects, [{ kind: 'unwatchTranscript', conversationId: id }]);
    assert.equal(updated(off.state, id), []);
    // listen: the same conversation is watched, acknowledged and updated under the client's spelling.
    let watched: string[] = [];
    const stream = listening(uri, (ids) => (watched = ids));
    assert.equal(watched, [id]);
    assert.equal(updated(stream, id), [uri]);
  }), { numRuns: 300 });
});

test('property: a spelling that decodes to another id reaches that one, never this', () => {
  fc.assert(fc.property(anyId, anyId, anyStyle, (id, other, style) => {
    fc.pre(id !== other);
    const uri = spell(other, style);
    assert.is.not(transcriptConversation(uri), id);
    assert.equal(updated(subscribed(uri), id), []);
    assert.equal(updated(listening(uri, (ids) => ids), id), []);
    const state = subscribed(transcriptUri(id));
    const off = feed(state, req('u', 'resources/unsubscribe', { uri }));
    assert.equal(off.state.subscriptions, [transcriptUri(id)], 'unsubscribing from another transcript leaves this one');
    assert.equal(off.effects, []);
  }), { numRuns: 300 });
});

test('a second spelling of a subscribed transcript takes no second place under MAX_SESSION_SUBSCRIPTIONS', () => {
  const state = subscribed(T('c-1'));
  const again = feed(state, req(2, 'resources/subscribe', { uri: T('c%2d1') }));
  const effect = again.effects[0] as { ticket: number };
  const done = fold(again.state, { kind: 'transcriptFound', ticket: effect.ticket, found: true });
  assert.equal(done.state.subscriptions, [T('c%2d1')]);
  assert.equal(updated(done.state, 'c-1'), [T('c%2d1')], 'one notification, under the spelling last subscribed');
});

test.run();
