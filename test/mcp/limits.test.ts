// The core's bounds on caller input: names that are Object.prototype members, nesting depth, batch
// length, and the size of everything a session keeps. Each refusal names the limit it enforces.

import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeCheckpoint } from '../../src/actors/codec.ts';
import { continueBatch, handleMcpLine, handleMcpLineSliced } from '../../src/mcp/handle.ts';
import {
  nestsDeeperThan,
} from '../../src/mcp/limits.ts';
import { keptMetaNesting, parseMessageText } from '../../src/mcp/meta-cache.ts';
import { MAX_BATCH_LENGTH, MAX_CLIENT_CAPABILITIES_BYTES, MAX_CLIENT_INFO_STRING_LENGTH, MAX_JSON_DEPTH, MAX_REQUEST_ID_LENGTH, MAX_REQUESTS_IN_FLIGHT, MAX_SESSION_CONVERSATIONS, MAX_SESSION_SUBSCRIPTIONS, MAX_SUBSCRIPTION_URI_LENGTH } from '../../src/limits.ts';
import { MAX_COMPLETION_VALUES } from '../../src/limits.ts';
import type { ConnectionState } from '../../src/mcp/state.ts';
import { toolCatalog } from '../../src/tools/catalog.ts';
import { feed, fold, fresh, init, ready, req } from './golden.ts';

type Reply = { id: unknown; result?: unknown; error?: { code: number; message: string } };
const only = (replies: unknown[]): Reply => {
  assert.is(replies.length, 1, `one reply expected, got ${JSON.stringify(replies)}`);
  return replies[0] as Reply;
};

/** Every name Object.prototype answers to, and `__proto__`. */
const prototypeNames = [...new Set([...Object.getOwnPropertyNames(Object.prototype), '__proto__'])];

