// Matching cannot hold the server (issue 22): one HTTP server, two sessions on one scheduler thread.
// Session A pings one at a time; session B runs, in turn, an `edit` of 1,500 items on a 4 MB file (past
// EDIT_MAX_EDITS today: refused by the schema), one of 1,000 items (the most allowed), and a `find` with
// the review's backtracking glob (`*?` ×12 + `Z` over 36-character names). Reported: A's ping p99 during
// each, against A alone; and the same figures for another source tree (`--old DIR`, e.g. /work/main).
// Usage: npm run build && tsx bench/matching.ts [--quick] [--old DIR]

import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from '../test/e2e/fixtures.ts';
import { McpHttpSession, pingWhile } from './lib/mcp-http-client.ts';
import { type BenchOptions, type BenchRow, type BenchSection, type BenchSectionRunner, isMain } from './lib/report.ts';
import { fmt, percentile, sleep } from './lib/stats.ts';

const FILE_LINES = 100_000;
/** ~4 MB: 100,000 lines of 41 bytes. */
const line = (i: number) => `line ${String(i).padStart(7, '0')} of the four MB file ...`;
/** Built once: building it in the loop would stall this process, which sends the pings. */
const CONTENT = `${Array.from({ length: FILE_LINES }, (_, i) => line(i)).join('\n')}\n`;
const GLOB = `${'*?'.repeat(12)}Z`;
const NAMES = 40;
/** The deadline of one call: the backtracking find on a RegExp engine runs until it. */
const TOOL_TIMEOUT_S = 10;

interface Plan {
  readonly idleMs: number;
  /** A loaded block lasts at least this long, and until B's call in flight ends. */
  readonly loadedMs: number;
}
const FULL: Plan = { idleMs: 3000, loadedMs: 3000 };
const QUICK: Plan = { idleMs: 1000, loadedMs: 1000 };

interface Phase {
  readonly name: string;
  readonly tool: string;
  readonly args: Record<string, unknown>;
}

function phases(): Phase[] {
  const edits = (n: number, stride: number) => Array.from({ length: n }, (_, i) => ({ oldText: line(i * stride), newText: `edited ${i}` }));
  return [
    { name: 'edit, 1,500 items on a 4 MB file', tool: 'edit', args: { path: 'four.txt', edits: edits(1500, 60) } },
    { name: 'edit, 1,000 items on a 4 MB file', tool: 'edit', args: { path: 'four.txt', edits: edits(1000, 90) } },
    { name: `find ${GLOB} over 36-character names`, tool: 'find', args: { pattern: GLOB, path: 'names' } },
  ];
}

interface Measured {
  readonly idle: number[];
  readonly loaded: Map<string, { pings: number[]; calls: number; lastText: string; callMs: number[] }>;
}

/** Starts the server of another tree (its own examples/server.ts; its threads load its own dist/ or src/). */
async function measure(root: string | null, plan: Plan, progress: (s: string) => void): Promise<Measured> {
  let box: Sandbox | null = null;
  let server: RunningServer | null = null;
  const sessions: McpHttpSession[] = [];
  try {
    box = await makeSandbox();
    await writeFile(path.join(box.ws, 'four.txt'), CONTENT);
    await mkdir(path.join(box.ws, 'names'));
    for (let i = 0; i < NAMES; i++) await writeFile(path.join(box.ws, 'names', `${String(i).padStart(2, '0')}${'a'.repeat(34)}`), '');
    const args = ['--allow-anonymous-writes', '--threads', '1', '--tool-timeout', String(TOOL_TIMEOUT_S)];
    server = root === null ? await startHttpServerProcess(box.ws, args) : await startHttpServerProcess(box.ws, args, {}, 'source', root);
    const a = await McpHttpSession.open(server.url);
    const b = await McpHttpSession.open(server.url);
    sessions.push(a, b);
    await pingWhile(a, () => false, 500);
    const idle = await pingWhile(a, () => false, plan.idleMs);
    const loaded: Measured['loaded'] = new Map();
    for (const phase of phases()) {
      progress(`matching (${root ?? 'this tree'}): ${phase.name}`);
      // Each call starts from the original file, so every edit call finds its texts.
      await writeFile(path.join(box.ws, 'four.txt'), CONTENT);
      let running = true;
      const record = { pings: [] as number[], calls: 0, lastText: '', callMs: [] as number[] };
      const started = performance.now();
      const loop = (async () => {
        // One call at least; more until the block's minimum time is up.
        do {
          const t0 = performance.now();
          const reply = await b.request('tools/call', { name: phase.tool, arguments: phase.args });
          record.callMs.push(performance.now() - t0);
          record.calls++;
          record.lastText = reply.error ? `error ${reply.error.code}: ${reply.error.message}` : String(reply.result?.content?.[0]?.text ?? '');
          if (phase.tool === 'edit' && reply.result && !reply.result.isError) await writeFile(path.join(box!.ws, 'four.txt'), CONTENT);
        } while (performance.now() - started < plan.loadedMs);
        running = false;
      })();
      record.pings = await pingWhile(a, () => running, plan.loadedMs);
      await loop;
      loaded.set(phase.name, record);
      await sleep(300);
    }
    return { idle, loaded };
  } finally {
    await Promise.all(sessions.map((s) => s.close().catch(() => {})));
    if (server) await server.stop();
    await box?.cleanup();
  }
}

