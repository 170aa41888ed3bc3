// What the metrics cost: the HTTP benchmark's closed loop of `tools/call read` against two super-pi
// processes in the same run, one as shipped (metrics on) and one with `--no-metrics`, in interleaved
// blocks (on, off, off, on: a linear drift cancels). Target (issue 15): throughput with metrics ≥ 95%
// of without. While the blocks run, /metrics of the server with metrics is scraped once a second —
// far more often than a Prometheus would — so the scrape's own cost is counted too.
// Usage: npm run build && npx tsx bench/metrics-overhead.ts. Writes bench/results/metrics-overhead.md.

import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bounded, McpHttpSession, readParams } from './lib/mcp-http-client.ts';
import { fmt, percentile, ratio, table } from './lib/stats.ts';
import { makeSandbox } from '../test/e2e/fixtures.ts';
import { BLOCK_MS, checkReply, compare, cpuPerCall, drive, emptySample, type Sample, FILE, FILE_TEXT, OPEN_CONCURRENCY, rate, startSuperPi, superPiEntry } from './http.ts';

/** Sessions driving each server at once. */
export const OVERHEAD_LEVELS = [16, 64] as const;
/** ABBA rounds per level: on a shared machine one round's pairs swing widely; the median of many is steadier. */
export const OVERHEAD_ROUNDS = 5;
/** Throughput with metrics ÷ without must stay at or above this. */
export const OVERHEAD_TARGET = 0.95;
/** How often /metrics is scraped during the blocks. */
export const SCRAPE_EVERY_MS = 1000;

const here = path.dirname(fileURLToPath(import.meta.url));

async function main(): Promise<void> {
  const box = await makeSandbox();
  await writeFile(path.join(box.ws, FILE), FILE_TEXT);
  const on = await startSuperPi(box.ws);
  const off = await startSuperPi(box.ws, ['--no-metrics']);
  const metricsUrl = on.url.replace(/\/mcp$/, '/metrics');
  let scrapes = 0;
  const scraper = setInterval(() => {
    void fetch(metricsUrl).then((r) => r.text()).then(() => scrapes++, (err: unknown) => process.stderr.write(`scrape failed: ${(err as Error).message}\n`));
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
      for (let round = 0; round < OVERHEAD_ROUNDS; round++) {
        const cmp = await compare((side, ms) => {
          const target = side === 'a' ? on : off;
          const sessions = side === 'a' ? withM : without;
          return drive(target.pid, clients, ms, async (w) => checkReply(await (sessions[w] as McpHttpSession).call('read', readParams(FILE).arguments)));
        }, BLOCK_MS, false);
        addSample(a, cmp.a);
        addSample(b, cmp.b);
        pairs.push(...cmp.pairRatios);
      }
      const median = percentile(pairs, 50);
      worst = Math.min(worst, median);
      rows.push([String(clients), fmt(rate(a)), fmt(rate(b)), ratio(rate(a), rate(b)), fmt(median, 3), `${fmt(Math.min(...pairs), 2)}–${fmt(Math.max(...pairs), 2)}`,
        fmt(percentile(a.latencies, 50), 2), fmt(percentile(b.latencies, 50), 2), fmt(percentile(a.latencies, 99), 2), fmt(percentile(b.latencies, 99), 2),
        fmt(cpuPerCall(a)), fmt(cpuPerCall(b)), ratio(cpuPerCall(a), cpuPerCall(b))]);
      await Promise.all([...withM, ...without].map((s) => s.close()));
    }
  } finally {
    clearInterval(scraper);
    await Promise.all([on.stop(), off.stop()]);
    await box.cleanup();
  }
  lines.push('# Metrics overhead (issue 15)', '');
  const load = os.loadavg()[0] ?? 0;
  lines.push(`super-pi with metrics (as shipped) vs \`--no-metrics\`, same run, threads from ${superPiEntry()}. Each client: \`tools/call read {path: '${FILE}'}\` in a closed loop; ${OVERHEAD_ROUNDS} rounds per level of blocks of ${BLOCK_MS / 1000} s in the order on, off, off, on after a warm-up. /metrics of the server with metrics was scraped every ${SCRAPE_EVERY_MS / 1000} s throughout (${scrapes} scrapes). "median pair": the median of the with ÷ without throughput of each back-to-back pair of blocks (the figure compared with the target, ≥ ${OVERHEAD_TARGET}); "CPU ratio": the server's CPU time per call, with ÷ without. Load average (1 min) at the end: ${fmt(load, 2)} on ${os.availableParallelism()} cores.`, '');
  lines.push(table(['clients', 'with calls/s', 'without calls/s', 'ratio', 'median pair', 'pairs', 'with p50 ms', 'without p50 ms', 'with p99 ms', 'without p99 ms', 'with CPU/call µs', 'without CPU/call µs', 'CPU ratio'], rows), '');
  lines.push(`Worst median pair (with ÷ without): ${fmt(worst, 3)} — ${worst >= OVERHEAD_TARGET ? '**met**' : '**not met**'}; CPU per call, with ÷ without: ${rows.map((r) => r.at(-1)).join(', ')}.`);
  const text = `${lines.join('\n')}\n`;
  process.stdout.write(text);
  await writeFile(path.join(here, 'results', 'metrics-overhead.md'), text);
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
