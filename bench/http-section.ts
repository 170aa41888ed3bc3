// The suite's HTTP section: bench/http.ts's measurements (its exported servers and drivers, unchanged)
// turned into rows for BENCHMARKS.md: Streamable HTTP with 1, 16 and 64 clients vs the SDK (target at 64:
// ≥ 2.5× its calls/s), WebSocket with 64 in flight vs the `ws` echo floor (informational), and memory
// per idle session with 10,000 open vs the SDK (target ≤ ⅓). `npm run bench:http` still runs the
// standalone benchmark (bench/results/http.md).
// Usage: npm run build && tsx bench/http-section.ts [--quick]

import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { makeSandbox, type Sandbox } from '../test/e2e/fixtures.ts';
import {
  BLOCK_MS, cpuPerCall, MEMORY_WARMUP_SESSIONS, superPiEntry, FILE, FILE_TEXT, httpLevels, IDLE_SESSIONS, idleMemory, type LevelResult, LEVELS, MEMORY_TARGET, type MemoryResult,
  OPEN_CONCURRENCY, rate, type Sample, startEcho, startFloor, startSdk, startSuperPi, type Target, THROUGHPUT_TARGET, WARMUP_MS, WS_BLOCK_MS, WS_IN_FLIGHT,
  websocket, type WsResult,
} from './http.ts';
import { threadCpu } from './isolation.ts';
import { type BenchOptions, type BenchRow, type BenchSection, type BenchSectionRunner, isMain } from './lib/report.ts';
import { fmt, kb, percentile, table } from './lib/stats.ts';

interface Plan {
  readonly levels: readonly number[];
  readonly blockMs: number;
  readonly wsBlockMs: number;
  readonly idleSessions: number;
}

const FULL: Plan = { levels: LEVELS, blockMs: BLOCK_MS, wsBlockMs: WS_BLOCK_MS, idleSessions: IDLE_SESSIONS };
const QUICK: Plan = { levels: [1, 64], blockMs: 1000, wsBlockMs: 1000, idleSessions: 1000 };

interface MainShare {
  /** super-pi's main thread CPU ÷ all its threads' CPU over the level. */
  readonly ofProcess: number;
  /** super-pi's main thread CPU ÷ the wall time super-pi was driven (warm-up + blocks). */
  readonly busy: number;
}

const ms = (v: number) => `${fmt(v, v >= 10 ? 1 : 2)} ms`;
const pct = (v: number) => `${fmt(v * 100, 0)}%`;
const errorsOf = (s: Sample) => (s.errors > 0 ? ` (${s.errors} errors: ${s.firstError})` : '');
const range = (rs: number[]) => `${fmt(Math.min(...rs), 2)}–${fmt(Math.max(...rs), 2)}`;