export const run: BenchSectionRunner = async (options: BenchOptions = {}): Promise<BenchSection> => {
  const plan = options.quick ? QUICK : FULL;
  const progress = options.progress ?? ((s: string) => process.stderr.write(`  ${s}\n`));
  const oldAt = process.argv.indexOf('--old');
  const oldRoot = oldAt === -1 ? null : (process.argv[oldAt + 1] ?? null);
  const ours = await measure(null, plan, progress);
  const before = oldRoot === null ? null : await measure(oldRoot, plan, progress);
  const ms = (v: number) => `${fmt(v, v >= 10 ? 1 : 2)} ms`;
  const p99 = (xs: number[]) => percentile(xs, 99);
  const rows: BenchRow[] = [{ measure: 'ping p99, session B idle', ours: ms(p99(ours.idle)), peer: before ? ms(p99(before.idle)) : '', peerName: before ? 'before (old tree)' : '', ratio: before ? p99(ours.idle) / p99(before.idle) : null, target: '', met: null }];
  const notes: string[] = [];
  for (const [name, r] of ours.loaded) {
    const old = before?.loaded.get(name);
    rows.push({ measure: `ping p99 while B runs ${name}`, ours: ms(p99(r.pings)), peer: old ? ms(p99(old.pings)) : '', peerName: old ? 'before (old tree)' : '', ratio: old ? p99(r.pings) / p99(old.pings) : null, target: '', met: null });
    // Pings go one at a time, so a stall delays one ping, which p99 over hundreds can hide: the longest shows it.
    const max = (xs: number[]) => Math.max(...xs);
    rows.push({ measure: `longest ping while B runs ${name}`, ours: ms(max(r.pings)), peer: old ? ms(max(old.pings)) : '', peerName: old ? 'before (old tree)' : '', ratio: old ? max(r.pings) / max(old.pings) : null, target: '', met: null });
    notes.push(`${name}: now ${r.calls} call(s), each ${ms(percentile(r.callMs, 50))} (p50), max ping ${ms(Math.max(...r.pings))}, answer "${r.lastText.slice(0, 100).replace(/\n/g, ' ')}"` +
      (old ? `; before ${old.calls} call(s), each ${ms(percentile(old.callMs, 50))} (p50), max ping ${ms(Math.max(...old.pings))}, answer "${old.lastText.slice(0, 100).replace(/\n/g, ' ')}"` : ''));
  }
  return {
    title: 'Matching: ping while another session edits a 4 MB file or finds with a backtracking glob',
    command: `npm run build && npx tsx bench/matching.ts${oldRoot ? ` --old ${oldRoot}` : ''}`,
    method: `One HTTP server (\`--threads 1\`: both sessions' actors on one scheduler thread; \`--tool-timeout ${TOOL_TIMEOUT_S}\`), two sessions. A pings one at a time; B runs each call in a loop for at least ${plan.loadedMs / 1000} s (and until its call in flight ends). Ratio: now ÷ before.`,
    rows,
    notes,
  };
};

if (isMain(import.meta.url)) {
  const { printSection } = await import('./run.ts');
  printSection(await run({ quick: process.argv.includes('--quick') }));
}
