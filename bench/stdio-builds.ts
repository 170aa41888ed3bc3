// Two builds of super-pi side by side, for a change's before and after on a shared machine: the stdio
// server of each build's dist/ (`runStdio`, in-thread actors, streams instead of pipes) runs in this one
// process, for both eras, and blocks of `tools/call read` alternate between the four (order reversed every
// other round), so the machine's load falls on all of them alike. Per server: the process CPU per call of
// each block (the server's whole work for a call on its one thread, and this driver's few string
// operations, the same for all); the minimum over the blocks is the least disturbed figure, the median
// the typical one. Every reply is checked.
// Usage: node scripts/build.mjs (in both trees), then
//   npx tsx bench/stdio-builds.ts --old <checkout with dist/> [--new <checkout>] [--flight 64] [--calls 4000] [--rounds 15]

import { loadavg } from 'node:os';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { makeSandbox } from '../test/e2e/fixtures.ts';
import { FILE, FILE_TEXT } from './http.ts';
import { modernMeta, readParams } from './lib/mcp-http-client.ts';
import { fmt, table } from './lib/stats.ts';
import { repoRoot } from './stdio.ts';

type RunStdio = (options: object) => Promise<unknown>;

const option = (name: string): string | undefined => {
  const at = process.argv.indexOf(name);
  return at < 0 ? undefined : process.argv[at + 1];
};
const oldRoot = option('--old');
if (oldRoot === undefined) throw new Error('usage: npx tsx bench/stdio-builds.ts --old <checkout with dist/> [--new <checkout>]');
const roots = { new: path.resolve(option('--new') ?? repoRoot), old: path.resolve(oldRoot) };
const flight = Number(option('--flight') ?? 64);
const calls = Number(option('--calls') ?? 4000);
const rounds = Number(option('--rounds') ?? 15);

/** One in-process stdio server of `runStdio`'s build for `era`; `block(n)` runs n calls, `flight` at a time, and gives the CPU µs per call. */
async function startServer(runStdio: RunStdio, ws: string, era: 'legacy' | 'modern') {
  const input = new PassThrough();
  let onReplies: (count: number, text: string) => void = () => undefined;
  const output = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const text = chunk.toString('utf8');
      let count = 0;
      for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) count++;
      onReplies(count, text);
      done();
    },
  });
  const ended = runStdio({ workspace: ws, input, output, logLevel: 'emergency' });
  const params = JSON.stringify(era === 'modern' ? { ...readParams(FILE), _meta: modernMeta } : readParams(FILE));
  let id = 0;
  const line = () => `{"jsonrpc":"2.0","id":${++id},"method":"tools/call","params":${params}}`;
  const expected = JSON.stringify(FILE_TEXT).slice(1, -1);
  if (era === 'legacy') {
    await new Promise<void>((resolve) => {
      onReplies = () => resolve();
      input.write(`${JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench-builds', version: '1.0.0' } } })}\n`);
    });
    input.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  }
  const block = (n: number) => new Promise<number>((resolve, reject) => {
    let sent = Math.min(flight, n);
    let done = 0;
    const cpu0 = process.cpuUsage();
    onReplies = (count, text) => {
      if (!text.includes(expected) || text.includes('"error"') || text.includes('"isError":true')) {
        reject(new Error(`${era}: unexpected reply: ${text.slice(0, 300)}`));
        return;
      }
      done += count;
      if (done >= n) {
        const cpu = process.cpuUsage(cpu0);
        resolve((cpu.user + cpu.system) / n);
        return;
      }
      const more = Math.min(count, n - sent);
      if (more > 0) {
        input.write(`${Array.from({ length: more }, line).join('\n')}\n`);
        sent += more;
      }
    };
    input.write(`${Array.from({ length: sent }, line).join('\n')}\n`);
  });
  return { block, stop: async () => { input.end(); await ended; } };
}

const sandbox = await makeSandbox();
await writeFile(path.join(sandbox.ws, FILE), FILE_TEXT);
const servers = new Map<string, Awaited<ReturnType<typeof startServer>>>();
try {
  for (const [build, root] of Object.entries(roots)) {
    const { runStdio } = await import(pathToFileURL(path.join(root, 'dist', 'index.js')).href) as { runStdio: RunStdio };
    for (const era of ['legacy', 'modern'] as const) servers.set(`${build} ${era}`, await startServer(runStdio, sandbox.ws, era));
  }
  const names = [...servers.keys()];
  for (const s of servers.values()) await s.block(calls);
  const perCall = new Map(names.map((n) => [n, [] as number[]]));
  const load = loadavg()[0] ?? 0;
  for (let r = 0; r < rounds; r++) {
    for (const name of r % 2 === 0 ? names : [...names].reverse()) perCall.get(name)?.push(await (servers.get(name) as Awaited<ReturnType<typeof startServer>>).block(calls));
  }
  const min = (name: string) => Math.min(...(perCall.get(name) ?? []));
  const median = (name: string) => {
    const sorted = [...(perCall.get(name) ?? [])].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
  };
  process.stdout.write(`new: ${roots.new}; old: ${roots.old}; ${rounds} rounds of ${calls} calls, ${flight} in flight; load average ${fmt(load, 1)} → ${fmt(loadavg()[0] ?? 0, 1)}\n`);
  process.stdout.write(`${table(['server', 'CPU µs per call, min', 'median'], names.map((n) => [n, fmt(min(n), 1), fmt(median(n), 1)]))}\n`);
  const rows = (['legacy', 'modern'] as const).map((era) => [`new ÷ old, ${era}`, fmt(min(`new ${era}`) / min(`old ${era}`), 2), fmt(median(`new ${era}`) / median(`old ${era}`), 2)]);
  for (const build of ['new', 'old']) rows.push([`modern ÷ legacy, ${build}`, fmt(min(`${build} modern`) / min(`${build} legacy`), 2), fmt(median(`${build} modern`) / median(`${build} legacy`), 2)]);
  process.stdout.write(`${table(['ratio', 'of the minima', 'of the medians'], rows)}\n`);
} finally {
  for (const s of servers.values()) await s.stop();
  await sandbox.cleanup();
}
