// Instructions per `tools/call read` of a small file, part by part, 2026-07-28 (modern) beside 2025-06-18
// (legacy): the parts a stdio server runs for one call, each counted alone in this process (issue 24 item 6,
// issue 27). Counted, not timed: under callgrind the driver has callgrind dump its counters after each block
// (`callgrind_control -d`) and reads the dump's total; other work on the machine hardly moves the count.
// Each part runs in blocks of --calls, eras alternated (modern, legacy, legacy, modern …), after --warmup
// blocks of each; the report gives each block's instructions per call and their median.
//   parse    the line's parse (src/mcp/meta-cache.ts `parseMessageText`)
//   core     the core's `handleMcpLine` of the request line: parse, depth walk, classify, the modern
//            context and view, validation, the permission rule, the call's bookkeeping (no I/O)
//   fold     the read's result folded back (`handleEffectResult`, a fixed outcome): the answer shaped and encoded
//   read     the read tool's in-process body (`readSmallFileSync`: the confined read and its window)
//   actor    the connection actor's handling of the line (src/connection/connection-actor.ts): all of the
//            above, the inline read included, with the parse the session hands it (stdio's in-thread actor)
//   stdio    a whole stdio round trip in this process (a build's `runStdio` from dist/, streams for pipes:
//            framing, the session, the actor hop, the read, encoding, the write), --flight calls in flight
// Usage: [npm run build &&] valgrind --tool=callgrind --callgrind-out-file=/tmp/ci.out \
//   node [--single-threaded] --import tsx bench/call-instructions.ts --callgrind /tmp/ci.out [--parts parse,core,fold,read,actor,stdio]
//   [--calls 5000] [--blocks 8] [--warmup 3] [--flight 1] [--root DIR]   (without --callgrind: CPU µs per call, load-dependent)
// `--single-threaded` (V8: compile and collect on this thread) for the in-process parts: under callgrind a
// background compiler finishes when the machine lets it, so the blocks after the warm-up still moved by 10k
// and more; on the main thread they settle (BENCHMARKS.md stop 42). Not tried with `stdio`.

import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
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
const calls = Number(arg('--calls', '5000'));
const blocks = Number(arg('--blocks', '8'));
const flight = Number(arg('--flight', '1'));
/** Warm-up blocks of each era before the counted ones (V8 tiers a function up over its first thousands of calls). */
const warmup = Number(arg('--warmup', '3'));
const root = path.resolve(arg('--root', repoRoot));
const dumpFile = arg('--callgrind', '');
const parts = new Set(arg('--parts', 'parse,core,fold,read,actor,stdio').split(','));

let dumps = 0;
let cpu0 = process.cpuUsage();
/**
 * Ends a count and starts the next: under callgrind, a dump whose total is read later (reading a dump
 * here would count the read in the next block), else CPU µs since the last call.
 */
function counted(): () => number {
  if (dumpFile === '') {
    const used = process.cpuUsage(cpu0);
    cpu0 = process.cpuUsage();
    return () => used.user + used.system;
  }
  execFileSync('callgrind_control', ['-d', String(process.pid)], { stdio: 'ignore' });
  const file = `${dumpFile}.${++dumps}`;
  return () => {
    const total = /^summary: (\d+)$/m.exec(readFileSync(file, 'utf8'));
    if (total === null) throw new Error(`no summary in ${file}`);
    return Number(total[1]);
  };
}
const unit = dumpFile === '' ? 'CPU µs' : 'instructions';
const eraOf = (b: number): Era => (b % 4 === 0 || b % 4 === 3 ? 'modern' : 'legacy');
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const shown = (x: number) => (dumpFile === '' ? x.toFixed(2) : String(Math.round(x)));

/** Runs `run(era)` `calls` times a block, eras alternated, after a warm-up block of each; prints per-block figures. */
async function measure(label: string, run: (era: Era) => void | Promise<void>, perBlock = calls, callsPerRun = 1): Promise<void> {
  for (let w = 0; w < warmup; w++) for (const era of ['modern', 'legacy'] as const) for (let i = 0; i < perBlock; i++) await run(era);
  // One block counted and dropped: under callgrind the first block after the warm-up counts half as much
  // again as the rest, whichever era it runs (the first dump of the part, seen in every part).
  counted();
  for (let i = 0; i < perBlock; i++) await run('legacy');
  counted();
  const counts: { era: Era; count: () => number; dump: number }[] = [];
  for (let b = 0; b < blocks; b++) {
    const era = eraOf(b);
    counted();
    for (let i = 0; i < perBlock; i++) await run(era);
    counts.push({ era, count: counted(), dump: dumps });
  }
  const perCall: Record<Era, number[]> = { modern: [], legacy: [] };
  for (const { era, count } of counts) perCall[era].push(count() / (perBlock * callsPerRun));
  if (dumpFile !== '') process.stdout.write(`  ${label}: dumps ${counts.map((c) => `${dumpFile}.${c.dump} (${c.era})`).join(', ')}\n`);
  const m = median(perCall.modern);
  const l = median(perCall.legacy);
  process.stdout.write(`${label}, ${unit} per call (median; blocks): modern ${shown(m)} (${perCall.modern.map(shown).join(' / ')}); `
    + `legacy ${shown(l)} (${perCall.legacy.map(shown).join(' / ')}); modern − legacy ${shown(m - l)}; modern ÷ legacy ${(m / l).toFixed(3)}\n`);
}

