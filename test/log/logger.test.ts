// The operator's log (src/log/logger.ts) against caller text: control characters, line breaks and bidi
// overrides are escaped JSON-style, every string is capped at MAX_LOGGED_STRING_LENGTH, the fields at
// MAX_LOGGED_FIELDS_LENGTH; and, through the pure core, any method name a caller sends in a notification
// gives at most one log line, of bounded length, with no raw line break.

import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger, escapeLogText } from '../../src/log/logger.ts';
import { feed, ready } from '../mcp/golden.ts';
import { MAX_JSON_DEPTH, MAX_LOGGED_FIELDS_LENGTH, MAX_LOGGED_STRING_LENGTH, MAX_METHOD_LENGTH } from '../../src/limits.ts';

const SEED = 2207;
/** The longest line a record can make: timestamp and level, the message (each character escaped to at most 6), the fields, two cut notes. */
const MAX_LINE_LENGTH = 64 + 6 * MAX_LOGGED_STRING_LENGTH + MAX_LOGGED_FIELDS_LENGTH + 2 * 40;
const clock = () => new Date(0);

type Answer = { id: unknown; error: { code: number; message: string } };

function capture() {
  const lines: string[] = [];
  return { lines, logger: createLogger('debug', { write: (t: string) => lines.push(t) }, clock) };
}

/** One record is one line: a single line break, at its end; nothing a terminal would read as another. */
function assertOneLine(line: string): void {
  assert.is(line.indexOf('\n'), line.length - 1, JSON.stringify(line.slice(0, 200)));
  assert.not.match(line, /[\r\u2028\u2029\u0085\u202e]/);
  assert.ok(line.length <= MAX_LINE_LENGTH, `a line of ${line.length} characters`);
}

test('a message with a line break cannot forge a second line: it is escaped JSON-style', () => {
  const { lines, logger } = capture();
  logger.log('warning', 'notification x\n1970-01-01T00:00:00.000Z super-pi error: forged\r\u2028\u202e');
  assert.equal(lines, ['1970-01-01T00:00:00.000Z super-pi warning: notification x\\n1970-01-01T00:00:00.000Z super-pi error: forged\\r\\u2028\\u202e\n']);
});

test('a backslash is doubled, so an escaped line break and a written "\\n" read differently', () => {
  assert.is(escapeLogText('a\\nb'), 'a\\\\nb');
  assert.is(escapeLogText('a\nb'), 'a\\nb');
});

test('fields: strings are capped and escaped (C1 controls and separators too), secrets redacted', () => {
  const { lines, logger } = capture();
  logger.log('info', 'm', { path: 'x'.repeat(MAX_LOGGED_STRING_LENGTH + 10), odd: '\u0085\u2029', token: 'hunter2' });
  const line = lines[0] as string;
  assertOneLine(line);
  assert.match(line, `"path":"${'x'.repeat(MAX_LOGGED_STRING_LENGTH)}…(10 more characters)"`);
  assert.match(line, '"odd":"\\u0085\\u2029"');
  assert.match(line, '"token":"[redacted]"');
  assert.not.match(line, 'hunter2');
});

test('a 1 MB message or field gives one line of bounded length', () => {
  const { lines, logger } = capture();
  const huge = 'a'.repeat(1 << 20);
  logger.log('warning', huge, { method: huge, list: Array.from({ length: 100 }, () => huge) });
  assert.is(lines.length, 1);
  assertOneLine(lines[0] as string);
  assert.match(lines[0] as string, `…(${(1 << 20) - MAX_LOGGED_STRING_LENGTH} more characters)`);
});

test('fields that cannot be serialised still give their line, saying so', () => {
  const { lines, logger } = capture();
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  logger.log('info', 'm', { cycle });
  assert.is(lines.length, 1);
  assert.match(lines[0] as string, '"unserialisable"');
});

const methods = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.constantFrom('\n', 'x\r\ny', '\u2028', '\u202e', 'a\\nb'),
  fc.integer({ min: MAX_METHOD_LENGTH - 2, max: 1 << 20 }).chain((n) => fc.constantFrom('m'.repeat(n), '\n'.repeat(n), 'é'.repeat(n))),
);

test(`property: any method name in a notification (and one nesting deeper than MAX_JSON_DEPTH) gives at most one log line, bounded, with no raw line break (seed ${SEED})`, () => {
  fc.assert(fc.property(methods, fc.boolean(), (method, deep) => {
    let params: unknown = {};
    if (deep) for (let i = 0; i < MAX_JSON_DEPTH + 2; i++) params = { p: params };
    const run = feed(ready(), { jsonrpc: '2.0', method, params });
    // An empty method is no notification: it is refused as invalid, with id null.
    assert.ok((run.replies as { id: unknown }[]).every((r) => r.id === null), 'nothing answers with an id');
    const { lines, logger } = capture();
    for (const e of run.effects) if (e.kind === 'log') logger.log(e.level, e.message, e.data);
    assert.ok(lines.length <= 1, `${lines.length} lines`);
    for (const line of lines) assertOneLine(line);
  }), { seed: SEED, numRuns: 300 });
});

test('a request whose method is longer than MAX_METHOD_LENGTH is -32600 with its id; one of exactly MAX_METHOD_LENGTH is only unknown (-32601)', () => {
  const long = feed(ready(), { jsonrpc: '2.0', id: 5, method: 'm'.repeat(MAX_METHOD_LENGTH + 1) });
  const longReplies = long.replies as Answer[];
  assert.equal(longReplies.map((r) => [r.id, r.error.code]), [[5, -32600]]);
  assert.match(longReplies[0]?.error.message ?? '', 'MAX_METHOD_LENGTH');
  const limit = feed(ready(), { jsonrpc: '2.0', id: 6, method: 'm'.repeat(MAX_METHOD_LENGTH) });
  assert.equal((limit.replies as Answer[]).map((r) => [r.id, r.error.code]), [[6, -32601]]);
});

test('a notification whose method is longer than MAX_METHOD_LENGTH is dropped with one log line that does not repeat it', () => {
  const run = feed(ready(), { jsonrpc: '2.0', method: `notifications/${'x'.repeat(MAX_METHOD_LENGTH)}` });
  assert.is(run.replies.length, 0);
  const logs = run.effects.filter((e) => e.kind === 'log');
  assert.is(logs.length, 1);
  assert.match(JSON.stringify(logs[0]), 'MAX_METHOD_LENGTH');
  assert.not.match(JSON.stringify(logs[0]), 'xxxx');
});

test.run();
