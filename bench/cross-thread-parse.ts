// Issue 24 item 6, lead 1: should the main thread hand a scheduler thread its parse of a 2026-07-28 POST,
// so the line is not parsed twice? A message crosses threads by V8's serializer (what postMessage uses):
// this measures, for the bench's modern `tools/call read` line, what the main thread pays to send the
// message (serialize) and what the worker pays to receive it (deserialize), with the text alone (today),
// the text and its parse, and the parse alone, against the worker's JSON.parse of the text.
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