const src = (file: string) => import(pathToFileURL(path.join(root, 'src', file)).href);
type Step = { replies: readonly { line: string }[]; effects: readonly { kind: string; ticket?: number }[]; state: unknown };
const lineOf = (era: Era, id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: era === 'modern' ? Object.assign({}, readParams(FILE), { _meta: modernMeta }) : readParams(FILE) });
const lines = { modern: Array.from({ length: 500 }, (_, i) => lineOf('modern', 100_000 + i)), legacy: Array.from({ length: 500 }, (_, i) => lineOf('legacy', 100_000 + i)) };
let turn = 0;
const nextLine = (era: Era) => lines[era][turn++ % 500] as string;

const sandbox = await makeSandbox();
try {
  writeFileSync(path.join(sandbox.ws, FILE), FILE_TEXT);
  const ws = sandbox.ws;
  const { handleMcpLine, handleEffectResult } = await src('mcp/handle.ts') as { handleMcpLine: (l: string, s: unknown) => Step; handleEffectResult: (r: unknown, s: unknown) => Step };
  const { initialState } = await src('mcp/state.ts') as { initialState: (c: object) => unknown };
  const { readSmallFileSync } = await src('tools/read.ts') as { readSmallFileSync: (a: object, ws: string, max: number) => unknown };
  const legacyStart = ['{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench-call-instructions","version":"1.0.0"}}}', '{"jsonrpc":"2.0","method":"notifications/initialized"}'];
  let legacy = initialState({ workspace: ws });
  for (const l of legacyStart) legacy = handleMcpLine(l, legacy).state;
  const states: Record<Era, unknown> = { modern: initialState({ workspace: ws }), legacy };
  const outcome = readSmallFileSync({ path: FILE }, ws, 256 * 1024);
  // The state each era's call leaves in flight, and its result, for the fold.
  const started = { modern: handleMcpLine(lines.modern[0] as string, states.modern), legacy: handleMcpLine(lines.legacy[0] as string, states.legacy) };
  for (const era of ['modern', 'legacy'] as const) {
    const s = started[era];
    if (s.effects.length !== 1 || s.effects[0]?.kind !== 'runTool') throw new Error(`${era}: the core did not start the call: ${JSON.stringify(s.replies)}`);
    const folded = handleEffectResult({ kind: 'toolDone', ticket: s.effects[0].ticket, outcome }, s.state);
    if (folded.replies.length !== 1 || !folded.replies[0]?.line.includes('"structuredContent"')) throw new Error(`${era}: the fold did not answer: ${JSON.stringify(folded.replies)}`);
  }
  let sink = 0;
  if (parts.has('parse')) {
    const { parseMessageText } = await src('mcp/meta-cache.ts') as { parseMessageText: (t: string) => { id: number } };
    await measure('parse (parseMessageText)', (era) => { sink += parseMessageText(nextLine(era)).id; });
  }
  if (parts.has('core')) await measure('core (handleMcpLine of the request)', (era) => { sink += handleMcpLine(nextLine(era), states[era]).effects.length; });
  if (parts.has('fold')) {
    const results = { modern: { kind: 'toolDone', ticket: started.modern.effects[0]?.ticket, outcome }, legacy: { kind: 'toolDone', ticket: started.legacy.effects[0]?.ticket, outcome } };
    await measure('fold (handleEffectResult of the read, answer encoded)', (era) => { sink += (handleEffectResult(results[era], started[era].state).replies[0]?.line.length ?? 0); });
  }
  if (parts.has('read')) await measure('read (readSmallFileSync, confined, window rendered)', () => { sink += readSmallFileSync({ path: FILE }, ws, 256 * 1024) === null ? 0 : 1; });
  if (parts.has('actor')) {
    const { connectionBehaviour } = await src('connection/connection-actor.ts') as { connectionBehaviour: { init(a: object, c: object): unknown; handle(m: object, s: unknown, c: object, k: 'cast'): { state: unknown } } };
    const { lineMessage } = await src('connection/parsed-lines.ts') as { lineMessage: (l: string, r: object) => object };
    const { parseMessageText } = await src('mcp/meta-cache.ts') as { parseMessageText: (t: string) => unknown };
    let emitted = 0;
    const ctx = { self: 'bench', emit: (out: { replies: { line: string }[] }) => { emitted += out.replies.length; }, continueWith: () => undefined };
    const config = (initialState({ workspace: ws }) as { config: object }).config;
    const actors: Record<Era, unknown> = { modern: connectionBehaviour.init({ config }, ctx), legacy: connectionBehaviour.init({ config }, ctx) };
    for (const l of legacyStart) actors.legacy = connectionBehaviour.handle({ k: 'line', line: l }, actors.legacy, ctx, 'cast').state;
    // The session parses the line and hands the actor its value (stdio, parsed-lines.ts): that parse is counted here too.
    await measure('actor (the connection actor: the line, its inline read, the answer)', (era) => {
      const line = nextLine(era);
      actors[era] = connectionBehaviour.handle(lineMessage(line, { batch: false, values: [parseMessageText(line)] }), actors[era], ctx, 'cast').state;
    });
    if (emitted === 0) throw new Error('the actor answered nothing');
  }
  if (parts.has('stdio')) {
    const { runStdio } = await import(pathToFileURL(path.join(root, 'dist', 'index.js')).href) as { runStdio: RunStdio };
    const servers = { modern: await startInProcessStdio(runStdio, ws, 'modern', flight, 'bench-call-instructions'), legacy: await startInProcessStdio(runStdio, ws, 'legacy', flight, 'bench-call-instructions') };
    const batch = Math.max(flight, Math.round(calls / 5));
    await measure(`stdio (runStdio of ${path.relative(process.cwd(), root) || '.'}/dist, ${flight} in flight, ${batch} calls a block)`, async (era) => { await servers[era].block(batch); }, 1, batch);
    for (const era of ['modern', 'legacy'] as const) await servers[era].stop();
  }
  if (sink === -1) process.stdout.write('\n');
} finally {
  await sandbox.cleanup();
}
