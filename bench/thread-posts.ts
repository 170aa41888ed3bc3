// What posting to a scheduler thread costs the main thread (issue 27, Streamable HTTP): a `cast` of the
// bench's modern `tools/call read` line posted to a worker that only counts what it receives, one
// postMessage per message or the messages of one turn as one array, N per event-loop turn. The main
// thread's own CPU time (/proc/self/task/<pid>) per message, and the wall time per message.
// Usage: npx tsx bench/thread-posts.ts

import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { Worker } from 'node:worker_threads';
import { modernMeta, readParams } from './lib/mcp-http-client.ts';
import { fmt, table } from './lib/stats.ts';

const worker = new Worker(`
  const { parentPort } = require('node:worker_threads');
  let received = 0;
  parentPort.on('message', (m) => {
    if (m === 'count') return parentPort.postMessage(received);
    received += Array.isArray(m) ? m.length : 1;
  });`, { eval: true });
const line = JSON.stringify({ jsonrpc: '2.0', id: 12345, method: 'tools/call', params: { ...readParams('a.txt'), _meta: modernMeta } });
const cast = () => ({ t: 'cast', id: 'session-12', msg: { k: 'line', line } });

/** CPU µs of this process's main thread (user + system; 100 ticks a second). */
function mainThreadCpuUs(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 1e4;
}

const counted = (): Promise<unknown> => new Promise((resolve) => {
  worker.once('message', resolve);
  worker.postMessage('count');
});

async function run(perTurn: number, together: boolean, messages: number): Promise<{ cpu: number; wall: number }> {
  const turns = Math.ceil(messages / perTurn);
  const cpu0 = mainThreadCpuUs();
  const t0 = performance.now();
  for (let t = 0; t < turns; t++) {
    if (together) worker.postMessage(Array.from({ length: perTurn }, cast));
    else for (let i = 0; i < perTurn; i++) worker.postMessage(cast());
    await new Promise((resolve) => setImmediate(resolve));
  }
  await counted();
  const n = turns * perTurn;
  return { cpu: (mainThreadCpuUs() - cpu0) / n, wall: ((performance.now() - t0) * 1000) / n };
}

const load = loadavg()[0] ?? 0;
const rows: string[][] = [];
for (const [perTurn, together] of [[1, false], [8, false], [8, true], [64, false], [64, true]] as const) {
  await run(perTurn, together, 5000);
  const runs = [await run(perTurn, together, 40_000), await run(perTurn, together, 40_000)];
  rows.push([String(perTurn), together ? 'one array per turn' : 'one post each', runs.map((r) => fmt(r.cpu, 2)).join(', '), runs.map((r) => fmt(r.wall, 2)).join(', ')]);
}
await worker.terminate();
process.stdout.write(`a ${JSON.stringify(cast()).length}-character cast; load average ${fmt(load, 1)}\n`);
process.stdout.write(`${table(['messages per turn', 'posted as', 'main thread CPU µs per message (two runs)', 'wall µs per message'], rows)}\n`);
