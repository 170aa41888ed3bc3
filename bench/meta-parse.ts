// Instructions per `tools/call read`, 2026-07-28 against 2025-06-18 (issue 24 item 6), counted rather than
// timed: the machine's other work moves wall-clock and CPU time, hardly the instructions a call executes.
// Both eras' in-process stdio servers (a build's `runStdio`, bench/lib/in-process-stdio.ts, 64 in flight)
// are warmed up, then fed alternating blocks (modern, legacy, legacy, modern …); under callgrind the driver
// has callgrind dump its counters after every block (`callgrind_control -d`), reads each dump's total and
// prints instructions per call of each block. With --core: the same for the core's `handleMcpLine` of
// one line alone (no I/O; the src/ of --root), which is steadier. With --parse: the same for the parse of one line alone
// (JSON.parse against src/mcp/meta-cache.ts, where this checkout has it), lines of each era.
// Without --callgrind it prints CPU µs per block (process.cpuUsage), which load does distort.
// The kernel of this VM exposes no counters to `perf stat -e instructions:u` ("not supported"), hence callgrind.
// Usage: npm run build && valgrind --tool=callgrind --callgrind-out-file=/tmp/mp.out \
//   node --import tsx bench/meta-parse.ts --callgrind /tmp/mp.out [--calls 2000] [--blocks 4] [--warmup 4000] [--parse] [--core [--no-stdio]] [--root DIR]

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { makeSandbox } from '../test/e2e/fixtures.ts';
import { FILE, FILE_TEXT } from './http.ts';
import { type Era, type RunStdio, startInProcessStdio } from './lib/in-process-stdio.ts';
import { modernMeta, readParams } from './lib/mcp-http-client.ts';
import { repoRoot } from './stdio.ts';

const arg = (name: string, fallback: string): string => {
  const at = process.argv.indexOf(name);
  return at < 0 ? fallback : (process.argv[at + 1] as string);
};
const calls = Number(arg('--calls', '2000'));
const blocks = Number(arg('--blocks', '4'));
const warmup = Number(arg('--warmup', '4000'));
const root = path.resolve(arg('--root', repoRoot));
const dumpFile = arg('--callgrind', '');

let dumps = 0;
/** Instructions since the last dump (callgrind), else CPU µs since the last call. */
let cpu0 = process.cpuUsage();
function counted(): number {
  if (dumpFile === '') {
    const used = process.cpuUsage(cpu0);
    cpu0 = process.cpuUsage();
    return used.user + used.system;
  }
  execFileSync('callgrind_control', ['-d', String(process.pid)], { stdio: 'ignore' });
  dumps++;
  const total = /^summary: (\d+)$/m.exec(readFileSync(`${dumpFile}.${dumps}`, 'utf8'));
  if (total === null) throw new Error(`no summary in ${dumpFile}.${dumps}`);
  return Number(total[1]);
}
const unit = dumpFile === '' ? 'CPU µs' : 'instructions';
const eraOf = (b: number): Era => (b % 4 === 0 || b % 4 === 3 ? 'modern' : 'legacy');
const report = (label: string, perCall: Record<Era, number[]>) => {
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const fmt = (xs: number[]) => `${xs.map((x) => (dumpFile === '' ? x.toFixed(1) : String(Math.round(x)))).join(' / ')} (mean ${dumpFile === '' ? mean(xs).toFixed(1) : Math.round(mean(xs))})`;
  process.stdout.write(`${label}, ${unit} per call: modern ${fmt(perCall.modern)}; legacy ${fmt(perCall.legacy)}; modern ÷ legacy ${(mean(perCall.modern) / mean(perCall.legacy)).toFixed(3)}\n`);
};

