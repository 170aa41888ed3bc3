// stdio `tools/call read` of one small file, super-pi side by side with the official SDK in the same run
// (absolute figures drift on a shared machine; ratios of blocks measured back to back do not):
//   - super-pi: `node bin/super-pi.js --stdio --workspace <tmp>` (the esbuild bundle in dist/);
//   - the SDK: bench/peers/sdk-stdio-server.mjs (McpServer + StdioServerTransport, `read` = fs.readFile),
//     and the bare SDK: the same server with `read` = readFileSync (`--sync`, issue 27's peer);
//   - the floors: bench/peers/stdio-floor-server.mjs, newline JSON by hand with no framework and the file
//     read with readFileSync, once in one thread and once with every request crossing to a worker
//     thread and back (`--thread`).
// Two measures, each in blocks interleaved A B C D E E D C B A (a linear drift cancels out of every pair):
// calls/s with 64 requests in flight (target: super-pi ≥ 1.6× the SDK) and the p50 latency of calls made
// one at a time (target: super-pi ≤ 1.2× the SDK); against the bare SDK, issue 27's targets (calls/s
// ≥ 1.5×, p50 ≤ 1.0×). Every reply is checked: a reply that is not the
// file's text fails the run. The same client code (bench/lib/rpc-client.ts over the child's stdin and
// stdout) drives every server, each in its own process.
// Usage: npx tsx bench/stdio.ts [--quick]   (needs dist/: `npm run build`; built here when stale)

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cpuMicros } from './lib/mcp-http-client.ts';
import { type BenchOptions, type BenchRow, type BenchSection, type BenchSectionRunner, isMain } from './lib/report.ts';
import { type Call, RpcClient, type RpcReply } from './lib/rpc-client.ts';
import { stopChild as stopChildProcess } from './lib/processes.ts';
import { fmt, nowUs, percentile, table } from './lib/stats.ts';
import { distIsFresh } from '../src/server/thread-entries.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, '..');

export const FILE = 'a.txt';
/** ~370 bytes, the same file bench/http.ts reads. */
export const FILE_TEXT = Array.from({ length: 8 }, (_, i) => `line ${i + 1} of a small file that both servers read`).join('\n') + '\n';
export const INITIALIZE_PARAMS = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench-stdio', version: '1.0.0' } };

const IN_FLIGHT = 64;
const THROUGHPUT_TARGET = 1.6;
const LATENCY_TARGET = 1.2;
/** Issue 27, against the bare SDK server (readFileSync): calls/s at 64 in flight at least this… */
const BARE_THROUGHPUT_TARGET = 1.5;
/** …and the p50 one at a time at most this. */
const BARE_LATENCY_TARGET = 1.0;

interface Plan {
  readonly warmupMs: number;
  /** Length of one throughput block. */
  readonly blockMs: number;
  /** Calls of one latency block. */
  readonly latencyCalls: number;
  /** How many times the A B C D E E D C B A sequence runs, for each measure. */
  readonly rounds: number;
  /** Length of the profiled run of super-pi, done when a target is missed. */
  readonly profileMs: number;
}
const FULL: Plan = { warmupMs: 1000, blockMs: 1500, latencyCalls: 1500, rounds: 2, profileMs: 2000 };
const QUICK: Plan = { warmupMs: 300, blockMs: 500, latencyCalls: 300, rounds: 1, profileMs: 1000 };

// ---------------------------------------------------------------------------------------------------
// The servers, as children speaking newline JSON on stdin/stdout

export interface ServerSpec {
  readonly name: string;
  /** Arguments to `node`, relative to the repository root. */
  readonly args: readonly string[];
}

export const superPiSpec = (ws: string): ServerSpec => ({ name: 'super-pi', args: ['bin/super-pi.js', '--stdio', '--workspace', ws] });
export const sdkSpec = (ws: string): ServerSpec => ({ name: 'SDK', args: ['bench/peers/sdk-stdio-server.mjs', '--workspace', ws] });
const bareSdkSpec = (ws: string): ServerSpec => ({ name: 'bare SDK', args: ['bench/peers/sdk-stdio-server.mjs', '--workspace', ws, '--sync'] });
const floorSpec = (ws: string): ServerSpec => ({ name: 'floor', args: ['bench/peers/stdio-floor-server.mjs', '--workspace', ws] });
const floorThreadSpec = (ws: string): ServerSpec => ({ name: 'floor + thread', args: ['bench/peers/stdio-floor-server.mjs', '--workspace', ws, '--thread'] });

