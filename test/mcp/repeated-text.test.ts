// A read's window is both its text content and its structuredContent.content: the answer's line escapes it
// once (src/mcp/repeated-text.ts), and the line is always exactly what JSON.stringify of the whole answer
// gives, in both eras, whatever the text holds (U+0000, a spelled-out `\u0000`, quotes, any code point).

import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { handleEffectResult, handleMcpLine } from '../../src/mcp/handle.ts';
import { resultLine } from '../../src/mcp/jsonrpc.ts';
import { REPEATED_TEXT_MIN_CHARS, TEXT_STAND_IN } from '../../src/mcp/repeated-text.ts';
import { type ConnectionState, initialState } from '../../src/mcp/state.ts';
import { ready } from './golden.ts';

const SEED = 20_261_207;
const RUNS = 2000;
const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'repeated-text-test', version: '1.0.0' },
};
const SERVER_META = { 'io.modelcontextprotocol/serverInfo': { name: 'super-pi', version: '0.1.0' } };

/** Texts that stress the proof: U+0000 and the spelling `\u0000` among ordinary and escaped characters. */
const text = fc.array(fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.constantFrom('\u0000', '\\u0000', '"\\u0000"', '"', '\\', '\n', '\u2028', '\ud800', 'line of a file\n') },
), { maxLength: 12 }).map((parts) => parts.join(''));
const longText = fc.tuple(text, fc.string({ minLength: REPEATED_TEXT_MIN_CHARS, maxLength: 200 })).map(([a, b]) => a + b);
const id = fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant('\u0000'));

/** A read's outcome: the window is the text and structuredContent.content, beside the read's other fields. */
const outcome = fc.record({
  text: fc.oneof(text, longText),
  path: fc.oneof(fc.string({ maxLength: 20 }), fc.constant('\u0000')),
  lines: fc.nat(),
  notices: fc.array(fc.oneof(fc.string({ maxLength: 10 }), fc.constant('\\u0000')), { maxLength: 2 }),
  isError: fc.boolean(),
}).map(({ text, path, lines, notices, isError }) => ({
  text,
  structured: { path, content: text, offset: 1, lines, totalLines: lines, totalLinesKnown: true, truncated: false, notices },
  ...(isError ? { isError: true } : {}),
}));

type Outcome = { text: string; structured: Record<string, unknown>; isError?: boolean };

/** The line answering tools/call `callId` with `out`, folded in the era's state. */
function answerLine(era: 'legacy' | 'modern', callId: number | string, out: Outcome): string {
  const state: ConnectionState = era === 'legacy' ? ready() : initialState({ workspace: '/ws' });
  const params = era === 'legacy' ? { name: 'read', arguments: { path: 'a.txt' } } : { name: 'read', arguments: { path: 'a.txt' }, _meta: MODERN_META };
  const started = handleMcpLine(JSON.stringify({ jsonrpc: '2.0', id: callId, method: 'tools/call', params }), state);
  const effect = started.effects.find((e) => e.kind === 'runTool');
  if (effect?.kind !== 'runTool') throw new Error(`no call started: ${JSON.stringify(started.replies)}`);
  const done = handleEffectResult({ kind: 'toolDone', ticket: effect.ticket, outcome: out }, started.state);
  assert.is(done.replies.length, 1);
  return done.replies[0]?.line ?? '';
}

/** The line JSON.stringify gives for the whole answer. */
function expectedLine(era: 'legacy' | 'modern', callId: number | string, out: Outcome): string {
  const result: Record<string, unknown> = { content: [{ type: 'text', text: out.text }], structuredContent: out.structured };
  if (out.isError) result.isError = true;
  if (era === 'modern') Object.assign(result, { resultType: 'complete', _meta: SERVER_META });
  return JSON.stringify({ jsonrpc: '2.0', id: callId, result });
}

test('a read answer\'s line is JSON.stringify of the whole answer, in both eras, whatever its text holds', () => {
  fc.assert(fc.property(fc.constantFrom('legacy' as const, 'modern' as const), id, outcome, (era, callId, out) => {
    assert.is(answerLine(era, callId, out), expectedLine(era, callId, out));
  }), { seed: SEED, numRuns: RUNS });
});

test('resultLine with a stand-in gives the whole result\'s line, or encodes the result itself when the stand-in cannot be proven', () => {
  fc.assert(fc.property(id, longText, fc.jsonValue({ maxDepth: 3 }), (callId, window, other) => {
    const result = { content: [{ type: 'text', text: window }], structuredContent: { other, content: window } };
    const standIn = { content: [{ type: 'text', text: TEXT_STAND_IN }], structuredContent: { other, content: TEXT_STAND_IN } };
    assert.is(resultLine(callId, result, { text: window, places: 2, standIn }), JSON.stringify({ jsonrpc: '2.0', id: callId, result }));
  }), { seed: SEED, numRuns: RUNS });
});

test('the window of a read answer is escaped once, not once for each place it appears (both eras)', () => {
  const window = Array.from({ length: 8 }, (_, i) => `line ${i + 1} of a small file that both servers read`).join('\n') + '\n';
  const escaped = JSON.stringify(window).slice(1, -1);
  const original = JSON.stringify;
  for (const era of ['legacy', 'modern'] as const) {
    let escapes = 0;
    // Counts the window's encodings among everything JSON.stringify writes while the answer is made.
    JSON.stringify = ((value: unknown, ...rest: []) => {
      const out = original(value, ...rest);
      if (typeof out === 'string') for (let at = out.indexOf(escaped); at !== -1; at = out.indexOf(escaped, at + 1)) escapes++;
      return out;
    }) as typeof JSON.stringify;
    let line: string;
    try {
      line = answerLine(era, 3, { text: window, structured: { path: 'a.txt', content: window, offset: 1, lines: 8, totalLines: 8, totalLinesKnown: true, truncated: false, notices: [] } });
    } finally {
      JSON.stringify = original;
    }
    assert.is(escapes, 1, era);
    assert.is(line.split(escaped).length - 1, 2, `${era}: the line carries the window twice`);
  }
});

test.run();
