// The `_meta` cache (src/mcp/meta-cache.ts) never changes what a line means: for any text, generated as
// messages (kept `_meta` first, last, alone, twice, nested in arguments, inside strings, spaced, in
// batches, with the placeholder the cache splices in) or as loose fragments that are mostly not JSON,
// its parse deep-equals `JSON.parse` (key order included) or both throw. And the cache keeps what it
// should, within its bounds.

import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { leastTextLength, MetaCache, parseMessageText } from '../../src/mcp/meta-cache.ts';
import { MAX_META_CACHE_ENTRIES, MAX_META_CACHE_TEXT_LENGTH } from '../../src/limits.ts';

const SEED = 20_261_207;
const RUNS = 3000;

const MODERN = JSON.stringify({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'bench-http', version: '1.0.0' },
});
/** The texts every generated line may carry, kept in the cache before it is parsed. */
const KEPT = [MODERN, '{}', '{"a":[1,{"b":"\\"_meta\\":{}}"}],"c":null}', '{"k":"}},\\"_meta\\":x"}'];
/** Texts close to the kept ones that are not kept (or not keepable). */
const OTHERS = [
  '{"progressToken":1}', JSON.stringify(JSON.parse(MODERN), null, 1), `${MODERN.slice(0, -1)},"x":1}`, '{"a":"\\u0000"}', '[]', '"\\u0000"', '{"_meta":{}}',
  // Holds `"_meta":` itself, so the look-up (the line's last `"_meta":`) never reaches its start: never kept.
  '{"params":{"_meta":{}}}',
];

const learningLine = (kept: string) => `{"jsonrpc":"2.0","id":0,"method":"m","params":{"_meta":${kept}}}`;

/** A cache that keeps every text of KEPT. */
function primed(): MetaCache {
  const cache = new MetaCache();
  for (const kept of KEPT) cache.parse(learningLine(kept));
  assert.equal(cache.texts(), KEPT);
  return cache;
}

type Outcome = { ok: true; value: unknown; hit: boolean } | { ok: false };

function outcome(parse: () => unknown): Outcome {
  try {
    const value = parse();
    const meta = (value as { params?: { _meta?: unknown } } | null)?.params?._meta;
    return { ok: true, value, hit: typeof meta === 'object' && meta !== null && Object.isFrozen(meta) };
  } catch {
    return { ok: false };
  }
}

/** Asserts `cache.parse(line)` means what `JSON.parse(line)` means; true when the cache answered it. */
function sameMeaning(cache: MetaCache, line: string): boolean {
  const expected = outcome(() => JSON.parse(line));
  const got = outcome(() => cache.parse(line));
  assert.is(got.ok, expected.ok, `parses: ${line}`);
  if (!got.ok || !expected.ok) return false;
  assert.equal(got.value, expected.value, line);
  assert.is(JSON.stringify(got.value), JSON.stringify(expected.value), `key order: ${line}`);
  return got.hit;
}

// ---------------------------------------------------------------------------------------------
// Generators

const space = fc.constantFrom('', '', '', ' ', '\n', '\t ');
const metaText = fc.constantFrom(...KEPT, ...KEPT, ...OTHERS, '"\\u0000"', '1');
const scalar = fc.oneof(fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)), fc.string({ maxLength: 6 }).map((s) => JSON.stringify(s)));
/** Arguments, often holding a kept text where only params' own `_meta` should count. */
const argumentsText = fc.oneof(
  scalar,
  metaText.map((m) => `{"_meta":${m}}`),
  metaText.map((m) => `{"params":{"_meta":${m}}}`),
  metaText.map((m) => `{"path":"x","_meta":${m}}`),
  metaText.map((m) => JSON.stringify(`"_meta":${m}`)),
  metaText.map((m) => `{"x\\"_meta":${m}}`),
  metaText.map((m) => `[{"_meta":${m}},"\\u0000"]`),
);
type Member = readonly [string, string];
const member = (key: string, value: fc.Arbitrary<string>) => value.map((v): Member => [key, v]);
/** params' members: `_meta` anywhere, absent, or twice (the last one counts). */
const paramsMembers = fc.tuple(
  fc.array(fc.oneof(member('"name"', fc.constantFrom('"read"', '"x"')), member('"arguments"', argumentsText), member('"_meta"', metaText), member('"\\u005fmeta"', metaText)), { maxLength: 4 }),
  fc.option(member('"_meta"', metaText), { freq: 4 }),
  fc.boolean(),
).map(([rest, meta, metaLast]) => (meta === null ? rest : metaLast ? [...rest, meta] : [meta, ...rest]));
const object = (members: readonly Member[], s: string) => `{${s}${members.map(([k, v]) => `${k}${s}:${s}${v}`).join(`,${s}`)}${s}}`;
const paramsText = fc.oneof(
  fc.tuple(paramsMembers, space).map(([ms, s]) => object(ms, s)),
  fc.constantFrom('[]', '"p"', 'null'),
);
const messageText = fc.tuple(
  fc.shuffledSubarray([['"jsonrpc"', '"2.0"'], ['"id"', '7'], ['"method"', '"tools/call"']] as Member[]),
  paramsText,
  fc.option(paramsText, { freq: 5 }),
  fc.nat(3),
  space,
).map(([head, params, second, at, s]) => {
  const members: Member[] = [...head];
  members.splice(Math.min(at, members.length), 0, ['"params"', params]);
  if (second !== null) members.unshift(['"params"', second]);
  return object(members, s);
});
const lineText = fc.oneof(
  { weight: 6, arbitrary: messageText },
  { weight: 1, arbitrary: fc.array(messageText, { minLength: 1, maxLength: 3 }).map((ms) => `[${ms.join(',')}]`) },
  { weight: 1, arbitrary: fc.tuple(space, messageText).map(([s, m]) => `${s}${m}`) },
);
/** Loose fragments: mostly not JSON, some of them JSON only once a kept text is cut out. */
const fragment = fc.constantFrom(
  '{', '}', '[', ']', ',', ':', '"', '\\', ' ', '"_meta":', '"params":', '"params":{', '"x"', '"\\"', '"\\u0000"', '\\u0000', '1', '"jsonrpc":"2.0"',
  '"a\\"_meta":', ...KEPT, ...OTHERS,
);
const looseText = fc.array(fragment, { maxLength: 14 }).map((fs) => `{${fs.join('')}`);