export const commandOf = (spec: ServerSpec): string => `node ${spec.args.join(' ')}`;

/** Keeps the last `max` characters written to it (a child's stderr, for error messages). */
export class Tail {
  #text = '';
  constructor(readonly max = 4000) {}
  push(chunk: string): void {
    this.#text = (this.#text + chunk).slice(-this.max);
  }
  toString(): string {
    return this.#text;
  }
}

/** Every child any section started and has not seen exit: killed at the end of the run, pass or fail. */
const children = new Set<ChildProcess>();

/** Spawns `node …args` from the repository root with piped stdio and tracks it until it exits. */
export function spawnNode(args: readonly string[]): ChildProcess {
  const child = spawn(process.execPath, [...args], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  // A child that died makes its stdin throw EPIPE: reported by the waiting request instead.
  child.stdin?.on('error', () => undefined);
  return child;
}

/** Stops a child: stdin closed (a stdio server's normal end), SIGKILL after `graceMs`. */
export const stopStdioChild = (child: ChildProcess, graceMs = 3000): Promise<void> => stopChildProcess(child, graceMs, 'stdin');

/** Kills every child still running (SIGKILL) and waits for each to exit. */
export async function killAll(): Promise<void> {
  await Promise.all([...children].map((child) => new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  })));
}

export interface Server {
  readonly spec: ServerSpec;
  readonly child: ChildProcess;
  readonly pid: number;
  readonly client: RpcClient;
  readonly stderr: Tail;
  /** Rejects (with the server's stderr) when the process exits: raced against every measure, so a crash fails the run at once. */
  readonly exited: Promise<never>;
  /** Batch request lines written in the same turn of the event loop into one write (throughput mode). */
  batch: boolean;
}

/**
 * Starts a server, initializes its session (unless `initialize` is false: a 2026-07-28 client never
 * does) and checks one call (`check`, default a `read`).
 */
export async function startServer(spec: ServerSpec, initialize = true, check: Call = readCall): Promise<Server> {
  const child = spawnNode(spec.args);
  const stderr = new Tail();
  child.stderr?.setEncoding('utf8').on('data', (d: string) => stderr.push(d));
  const client = new RpcClient();
  let pending = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    let start = 0;
    for (let nl = pending.indexOf('\n', start); nl !== -1; nl = pending.indexOf('\n', start)) {
      const line = pending.slice(start, nl);
      start = nl + 1;
      if (line.trim() !== '') client.receive(line);
    }
    pending = pending.slice(start);
  });
  const exited = new Promise<never>((_, reject) => {
    child.once('exit', (code, signal) => reject(new Error(`${spec.name} exited (${signal ?? code}); stderr: ${stderr}`)));
  });
  exited.catch(() => undefined);
  const server: Server = { spec, child, pid: child.pid as number, client, stderr, exited, batch: false };
  let queued: string[] = [];
  const flush = () => {
    const lines = queued;
    queued = [];
    child.stdin?.write(`${lines.join('\n')}\n`);
  };
  client.attach((line) => {
    if (!server.batch) {
      child.stdin?.write(`${line}\n`);
      return;
    }
    if (queued.length === 0) setImmediate(flush);
    queued.push(line);
  });
  if (initialize) {
    const init = await Promise.race([client.request('initialize', INITIALIZE_PARAMS, 30_000), exited]);
    if (!init.result) throw new Error(`${spec.name}: initialize failed: ${JSON.stringify(init)}; stderr: ${stderr}`);
    child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  }
  await Promise.race([check(client), exited]);
  return server;
}

/** Throws unless the reply is the file's text (a wrong reply fails the run; it is never counted). */
function checkRead(reply: RpcReply): void {
  const result = reply.result as { content?: { type?: string; text?: string }[]; isError?: boolean } | undefined;
  const item = result?.content?.[0];
  if (result?.isError || item?.type !== 'text' || item.text !== FILE_TEXT) throw new Error(`unexpected reply to read: ${JSON.stringify(reply).slice(0, 300)}`);
}