/** JSON text nesting `levels` objects, without JSON.stringify (which itself overflows on deep values). */
const nested = (levels: number): string => `${'{"x":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
const initWithCapabilities = (capabilitiesJson: string, id = 0) =>
  `{"jsonrpc":"2.0","id":${id},"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":${capabilitiesJson}}}`;

// ---------------------------------------------------------------------------------------------
const documented = suite('the limits are the README\'s');

// The tests below find each limit's edge through its constant; this ties the constants to the README's
// Limits table (and its "at most 100 values" for completion), written as literals.
documented('each protocol limit has the value the README documents', () => {
  assert.equal({
    MAX_JSON_DEPTH, MAX_BATCH_LENGTH, MAX_CLIENT_CAPABILITIES_BYTES, MAX_CLIENT_INFO_STRING_LENGTH, MAX_REQUEST_ID_LENGTH,
    MAX_REQUESTS_IN_FLIGHT, MAX_SESSION_CONVERSATIONS, MAX_COMPLETION_VALUES, MAX_SESSION_SUBSCRIPTIONS, MAX_SUBSCRIPTION_URI_LENGTH,
  }, {
    MAX_JSON_DEPTH: 64, MAX_BATCH_LENGTH: 1000, MAX_CLIENT_CAPABILITIES_BYTES: 65_536, MAX_CLIENT_INFO_STRING_LENGTH: 256, MAX_REQUEST_ID_LENGTH: 256,
    MAX_REQUESTS_IN_FLIGHT: 512, MAX_SESSION_CONVERSATIONS: 1000, MAX_COMPLETION_VALUES: 100, MAX_SESSION_SUBSCRIPTIONS: 256, MAX_SUBSCRIPTION_URI_LENGTH: 256,
  });
});

documented.run();

// ---------------------------------------------------------------------------------------------
const names = suite('names that are Object.prototype members');

names('every Object.prototype name as a method is -32601, before and after initialize', () => {
  for (const state of [fresh(), ready()]) {
    for (const [i, name] of prototypeNames.entries()) {
      const r = feed(state, req(i + 1, name));
      const reply = only(r.replies);
      assert.is(reply.id, i + 1);
      assert.is(reply.error?.code, state.phase === 'ready' ? -32601 : -32600, name);
    }
  }
});

names('every Object.prototype name as a notification gets no reply', () => {
  for (const name of prototypeNames) assert.equal(feed(ready(), { jsonrpc: '2.0', method: name }).replies, [], name);
});

names('a tool, prompt, completion ref or harness named like an Object.prototype member is -32602', () => {
  for (const name of prototypeNames) {
    const s = ready();
    assert.is(only(feed(s, req(1, 'tools/call', { name, arguments: {} })).replies).error?.code, -32602, `tool ${name}`);
    assert.is(only(feed(s, req(2, 'prompts/get', { name })).replies).error?.code, -32602, `prompt ${name}`);
    const completion = req(3, 'completion/complete', { ref: { type: 'ref/prompt', name }, argument: { name, value: '' } });
    assert.is(only(feed(s, completion).replies).error?.code, -32602, `completion ${name}`);
    assert.is(only(feed(s, req(4, 'resources/read', { uri: name })).replies).error?.code, -32002, `resource ${name}`);
    const chose = feed(fresh(), init('2025-06-18', {}, { _meta: { 'superpi/harness': name } }));
    assert.is(only(chose.replies).error?.code, -32602, `harness ${name}`);
  }
});

names('a harness inherited through _meta\'s prototype is not the caller\'s choice', () => {
  const meta = JSON.parse('{"__proto__":{"superpi/harness":"super-pi-planner"}}') as object;
  const r = feed(fresh(), init('2025-06-18', {}, { _meta: meta }));
  assert.ok(only(r.replies).result);
  assert.is(r.state.harness, null);
});

names('the tool catalogue answers no Object.prototype name', () => {
  const catalogue = toolCatalog as Readonly<Record<string, unknown>>;
  for (const name of prototypeNames) assert.is(catalogue[name], undefined, name);
  assert.equal(Object.keys(toolCatalog), ['read', 'write', 'edit', 'bash', 'grep', 'find', 'ls', 'harness_task']);
});

names.run();

// ---------------------------------------------------------------------------------------------
const depth = suite('nesting depth (MAX_JSON_DEPTH)');

depth('nestsDeeperThan counts the message object as level 1 and is safe at any depth', () => {
  assert.is(nestsDeeperThan({ a: { b: [] } }, 3), false);
  assert.is(nestsDeeperThan({ a: { b: [{}] } }, 3), true);
  assert.is(nestsDeeperThan(JSON.parse(`${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`), MAX_JSON_DEPTH), true);
  assert.is(nestsDeeperThan('text', 0), false);
  // Scalars and null are not a level: only objects and arrays nest.
  assert.is(nestsDeeperThan({ a: { b: [1, 'x', null, true] } }, 3), false);
  assert.is(nestsDeeperThan([[[0]]], 3), false);
});

depth('an initialize whose capabilities nest 5,000 levels is -32602 naming the limit; the session stays uninitialized', () => {
  const r = feed(fresh(), initWithCapabilities(nested(5000)));
  const reply = only(r.replies);
  assert.is(reply.id, 0);
  assert.is(reply.error?.code, -32602);
  assert.match(reply.error?.message ?? '', `MAX_JSON_DEPTH (${MAX_JSON_DEPTH})`);
  assert.is(r.state.phase, 'awaiting-initialize');
  const again = feed(r.state, init());
  assert.ok(only(again.replies).result);
  // What the actor checkpoints after it is encodable (the overflow was in the checkpoint encoder).
  encodeCheckpoint({ ...again.state, pending: [] });
});

depth('a message at exactly MAX_JSON_DEPTH is accepted; one level more is refused', () => {
  // The message is level 1, params 2, capabilities 3: capabilities may nest MAX_JSON_DEPTH - 2 levels.
  const atLimit = feed(fresh(), initWithCapabilities(nested(MAX_JSON_DEPTH - 2)));
  assert.ok(only(atLimit.replies).result);
  encodeCheckpoint({ ...atLimit.state, pending: [] });
  const over = feed(fresh(), initWithCapabilities(nested(MAX_JSON_DEPTH - 1)));
  assert.is(only(over.replies).error?.code, -32602);
});

depth('a too-deep notification is dropped without a reply; a too-deep non-message is -32600 with id null', () => {
  assert.equal(feed(ready(), `{"jsonrpc":"2.0","method":"notifications/progress","params":${nested(200)}}`).replies, []);
  const reply = only(feed(ready(), `{"junk":${nested(200)}}`).replies);
  assert.is(reply.id, null);
  assert.is(reply.error?.code, -32600);
  assert.match(reply.error?.message ?? '', 'MAX_JSON_DEPTH');
});

depth('a too-deep answer to a question the server asked settles it as an error, so nothing waits for it', () => {
  const s = ready('2025-06-18', { sampling: {} });
  const started = feed(s, req(1, 'tools/call', { name: 'harness_task', arguments: { harness: 'super-pi-planner', prompt: 'plan' } }));
  const run = started.effects.find((e) => e.kind === 'runTool');
  assert.ok(run && run.kind === 'runTool');
  const asked = fold(started.state, { kind: 'clientRequest', ticket: run.ticket, key: 7, method: 'sampling/createMessage', params: {} });
  const question = only(asked.replies) as Reply & { id: string };
  const answered = feed(asked.state, `{"jsonrpc":"2.0","id":${JSON.stringify(question.id)},"result":${nested(500)}}`);
  assert.equal(answered.replies, []);
  const settled = answered.effects.find((e) => e.kind === 'clientResponse');
  assert.ok(settled && settled.kind === 'clientResponse' && settled.key === 7 && settled.error?.code === -32602);
  assert.ok(![...answered.state.pending.values()].some((p) => p.kind === 'outgoing'));
});

depth('in a batch each element is bounded on its own', () => {
  const line = `[{"jsonrpc":"2.0","id":1,"method":"ping","params":{"deep":${nested(100)}}},{"jsonrpc":"2.0","id":2,"method":"ping"}]`;
  const r = feed(ready('2025-03-26'), line);
  assert.equal(r.replies.map((x) => [(x as Reply).id, (x as Reply).error?.code ?? 'ok']), [[1, -32602], [2, 'ok']]);
});

/** Levels of objects and arrays in a JSON value, itself included; every object and array in it. */
function levelsAndObjects(value: unknown, found: object[] = []): number {
  if (typeof value !== 'object' || value === null) return 0;
  found.push(value);
  let deepest = 0;
  for (const member of Object.values(value)) deepest = Math.max(deepest, levelsAndObjects(member, found));
  return deepest + 1;
}

depth('a value of known levels (a kept _meta) counts as walking it would, wherever it stands, for any limit', () => {
  fc.assert(fc.property(fc.jsonValue({ maxDepth: 8 }), fc.nat(), fc.integer({ min: 0, max: 10 }), (value, pick, max) => {
    const objects: object[] = [];
    levelsAndObjects(value, objects);
    if (objects.length === 0) return;
    const known = objects[pick % objects.length] as object;
    assert.is(nestsDeeperThan(value, max, { value: known, levels: levelsAndObjects(known) }), nestsDeeperThan(value, max));
  }), { seed: 20_261_207, numRuns: 2000 });
});

depth('the walk does not enter a value whose levels are known (a kept _meta is not walked again)', () => {
  // Enumerating this object throws: a walk that entered it would throw instead of answering.
  const unwalkable = new Proxy({}, { ownKeys: () => { throw new Error('walked into the known value'); } });
  const message = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read', _meta: unwalkable } };
  assert.is(nestsDeeperThan(message, MAX_JSON_DEPTH, { value: unwalkable, levels: 2 }), false);
  assert.is(nestsDeeperThan(message, 3, { value: unwalkable, levels: 2 }), true);
});

depth('a kept _meta is bounded on every request: at MAX_JSON_DEPTH accepted, one level more refused, answered from the cache or not', () => {
  // The message is level 1, params 2, _meta 3: a _meta may nest MAX_JSON_DEPTH - 2 levels.
  const line = (id: number, metaLevels: number) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt"},`
    + `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"x":${nested(metaLevels - 1)}}}}`;
  for (const [levels, refused] of [[MAX_JSON_DEPTH - 2, false], [MAX_JSON_DEPTH - 1, true], [MAX_JSON_DEPTH + 5, true]] as const) {
    for (const id of [1, 2, 3]) {
      const r = feed(ready(), line(id, levels));
      if (refused) {
        const reply = only(r.replies);
        assert.is(reply.error?.code, -32602);
        assert.match(reply.error?.message ?? '', `MAX_JSON_DEPTH (${MAX_JSON_DEPTH})`);
      } else {
        assert.equal(r.replies, []);
        assert.ok(r.effects.some((e) => e.kind === 'runTool'), `levels ${levels}, request ${id}: the read did not start`);
      }
    }
    // The later lines were answered by the cache: their `_meta` is the kept value, counted by its levels.
    assert.is(keptMetaNesting(parseMessageText(line(4, levels)))?.levels, levels);
  }
});

