// Issue 24, item 6: no 2026-07-28 (modern, stateless) request is slower than a 2025-06-18 one. The same
// `tools/call read` of a small file, by a modern client (no handshake; every request carries its context
// in `_meta`, and over HTTP repeats its method and name in headers) beside a legacy client (initialize,
// then requests on its session), against the same build, in one run, as ratios:
//   - stdio: one server process per era (a modern client never initializes), 64 requests in flight
//     (calls/s) and one call at a time (p50);
//   - Streamable HTTP: one server; 64 legacy sessions vs 64 modern clients (calls/s), and one client of
//     each one call at a time (p50).
// Blocks run A B B A per round, so a linear drift cancels out of every pair. Every reply is checked.
// Usage: npm run build && npx tsx bench/eras.ts [--quick]   (or npm run bench -- --only eras)

import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { makeSandbox, type Sandbox } from '../test/e2e/fixtures.ts';
import { checkReply, drive, FILE, FILE_TEXT, rate, type Sample, startSuperPi, type Target } from './http.ts';
import { bounded, cpuMicros, McpHttpSession, McpModernHttp, modernMeta, readParams } from './lib/mcp-http-client.ts';
import { type BenchOptions, type BenchRow, type BenchSection, type BenchSectionRunner, isMain } from './lib/report.ts';
import type { RpcClient, RpcReply } from './lib/rpc-client.ts';
import { fmt, nowUs, percentile, table } from './lib/stats.ts';
import { killAll, type Server, startServer, stopStdioChild } from './stdio.ts';

const COMMAND = 'npm run build && npx tsx bench/eras.ts';
const TITLE = '2026-07-28 vs 2025-06-18: the same call in both eras (issue 24)';
const IN_FLIGHT = 64;
/** Modern ÷ legacy calls/s at least this; modern p50 ÷ legacy p50 at most its inverse. */
const TARGET = 1.0;

interface Plan {
  readonly warmupMs: number;
  readonly blockMs: number;
  readonly latencyCalls: number;
  readonly rounds: number;
}
const FULL: Plan = { warmupMs: 1000, blockMs: 2000, latencyCalls: 1000, rounds: 2 };
const QUICK: Plan = { warmupMs: 300, blockMs: 600, latencyCalls: 200, rounds: 1 };

type Era = 'modern' | 'legacy';
const ERAS: readonly Era[] = ['modern', 'legacy'];

/** A A' per round: modern, legacy, legacy, modern. */
const order = (rounds: number): Era[] => Array.from({ length: rounds }, () => [...ERAS, ...[...ERAS].reverse()]).flat();

// ---------------------------------------------------------------------------------------------------
// stdio

type StdioServer = Server;

/** One `node bin/super-pi.js --stdio` for `era`: a legacy client initializes, a modern one never does. */
const startStdio = (ws: string, era: Era): Promise<StdioServer> =>
  startServer({ name: `super-pi (${era})`, args: ['bin/super-pi.js', '--stdio', '--workspace', ws] }, era === 'legacy', (client) => stdioCall(client, era));

const legacyRead = readParams(FILE);
const modernRead = { ...readParams(FILE), _meta: modernMeta };

function checkStdio(reply: RpcReply): void {
  const result = reply.result as { content?: { text?: string }[]; isError?: boolean } | undefined;
  if (result?.isError || result?.content?.[0]?.text !== FILE_TEXT) throw new Error(`unexpected reply to read: ${JSON.stringify(reply).slice(0, 300)}`);
}

async function stdioCall(client: RpcClient, era: Era): Promise<void> {
  checkStdio(await client.request('tools/call', era === 'modern' ? modernRead : legacyRead));
}

const stdioRead = (server: StdioServer, era: Era): Promise<void> => stdioCall(server.client, era);

interface Block {
  readonly calls: number;
  readonly us: number;
  /** CPU time over the block: the server process's (all its threads) and this client process's, µs. */
  readonly serverCpuUs: number;
  readonly clientCpuUs: number;
}

