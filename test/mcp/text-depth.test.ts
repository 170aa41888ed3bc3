// A message's nesting read from its text before it is parsed (src/mcp/text-depth.ts): the depth read equals
// the depth of what JSON.parse gives, and a line bounded that way is answered exactly as the unbounded parse
// of it would be answered, without ever being parsed itself when it nests past MAX_JSON_DEPTH.

import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { handleMcpLine, handleParsedMessage } from '../../src/mcp/handle.ts';
import { parseMessageText } from '../../src/mcp/meta-cache.ts';
import { depthBoundedText, textDepth } from '../../src/mcp/text-depth.ts';
import type { ConnectionState } from '../../src/mcp/state.ts';
import { DEPTH_SCAN_MIN_CHARS, MAX_JSON_DEPTH } from '../../src/limits.ts';
import { ready } from './golden.ts';

const SEED = 20_261_208;

/** The depth of a parsed value, iteratively (a scalar 0, `[]` 1). */
function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (typeof node !== 'object' || node === null) continue;
    deepest = Math.max(deepest, depth + 1);
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/** Strings made of the characters that could fool a scan: brackets, quotes, backslashes. */
const tricky = fc.string({ unit: fc.constantFrom('[', ']', '{', '}', '"', '\\', '\\"', 'a', ' ', '\n', '\u2028'), maxLength: 12 });
/** JSON text nesting `levels` levels, written without JSON.stringify (which overflows on deep values). */
const nestedText = (levels: number, array: boolean, inner: string): string =>
  levels === 0 ? inner : array ? `${'['.repeat(levels)}${inner}${']'.repeat(levels)}` : `${'{"k\\"[":'.repeat(levels)}${inner}${'}'.repeat(levels)}`;
/** Any JSON value (strings that hold brackets and escaped quotes among them), wrapped in 0..200 levels. */
const jsonText = fc.tuple(
  fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.dictionary(tricky, fc.oneof(tricky, fc.array(tricky, { maxLength: 3 })), { maxKeys: 4 })),
  fc.integer({ min: 0, max: 200 }), fc.boolean(), fc.boolean(),
).map(([value, levels, array, spaced]) => nestedText(levels, array, JSON.stringify(value, null, spaced ? 2 : undefined)));

test(`property: the depth read from the text is the depth of JSON.parse's result, for any JSON value (seed ${SEED})`, () => {
  fc.assert(fc.property(jsonText, (text) => {
    const depth = depthOf(JSON.parse(text));
    assert.is(textDepth(text), depth);
    // Stopped early, it says only that the depth passed: one more than where it stopped.
    assert.is(textDepth(text, 3), Math.min(depth, 4));
  }), { seed: SEED, numRuns: 600 });
});

/** What the core answered before the bound: the unbounded parse of the line, a batch's elements one by one. */
function unboundedAnswer(text: string, state: ConnectionState): { replies: unknown[]; effects: unknown[] } {
  const value: unknown = JSON.parse(text);
  if (!Array.isArray(value) || !state.protocolVersion?.startsWith('2025-03')) {
    if (Array.isArray(value)) return answerOf(handleMcpLine(text, state));
    return answerOf(handleParsedMessage(value, state));
  }
  let current = state;
  const answer = { replies: [] as unknown[], effects: [] as unknown[] };
  for (const item of value) {
    const step = handleParsedMessage(item, current);
    current = step.state;
    answer.replies.push(...step.replies);
    answer.effects.push(...step.effects);
  }
  return answer;
}

const answerOf = (step: { replies: readonly unknown[]; effects: readonly unknown[] }) => ({ replies: [...step.replies], effects: [...step.effects] });

/** A message (request, notification, answer or junk) whose members nest around the limit, alone or in a batch. */
const member = fc.tuple(fc.integer({ min: 0, max: MAX_JSON_DEPTH + 40 }), fc.boolean(), fc.oneof(fc.constant('1'), tricky.map((s) => JSON.stringify(s))))
  .map(([levels, array, inner]) => nestedText(levels, array, inner));
