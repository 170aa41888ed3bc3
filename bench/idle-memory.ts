// Memory per idle Streamable HTTP session alone (issue 27: ≤ 0.2× the SDK's): bench/http.ts's `idleMemory`
// (2,000 sessions kept, then 10,000 idle ones, VmRSS after − before ÷ sessions) on fresh processes of
// super-pi (this checkout, and any other built checkouts named with --old) and of the SDK, one server at a
// time, round after round, without the throughput levels of the full section around it.
// Usage: npm run build && npx tsx bench/idle-memory.ts [--rounds 2] [--old name=DIR,name=DIR]

import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { makeSandbox } from '../test/e2e/fixtures.ts';
import { FILE, FILE_TEXT, idleMemory, type MemoryResult, startSdk, startSuperPi, type Target } from './http.ts';
import { fmt } from './lib/stats.ts';

const { values: opts } = parseArgs({ options: { rounds: { type: 'string', default: '2' }, old: { type: 'string', default: '' } } });
const rounds = Number(opts.rounds);
const olds = opts.old === '' ? [] : opts.old.split(',').map((pair) => {
  const [name, dir] = pair.split('=');
  if (!name || !dir) throw new Error(`--old takes name=DIR, got ${pair}`);
  return { name, dir: path.resolve(dir) };
});

const kb = (bytes: number) => `${fmt(bytes / 1024, 2)} KB`;

async function measure(start: () => Promise<Target>): Promise<MemoryResult> {
  const target = await start();
  try {
    return await idleMemory(target);
  } finally {
    await target.stop();
  }
}

const box = await makeSandbox();
try {
  await writeFile(path.join(box.ws, FILE), FILE_TEXT);
  const names = ['this tree', ...olds.map((o) => o.name), 'SDK'];
  const lines = [`| round | ${names.join(' | ')} | this tree ÷ SDK |${olds.map((o) => ` ${o.name} ÷ SDK |`).join('')}`, `|---|${names.map(() => '---:|').join('')}---:|${olds.map(() => '---:|').join('')}`];
  for (let round = 1; round <= rounds; round++) {
    const results: MemoryResult[] = [];
    results.push(await measure(() => startSuperPi(box.ws)));
    for (const old of olds) results.push(await measure(() => startSuperPi(box.ws, [], [], old.dir)));
    const sdk = await measure(() => startSdk(box.ws));
    results.push(sdk);
    const ratios = results.slice(0, -1).map((r) => `${fmt(r.perSession / sdk.perSession, 3)}×`);
    const [first, ...rest] = ratios;
    lines.push(`| ${round} | ${results.map((r) => `${kb(r.perSession)} (${fmt(r.sessions, 0)})`).join(' | ')} | ${first} |${rest.map((r) => ` ${r} |`).join('')}`);
    process.stderr.write(`round ${round}: ${results.map((r) => `${r.name} ${kb(r.perSession)} slope ${kb(r.slope)}`).join(', ')}\n`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  await box.cleanup();
}
