// Git bomb (issue 22): a 1 MB zlib bomb planted as the HEAD commit's loose object in the workspace's
// `.git` (a header declaring 4 GB, then ~1 GB of zeros deflated), and one session reading
// `superpi://workspace` over and over, as any caller (anonymous included) may. Meanwhile a second client
// asks `/health`, one request at a time, and the server's RSS is sampled. Targets: /health p99 < 50 ms
// and RSS growth < 64 MB. Before the fix isomorphic-git inflated the bomb synchronously (seconds to a
// minute per read, gigabytes of RSS); now the status runs in a bounded thread that refuses the object by
// its header. `--root DIR` runs the server of another checkout (e.g. the code before the fix).
// Usage: npm run build && tsx bench/git-bomb.ts [--quick] [--root DIR]

import { type ChildProcess, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { makeSandbox, repoRoot, type Sandbox, startHttpServerProcess } from '../test/e2e/fixtures.ts';
import { plantLooseBomb } from '../test/tools/fixtures/git-bombs.ts';
import { McpHttpSession } from './lib/mcp-http-client.ts';
import { type BenchOptions, type BenchSection, type BenchSectionRunner, isMain } from './lib/report.ts';
import { fmt, percentile, sleep } from './lib/stats.ts';

const HEALTH_P99_TARGET_MS = 50;
const RSS_GROWTH_TARGET_MB = 64;
/** ~1 GB of zeros deflate to ~1 MB: the review's "1 MB loose object". */
const BOMB_ZEROS = 1024 * 1024 * 1024;
const DECLARED = 4_000_000_000;

/**
 * The code before the fix (6752f31, `--root` a checkout of it), full run on 2026-12-05 on the shared
 * 2-core machine (load average ~13): one read in 20 s, which showed the status as "(clean)"; the one
 * /health request caught by the inflate never got an answer (connection reset), so the max is of the
 * others. A --quick run the same morning: /health p99 = max = 73,030 ms, RSS +4,095 MB, no read answered.
 */
const BEFORE = { healthP99Ms: 573.4, idleP99Ms: 101.9, healthMaxMs: 573.4, rssGrowthMb: 4091.8, reads: 1, healthFailed: 1 };

interface Plan { readonly durationMs: number }
const FULL: Plan = { durationMs: 20_000 };
const QUICK: Plan = { durationMs: 6_000 };

function rssMb(pid: number): number {
  const line = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return line ? Number(line[1]) / 1024 : NaN;
}

/** GET /health one at a time until `end`: each answered request's latency in ms, and how many failed (no 200, or no answer at all). */
async function healthFor(health: URL, end: number): Promise<{ latencies: number[]; failed: number }> {
  const latencies: number[] = [];
  let failed = 0;
  while (performance.now() < end) {
    const t0 = performance.now();
    try {
      const res = await fetch(health);
      await res.arrayBuffer();
      if (res.status === 200) latencies.push(performance.now() - t0);
      else failed++;
    } catch {
      // The connection dropped (the server before the fix could lose its HTTP thread to the inflate): counted.
      failed++;
      await sleep(100);
    }
  }
  return { latencies, failed };
}

export const run: BenchSectionRunner = async (options: BenchOptions = {}): Promise<BenchSection> => {
  const plan = options.quick ? QUICK : FULL;
  const progress = options.progress ?? ((line: string) => process.stderr.write(`  ${line}\n`));
  const rootArg = process.argv.indexOf('--root');
  const root = rootArg !== -1 ? path.resolve(process.argv[rootArg + 1] as string) : repoRoot;
  let box: Sandbox | null = null;
  let child: ChildProcess | null = null;
  try {
    box = await makeSandbox();
    const oid = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: box.ws, encoding: 'utf8' }).trim();
    const bombBytes = await plantLooseBomb(box.ws, oid, DECLARED, BOMB_ZEROS);
    progress(`git-bomb: planted a ${fmt(bombBytes / 1024 / 1024, 2)} MB loose object; starting the server of ${root}`);
    const server = await startHttpServerProcess(box.ws, [], {}, 'source', root);
    child = server.child;
    const pid = child.pid as number;
    const health = new URL('/health', server.url);
    const reader = await McpHttpSession.open(server.url);
    // Settle: the server's own start-up allocations are not the bomb's.
    for (let i = 0; i < 20; i++) await (await fetch(health)).arrayBuffer();
    await sleep(500);
    // The machine's own noise: /health alone, with nothing else asked of the server.
    const { latencies: idle } = await healthFor(health, performance.now() + plan.durationMs / 2);
    const rssBefore = rssMb(pid);
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMb(pid))), 50);
    const end = performance.now() + plan.durationMs;
    let reads = 0;
    let lastStatus = '';
    const readLoop = (async () => {
      while (performance.now() < end) {
        const reply = await reader.request('resources/read', { uri: 'superpi://workspace' });
        const text = String((reply.result as { contents?: { text?: string }[] } | undefined)?.contents?.[0]?.text ?? JSON.stringify(reply));
        lastStatus = /Git status:\n```\n([^\n]*)/.exec(text)?.[1] ?? text.slice(0, 200);
        reads++;
      }
    })();
    const { latencies, failed } = await healthFor(health, end);
    // A read in flight at the end (old code: one inflate may take a minute) is not waited for.
    clearInterval(sampler);
    rssPeak = Math.max(rssPeak, rssMb(pid));
    readLoop.catch(() => {});
    const p99 = latencies.length > 0 ? percentile(latencies, 99) : NaN;
    const growth = rssPeak - rssBefore;
    const ms = (v: number) => (Number.isNaN(v) ? 'not measured' : `${fmt(v, 1)} ms`);
    const mb = (v: number) => (Number.isNaN(v) ? 'not measured' : `${fmt(v, 1)} MB`);
    return {
      title: 'Git bomb in the workspace (issue 22)',
      command: 'npm run build && tsx bench/git-bomb.ts [--quick] [--root DIR]',
      method: `A ${fmt(bombBytes / 1024 / 1024, 2)} MB loose object (declaring 4 GB, ~1 GB of zeros deflated) planted as the HEAD commit in the workspace's .git; first GET /health alone, one at a time, for ${plan.durationMs / 2000} s (the machine's noise); then one HTTP session reads superpi://workspace back to back for ${plan.durationMs / 1000} s while another client asks GET /health one at a time; the server's RSS (VmRSS) is sampled every 50 ms, growth = peak − before. Before: the same run against the code before the fix (--root).`,
      rows: [
        { measure: `/health p99 while the resource is read (${latencies.length} requests)`, ours: ms(p99), peer: ms(BEFORE.healthP99Ms), peerName: 'before (6752f31)', ratio: null, target: `< ${HEALTH_P99_TARGET_MS} ms`, met: p99 < HEALTH_P99_TARGET_MS && failed === 0 },
        { measure: `/health p99 with nothing else running, same server (${idle.length} requests)`, ours: ms(percentile(idle, 99)), peer: ms(BEFORE.idleP99Ms), peerName: 'before (6752f31)', ratio: null, target: '', met: null },
        { measure: '/health max while the resource is read', ours: ms(latencies.length > 0 ? Math.max(...latencies) : NaN), peer: ms(BEFORE.healthMaxMs), peerName: 'before (6752f31)', ratio: null, target: '', met: null },
        { measure: 'server RSS growth (peak − before)', ours: mb(growth), peer: mb(BEFORE.rssGrowthMb), peerName: 'before (6752f31)', ratio: null, target: `< ${RSS_GROWTH_TARGET_MB} MB`, met: growth < RSS_GROWTH_TARGET_MB },
        { measure: '/health requests that failed (not 200, or the connection dropped), same run', ours: String(failed), peer: Number.isNaN(BEFORE.healthFailed) ? 'not measured' : String(BEFORE.healthFailed), peerName: 'before (6752f31)', ratio: null, target: '', met: null },
        { measure: 'workspace resource reads answered', ours: String(reads), peer: Number.isNaN(BEFORE.reads) ? 'not measured' : String(BEFORE.reads), peerName: 'before (6752f31)', ratio: null, target: '', met: null },
      ],
      notes: [`The status the resource showed: \`${lastStatus}\`.`],
    };
  } finally {
    child?.kill('SIGKILL');
    await box?.cleanup();
  }
};

if (isMain(import.meta.url)) {
  const { printSection } = await import('./run.ts');
  printSection(await run({ quick: process.argv.includes('--quick') }));
}