const message = fc.record({
  id: fc.oneof(fc.integer({ min: 1, max: 9 }).map(String), fc.constant('"a\\"]"'), member),
  method: fc.constantFrom('"ping"', '"tools/list"', '"notifications/progress"', '"x[{"', null),
  params: fc.option(member), result: fc.option(member), junk: fc.option(member),
  // Padding takes some lines past DEPTH_SCAN_MIN_CHARS, where the core itself reads the text first.
  pad: fc.nat({ max: DEPTH_SCAN_MIN_CHARS }),
}).map(({ id, method, params, result, junk, pad }) => {
  const members = ['"jsonrpc":"2.0"', `"id":${id}`, `"pad":"${'x'.repeat(pad)}"`];
  if (method !== null) members.push(`"method":${method}`);
  if (params !== null) members.push(`"params":${params}`);
  if (result !== null) members.push(`"result":${result}`);
  if (junk !== null) members.push(`"junk\\"{":${junk}`);
  return `{${members.join(',')}}`;
});
const line = fc.oneof(message, fc.array(fc.oneof(message, member), { minLength: 1, maxLength: 4 }).map((items) => `[${items.join(', ')}]`));

test(`property: a line bounded before parsing is answered as its unbounded parse is; one within the limit is left as it is (seed ${SEED})`, () => {
  fc.assert(fc.property(line, fc.constantFrom('2025-06-18', '2025-03-26'), (text, version) => {
    const state = ready(version);
    const unbounded = unboundedAnswer(text, state);
    assert.equal(answerOf(handleMcpLine(text, state)), unbounded);
    assert.equal(unboundedAnswer(depthBoundedText(text, MAX_JSON_DEPTH), state), unbounded);
    const parsed: unknown = JSON.parse(text);
    const items: unknown[] = Array.isArray(parsed) ? parsed : [parsed];
    if (items.every((m) => depthOf(m) <= MAX_JSON_DEPTH)) assert.is(depthBoundedText(text, MAX_JSON_DEPTH), text);
  }), { seed: SEED, numRuns: 400 });
});

test('a 4 MiB request of brackets is parsed as a stand-in of a few hundred bytes, and refused -32602 with its id', () => {
  const levels = 2 * 1024 * 1024 - 64;
  const text = `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":${'['.repeat(levels)}${']'.repeat(levels)}}}`;
  const bounded = depthBoundedText(text, MAX_JSON_DEPTH);
  assert.ok(bounded.length < 1000, `stand-in of ${bounded.length} characters`);
  assert.is(textDepth(bounded), MAX_JSON_DEPTH + 1);
  assert.is(depthOf(parseMessageText(text)), MAX_JSON_DEPTH + 1);
  const [reply] = handleMcpLine(text, ready()).replies;
  const answer = JSON.parse(reply?.line ?? '') as { id: unknown; error: { code: number; message: string } };
  assert.is(answer.id, 7);
  assert.is(answer.error.code, -32602);
  assert.match(answer.error.message, `MAX_JSON_DEPTH (${MAX_JSON_DEPTH})`);
});

/** The texts JSON.parse is given while `run` runs. */
function parsedTexts(run: () => void): string[] {
  const parse = JSON.parse;
  const texts: string[] = [];
  JSON.parse = ((text: string, reviver?: (key: string, value: unknown) => unknown) => {
    texts.push(text);
    return parse(text, reviver);
  }) as typeof JSON.parse;
  try {
    run();
  } finally {
    JSON.parse = parse;
  }
  return texts;
}

const META = '{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"m","version":"1"}}';

test('no text nesting past MAX_JSON_DEPTH reaches JSON.parse while the core handles a long deep line, a modern cursor of brackets among them', () => {
  const brackets = (n: number) => `${'['.repeat(n)}"x"${']'.repeat(n)}`;
  const lines = [
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":${brackets(50_000)}}}`,
    `[{"jsonrpc":"2.0","id":2,"method":"ping","params":{"a":${brackets(50_000)}}},{"jsonrpc":"2.0","id":3,"method":"ping"}]`,
    `{"jsonrpc":"2.0","id":4,"method":"resources/list","params":{"_meta":${META},"cursor":"sc1.${btoa(brackets(50_000)).replace(/=+$/, '')}"}}`,
  ];
  for (const line of lines) {
    for (const version of ['2025-06-18', '2025-03-26']) {
      let replies: readonly { line: string }[] = [];
      const texts = parsedTexts(() => { replies = handleMcpLine(line, ready(version)).replies; });
      assert.ok(texts.length > 0);
      // A stand-in nests one level past the limit (in a batch, one more): only its few hundred characters are parsed.
      for (const text of texts) assert.ok(textDepth(text, MAX_JSON_DEPTH + 2) <= MAX_JSON_DEPTH + 2, `a text of ${text.length} characters nesting past the limit was parsed`);
      assert.ok(replies.length > 0, line.slice(0, 80));
    }
  }
});

test.run();