const readParams = { name: 'read', arguments: { path: FILE } };
const readCall: Call = async (client) => checkRead(await client.request('tools/call', readParams));

// ---------------------------------------------------------------------------------------------------
// Measures

interface Throughput {
  calls: number;
  us: number;
  cpuUs: number;
  /** This process's (the client's) CPU time over the block, µs: on two cores the client shares the machine. */
  clientCpuUs: number;
}

/** `window` closed loops of `call` for `ms`: completed calls, wall time and the server's CPU time (all its threads). */
async function throughputBlock(server: Server, ms: number, window: number): Promise<Throughput> {
  server.batch = true;
  const cpu0 = cpuMicros(server.pid);
  const client0 = process.cpuUsage();
  const started = nowUs();
  const end = started + ms * 1000;
  let calls = 0;
  try {
    await Promise.race([server.exited, Promise.all(Array.from({ length: window }, async () => {
      while (nowUs() < end) {
        await readCall(server.client);
        calls++;
      }
    }))]);
  } finally {
    server.batch = false;
  }
  const client = process.cpuUsage(client0);
  return { calls, us: nowUs() - started, cpuUs: cpuMicros(server.pid) - cpu0, clientCpuUs: client.user + client.system };
}

interface Latency {
  /** Each call's latency, µs. */
  readonly latencies: number[];
  /** The server's CPU time over the block (all its threads), µs. */
  readonly cpuUs: number;
}

/** `count` calls one at a time: each one's latency, and the server's CPU time over the block. */
async function latencyBlock(server: Server, count: number): Promise<Latency> {
  const latencies: number[] = [];
  const cpu0 = cpuMicros(server.pid);
  await Promise.race([server.exited, (async () => {
    for (let i = 0; i < count; i++) {
      const t0 = nowUs();
      await readCall(server.client);
      latencies.push(nowUs() - t0);
    }
  })()]);
  return { latencies, cpuUs: cpuMicros(server.pid) - cpu0 };
}

/** A B C … C B A, `rounds` times. */
function abba<T>(sides: readonly T[], rounds: number): T[] {
  const order: T[] = [];
  for (let r = 0; r < rounds; r++) order.push(...sides, ...[...sides].reverse());
  return order;
}

const rate = (t: Throughput) => (t.calls / t.us) * 1e6;
const sum = (ts: readonly Throughput[]): Throughput => ts.reduce((a, t) => ({ calls: a.calls + t.calls, us: a.us + t.us, cpuUs: a.cpuUs + t.cpuUs, clientCpuUs: a.clientCpuUs + t.clientCpuUs }), { calls: 0, us: 0, cpuUs: 0, clientCpuUs: 0 });

/** Ratios of A's blocks to B's blocks, paired in the order they ran (A1/B1, A2/B2, …): each pair ran back to back or mirrored around the middle. */
function pairRatios(a: readonly number[], b: readonly number[]): number[] {
  return a.map((x, i) => x / (b[i] as number));
}

const range = (rs: readonly number[]) => (rs.length === 0 ? 'n/a' : `${fmt(Math.min(...rs), 2)}–${fmt(Math.max(...rs), 2)}`);
const x = (r: number) => `${fmt(r, r >= 10 ? 1 : 2)}×`;
const us = (v: number) => `${fmt(v, v >= 100 ? 0 : 1)} µs`;

// ---------------------------------------------------------------------------------------------------
// Profiles: where super-pi's CPU time goes, thread by thread, read from `node --cpu-prof` output

/** One thread's profile: how busy it was, and its busy time by area of the code. */
export interface ThreadProfile {
  /** "main", "scheduler thread", "tool-pool thread" or "thread". */
  readonly role: string;
  readonly busyMs: number;
  readonly spanMs: number;
  /** Busy time by area, largest first: a src/ folder or npm package of the bundle, or what Node itself does. */
  readonly areas: readonly (readonly [string, number])[];
}