export const run: BenchSectionRunner = async (options: BenchOptions = {}): Promise<BenchSection> => {
  const plan = options.quick ? QUICK : FULL;
  const progress = options.progress ?? ((line: string) => process.stderr.write(`  ${line}\n`));
  const running: Target[] = [];
  const started = async <T extends Target>(p: Promise<T>): Promise<T> => {
    const t = await p;
    running.push(t);
    return t;
  };
  const stopAll = async () => {
    await Promise.all(running.splice(0).map((t) => t.stop()));
  };
  let box: Sandbox | null = null;
  try {
    box = await makeSandbox();
    await writeFile(path.join(box.ws, FILE), FILE_TEXT);
    progress('http: starting super-pi, the SDK peer, the HTTP floor and the ws echo server');
    const [superPi, sdk, floor, echo] = await Promise.all([started(startSuperPi(box.ws)), started(startSdk(box.ws)), started(startFloor(box.ws)), started(startEcho())]);

    const levels: LevelResult[] = [];
    const retried: string[] = [];
    const shares = new Map<number, MainShare>();
    for (const clients of plan.levels) {
      progress(`http: ${clients} client(s)`);
      let before = threadCpu(superPi.pid);
      let level: LevelResult | undefined;
      try {
        [level] = await httpLevels(superPi, sdk, floor, [clients], plan.blockMs);
      } catch (err) {
        // A keep-alive socket the server closed just as the client reused it (outside the timed calls,
        // which count their errors): once, the level is measured again, and the notes say so.
        if (!/ECONNRESET|socket hang up/.test((err as Error).message)) throw err;
        retried.push(`${clients} client(s): ${(err as Error).message}`);
        progress(`http: ${clients} client(s) again after ${(err as Error).message}`);
        before = threadCpu(superPi.pid);
        [level] = await httpLevels(superPi, sdk, floor, [clients], plan.blockMs);
      }
      if (!level) throw new Error(`no result for ${clients} clients`);
      let main = 0;
      let all = 0;
      for (const [tid, us] of threadCpu(superPi.pid)) {
        const d = us - (before.get(tid) ?? 0);
        all += d;
        if (tid === superPi.pid) main += d;
      }
      shares.set(clients, { ofProcess: main / all, busy: main / ((WARMUP_MS + level.cmp.a.elapsedMs) * 1000) });
      levels.push(level);
    }
    progress(`http: WebSocket, one connection, ${WS_IN_FLIGHT} in flight`);
    const ws = await websocket(superPi, echo, plan.wsBlockMs);
    await stopAll();

    progress(`http: memory, ${fmt(plan.idleSessions, 0)} idle sessions on a fresh super-pi`);
    const spMem = await idleMemory(await started(startSuperPi(box.ws)), plan.idleSessions);
    await stopAll();
    progress(`http: memory, ${fmt(plan.idleSessions, 0)} idle sessions on a fresh SDK peer`);
    const sdkMem = await idleMemory(await started(startSdk(box.ws)), plan.idleSessions);
    await stopAll();

    return section(plan, levels, shares, ws, spMem, sdkMem, retried);
  } finally {
    await stopAll();
    await box?.cleanup();
  }
};