// ---------------------------------------------------------------------------------------------

test('a generated message means the same parsed through the cache as parsed whole, and the cache answers many', () => {
  let hits = 0;
  fc.assert(fc.property(lineText, (line) => {
    if (sameMeaning(primed(), line)) hits++;
  }), { seed: SEED, numRuns: RUNS });
  // Only worth something if the cache answered some of the lines (most carry a nested `"_meta":` first,
  // or spaces; the next test is the one where every line hits).
  assert.ok(hits > RUNS / 100, `cache answered ${hits} of ${RUNS}`);
});

test('a compact message whose params end with a kept _meta, members in any order, is always answered by the cache', () => {
  const compact = fc.tuple(
    fc.shuffledSubarray([['"jsonrpc"', '"2.0"'], ['"id"', '7'], ['"method"', '"tools/call"']] as Member[]),
    fc.array(fc.oneof(member('"name"', scalar), member('"arguments"', scalar)), { maxLength: 2 }),
    fc.constantFrom(...KEPT),
    fc.nat(3),
  ).map(([head, rest, kept, at]) => {
    const members: Member[] = [...head];
    members.splice(Math.min(at, members.length), 0, ['"params"', object([...rest, ['"_meta"', kept]], '')]);
    return object(members, '');
  });
  fc.assert(fc.property(compact, (line) => {
    assert.ok(sameMeaning(primed(), line), line);
  }), { seed: SEED, numRuns: RUNS / 3 });
});

test('loose fragments (mostly not JSON) parse through the cache exactly as whole, or fail alike', () => {
  fc.assert(fc.property(looseText, (line) => {
    sameMeaning(primed(), line);
  }), { seed: SEED, numRuns: RUNS });
});

test('the modern line of the bench and the SDK v2 client (_meta last in params, params first or last) is answered from the cache', () => {
  const cache = new MetaCache();
  const bench = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt"},"_meta":${MODERN}}}`;
  const sdk = (id: number) => `{"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt"},"_meta":${MODERN}},"jsonrpc":"2.0","id":${id}}`;
  assert.is(sameMeaning(cache, bench(1)), false, 'the first line is parsed whole');
  assert.equal(cache.texts(), [MODERN]);
  assert.is(sameMeaning(cache, bench(2)), true);
  assert.is(sameMeaning(cache, sdk(3)), true);
  assert.is(sameMeaning(cache, `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":${MODERN}}}`), true, '_meta alone');
});

test('a nested copy of a kept _meta, a placeholder planted by the client, or a later _meta key is not mistaken for params._meta', () => {
  const cache = primed();
  const lines = [
    `{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{"_meta":${MODERN}}}}`,
    `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":"\\u0000","arguments":{"_meta":${MODERN}}}}`,
    `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":${MODERN},"_meta":"\\u0000"}}`,
    `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":"\\u0000"},"x":{"_meta":${MODERN}}}`,
    `{"jsonrpc":"2.0","id":1,"method":"m","params":{"x\\"_meta":${MODERN}}}`,
    `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":${MODERN}},"params":{"a":1}}`,
    `{"jsonrpc":"2.0","id":1,"method":"m","params":{,"_meta":${MODERN}}}`,
    `{"jsonrpc":"2.0","id":1,"method":"m","params":{"s":"a,"_meta":${MODERN}}}`,
  ];
  for (const line of lines) assert.is(sameMeaning(cache, line), false, line);
});