depth.run();

// ---------------------------------------------------------------------------------------------
const kept = suite('what a session keeps is bounded');

kept('4 MB of capabilities are refused naming MAX_CLIENT_CAPABILITIES_BYTES; the session stays uninitialized', () => {
  const r = feed(fresh(), init('2025-03-26', { experimental: { blob: 'x'.repeat(4 * 1024 * 1024) } }));
  const reply = only(r.replies);
  assert.is(reply.error?.code, -32602);
  assert.match(reply.error?.message ?? '', `MAX_CLIENT_CAPABILITIES_BYTES (${MAX_CLIENT_CAPABILITIES_BYTES})`);
  assert.is(r.state.phase, 'awaiting-initialize');
  assert.equal(r.state.clientCapabilities, {});
});

kept('capabilities of exactly MAX_CLIENT_CAPABILITIES_BYTES are kept', () => {
  const padding = MAX_CLIENT_CAPABILITIES_BYTES - JSON.stringify({ experimental: { blob: '' } }).length;
  const capabilities = { experimental: { blob: 'x'.repeat(padding) } };
  assert.is(JSON.stringify(capabilities).length, MAX_CLIENT_CAPABILITIES_BYTES);
  assert.ok(only(feed(fresh(), init('2025-03-26', capabilities)).replies).result);
});