interface CpuProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}
interface CpuProfile {
  readonly nodes: readonly CpuProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

const distUrl = pathToFileURL(path.join(repoRoot, 'dist')).href + '/';
/** A thread blocked here is waiting, not working (piscina's idle workers wait in Atomics.wait). */
const WAITING = new Set(['(idle)', 'atomicsWaitLoop']);

/** Where each bundled module starts in each bundle of dist/, by file URL: taken when a profiled process starts. */
export type BundleIndex = ReadonlyMap<string, readonly (readonly [number, string])[]>;

/**
 * The line where each module starts in every bundle of dist/, from the `// path` comments esbuild writes.
 * Taken right after the profiled process has loaded its bundles, so a rebuild of dist/ later in the run
 * (src/ changes under a shared tree) cannot shift the lines the profile is read with.
 */
export function indexBundles(): BundleIndex {
  const index = new Map<string, [number, string][]>();
  const dist = path.join(repoRoot, 'dist');
  // Recursive: the code-split chunks live in dist/chunks/.
  for (const file of existsSync(dist) ? readdirSync(dist, { recursive: true, encoding: 'utf8' }).filter((f) => /\.c?js$/.test(f)) : []) {
    const starts: [number, string][] = [];
    try {
      readFileSync(path.join(dist, file), 'utf8').split('\n').forEach((text, i) => {
        const m = /^\/\/ ((?:src|node_modules|\.\.)\/\S+)$/.exec(text);
        if (m) starts.push([i, areaOfPath(m[1] as string)]);
      });
    } catch {
      continue; // removed by a concurrent build: its frames stay unattributed
    }
    index.set(`${distUrl}${file}`, starts);
  }
  return index;
}

/** The bundled module a line of a dist/ bundle belongs to; null for a frame outside dist/. */
function bundleModuleAt(index: BundleIndex, url: string, line: number): string | null {
  if (!url.startsWith(distUrl)) return null;
  const starts = index.get(url);
  if (!starts) return 'dist/ (bundle changed during the run)';
  let area = 'loading the bundle';
  for (const [i, a] of starts) {
    if (i > line) break;
    area = a;
  }
  return area;
}

/** `src/tools/read.ts` → "src/tools"; `node_modules/ajv/dist/core.js` → "ajv". */
function areaOfPath(file: string): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
  if (pkg) return pkg[1] as string;
  return file.replace(/^(src\/[^/]+)\/.*$/, '$1');
}

/**
 * Reads every profile in `dir`. A sample is charged to the innermost frame of the stack that is in a
 * bundle of dist/ (so Node's fs or streams called by src/tools count as src/tools); samples with no
 * such frame are Node's own (start-up, GC, native calls) or an unbundled package's.
 * `window`: only the samples taken between these times (the profiler's clock is the monotonic one `nowUs` reads).
 */
export function readProfiles(dir: string, bundles: BundleIndex, window: { readonly fromUs?: number; readonly untilUs?: number } = {}): ThreadProfile[] {
  const fromUs = window.fromUs ?? Number.NEGATIVE_INFINITY;
  const untilUs = window.untilUs ?? Number.POSITIVE_INFINITY;
  const out: ThreadProfile[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).sort()) {
    const profile = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as CpuProfile;
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const urls = profile.nodes.map((n) => n.callFrame.url);
    // File names are CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile; thread 0 is the main thread.
    const role = /\.0\.\d+\.cpuprofile$/.test(file) ? 'main'
      : urls.some((u) => u.endsWith('/scheduler-worker.js')) ? 'scheduler thread'
      : urls.some((u) => u.endsWith('/tool-pool-worker.js') || u.includes('/piscina/')) ? 'tool-pool thread'
      : 'thread';
    const areas = new Map<string, number>();
    let busy = 0;
    let t = profile.startTime;
    for (let i = 0; i < profile.samples.length; i++) {
      const delta = profile.timeDeltas[i] ?? 0;
      t += delta;
      if (t > untilUs) break;
      if (t < fromUs) continue;
      const leaf = byId.get(profile.samples[i] as number);
      if (!leaf || WAITING.has(leaf.callFrame.functionName)) continue;
      busy += delta;
      let area: string | null = null;
      for (let id: number | undefined = leaf.id; id !== undefined && area === null; id = parent.get(id)) {
        const frame = (byId.get(id) as CpuProfileNode).callFrame;
        area = bundleModuleAt(bundles, frame.url, frame.lineNumber);
      }
      if (area === null) {
        const { url, functionName } = leaf.callFrame;
        area = functionName === '(garbage collector)' ? 'garbage collection'
          : url.includes('/node_modules/') ? areaOfPath(url)
          : 'Node itself (start-up, built-ins, native calls)';
      }
      areas.set(area, (areas.get(area) ?? 0) + delta);
    }
    const span = Math.min(t, untilUs, profile.endTime) - Math.max(profile.startTime, fromUs);
    out.push({ role, busyMs: busy / 1000, spanMs: Math.max(0, span) / 1000, areas: [...areas].map(([a, v]) => [a, v / 1000] as const).sort((a, b) => b[1] - a[1]) });
  }
  return out;
}

