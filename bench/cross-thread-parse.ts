// Issue 24 item 6, lead 1: should the main thread hand a scheduler thread its parse of a 2026-07-28 POST,
// so the line is not parsed twice? A message crosses threads by V8's serializer (what postMessage uses):
// this measures, for the bench's modern `tools/call read` line, what the main thread pays to send the
// message (serialize) and what the worker pays to receive it (deserialize), with the text alone (today),
// the text and its parse, and the parse alone, against the worker's JSON.parse of the text.
// Lead 2 (the `_meta` a client repeats on every request): what JSON.parse of the modern line costs against
// the legacy one, and against the modern line with its known `_meta` text cut out first (what a cache keyed
// by that text could save, before any check that the text found is `params._meta`).
// Usage: npx tsx bench/cross-thread-parse.ts   (ns per message, the minimum of 9 runs)

import { loadavg } from 'node:os';
import { deserialize, serialize } from 'node:v8';
import { modernMeta, readParams } from './lib/mcp-http-client.ts';
import { fmt, table } from './lib/stats.ts';

const line = JSON.stringify({ jsonrpc: '2.0', id: 12345, method: 'tools/call', params: { ...readParams('a.txt'), _meta: modernMeta } });
const parsed: unknown = JSON.parse(line);
const RUNS = 9;
const N = 100_000;

function nsPer(f: () => unknown): number {
  let best = Number.POSITIVE_INFINITY;
  for (let r = 0; r < RUNS; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < N; i++) f();
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / N);
  }
  return best;
}

const load = loadavg()[0] ?? 0;
const parse = nsPer(() => JSON.parse(line));
const rows: string[][] = [];
for (const [name, message] of [['the text (today)', { k: 'line', line }], ['the text and its parse', { k: 'line', line, parsed }], ['the parse alone', { k: 'parsed', parsed }]] as const) {
  const bytes = serialize(message);
  const send = nsPer(() => serialize(message));
  const receive = nsPer(() => deserialize(bytes));
  const workerTotal = receive + (name === 'the text (today)' ? parse : 0);
  rows.push([name, String(bytes.length), fmt(send, 0), fmt(receive, 0), fmt(workerTotal, 0)]);
}
process.stdout.write(`the line: ${line.length} characters; JSON.parse of it ${fmt(parse, 0)} ns; load average ${fmt(load, 1)}\n`);
process.stdout.write(`${table(['the message carries', 'bytes', 'main thread: serialize, ns', 'worker: deserialize, ns', 'worker: deserialize + parse, ns'], rows)}\n`);

// Fresh lines, as requests are (each has its own id): the same string parsed again measures something else.
const lines = (params: object) => Array.from({ length: N }, (_, i) => JSON.stringify({ jsonrpc: '2.0', id: 12345 + i, method: 'tools/call', params }));
const legacyLines = lines(readParams('a.txt'));
const modernLines = lines({ ...readParams('a.txt'), _meta: modernMeta });
const metaText = `,"_meta":${JSON.stringify(modernMeta)}`;
const cut = (text: string) => {
  const at = text.indexOf(metaText);
  return at < 0 ? text : text.slice(0, at) + text.slice(at + metaText.length);
};
let next = 0;
const each = (all: readonly string[], f: (text: string) => unknown) => () => f(all[next++ % N] as string);
process.stdout.write(`\n${table(['JSON.parse of', 'characters', 'ns'], [
  ['a legacy line', String(legacyLines[0]?.length), fmt(nsPer(each(legacyLines, (t) => JSON.parse(t))), 0)],
  ['a modern line', String(modernLines[0]?.length), fmt(nsPer(each(modernLines, (t) => JSON.parse(t))), 0)],
  ['a modern line, its known _meta text cut out first', String(cut(modernLines[0] as string).length), fmt(nsPer(each(modernLines, (t) => JSON.parse(cut(t)))), 0)],
  ['(finding that text alone: indexOf)', '', fmt(nsPer(each(modernLines, (t) => t.indexOf(metaText))), 0)],
])}\n`);