kept('clientInfo strings past MAX_CLIENT_INFO_STRING_LENGTH are -32602; only name, version and title are kept', () => {
  const long = 'n'.repeat(MAX_CLIENT_INFO_STRING_LENGTH + 1);
  for (const clientInfo of [{ name: long, version: '1' }, { name: 'c', version: long }, { name: 'c', version: '1', title: long }]) {
    const reply = only(feed(fresh(), init('2025-06-18', {}, { clientInfo })).replies);
    assert.is(reply.error?.code, -32602);
    assert.match(reply.error?.message ?? '', 'MAX_CLIENT_INFO_STRING_LENGTH');
  }
  const r = feed(fresh(), init('2025-06-18', {}, { clientInfo: { name: 'c', version: '1', title: 'T', extra: 'y'.repeat(100_000) } }));
  assert.equal(r.state.clientInfo, { name: 'c', version: '1', title: 'T' });
});

kept('a request id or progress token longer than MAX_REQUEST_ID_LENGTH is refused', () => {
  const long = 'i'.repeat(MAX_REQUEST_ID_LENGTH + 1);
  const reply = only(feed(ready(), req(long, 'ping')).replies);
  assert.equal([reply.id, reply.error?.code], [null, -32600]);
  assert.match(reply.error?.message ?? '', 'MAX_REQUEST_ID_LENGTH');
  assert.ok(only(feed(ready(), req('i'.repeat(MAX_REQUEST_ID_LENGTH), 'ping')).replies).result);
  const call = feed(ready(), req(1, 'tools/call', { name: 'ls', arguments: {}, _meta: { progressToken: long } }));
  assert.is(only(call.replies).error?.code, -32602);
  assert.is(call.state.pending.size, 0);
});

