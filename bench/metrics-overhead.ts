// What the metrics cost: the HTTP benchmark's closed loop of `tools/call read` against two super-pi
// processes in the same run, one as shipped (metrics on) and one with `--no-metrics`, in interleaved
// blocks (on, off, off, on: a linear drift cancels). Target (issue 15): throughput with metrics ≥ 95%
// of without. While the blocks run, /metrics of the server with metrics is scraped once a second —
// far more often than a Prometheus would — so the scrape's own cost is counted too.
// Usage: npm run build && npx tsx bench/metrics-overhead.ts. Writes bench/results/metrics-overhead.md.
// `--same`: both servers with metrics (an A/A run): what the bench reports when there is no difference at
// all, i.e. its noise on this machine now. Writes bench/results/metrics-overhead-same.md.

import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bounded, McpHttpSession, readParams } from './lib/mcp-http-client.ts';
import { fmt, percentile, ratio, table } from './lib/stats.ts';
import { makeSandbox } from '../test/e2e/fixtures.ts';
import { BLOCK_MS, checkReply, compare, cpuPerCall, drive, emptySample, health, type Sample, FILE, FILE_TEXT, OPEN_CONCURRENCY, rate, startSuperPi, superPiEntry, type Target } from './http.ts';

/** Sessions driving each server at once. */
export const OVERHEAD_LEVELS = [16, 64] as const;
/** ABBA rounds per level: on a shared machine one round's pairs swing widely; the median of many is steadier. */
export const OVERHEAD_ROUNDS = 5;
/** Throughput with metrics ÷ without must stay at or above this. */
export const OVERHEAD_TARGET = 0.95;
/** How often /metrics is scraped during the blocks. */
export const SCRAPE_EVERY_MS = 1000;
/** How long a server may take to have every scheduler thread ready before the bench gives up. */
export const READY_WAIT_MS = 30_000;

const here = path.dirname(fileURLToPath(import.meta.url));
/** A/A: the second server runs with metrics too. */
const same = process.argv.includes('--same');

