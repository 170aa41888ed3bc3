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
import { pathToFileURL } from 'node:url';
import { makeSandbox } from '../test/e2e/fixtures.ts';
import { FILE, FILE_TEXT } from './http.ts';
import { type Era, type RunStdio, startInProcessStdio } from './lib/in-process-stdio.ts';
import { fmt, table } from './lib/stats.ts';
import { repoRoot } from './stdio.ts';

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

/** One in-process stdio server of `runStdio`'s build for `era`; `block(n)` gives the CPU µs per call of n calls, `flight` at a time. */
async function startServer(runStdio: RunStdio, ws: string, era: Era) {
  const server = await startInProcessStdio(runStdio, ws, era, flight, 'bench-builds');
  return { block: async (n: number) => (await server.block(n)).cpuUs / n, stop: () => server.stop() };
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