/** The profiles as a markdown table: each thread's busy time and its largest areas. */
export function profileTable(threads: readonly ThreadProfile[], top = 5): string {
  return table(['thread', 'busy', 'where the busy time goes (share of the thread\'s busy time)'], threads.map((th) => [
    th.role,
    `${fmt(th.busyMs, 0)} ms of ${fmt(th.spanMs, 0)} (${fmt((100 * th.busyMs) / Math.max(th.spanMs, 1e-9), 0)}%)`,
    th.areas.slice(0, top).map(([a, v]) => `${a} ${fmt((100 * v) / Math.max(th.busyMs, 1e-9), 0)}%`).join(', '),
  ]));
}

// ---------------------------------------------------------------------------------------------------
// The section

/** super-pi under load with `node --cpu-prof` (every thread writes a profile at exit): its profiles over `ms` at 64 in flight. */
async function profileUnderLoad(ws: string, ms: number, progress: (line: string) => void): Promise<ThreadProfile[]> {
  ensureBuilt(progress);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'superpi-bench-prof-'));
  try {
    const server = await startServer({ name: 'super-pi (profiled)', args: ['--cpu-prof', '--cpu-prof-dir', dir, ...superPiSpec(ws).args] });
    const bundles = indexBundles();
    await throughputBlock(server, Math.min(500, ms), IN_FLIGHT);
    const from = nowUs();
    await throughputBlock(server, ms, IN_FLIGHT);
    const until = nowUs();
    // Closing stdin ends the process normally, which is when the profiles are written.
    await stopStdioChild(server.child, 20_000);
    return readProfiles(dir, bundles, { fromUs: from, untilUs: until });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** What the figures and the profile say about a missed throughput target, and what would change it. */
function throughputNote(m: { ratio: number; ceiling: number; ceilingThread: number; cpuPerCall: number; sdkCpuPerCall: number; profile: readonly ThreadProfile[] | null }): string {
  const lines = [
    `**Throughput target missed** (${x(m.ratio)} the SDK; with this client on this machine the floors reach ${x(m.ceiling)} the SDK, ${x(m.ceilingThread)} with a thread crossing).`,
    `super-pi spends ${us(m.cpuPerCall)} of CPU per call (all threads), the SDK ${us(m.sdkCpuPerCall)}.`,
  ];
  const busiest = m.profile && [...m.profile].sort((a, b) => b.busyMs / b.spanMs - a.busyMs / a.spanMs)[0];
  if (m.profile && busiest) {
    const share = (t: ThreadProfile) => `${fmt((100 * t.busyMs) / Math.max(t.spanMs, 1e-9), 0)}%`;
    const top = busiest.areas.slice(0, 3).map(([a, v]) => `${a} (${fmt((100 * v) / Math.max(busiest.busyMs, 1e-9), 0)}%)`).join(', ');
    lines.push(`A CPU profile of super-pi at ${IN_FLIGHT} in flight (\`node --cpu-prof\`, every thread; table below) finds the ${busiest.role} the busiest, ${share(busiest)} busy, most of it in ${top}; the other threads: ${m.profile.filter((t) => t !== busiest).map((t) => `${t.role} ${share(t)}`).join(', ')}.`);
    lines.push(busiest.role === 'main'
      ? 'The main thread is the limit: what it does per call (its top areas above) has to move to the scheduler threads, or get cheaper, before more cores can help.'
      : busiest.role === 'scheduler thread'
        ? 'One stdio session is one connection actor, and an actor runs on one scheduler thread: every call of the session is parsed, validated and (for small reads) served on that one thread, so the session uses one core however many there are. What it would take: less work per call on that thread (its top areas above), or calls of one session spread over threads (e.g. the read bodies handed to other scheduler threads or the tool pool while the actor goes on with the next line).'
        : 'The busiest thread is neither the main thread nor a scheduler thread: see its areas above.');
  }
  return lines.join(' ');
}

/** What the figures say about a missed latency target. */
function latencyNote(m: { ratio: number; ours: number; sdk: number; crossing: number; cpuPerCall: number; sdkCpuPerCall: number }): string {
  const extra = m.ours - m.sdk;
  const work = m.cpuPerCall - m.sdkCpuPerCall;
  return [
    `**Latency target missed** (p50 ${us(m.ours)} against the SDK's ${us(m.sdk)}, ${x(m.ratio)}: ${us(extra)} more per call).`,
    `One at a time, super-pi's process spends ${us(m.cpuPerCall)} of CPU per call (all threads) and the SDK's ${us(m.sdkCpuPerCall)}: ${us(Math.max(0, work))} more work, so ${work >= 0.7 * extra ? 'most of the extra latency is work on the path of the call (see the profile areas above)' : 'much of the extra latency is waiting rather than work: threads waking up for each crossing'}.`,
    `One round trip to a worker thread and back costs the floor ${us(m.crossing)} in this run (p50 of floor + thread − floor); a call that crosses to the actor's thread and back pays at least that, the SDK none.`,
    'What it would take: fewer crossings per call (each one wakes a sleeping thread), and less work per call on the thread the call waits for.',
  ].join(' ');
}

/** True while dist/super-pi.cjs exists and is at least as new as every file in src/ (what bin/super-pi.js checks). */
/** dist/ is what bin/super-pi.js and its threads boot from only while it is at least as new as src/. */
export const distFresh = distIsFresh;

/**
 * Builds dist/ when it is missing or older than src/ (bin/super-pi.js and its threads would otherwise run
 * the source through tsx); true when it built. Called before every start of super-pi, since src/ may
 * change while a section runs.
 */
export function ensureBuilt(progress: (line: string) => void): boolean {
  if (distFresh()) return false;
  progress('dist/ is missing or older than src/: building it (node scripts/build.mjs)');
  const r = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: repoRoot, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`the build failed: ${r.stderr}`);
  return true;
}