kept('past MAX_REQUESTS_IN_FLIGHT a request is refused with -32011 and nothing is added', () => {
  let state: ConnectionState = ready();
  for (let i = 0; i < MAX_REQUESTS_IN_FLIGHT; i++) state = feed(state, req(i, 'tools/call', { name: 'ls', arguments: {} })).state;
  assert.is(state.pending.size, MAX_REQUESTS_IN_FLIGHT);
  const r = feed(state, req('one more', 'tools/call', { name: 'ls', arguments: {} }));
  assert.is(only(r.replies).error?.code, -32011);
  assert.match(only(r.replies).error?.message ?? '', `MAX_REQUESTS_IN_FLIGHT (${MAX_REQUESTS_IN_FLIGHT})`);
  assert.is(r.state.pending.size, MAX_REQUESTS_IN_FLIGHT);
});

kept('a session starts at most MAX_SESSION_CONVERSATIONS conversations, counting tasks in flight', () => {
  const conversations = Array.from({ length: MAX_SESSION_CONVERSATIONS - 1 }, (_, i) => `c${i}`);
  const state: ConnectionState = { ...ready(), conversations };
  const task = (id: number) => req(id, 'tools/call', { name: 'harness_task', arguments: { harness: 'super-pi-planner', prompt: 'plan' } });
  const first = feed(state, task(1));
  assert.equal(first.replies, []);
  const second = feed(first.state, task(2));
  assert.is(only(second.replies).error?.code, -32602);
  assert.match(only(second.replies).error?.message ?? '', `MAX_SESSION_CONVERSATIONS (${MAX_SESSION_CONVERSATIONS})`);
});

kept('a 2026-07-28 harness_task leaves no conversation in the session it was served on: past MAX_SESSION_CONVERSATIONS of them, the next still starts', () => {
  // A pooled HTTP session (stateless-pool.ts) serves every modern request of its principal for as long as they
  // keep coming; had each synchronous task's conversation stayed in it, the principal's harness_task would be
  // refused there ("open a new session", which a 2026-07-28 client cannot do) after MAX_SESSION_CONVERSATIONS.
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
  const task = (id: number) => req(id, 'tools/call', { name: 'harness_task', arguments: { harness: 'super-pi-planner', prompt: 'plan' }, _meta: meta });
  let state: ConnectionState = fresh({ principal: { kind: 'token', name: 'alice' } });
  for (let i = 1; i <= MAX_SESSION_CONVERSATIONS; i++) {
    const started = feed(state, task(i));
    const run = started.effects.find((e) => e.kind === 'runTool');
    if (run?.kind !== 'runTool') throw new Error(`task ${i} did not start: ${JSON.stringify(started.replies)}`);
    const done = fold(started.state, { kind: 'toolDone', ticket: run.ticket, outcome: { text: 'the plan', structured: { conversation_id: `c${i}`, harness: 'super-pi-planner', status: 'completed', turns: 1, tool_calls: 0 } } });
    assert.is((only(done.replies).result as { resultType?: string }).resultType, 'complete');
    state = done.state;
  }
  assert.equal(state.conversations, [], 'the session keeps none of a modern request\'s conversations (its listing is the store\'s)');
  const next = feed(state, task(MAX_SESSION_CONVERSATIONS + 1));
  assert.equal(next.replies, [], 'not refused');
  assert.ok(next.effects.some((e) => e.kind === 'runTool'), 'the task starts');
});