function section(plan: Plan, levels: LevelResult[], shares: Map<number, MainShare>, ws: WsResult, sp: MemoryResult, sdk: MemoryResult, retried: readonly string[]): BenchSection {
  const rows: BenchRow[] = [];
  for (const { clients, cmp: { a, b } } of levels) {
    const r = rate(a) / rate(b);
    const targeted = clients === 64;
    const who = `${clients} client${clients === 1 ? '' : 's'}`;
    rows.push({ measure: `HTTP tools/call read, ${who}: calls/s`, ours: fmt(rate(a), 0) + errorsOf(a), peer: fmt(rate(b), 0) + errorsOf(b), peerName: 'SDK', ratio: r, target: targeted ? `≥ ${THROUGHPUT_TARGET}×` : '', met: targeted ? r >= THROUGHPUT_TARGET : null });
    for (const q of [50, 99]) {
      const [x, y] = [percentile(a.latencies, q), percentile(b.latencies, q)];
      rows.push({ measure: `HTTP tools/call read, ${who}: p${q} latency`, ours: ms(x), peer: ms(y), peerName: 'SDK', ratio: x / y, target: '', met: null });
    }
  }
  const { a: wa, b: wb } = ws.cmp;
  rows.push({ measure: `WebSocket, one connection, ${WS_IN_FLIGHT} in flight: calls/s`, ours: fmt(rate(wa), 0) + errorsOf(wa), peer: fmt(rate(wb), 0) + errorsOf(wb), peerName: 'ws echo floor', ratio: rate(wa) / rate(wb), target: '', met: null });
  const memRatio = sp.perSession / sdk.perSession;
  rows.push({ measure: `memory per idle HTTP session, ${fmt(sp.sessions, 0)} open`, ours: kb(sp.perSession), peer: kb(sdk.perSession), peerName: 'SDK', ratio: memRatio, target: '≤ ⅓ (0.33×)', met: memRatio <= MEMORY_TARGET });

  const notes: string[] = [];
  notes.push(table(['clients', 'super-pi CPU/call', 'SDK CPU/call', 'pairs (super-pi ÷ SDK per block pair)', 'floor calls/s', 'ceiling (floor ÷ SDK)', 'super-pi main thread: share of its CPU', 'main thread busy'],
    levels.map(({ clients, cmp: { a, b, c, pairRatios } }) => {
      const share = shares.get(clients);
      return [String(clients), `${fmt(cpuPerCall(a))} µs`, `${fmt(cpuPerCall(b))} µs`, range(pairRatios), c ? fmt(rate(c), 0) + errorsOf(c) : 'n/a', c ? `${fmt(rate(c) / rate(b), 2)}×` : 'n/a', share ? pct(share.ofProcess) : 'n/a', share ? pct(share.busy) : 'n/a'];
    })));
  notes.push(`"floor": \`bench/peers/http-floor-server.ts\`, a node:http server that answers every POST with the same SSE reply and does no MCP and no file system work; "ceiling" = floor ÷ SDK, the largest ratio any server could show with this client on this machine. ` +
    `CPU/call: the server process's CPU (all threads, /proc) per call. Main thread columns: super-pi's main thread (tid = pid) CPU over the level, as a share of all its threads' CPU and of the time it was driven (warm-up + blocks).`);
  notes.push(table(['WebSocket', 'calls/s', 'p50', 'p99', 'server CPU/call'], [
    ['super-pi', fmt(rate(wa), 0), ms(percentile(wa.latencies, 50)), ms(percentile(wa.latencies, 99)), `${fmt(cpuPerCall(wa))} µs`],
    ['ws echo (floor)', fmt(rate(wb), 0), ms(percentile(wb.latencies, 50)), ms(percentile(wb.latencies, 99)), `${fmt(cpuPerCall(wb))} µs`],
  ]));
  const mb = (bytes: number) => `${fmt(bytes / 1024 / 1024, 1)} MB`;
  notes.push(table(['memory', 'sessions', 'opened/s', 'RSS before', 'RSS after', 'per session', 'slope'], [sp, sdk].map((m) => [
    m.name, fmt(m.sessions, 0) + (m.hitDeadline ? ' (deadline)' : ''), fmt((m.sessions / m.openMs) * 1000, 0), mb(m.rssBefore), mb(m.rssAfter), kb(m.perSession), kb(m.slope),
  ])));
  if (retried.length > 0) notes.push(`Measured again after a connection error outside the timed calls: ${retried.join('; ')}.`);
  const errors = levels.filter(({ cmp: { a, b, c } }) => a.errors + b.errors + (c?.errors ?? 0) > 0);
  if (errors.length > 0) notes.push(`Errors during timed calls (counted, not timed; listed in the cells as "(N errors: …)"): ${errors.map(({ clients, cmp: { a, b, c } }) => `${clients} clients: super-pi ${a.errors}, SDK ${b.errors}, floor ${c?.errors ?? 0}`).join('; ')}.`);
  const at64 = levels.find((l) => l.clients === 64);
  if (at64 && rate(at64.cmp.a) / rate(at64.cmp.b) < THROUGHPUT_TARGET) {
    const ceiling = at64.cmp.c ? rate(at64.cmp.c) / rate(at64.cmp.b) : Number.NaN;
    const share = shares.get(64);
    notes.push(`**HTTP target missed** at 64 clients (${fmt(rate(at64.cmp.a) / rate(at64.cmp.b), 2)}×). ` +
      `${Number.isFinite(ceiling) && ceiling < THROUGHPUT_TARGET ? `Even the floor, a server that does nothing, reaches only ${fmt(ceiling, 2)}× the SDK with this client here (client and servers share the 2 cores), so ${THROUGHPUT_TARGET}× cannot be shown on this machine with this client. ` : `The floor reaches ${fmt(ceiling, 2)}× the SDK, so the client is not what caps the ratio. `}` +
      `${share ? `super-pi's main thread (HTTP parsing, session routing, SSE framing) did ${pct(share.ofProcess)} of the process's CPU and was busy ${pct(share.busy)} of the time the level ran${share.busy >= 0.8 ? ': it is the bottleneck, and more throughput needs less work per request on it or HTTP handling spread over threads' : ': it is not saturated, so the limit is CPU shared among the client, the server\'s threads and whatever else runs on the 2 cores (CPU/call above)'}. ` : ''}` +
      `Per call, super-pi used ${fmt(cpuPerCall(at64.cmp.b) / cpuPerCall(at64.cmp.a), 2)}× less server CPU than the SDK (${fmt(cpuPerCall(at64.cmp.a))} against ${fmt(cpuPerCall(at64.cmp.b))} µs, all threads): the throughput ratio would approach that if server CPU were the only limit; the client's own CPU and other work on the machine during the blocks (load average in the run table) narrow it. ` +
      `The README's HTTP figures section has the profile and what it would take.`);
  }
  if (memRatio > MEMORY_TARGET) {
    const workerHeap = (h: Record<string, unknown>) => (Array.isArray(h.workers) ? (h.workers as { heapUsed?: number }[]).reduce((acc, w) => acc + (w.heapUsed ?? 0), 0) : Number.NaN);
    const perWorker = (workerHeap(sp.healthAfter) - workerHeap(sp.healthBefore)) / sp.sessions;
    notes.push(`**Memory target missed** (${fmt(memRatio, 2)}× the SDK: ${kb(sp.perSession)} per session against ≤ ${kb(sdk.perSession * MEMORY_TARGET)}). ` +
      `${Number.isFinite(perWorker) ? `Of super-pi's ${kb(sp.perSession)}, the scheduler threads' heaps (the connection actors, from /health, without a forced GC) grew ${kb(perWorker)} per session; the other ${kb(sp.perSession - perWorker)} is the main thread's heap (the per-session \`Session\`, \`HttpSession\`, \`ActorRef\` and per-session supervision objects) and native memory (sockets, buffers). ` : ''}` +
      `What it would take: less per-session state on the main thread, where most of the cost is; the README's HTTP figures section has the heap profile.`);
  }
  return {
    title: 'Streamable HTTP and WebSocket vs the SDK; memory per idle session',
    command: 'npm run build && npx tsx bench/http-section.ts',
    method: `The measuring code of \`bench/http.ts\` (\`npm run bench:http\` runs it alone, with more detail, into bench/results/http.md). super-pi (\`startSuperPi\` of \`bench/http.ts\`, default threads, running from ${superPiEntry()}), the SDK peer (\`bench/peers/sdk-http-server.ts\`: node:http, one \`McpServer\` + \`StreamableHTTPServerTransport\` per session, as the SDK documents, \`read\` = fs.readFile) and the floors each run in their own process; this process is the client (\`bench/lib/mcp-http-client.ts\`, the same requests and reply parsing for every server; \`ws\` for WebSocket). ` +
      `HTTP: per level (${plan.levels.join(', ')} clients, one session each, \`tools/call read\` of a ${FILE_TEXT.length}-byte file in a closed loop), ${WARMUP_MS / 1000} s warm-up per server, then ${plan.blockMs / 1000} s blocks super-pi, SDK, floor, floor, SDK, super-pi; ratio = super-pi ÷ SDK calls/s (latency: super-pi ÷ SDK). ` +
      `WebSocket: one connection, ${WS_IN_FLIGHT} requests in flight, ${plan.wsBlockMs / 1000} s blocks super-pi, echo, echo, super-pi against a \`ws\` echo server (the floor; the SDK has no WebSocket server). ` +
      `Memory: a fresh process of each server, ${fmt(MEMORY_WARMUP_SESSIONS, 0)} sessions opened first and kept (so each heap's one-time growth is not counted), then ${fmt(plan.idleSessions, 0)} idle sessions (initialize + initialized), ${OPEN_CONCURRENCY} at a time; VmRSS after − before, ÷ sessions.`,
    rows,
    notes,
  };
}

if (isMain(import.meta.url)) {
  const { printSection } = await import('./run.ts');
  printSection(await run({ quick: process.argv.includes('--quick') }));
}