/** A temporary workspace holding the file every server reads. */
export async function makeWorkspace(): Promise<{ ws: string; cleanup: () => Promise<void> }> {
  const base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-bench-stdio-')));
  await writeFile(path.join(base, FILE), FILE_TEXT);
  return { ws: base, cleanup: () => rm(base, { recursive: true, force: true }) };
}

export const run: BenchSectionRunner = async (options: BenchOptions): Promise<BenchSection> => {
  const plan = options.quick ? QUICK : FULL;
  const progress = options.progress ?? ((line: string) => process.stderr.write(`  [stdio] ${line}\n`));
  ensureBuilt(progress);
  const { ws, cleanup } = await makeWorkspace();
  try {
    const specs = [superPiSpec(ws), sdkSpec(ws), bareSdkSpec(ws), floorSpec(ws), floorThreadSpec(ws)];
    progress(`starting ${specs.map((s) => s.name).join(', ')}`);
    const servers = await Promise.all(specs.map((spec) => startServer(spec)));
    const [sp, sdk, bare, floor1, floorThread] = servers as [Server, Server, Server, Server, Server];

    progress('warm-up');
    for (const s of servers) {
      await throughputBlock(s, plan.warmupMs, IN_FLIGHT);
      await latencyBlock(s, Math.min(500, plan.latencyCalls));
    }

    const blocks = new Map<Server, Throughput[]>(servers.map((s) => [s, []]));
    for (const s of abba(servers, plan.rounds)) {
      progress(`${IN_FLIGHT} in flight: ${s.spec.name}, ${plan.blockMs} ms`);
      blocks.get(s)?.push(await throughputBlock(s, plan.blockMs, IN_FLIGHT));
    }
    const latencies = new Map<Server, Latency[]>(servers.map((s) => [s, []]));
    for (const s of abba(servers, plan.rounds)) {
      progress(`one at a time: ${s.spec.name}, ${plan.latencyCalls} calls`);
      latencies.get(s)?.push(await latencyBlock(s, plan.latencyCalls));
    }
    await Promise.all(servers.map((s) => stopStdioChild(s.child)));

    const tput = (s: Server) => sum(blocks.get(s) ?? []);
    const lat = (s: Server) => (latencies.get(s) ?? []).flatMap((l) => l.latencies);
    const p = (s: Server, q: number) => percentile(lat(s), q);
    const latCpu = (s: Server) => (latencies.get(s) ?? []).reduce((a, l) => a + l.cpuUs, 0) / Math.max(1, lat(s).length);
    const blockRates = (s: Server) => (blocks.get(s) ?? []).map(rate);
    const blockP50s = (s: Server) => (latencies.get(s) ?? []).map((l) => percentile(l.latencies, 50));

    const tRatio = rate(tput(sp)) / rate(tput(sdk));
    const lRatio = p(sp, 50) / p(sdk, 50);
    let profile: ThreadProfile[] | null = null;
    if (tRatio < THROUGHPUT_TARGET || lRatio > LATENCY_TARGET) {
      progress(`a target is missed: profiling super-pi at ${IN_FLIGHT} in flight for ${plan.profileMs} ms`);
      try {
        profile = await profileUnderLoad(ws, plan.profileMs, progress);
      } catch (err) {
        progress(`the profile failed: ${(err as Error).message}`);
      }
    }
    const rows: BenchRow[] = [
      {
        measure: `stdio tools/call read, ${IN_FLIGHT} in flight: calls/s`,
        ours: `${fmt(rate(tput(sp)))}/s`, peer: `${fmt(rate(tput(sdk)))}/s`, peerName: 'SDK',
        ratio: tRatio, target: `≥ ${THROUGHPUT_TARGET}×`, met: tRatio >= THROUGHPUT_TARGET,
      },
      {
        measure: 'stdio tools/call read, one at a time: p50 latency',
        ours: us(p(sp, 50)), peer: us(p(sdk, 50)), peerName: 'SDK',
        ratio: lRatio, target: `≤ ${LATENCY_TARGET}×`, met: lRatio <= LATENCY_TARGET,
      },
      {
        measure: `stdio tools/call read, ${IN_FLIGHT} in flight: calls/s`,
        ours: `${fmt(rate(tput(sp)))}/s`, peer: `${fmt(rate(tput(bare)))}/s`, peerName: 'bare SDK (readFileSync)',
        ratio: rate(tput(sp)) / rate(tput(bare)), target: `≥ ${BARE_THROUGHPUT_TARGET}×`, met: rate(tput(sp)) / rate(tput(bare)) >= BARE_THROUGHPUT_TARGET,
      },
      {
        measure: 'stdio tools/call read, one at a time: p50 latency',
        ours: us(p(sp, 50)), peer: us(p(bare, 50)), peerName: 'bare SDK (readFileSync)',
        ratio: p(sp, 50) / p(bare, 50), target: `≤ ${BARE_LATENCY_TARGET}×`, met: p(sp, 50) / p(bare, 50) <= BARE_LATENCY_TARGET,
      },
    ];
    for (const floor of servers.slice(3)) {
      rows.push({
        measure: `stdio tools/call read, ${IN_FLIGHT} in flight: calls/s`,
        ours: `${fmt(rate(tput(sp)))}/s`, peer: `${fmt(rate(tput(floor)))}/s`, peerName: floor.spec.name,
        ratio: rate(tput(sp)) / rate(tput(floor)), target: '', met: null,
      });
    }

    const detail = table(
      ['server', `calls/s (${IN_FLIGHT} in flight)`, 'CPU/call', 'client CPU/call', 'p50 one at a time', 'p99 one at a time', 'CPU/call one at a time', 'calls/s ÷ SDK, per block pair', 'p50 ÷ SDK, per block pair'],
      servers.map((s) => [
        s.spec.name,
        fmt(rate(tput(s))),
        us(tput(s).cpuUs / tput(s).calls),
        us(tput(s).clientCpuUs / tput(s).calls),
        us(p(s, 50)),
        us(p(s, 99)),
        us(latCpu(s)),
        s === sdk ? '' : range(pairRatios(blockRates(s), blockRates(sdk))),
        s === sdk ? '' : range(pairRatios(blockP50s(s), blockP50s(sdk))),
      ]),
    );
    const notes = [
      detail,
      `Servers: super-pi \`${commandOf(specs[0] as ServerSpec)}\` (default threads for stdio: none — its connection actor runs on the main thread; the tool pool starts a thread on the first grep, find or large read); SDK \`${commandOf(specs[1] as ServerSpec)}\`; bare SDK \`${commandOf(specs[2] as ServerSpec)}\` (the same server, its tool body readFileSync); floor \`${commandOf(specs[3] as ServerSpec)}\` and \`${commandOf(specs[4] as ServerSpec)}\`. "CPU/call": the server process's CPU time (every thread, from /proc) per call, in each mode; "client CPU/call": the driving client's (this process's) at ${IN_FLIGHT} in flight, which shares the machine's cores with the server. The floor is what Node itself allows for this exchange (no framework, the file read with readFileSync); "floor + thread" adds the one crossing to a worker thread and back per request that a server whose sessions live on other threads pays.`,
      ...(tRatio >= THROUGHPUT_TARGET ? [] : [throughputNote({
        ratio: tRatio,
        ceiling: rate(tput(floor1)) / rate(tput(sdk)),
        ceilingThread: rate(tput(floorThread)) / rate(tput(sdk)),
        cpuPerCall: tput(sp).cpuUs / tput(sp).calls,
        sdkCpuPerCall: tput(sdk).cpuUs / tput(sdk).calls,
        profile,
      })]),
      ...(lRatio <= LATENCY_TARGET ? [] : [latencyNote({ ratio: lRatio, ours: p(sp, 50), sdk: p(sdk, 50), crossing: p(floorThread, 50) - p(floor1, 50), cpuPerCall: latCpu(sp), sdkCpuPerCall: latCpu(sdk) })]),
      ...(profile ? [`Profile of super-pi, ${fmt(plan.profileMs / 1000, 1)} s at ${IN_FLIGHT} in flight (\`node --cpu-prof\`; each thread's samples charged to the innermost frame in dist/'s bundles, mapped back to the src/ folder or npm package it was bundled from; figures under the profiler are slower than the ones above, the shares are what counts):`, profileTable(profile)] : []),
    ];
    return {
      title: 'stdio: tools/call read, super-pi vs the SDK',
      command: 'npx tsx bench/stdio.ts',
      method: `Each server is a child process (\`node\`, no TypeScript loader) with one session over stdin/stdout, driven by the same line-JSON client (bench/lib/rpc-client.ts): \`tools/call read {path: "${FILE}"}\` of a ${FILE_TEXT.length}-byte file in a temporary workspace; every reply is checked to be the file's text (a wrong reply fails the run). Throughput: ${IN_FLIGHT} requests in flight (the lines issued in one turn of the client's event loop go out in one write), blocks of ${plan.blockMs / 1000} s. Latency: one call at a time, blocks of ${plan.latencyCalls} calls. After ${plan.warmupMs / 1000} s of warm-up on each server, blocks run in the order super-pi, SDK, bare SDK, floor, floor + thread, then mirrored (${plan.rounds} time${plan.rounds > 1 ? 's' : ''}), so a linear drift cancels out of each pair.`,
      rows,
      notes,
    };
  } finally {
    await killAll();
    await cleanup();
  }
};

if (isMain(import.meta.url)) {
  const { printSection } = await import('./run.ts');
  printSection(await run({ quick: process.argv.includes('--quick') }));
}