kept('a 2026-07-28 harness_task is not refused for the conversations a 2025 session on the same connection started', () => {
  // stdio serves both eras on one session: the legacy count is the legacy session's, not a modern request's.
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
  const conversations = Array.from({ length: MAX_SESSION_CONVERSATIONS }, (_, i) => `c${i}`);
  const state: ConnectionState = { ...ready(), conversations };
  const modern = feed(state, req(1, 'tools/call', { name: 'harness_task', arguments: { harness: 'super-pi-planner', prompt: 'plan' }, _meta: meta }));
  assert.equal(modern.replies, []);
  assert.ok(modern.effects.some((e) => e.kind === 'runTool'));
  const legacy = feed(state, req(2, 'tools/call', { name: 'harness_task', arguments: { harness: 'super-pi-planner', prompt: 'plan' } }));
  assert.match(only(legacy.replies).error?.message ?? '', `MAX_SESSION_CONVERSATIONS (${MAX_SESSION_CONVERSATIONS})`, 'the 2025 session is still bounded');
});

const transcript = (id: string | number) => `superpi://conversation/c${id}/transcript`;
const subscribe = (id: string | number, uri: string) => req(id, 'resources/subscribe', { uri });
const watches = (r: { effects: { kind: string }[] }) => r.effects.filter((e) => e.kind === 'watchTranscript') as unknown as { ticket: number; conversationId: string }[];

kept('a session keeps at most MAX_SESSION_SUBSCRIPTIONS subscriptions, counting those the store is still asked about; past it -32602 and nothing changes', () => {
  const state: ConnectionState = { ...ready(), subscriptions: Array.from({ length: MAX_SESSION_SUBSCRIPTIONS - 1 }, (_, i) => transcript(i)) };
  const last = feed(state, subscribe('last', transcript('last')));
  assert.equal(last.replies, [], 'the last place: the store is asked');
  assert.is(watches(last).length, 1);
  // The last place is taken by the lookup in flight: a second new one cannot take it too.
  const over = feed(last.state, subscribe('over', transcript('over')));
  assert.is(only(over.replies).error?.code, -32602);
  assert.match(only(over.replies).error?.message ?? '', `MAX_SESSION_SUBSCRIPTIONS (${MAX_SESSION_SUBSCRIPTIONS})`);
  assert.equal(over.effects, [], 'the store is not asked');
  assert.is(over.state, last.state, 'nothing changes');
  const full = fold(last.state, { kind: 'transcriptFound', ticket: watches(last)[0]!.ticket, found: true });
  assert.is(full.state.subscriptions.length, MAX_SESSION_SUBSCRIPTIONS);
  const stillOver = feed(full.state, subscribe('over2', transcript('over')));
  assert.match(only(stillOver.replies).error?.message ?? '', `MAX_SESSION_SUBSCRIPTIONS (${MAX_SESSION_SUBSCRIPTIONS})`);
  assert.is(stillOver.state, full.state);
});

kept('a subscription the session has, or is already looking up, is not counted twice', () => {
  const state: ConnectionState = { ...ready(), subscriptions: Array.from({ length: MAX_SESSION_SUBSCRIPTIONS }, (_, i) => transcript(i)) };
  const again = feed(state, subscribe('again', transcript(0)));
  assert.equal(again.replies, [], 'one it has: asked again, not refused');
  const found = fold(again.state, { kind: 'transcriptFound', ticket: watches(again)[0]!.ticket, found: true });
  assert.equal(found.replies, [{ jsonrpc: '2.0', id: 'again', result: {} }]);
  assert.is(found.state.subscriptions.length, MAX_SESSION_SUBSCRIPTIONS, 'kept once');
  // One place left, and two subscribes to the same new transcript in flight: both are looked up.
  const oneLeft: ConnectionState = { ...ready(), subscriptions: state.subscriptions.slice(1) };
  const twice = feed(oneLeft, subscribe('a', transcript('new')), subscribe('b', transcript('new')));
  assert.equal(twice.replies, []);
  assert.is(watches(twice).length, 2);
  const both = fold(twice.state, ...watches(twice).map((w) => ({ kind: 'transcriptFound' as const, ticket: w.ticket, found: true })));
  assert.is(both.state.subscriptions.length, MAX_SESSION_SUBSCRIPTIONS);
});