test('a cached _meta is deep-frozen and shared; the rest of the message is the request\'s own', () => {
  const cache = new MetaCache();
  const line = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"m","params":{"arguments":{"a":[1]},"_meta":${MODERN}}}`;
  cache.parse(line(1));
  const a = cache.parse(line(2)) as { params: { arguments: object; _meta: Record<string, unknown> } };
  const b = cache.parse(line(3)) as typeof a;
  assert.is(a.params._meta, b.params._meta);
  assert.ok(Object.isFrozen(a.params._meta) && Object.isFrozen(a.params._meta['io.modelcontextprotocol/clientInfo']));
  assert.is.not(a.params.arguments, b.params.arguments);
  assert.not.ok(Object.isFrozen(a.params) || Object.isFrozen(a.params.arguments));
});

test(`the cache keeps at most MAX_META_CACHE_ENTRIES (${MAX_META_CACHE_ENTRIES}) texts, forgetting the oldest`, () => {
  const cache = new MetaCache();
  const texts = Array.from({ length: MAX_META_CACHE_ENTRIES + 3 }, (_, i) => `{"n":${i}}`);
  for (const text of texts) cache.parse(learningLine(text));
  assert.is(cache.size, MAX_META_CACHE_ENTRIES);
  assert.equal(cache.texts(), texts.slice(3));
  assert.is(sameMeaning(cache, learningLine(texts[0] as string)), false, 'forgotten: parsed whole (and kept again)');
  assert.is(sameMeaning(cache, learningLine(texts[5] as string)), true);
});

test(`a _meta longer than MAX_META_CACHE_TEXT_LENGTH (${MAX_META_CACHE_TEXT_LENGTH} characters), with a progress token, spaced, or holding \\u0000 is not kept`, () => {
  const cache = new MetaCache();
  const long = JSON.stringify({ pad: 'x'.repeat(MAX_META_CACHE_TEXT_LENGTH) });
  const justFits = JSON.stringify({ pad: 'x'.repeat(MAX_META_CACHE_TEXT_LENGTH - 10) });
  assert.is(justFits.length, MAX_META_CACHE_TEXT_LENGTH);
  for (const text of [long, '{"progressToken":"t"}', '{ "a": 1 }', '{"a":"\\u0000"}']) cache.parse(learningLine(text));
  assert.is(cache.size, 0);
  cache.parse(learningLine(justFits));
  assert.equal(cache.texts(), [justFits]);
  // Parsed whole, not kept: a `_meta` that is not an object, or a message without params.
  for (const line of ['{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":[1]}}', '{"jsonrpc":"2.0","id":1,"method":"m"}', '[{"params":{"_meta":{"b":1}}}]']) cache.parse(line);
  assert.is(cache.size, 1);
});

test('a limit of one entry, and of a few characters, holds', () => {
  const cache = new MetaCache(1, 8);
  cache.parse(learningLine('{"a":1}'));
  cache.parse(learningLine('{"b":2}'));
  cache.parse(learningLine('{"c":333}'));
  assert.equal(cache.texts(), ['{"b":2}']);
});

test('the thread cache throws as JSON.parse throws', () => {
  assert.throws(() => parseMessageText('{"a":'), (err: unknown) => err instanceof SyntaxError);
  assert.equal(parseMessageText('[1,2]'), [1, 2]);
});

test('leastTextLength is never more than the JSON text\'s length, so no _meta within the limit is turned away', () => {
  fc.assert(fc.property(fc.jsonValue(), fc.integer({ min: 0, max: 300 }), (value, budget) => {
    const length = JSON.stringify(value).length;
    const least = leastTextLength(value, budget);
    if (length <= budget) assert.ok(least <= length, `${least} > ${length} for ${JSON.stringify(value)}`);
    else assert.ok(least <= length || least > budget, `${least} for ${JSON.stringify(value)} (${length})`);
  }), { seed: SEED, numRuns: RUNS });
});

test('a _meta nested past the stack or of megabytes is parsed as JSON.parse does, never kept, and its walk stays within the limit', () => {
  const cache = new MetaCache();
  const deep = '{"a":'.repeat(5000) + '1' + '}'.repeat(5000);
  const line = `{"jsonrpc":"2.0","id":"deep","method":"tools/list","params":{"_meta":{"x":${deep}}}}`;
  assert.equal(cache.parse(line), JSON.parse(line));
  const big = `{"jsonrpc":"2.0","id":"big","method":"tools/list","params":{"_meta":{"x":${JSON.stringify('y'.repeat(1_000_000))}}}}`;
  assert.equal(cache.parse(big), JSON.parse(big));
  assert.is(cache.size, 0);
  assert.ok(leastTextLength(JSON.parse(deep), MAX_META_CACHE_TEXT_LENGTH) > MAX_META_CACHE_TEXT_LENGTH);
});

test.run();