async function main(): Promise<void> {
  const box = await makeSandbox();
  await writeFile(path.join(box.ws, FILE), FILE_TEXT);
  const loadBefore = os.loadavg()[0] ?? 0;
  const on = await startSuperPi(box.ws);
  const off = await startSuperPi(box.ws, same ? [] : ['--no-metrics']);
  // Sessions opened while a thread still boots all land on the ready one and stay there: one server would
  // then run on one scheduler thread and the other on two, which compares placement, not metrics.
  await Promise.all([untilThreadsReady(on), untilThreadsReady(off)]);
  // In an A/A run both servers are scraped alike, so nothing but noise tells them apart.
  const metricsUrls = (same ? [on, off] : [on]).map((t) => t.url.replace(/\/mcp$/, '/metrics'));
  let scrapes = 0;
  const scraper = setInterval(() => {
    for (const url of metricsUrls) void fetch(url).then((r) => r.text()).then(() => scrapes++, (err: unknown) => process.stderr.write(`scrape failed: ${(err as Error).message}\n`));
  }, SCRAPE_EVERY_MS);
  const lines: string[] = [];
  const rows: string[][] = [];
  let worst = Infinity;
  try {
    for (const clients of OVERHEAD_LEVELS) {
      process.stderr.write(`  ${clients} sessions on each server\n`);
      const [withM, without] = await Promise.all([
        bounded(clients, OPEN_CONCURRENCY, () => McpHttpSession.open(on.url)),
        bounded(clients, OPEN_CONCURRENCY, () => McpHttpSession.open(off.url)),
      ]);
      for (const s of [withM, without]) checkReply(await (s[0] as McpHttpSession).call('read', { path: FILE }));
      const a = emptySample();
      const b = emptySample();
      const pairs: number[] = [];
      // The main thread's CPU in the measured blocks: where the metrics do their work (the threads do the same either way).
      const mainUs = { a: 0, b: 0 };
      for (let round = 0; round < OVERHEAD_ROUNDS; round++) {
        const cmp = await compare(async (side, ms) => {
          const target = side === 'a' ? on : off;
          const sessions = side === 'a' ? withM : without;
          const main0 = mainThreadMicros(target.pid);
          const sample = await drive(target.pid, clients, ms, async (w) => checkReply(await (sessions[w] as McpHttpSession).call('read', readParams(FILE).arguments)));
          // Warm-up blocks (WARMUP_MS long) are not part of the comparison's samples; only the measured ones count.
          if (ms === BLOCK_MS && side !== 'c') mainUs[side] += mainThreadMicros(target.pid) - main0;
          return sample;
        }, BLOCK_MS, false);
        addSample(a, cmp.a);
        addSample(b, cmp.b);
        pairs.push(...cmp.pairRatios);
      }
      const median = percentile(pairs, 50);
      worst = Math.min(worst, median);
      rows.push([String(clients), fmt(rate(a)), fmt(rate(b)), ratio(rate(a), rate(b)), fmt(median, 3), `${fmt(Math.min(...pairs), 2)}–${fmt(Math.max(...pairs), 2)}`,
        fmt(percentile(a.latencies, 50), 2), fmt(percentile(b.latencies, 50), 2), fmt(percentile(a.latencies, 99), 2), fmt(percentile(b.latencies, 99), 2),
        fmt(cpuPerCall(a)), fmt(cpuPerCall(b)), ratio(cpuPerCall(a), cpuPerCall(b)), fmt(mainUs.a / a.calls, 1), fmt(mainUs.b / b.calls, 1)]);
      await Promise.all([...withM, ...without].map((s) => s.close()));
    }
  } finally {
    clearInterval(scraper);
    await Promise.all([on.stop(), off.stop()]);
    await box.cleanup();
  }
  lines.push(same ? '# Metrics overhead (issue 15): A/A run, both servers with metrics — the bench\'s own noise' : '# Metrics overhead (issue 15)', '');
  if (same) lines.push('`--same`: the "without" server runs with metrics too, so every difference below is noise of the machine and the method.', '');
  const load = os.loadavg()[0] ?? 0;
  lines.push(`super-pi with metrics (as shipped) vs \`--no-metrics\`, same run, threads from ${superPiEntry()}. Each client: \`tools/call read {path: '${FILE}'}\` in a closed loop; ${OVERHEAD_ROUNDS} rounds per level of blocks of ${BLOCK_MS / 1000} s in the order on, off, off, on after a warm-up. /metrics of the server with metrics was scraped every ${SCRAPE_EVERY_MS / 1000} s throughout (${scrapes} scrapes). "median pair": the median of the with ÷ without throughput of each back-to-back pair of blocks (the figure compared with the target, ≥ ${OVERHEAD_TARGET}); "CPU ratio": the server's CPU time per call, with ÷ without. Servers started once every scheduler thread was ready. "main µs/call": the CPU time of the server's main thread alone per call (the metrics' work is there; the scheduler threads do the same either way). Load average (1 min): ${fmt(loadBefore, 2)} at the start, ${fmt(load, 2)} at the end, on ${os.availableParallelism()} cores.`, '');
  lines.push(table(['clients', 'with calls/s', 'without calls/s', 'ratio', 'median pair', 'pairs', 'with p50 ms', 'without p50 ms', 'with p99 ms', 'without p99 ms', 'with CPU/call µs', 'without CPU/call µs', 'CPU ratio', 'with main µs/call', 'without main µs/call'], rows), '');
  lines.push(`Worst median pair (with ÷ without): ${fmt(worst, 3)} — ${worst >= OVERHEAD_TARGET ? '**met**' : '**not met**'}; CPU per call, with ÷ without: ${rows.map((r) => r.at(-3)).join(', ')}.`);
  const text = `${lines.join('\n')}\n`;
  process.stdout.write(text);
  await writeFile(path.join(here, 'results', same ? 'metrics-overhead-same.md' : 'metrics-overhead.md'), text);
}

/** Resolves once /health reports every scheduler thread of `target` ready. */
async function untilThreadsReady(target: Target): Promise<void> {
  const deadline = performance.now() + READY_WAIT_MS;
  for (;;) {
    const workers = (await health(target.url)).workers as { ready: boolean }[] | undefined;
    if (workers && workers.length > 0 && workers.every((w) => w.ready)) return;
    if (performance.now() > deadline) throw new Error(`${target.name}: scheduler threads not ready after ${READY_WAIT_MS} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** CPU time (user + system) of a process's main thread, µs, from /proc/<pid>/task/<pid>/stat. */
function mainThreadMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime in clock ticks (USER_HZ = 100, as cpuMicros in bench/lib/mcp-http-client.ts assumes).
  return ((Number(fields[11]) + Number(fields[12])) / 100) * 1e6;
}

/** Adds one sample's counts into another (what compare() does for its own blocks). */
function addSample(into: Sample, s: Sample): void {
  into.calls += s.calls;
  into.errors += s.errors;
  into.firstError ??= s.firstError;
  into.elapsedMs += s.elapsedMs;
  for (const l of s.latencies) into.latencies.push(l);
  into.serverCpuUs += s.serverCpuUs;
  into.clientCpuUs += s.clientCpuUs;
}

await main();