kept('an unsubscribe frees a place', () => {
  const state: ConnectionState = { ...ready(), subscriptions: Array.from({ length: MAX_SESSION_SUBSCRIPTIONS }, (_, i) => transcript(i)) };
  const off = feed(state, req('off', 'resources/unsubscribe', { uri: transcript(7) }));
  const next = feed(off.state, subscribe('next', transcript('next')));
  assert.equal(next.replies, []);
  assert.is(watches(next).length, 1);
});

kept('a subscription URI longer than MAX_SUBSCRIPTION_URI_LENGTH is -32602 naming the limit; the store is not asked', () => {
  const at = `superpi://conversation/${'a'.repeat(MAX_SUBSCRIPTION_URI_LENGTH - 34)}/transcript`;
  assert.is(at.length, MAX_SUBSCRIPTION_URI_LENGTH);
  assert.is(watches(feed(ready(), subscribe(1, at))).length, 1, 'at the limit: looked up');
  const long = feed(ready(), subscribe(2, `superpi://conversation/${'a'.repeat(MAX_SUBSCRIPTION_URI_LENGTH - 33)}/transcript`));
  assert.is(only(long.replies).error?.code, -32602);
  assert.match(only(long.replies).error?.message ?? '', `MAX_SUBSCRIPTION_URI_LENGTH (${MAX_SUBSCRIPTION_URI_LENGTH})`);
  assert.equal(long.effects, []);
  assert.is(long.state.pending.size, 0);
});

kept.run();

// ---------------------------------------------------------------------------------------------
const batches = suite('batch length (MAX_BATCH_LENGTH) and slices');

const pings = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => req(i, 'ping')));

batches('a batch of 30,000 pings is one -32600 with id null naming the limit', () => {
  const r = feed(ready('2025-03-26'), pings(30_000));
  const reply = only(r.replies);
  assert.equal([reply.id, reply.error?.code], [null, -32600]);
  assert.match(reply.error?.message ?? '', `MAX_BATCH_LENGTH (${MAX_BATCH_LENGTH})`);
});

batches('a batch of MAX_BATCH_LENGTH pings gets every answer, in order', () => {
  const r = feed(ready('2025-03-26'), pings(MAX_BATCH_LENGTH));
  assert.equal(r.replies.map((x) => (x as Reply).id), Array.from({ length: MAX_BATCH_LENGTH }, (_, i) => i));
});

batches('handled in slices, a batch gives the same replies and state as handled whole', () => {
  const s = ready('2025-03-26');
  const items = [req(1, 'ping'), req(2, 'logging/setLevel', { level: 'debug' }), req(3, 'tools/list'), req(4, 'nope'), { jsonrpc: '2.0', method: 'x' }, req(5, 'ping')];
  const whole = handleMcpLine(JSON.stringify(items), s);
  let step = handleMcpLineSliced(JSON.stringify(items), s, 2);
  const replies = [...step.replies];
  let slices = 1;
  while (step.rest) {
    step = continueBatch(step.rest, step.state, 2);
    replies.push(...step.replies);
    slices++;
  }
  assert.is(slices, 3);
  assert.equal(replies, whole.replies);
  assert.equal(step.state.logLevel, whole.state.logLevel);
});

batches.run();