async function stdioThroughput(server: StdioServer, era: Era, ms: number): Promise<Block> {
  server.batch = true;
  const server0 = cpuMicros(server.pid);
  const client0 = process.cpuUsage();
  const started = nowUs();
  const end = started + ms * 1000;
  let calls = 0;
  try {
    await Promise.race([server.exited, Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (nowUs() < end) {
        await stdioRead(server, era);
        calls++;
      }
    }))]);
  } finally {
    server.batch = false;
  }
  const client = process.cpuUsage(client0);
  return { calls, us: nowUs() - started, serverCpuUs: cpuMicros(server.pid) - server0, clientCpuUs: client.user + client.system };
}

async function stdioLatency(server: StdioServer, era: Era, count: number): Promise<number[]> {
  const out: number[] = [];
  await Promise.race([server.exited, (async () => {
    for (let i = 0; i < count; i++) {
      const t0 = nowUs();
      await stdioRead(server, era);
      out.push(nowUs() - t0);
    }
  })()]);
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Results

interface EraFigures {
  /** calls/s of each throughput block, in the order they ran. */
  readonly rates: Record<Era, number[]>;
  /** Every one-at-a-time latency, µs. */
  readonly latencies: Record<Era, number[]>;
  /** Over the throughput blocks: calls, server CPU and client CPU (µs), summed. */
  readonly cpu: Record<Era, { calls: number; server: number; client: number }>;
}

const empty = (): EraFigures => ({
  rates: { modern: [], legacy: [] }, latencies: { modern: [], legacy: [] },
  cpu: { modern: { calls: 0, server: 0, client: 0 }, legacy: { calls: 0, server: 0, client: 0 } },
});

function addCpu(f: EraFigures, era: Era, calls: number, server: number, client: number): void {
  const c = f.cpu[era];
  c.calls += calls;
  c.server += server;
  c.client += client;
}
const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const x = (r: number) => `${fmt(r, 2)}×`;
const range = (rs: readonly number[]) => `${fmt(Math.min(...rs), 2)}–${fmt(Math.max(...rs), 2)}`;

function cpuLine(f: EraFigures, side: 'server' | 'client'): string {
  const per = (era: Era) => f.cpu[era][side] / f.cpu[era].calls;
  return `${fmt(per('modern'), 1)} µs vs ${fmt(per('legacy'), 1)} µs (${x(per('modern') / per('legacy'))})`;
}

function rows(transport: string, f: EraFigures): { rows: BenchRow[]; detail: string[] } {
  const tput = mean(f.rates.modern) / mean(f.rates.legacy);
  const pairs = f.rates.modern.map((m, i) => m / (f.rates.legacy[i] as number));
  const p50m = percentile(f.latencies.modern, 50);
  const p50l = percentile(f.latencies.legacy, 50);
  return {
    rows: [
      { measure: `${transport} tools/call read, ${IN_FLIGHT} in flight: calls/s, 2026-07-28 ÷ 2025-06-18`, ours: `${fmt(mean(f.rates.modern), 0)}/s`, peer: `${fmt(mean(f.rates.legacy), 0)}/s`, peerName: '2025-06-18 client', ratio: tput, target: `≥ ${fmt(TARGET, 1)}×`, met: tput >= TARGET },
      { measure: `${transport} tools/call read, one at a time: p50, 2026-07-28 ÷ 2025-06-18`, ours: `${fmt(p50m, 0)} µs`, peer: `${fmt(p50l, 0)} µs`, peerName: '2025-06-18 client', ratio: p50m / p50l, target: `≤ ${fmt(1 / TARGET, 1)}×`, met: p50m / p50l <= 1 / TARGET },
    ],
    detail: [
      `${transport}: calls/s per block pair (modern ÷ legacy) ${range(pairs)}; p99 one at a time ${fmt(percentile(f.latencies.modern, 99), 0)} µs vs ${fmt(percentile(f.latencies.legacy, 99), 0)} µs`,
      `${transport}: CPU per call at ${IN_FLIGHT} in flight, server ${cpuLine(f, 'server')}; client (this process) ${cpuLine(f, 'client')}`,
    ],
  };
}

// ---------------------------------------------------------------------------------------------------
// The section

export const run: BenchSectionRunner = async (options: BenchOptions): Promise<BenchSection> => {
  const plan = options.quick ? QUICK : FULL;
  const progress = options.progress ?? ((line: string) => process.stderr.write(`${line}\n`));
  const sandbox: Sandbox = await makeSandbox();
  await writeFile(path.join(sandbox.ws, FILE), FILE_TEXT);
  const stdio = empty();
  const http = empty();
  let target: Target | null = null;
  try {
    progress('eras: stdio, one server per era');
    const servers = { modern: await startStdio(sandbox.ws, 'modern'), legacy: await startStdio(sandbox.ws, 'legacy') };
    for (const era of ERAS) await stdioThroughput(servers[era], era, plan.warmupMs);
    for (const era of order(plan.rounds)) {
      const b = await stdioThroughput(servers[era], era, plan.blockMs);
      stdio.rates[era].push((b.calls / b.us) * 1e6);
      addCpu(stdio, era, b.calls, b.serverCpuUs, b.clientCpuUs);
    }
    for (const era of order(plan.rounds)) stdio.latencies[era].push(...await stdioLatency(servers[era], era, plan.latencyCalls));
    await Promise.all(ERAS.map((era) => stopStdioChild(servers[era].child)));

    progress(`eras: Streamable HTTP, ${IN_FLIGHT} legacy sessions vs ${IN_FLIGHT} modern clients on one server`);
    target = await startSuperPi(sandbox.ws);
    const url = target.url;
    const pid = target.pid;
    const legacy = await bounded(IN_FLIGHT, IN_FLIGHT, () => McpHttpSession.open(url));
    const modern = Array.from({ length: IN_FLIGHT }, () => new McpModernHttp(url));
    checkReply(await (modern[0] as McpModernHttp).call('read', { path: FILE }));
    const callOf = (era: Era) => async (w: number) => {
      const client = era === 'modern' ? modern[w] as McpModernHttp : legacy[w] as McpHttpSession;
      checkReply(await client.call('read', { path: FILE }));
    };
    const block = (era: Era, workers: number, ms: number): Promise<Sample> => drive(pid, workers, ms, callOf(era));
    for (const era of ERAS) await block(era, IN_FLIGHT, plan.warmupMs);
    for (const era of order(plan.rounds)) {
      const s = await block(era, IN_FLIGHT, plan.blockMs);
      if (s.errors > 0) throw new Error(`HTTP ${era}: ${s.errors} errors, the first: ${s.firstError}`);
      http.rates[era].push(rate(s));
      addCpu(http, era, s.calls, s.serverCpuUs, s.clientCpuUs);
    }
    for (const era of order(plan.rounds)) {
      const s = await block(era, 1, plan.blockMs / 2);
      if (s.errors > 0) throw new Error(`HTTP ${era}: ${s.errors} errors, the first: ${s.firstError}`);
      http.latencies[era].push(...s.latencies.map((ms) => ms * 1000));
    }
    await Promise.all(legacy.map((s) => s.close()));
  } finally {
    await target?.stop();
    await killAll();
    await sandbox.cleanup();
  }
  const s = rows('stdio', stdio);
  const h = rows('HTTP', http);
  return {
    title: TITLE,
    command: COMMAND,
    method: `The same \`tools/call read\` of a ${FILE_TEXT.length}-byte file by a 2026-07-28 client (no handshake, context in \`_meta\`, and over HTTP the \`MCP-Protocol-Version\`/\`Mcp-Method\`/\`Mcp-Name\` headers) and by a 2025-06-18 client (initialize, then its session), against the same build. stdio: one \`node bin/super-pi.js --stdio\` per era, ${IN_FLIGHT} requests in flight, then one at a time. HTTP: one server, ${IN_FLIGHT} legacy sessions vs ${IN_FLIGHT} modern clients in closed loops on keep-alive connections, then one client of each one call at a time. Blocks modern, legacy, legacy, modern, ${plan.rounds} round(s) of ${plan.blockMs} ms (latency: ${plan.latencyCalls} calls per stdio block). Every reply is checked.`,
    rows: [...s.rows, ...h.rows],
    notes: [table(['detail'], [...s.detail, ...h.detail].map((d) => [d]))],
  };
};

if (isMain(import.meta.url)) {
  const { printSection } = await import('./run.ts');
  printSection(await run({ quick: process.argv.includes('--quick') }));
}