if (process.argv.includes('--parse')) {
  // One line alone: JSON.parse, and the `_meta` cache where this checkout has one.
  const source = path.join(root, 'src', 'mcp', 'meta-cache.ts');
  const cache = existsSync(source) ? new (await import(pathToFileURL(source).href) as { MetaCache: new () => { parse(t: string): unknown } }).MetaCache() : null;
  const lineOf = (era: Era, id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: era === 'modern' ? Object.assign({}, readParams(FILE), { _meta: modernMeta }) : readParams(FILE) });
  const lines = { modern: Array.from({ length: 500 }, (_, i) => lineOf('modern', 100_000 + i)), legacy: Array.from({ length: 500 }, (_, i) => lineOf('legacy', 100_000 + i)) };
  let sink = 0;
  for (const [label, parse] of [['JSON.parse', (t: string) => JSON.parse(t) as unknown], ...(cache === null ? [] : [['the _meta cache', (t: string) => cache.parse(t)] as const])] as const) {
    const perCall: Record<Era, number[]> = { modern: [], legacy: [] };
    for (let b = 0; b < blocks; b++) {
      const era = eraOf(b);
      for (let k = 0; k < 20; k++) for (const line of lines[era]) sink += (parse(line) as { id: number }).id;
      counted();
      for (let k = 0; k < 20; k++) for (const line of lines[era]) sink += (parse(line) as { id: number }).id;
      perCall[era].push(counted() / (20 * lines[era].length));
    }
    report(`parse of one line, ${label}${sink === 0 ? '' : ''}`, perCall);
  }
}

if (process.argv.includes('--core')) {
  // The core's handling of one line (src/mcp handleMcpLine: parse, classify, depth walk, the modern
  // context and view, the call's bookkeeping), with the state it starts from each time: no I/O, no tool run.
  type Handle = (line: string, state: unknown) => { replies: readonly { line: string }[]; effects: readonly unknown[]; state: unknown };
  const { handleMcpLine } = await import(pathToFileURL(path.join(root, 'src', 'mcp', 'handle.ts')).href) as { handleMcpLine: Handle };
  const { initialState } = await import(pathToFileURL(path.join(root, 'src', 'mcp', 'state.ts')).href) as { initialState: (c: object) => unknown };
  const lineOf = (era: Era, id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: era === 'modern' ? Object.assign({}, readParams(FILE), { _meta: modernMeta }) : readParams(FILE) });
  const lines = { modern: Array.from({ length: 500 }, (_, i) => lineOf('modern', 100_000 + i)), legacy: Array.from({ length: 500 }, (_, i) => lineOf('legacy', 100_000 + i)) };
  let legacy = initialState({ workspace: '/ws' });
  legacy = handleMcpLine(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench-meta-parse', version: '1.0.0' } } }), legacy).state;
  legacy = handleMcpLine('{"jsonrpc":"2.0","method":"notifications/initialized"}', legacy).state;
  const states: Record<Era, unknown> = { modern: initialState({ workspace: '/ws' }), legacy };
  for (const era of ['modern', 'legacy'] as const) {
    const step = handleMcpLine(lines[era][0] as string, states[era]);
    if (step.effects.length !== 1 || step.replies.some((r) => r.line.includes('"error"'))) throw new Error(`${era}: the core did not start the call: ${JSON.stringify(step)}`);
  }
  let sink = 0;
  const perCall: Record<Era, number[]> = { modern: [], legacy: [] };
  for (let b = 0; b < blocks; b++) {
    const era = eraOf(b);
    for (let k = 0; k < 10; k++) for (const line of lines[era]) sink += handleMcpLine(line, states[era]).effects.length;
    counted();
    for (let k = 0; k < 10; k++) for (const line of lines[era]) sink += handleMcpLine(line, states[era]).effects.length;
    perCall[era].push(counted() / (10 * lines[era].length));
  }
  report(`the core's handleMcpLine of a tools/call read line (${root}, ${sink} effects)`, perCall);
  if (process.argv.includes('--no-stdio')) process.exit(0);
}

const sandbox = await makeSandbox();
try {
  writeFileSync(path.join(sandbox.ws, FILE), FILE_TEXT);
  const { runStdio } = await import(pathToFileURL(path.join(root, 'dist', 'index.js')).href) as { runStdio: RunStdio };
  const servers = { modern: await startInProcessStdio(runStdio, sandbox.ws, 'modern', 64, 'bench-meta-parse'), legacy: await startInProcessStdio(runStdio, sandbox.ws, 'legacy', 64, 'bench-meta-parse') };
  for (const era of ['modern', 'legacy'] as const) await servers[era].block(warmup);
  const perCall: Record<Era, number[]> = { modern: [], legacy: [] };
  for (let b = 0; b < blocks; b++) {
    const era = eraOf(b);
    counted();
    await servers[era].block(calls);
    perCall[era].push(counted() / calls);
  }
  for (const era of ['modern', 'legacy'] as const) await servers[era].stop();
  report(`stdio tools/call read, ${calls} calls a block, 64 in flight (${root})`, perCall);
} finally {
  await sandbox.cleanup();
}
