// super-pi over the network, side by side with the official SDK in the same run, as ratios (absolute
// numbers drift on a shared machine; ratios of blocks measured back to back do not):
//   1. Streamable HTTP: 1, 16 and 64 concurrent sessions, each calling `tools/call read` in a closed
//      loop — calls/s, p50/p99 latency, server CPU per call — super-pi vs a stateful SDK server
//      (bench/peers/sdk-http-server.ts: one McpServer + one StreamableHTTPServerTransport per session).
//      Target: super-pi ≥ 2.5× the SDK's throughput at 64 sessions. A do-nothing HTTP server
//      (bench/peers/http-floor-server.ts) is measured alongside: the most any server can get out of this
//      client on this machine, hence the ceiling of the ratio.
//   2. WebSocket (super-pi only; the SDK has no WebSocket server): one connection, 64 requests in
//      flight, against a trivial `ws` echo server as the floor.
//   3. Memory per idle session: N sessions (initialize + initialized, then nothing) opened on a fresh
//      process of each server; VmRSS before and after ÷ N. Target: super-pi ≤ ⅓ of the SDK's.
// The same client code drives every server (bench/lib/mcp-http-client.ts: node:http on a keep-alive
// Agent, the same headers, a JSON or SSE reply parsed the same way); each server runs in its own process.
// Usage: npm run bench:http   (npm run build && tsx bench/http.ts). Writes bench/results/http.md.

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { schedulerEntry } from '../src/server/thread-entries.ts';
import { makeSandbox, repoRoot, type Sandbox } from '../test/e2e/fixtures.ts';
import { bounded, cpuMicros, initializeParams, type JsonRpcReply, McpHttpSession, readParams, rssBytes, WsRpc } from './lib/mcp-http-client.ts';
import { isMain } from './lib/report.ts';
import { stopChild as stopChildProcess } from './lib/processes.ts';
import { fmt, kb, percentile, ratio, sleep, table } from './lib/stats.ts';

export const LEVELS = [1, 16, 64] as const;
/** Per level and server: one warm-up run, then blocks in the order super-pi, SDK, floor, floor, SDK, super-pi. */
export const WARMUP_MS = 1000;
export const BLOCK_MS = 3000;
export const WS_IN_FLIGHT = 64;
export const WS_BLOCK_MS = 2500;
export const IDLE_SESSIONS = 10_000;
export const MIN_IDLE_SESSIONS = 2_000;
/**
 * Sessions opened (and kept) before the "before" reading, so one-time costs are not counted: JIT, lazy
 * modules, and above all each V8 heap growing to its working size (young generations: super-pi runs three
 * isolates, the SDK one). Measured every 1,000 sessions: super-pi's first 2,000 cost ~29 KB each, the next
 * 8,000 ~9 KB; the SDK's first 2,000 ~45 KB, the next ~31-35 KB. With 100, the one-time growth was counted
 * as per-session memory, much more so for super-pi.
 */
export const MEMORY_WARMUP_SESSIONS = 2000;
export const MEMORY_CHUNK = 1000;
/** Opening idle sessions on one server stops at this deadline (at least MIN_IDLE_SESSIONS are opened). */
export const MEMORY_DEADLINE_MS = 50_000;
export const OPEN_CONCURRENCY = 64;
export const SETTLE_MS = 1500;
export const THROUGHPUT_TARGET = 2.5;
export const MEMORY_TARGET = 1 / 3;
const TIME_BUDGET_MS = 4 * 60_000;
export const FILE = 'a.txt';
export const FILE_TEXT = Array.from({ length: 8 }, (_, i) => `line ${i + 1} of a small file that both servers read`).join('\n') + '\n';

const here = path.dirname(fileURLToPath(import.meta.url));
const benchStarted = performance.now();
const out: string[] = [];
const emit = (text: string) => {
  out.push(text);
  process.stdout.write(`${text}\n`);
};
const progress = (text: string) => process.stderr.write(`  [${((performance.now() - benchStarted) / 1000).toFixed(0)} s] ${text}\n`);

// ---------------------------------------------------------------------------------------------------
// The servers

export interface Target {
  readonly name: string;
  readonly url: string;
  readonly pid: number;
  stop(): Promise<void>;
}

/** Stops a child: SIGTERM, then SIGKILL after `graceMs`. */
export const stopChild = (child: ChildProcess, graceMs = 20_000): Promise<void> => stopChildProcess(child, graceMs, 'SIGTERM');

/**
 * super-pi as a user runs it: `bin/super-pi.js`, which runs the dist/ bundle (built by `npm run build`,
 * which bench:http runs first). Through tsx instead, its keepNames transform gives every named closure a
 * property store (~256 B each, ~1.8 KB per session) and costs CPU that the shipped server does not pay.
 */
/**
 * `nodeArgs`: flags for node itself, before the script (`--cpu-prof`, which NODE_OPTIONS refuses); `root`:
 * another built checkout to run instead of this one (a before/after comparison, bench/http-turns.ts --old).
 */
export async function startSuperPi(ws: string, extraArgs: readonly string[] = [], nodeArgs: readonly string[] = [], root: string = repoRoot): Promise<Target> {
  // --max-sessions: the default (10,000) counts the warm-up sessions too; every bench session is anonymous.
  const max = String(MEMORY_WARMUP_SESSIONS + IDLE_SESSIONS + 1000);
  return startProcess('super-pi', [...nodeArgs, path.join(root, 'bin/super-pi.js'), '--port', '0', '--workspace', ws, '--max-sessions', max, '--max-anonymous-sessions', max, ...extraArgs], /Streamable HTTP\s+(http:\/\/\S+)/);
}

/** How super-pi's threads run in this checkout now: from the dist/ bundle, or from src/ through tsx (dist/ stale). */
export const superPiEntry = (): string => (schedulerEntry().mode === 'built' ? 'the dist/ bundle' : 'src/ through tsx (dist/ was stale)');

/**
 * Runs a bench/peers script as plain JavaScript, compiled by esbuild (no keepNames, as super-pi's bundle),
 * so that neither side carries tsx's per-closure cost; resolves once it printed a URL matching `pattern`.
 */
export async function startPeer(name: string, script: string, args: string[], pattern: RegExp): Promise<Target> {
  return startProcess(name, [await compiledPeer(script), ...args], pattern);
}

/** The peer compiled to ESM under node_modules/.cache (so its imports resolve from the repository's node_modules). */
async function compiledPeer(script: string): Promise<string> {
  const { transform } = await import('esbuild');
  const out = path.join(repoRoot, 'node_modules', '.cache', 'super-pi-bench', script.replace(/\.ts$/, '.mjs'));
  const { code } = await transform(await readFile(path.join(here, 'peers', script), 'utf8'), { loader: 'ts', format: 'esm', target: 'node20', sourcefile: script });
  await mkdir(path.dirname(out), { recursive: true });
  // Written aside, then renamed: another bench run may be starting the same peer.
  const tmp = `${out}.${process.pid}.tmp`;
  await writeFile(tmp, code);
  await rename(tmp, out);
  return out;
}

async function startProcess(name: string, args: string[], pattern: RegExp): Promise<Target> {
  const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start; stderr: ${stderr}`)), 20_000);
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const m = pattern.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] as string);
      }
    });
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}; stderr: ${stderr}`)));
  });
  return { name, url, pid: child.pid as number, stop: () => stopChild(child) };
}

export const startSdk = (ws: string) => startPeer('SDK', 'sdk-http-server.ts', ['--workspace', ws], /SDK Streamable HTTP\s+(http:\/\/\S+)/);
export const startFloor = (ws: string) => startPeer('HTTP floor', 'http-floor-server.ts', ['--workspace', ws, '--file', FILE], /HTTP floor\s+(http:\/\/\S+)/);
export const startEcho = () => startPeer('ws echo', 'ws-echo-server.ts', [], /WebSocket echo\s+(ws:\/\/\S+)/);

export async function health(url: string): Promise<Record<string, unknown>> {
  const res = await fetch(url.replace(/\/mcp$/, '/health'));
  return (await res.json()) as Record<string, unknown>;
}

// ---------------------------------------------------------------------------------------------------
// Load

export interface Sample {
  calls: number;
  errors: number;
  firstError: string | null;
  elapsedMs: number;
  latencies: number[];
  serverCpuUs: number;
  clientCpuUs: number;
}

export const emptySample = (): Sample => ({ calls: 0, errors: 0, firstError: null, elapsedMs: 0, latencies: [], serverCpuUs: 0, clientCpuUs: 0 });

function add(into: Sample, s: Sample): void {
  into.calls += s.calls;
  into.errors += s.errors;
  into.firstError ??= s.firstError;
  into.elapsedMs += s.elapsedMs;
  for (const l of s.latencies) into.latencies.push(l);
  into.serverCpuUs += s.serverCpuUs;
  into.clientCpuUs += s.clientCpuUs;
}

/** `workers` closed loops of `call` for `ms`: every call's latency, the server's and this process's CPU time. */
export async function drive(pid: number, workers: number, ms: number, call: (worker: number) => Promise<void>): Promise<Sample> {
  const sample = emptySample();
  const cpu0 = cpuMicros(pid);
  const client0 = process.cpuUsage();
  const started = performance.now();
  const end = started + ms;
  await Promise.all(Array.from({ length: workers }, async (_, w) => {
    while (performance.now() < end) {
      const t0 = performance.now();
      try {
        await call(w);
        sample.latencies.push(performance.now() - t0);
        sample.calls++;
      } catch (err) {
        sample.errors++;
        sample.firstError ??= (err as Error).message;
      }
    }
  }));
  sample.elapsedMs = performance.now() - started;
  sample.serverCpuUs = cpuMicros(pid) - cpu0;
  const client = process.cpuUsage(client0);
  sample.clientCpuUs = client.user + client.system;
  return sample;
}

export const rate = (s: Sample) => (s.calls / s.elapsedMs) * 1000;
export const cpuPerCall = (s: Sample) => s.serverCpuUs / s.calls;

export function checkReply(reply: JsonRpcReply): void {
  const text = reply.result?.content?.[0]?.text;
  if (text !== FILE_TEXT) throw new Error(`unexpected read result: ${JSON.stringify(reply).slice(0, 300)}`);
}

export interface Comparison {
  readonly a: Sample;
  readonly b: Sample;
  /** The optional third side (a reference), measured between the pairs. */
  readonly c: Sample | null;
  /** a/b throughput of each back-to-back pair of blocks. */
  readonly pairRatios: number[];
}

/**
 * Warm-up on every side, then blocks A B (C C) B A: every block of A is paired with the adjacent block
 * of B (ABBA cancels a linear drift); the reference C, if any, sits in the middle.
 */
export async function compare(run: (side: 'a' | 'b' | 'c', ms: number) => Promise<Sample>, blockMs: number, withC: boolean): Promise<Comparison> {
  await run('a', WARMUP_MS);
  await run('b', WARMUP_MS);
  if (withC) await run('c', WARMUP_MS);
  const a1 = await run('a', blockMs);
  const b1 = await run('b', blockMs);
  const c = withC ? emptySample() : null;
  if (c) {
    add(c, await run('c', blockMs));
    add(c, await run('c', blockMs));
  }
  const b2 = await run('b', blockMs);
  const a2 = await run('a', blockMs);
  const a = emptySample();
  const b = emptySample();
  add(a, a1);
  add(a, a2);
  add(b, b1);
  add(b, b2);
  return { a, b, c, pairRatios: [rate(a1) / rate(b1), rate(a2) / rate(b2)] };
}

const ms = (v: number) => fmt(v, v >= 10 ? 1 : 2);
const range = (rs: number[]) => `${fmt(Math.min(...rs), 2)}–${fmt(Math.max(...rs), 2)}`;
const errorsOf = (s: Sample) => (s.errors > 0 ? ` (${s.errors} errors: ${s.firstError})` : '');

// ---------------------------------------------------------------------------------------------------
// 1. Streamable HTTP throughput and latency

export interface LevelResult {
  readonly clients: number;
  readonly cmp: Comparison;
}

export async function httpLevels(superPi: Target, sdk: Target, floor: Target, levels: readonly number[] = LEVELS, blockMs = BLOCK_MS): Promise<LevelResult[]> {
  const results: LevelResult[] = [];
  for (const clients of levels) {
    progress(`HTTP: ${clients} session(s) on each server`);
    const [sp, sd, fl] = await Promise.all([
      bounded(clients, OPEN_CONCURRENCY, () => McpHttpSession.open(superPi.url)),
      bounded(clients, OPEN_CONCURRENCY, () => McpHttpSession.open(sdk.url)),
      bounded(clients, OPEN_CONCURRENCY, () => McpHttpSession.open(floor.url)),
    ]);
    for (const sessions of [sp, sd, fl]) checkReply(await (sessions[0] as McpHttpSession).call('read', { path: FILE }));
    const cmp = await compare((side, runMs) => {
      const target = side === 'a' ? superPi : side === 'b' ? sdk : floor;
      const sessions = side === 'a' ? sp : side === 'b' ? sd : fl;
      return drive(target.pid, clients, runMs, async (w) => {
        checkReply(await (sessions[w] as McpHttpSession).call('read', readParams(FILE).arguments));
      });
    }, blockMs, true);
    results.push({ clients, cmp });
    await Promise.all([...sp, ...sd, ...fl].map((s) => s.close()));
  }
  return results;
}

// ---------------------------------------------------------------------------------------------------
// 2. WebSocket: super-pi vs an echo server, one connection, 64 in flight

export interface WsResult {
  readonly cmp: Comparison;
  readonly requestBytes: number;
  readonly replyBytes: number;
}

export async function websocket(superPi: Target, echo: Target, blockMs = WS_BLOCK_MS): Promise<WsResult> {
  progress(`WebSocket: one connection, ${WS_IN_FLIGHT} in flight, super-pi vs echo`);
  const sp = await WsRpc.connect(superPi.url.replace(/^http/, 'ws'));
  const init = await sp.request('initialize', initializeParams);
  if (!init.result) throw new Error(`WebSocket initialize failed: ${JSON.stringify(init)}`);
  sp.notify('notifications/initialized');
  const echoRpc = await WsRpc.connect(echo.url);
  const sample = await sp.request('tools/call', readParams(FILE));
  checkReply(sample);
  const requestBytes = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: readParams(FILE) }).length;
  const cmp = await compare((side, runMs) => {
    if (side === 'a') return drive(superPi.pid, WS_IN_FLIGHT, runMs, async () => checkReply(await sp.request('tools/call', readParams(FILE))));
    return drive(echo.pid, WS_IN_FLIGHT, runMs, async () => {
      const reply = await echoRpc.request('tools/call', readParams(FILE));
      if (reply.method !== 'tools/call') throw new Error(`unexpected echo: ${JSON.stringify(reply)}`);
    });
  }, blockMs, false);
  await Promise.all([sp.close(), echoRpc.close()]);
  return { cmp, requestBytes, replyBytes: JSON.stringify(sample).length };
}

// ---------------------------------------------------------------------------------------------------
// 3. Memory per idle session

export interface MemoryResult {
  readonly name: string;
  readonly sessions: number;
  readonly openMs: number;
  readonly rssStart: number;
  readonly rssBefore: number;
  readonly rssAfter: number;
  /** (after − before) ÷ sessions. */
  readonly perSession: number;
  /** Least-squares slope of RSS over the session count, read after every chunk (a cross-check). */
  readonly slope: number;
  readonly healthBefore: Record<string, unknown>;
  readonly healthAfter: Record<string, unknown>;
  readonly hitDeadline: boolean;
}

export async function idleMemory(target: Target, idleSessions = IDLE_SESSIONS): Promise<MemoryResult> {
  await sleep(SETTLE_MS);
  const rssStart = rssBytes(target.pid);
  const warm = await bounded(MEMORY_WARMUP_SESSIONS, OPEN_CONCURRENCY, () => McpHttpSession.open(target.url));
  checkReply(await (warm[0] as McpHttpSession).call('read', { path: FILE }));
  await sleep(SETTLE_MS);
  const healthBefore = await health(target.url);
  const rssBefore = rssBytes(target.pid);
  const points: [number, number][] = [[0, rssBefore]];
  const started = performance.now();
  let opened = 0;
  let hitDeadline = false;
  while (opened < idleSessions) {
    if (opened >= MIN_IDLE_SESSIONS && performance.now() - started > MEMORY_DEADLINE_MS) {
      hitDeadline = true;
      break;
    }
    const n = Math.min(MEMORY_CHUNK, idleSessions - opened);
    await bounded(n, OPEN_CONCURRENCY, () => McpHttpSession.open(target.url));
    opened += n;
    points.push([opened, rssBytes(target.pid)]);
    progress(`memory: ${target.name}: ${opened} idle sessions open`);
  }
  const openMs = performance.now() - started;
  await sleep(SETTLE_MS);
  const rssAfter = rssBytes(target.pid);
  const healthAfter = await health(target.url);
  return { name: target.name, sessions: opened, openMs, rssStart, rssBefore, rssAfter, perSession: (rssAfter - rssBefore) / opened, slope: slope(points), healthBefore, healthAfter, hitDeadline };
}

function slope(points: [number, number][]): number {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p[0], 0) / n;
  const my = points.reduce((s, p) => s + p[1], 0) / n;
  const num = points.reduce((s, p) => s + (p[0] - mx) * (p[1] - my), 0);
  const den = points.reduce((s, p) => s + (p[0] - mx) ** 2, 0);
  return num / den;
}

// ---------------------------------------------------------------------------------------------------
// Report

const mb = (bytes: number) => `${fmt(bytes / 1024 / 1024, 1)} MB`;
const met = (ok: boolean) => (ok ? '**met**' : '**not met**');

function report(levels: LevelResult[], ws: WsResult, mem: { sp: MemoryResult; sdk: MemoryResult }): { throughputOk: boolean; memoryOk: boolean } {
  emit('## 1. Streamable HTTP: `tools/call read` in a closed loop, one session per client');
  emit('');
  emit(`Each client: initialize + notifications/initialized, then \`tools/call read {path: '${FILE}'}\` (${FILE_TEXT.length} bytes) again and again. Per level: ${WARMUP_MS / 1000} s of warm-up on each server, then blocks of ${BLOCK_MS / 1000} s in the order super-pi, SDK, floor, floor, SDK, super-pi (${(2 * BLOCK_MS) / 1000} s measured per server). "ratio": super-pi ÷ SDK over the whole level; "pairs": the ratio of each back-to-back pair of blocks. "CPU/call": the server process's CPU time (all threads, /proc) per call. "floor": a node:http server that answers with the same SSE reply and does nothing else (no MCP, no fs): what this client can get out of any server here; "ceiling" = floor ÷ SDK, the largest ratio any server could show in this set-up.`);
  emit('');
  const rows = levels.map(({ clients, cmp: { a, b, c, pairRatios } }) => [
    String(clients),
    fmt(rate(a)) + errorsOf(a),
    fmt(rate(b)) + errorsOf(b),
    ratio(rate(a), rate(b)),
    range(pairRatios),
    ms(percentile(a.latencies, 50)),
    ms(percentile(b.latencies, 50)),
    ms(percentile(a.latencies, 99)),
    ms(percentile(b.latencies, 99)),
    fmt(cpuPerCall(a)),
    fmt(cpuPerCall(b)),
    c ? fmt(rate(c)) + errorsOf(c) : 'n/a',
    c ? ratio(rate(c), rate(b)) : 'n/a',
    c ? fmt(cpuPerCall(c)) : 'n/a',
  ]);
  emit(table(['clients', 'super-pi calls/s', 'SDK calls/s', 'ratio', 'pairs', 'super-pi p50 ms', 'SDK p50 ms', 'super-pi p99 ms', 'SDK p99 ms', 'super-pi CPU/call µs', 'SDK CPU/call µs', 'floor calls/s', 'ceiling', 'floor CPU/call µs'], rows));
  emit('');
  const clientCpu = (x: Sample | null) => (x ? `${fmt(x.clientCpuUs / x.calls)} µs/call (${fmt(x.clientCpuUs / x.elapsedMs / 10, 0)}% of a core)` : 'n/a');
  emit(`The client's own CPU (this process, driving super-pi / the SDK / the floor): ${levels.map(({ clients, cmp: { a, b, c } }) => `${clients} clients: ${clientCpu(a)} / ${clientCpu(b)} / ${clientCpu(c)}`).join('; ')}.`);
  emit('');

  emit(`## 2. WebSocket (super-pi only): one connection, ${WS_IN_FLIGHT} requests in flight`);
  emit('');
  emit(`super-pi answers \`tools/call read\` (request ${ws.requestBytes} bytes, reply ~${ws.replyBytes} bytes); the floor is a \`ws\` echo server in its own process sending the same request back. ${WARMUP_MS / 1000} s warm-up each, then ${WS_BLOCK_MS / 1000} s blocks super-pi, echo, echo, super-pi.`);
  emit('');
  const { a, b, pairRatios } = ws.cmp;
  emit(table(['server', 'calls/s', 'p50 ms', 'p99 ms', 'server CPU/call µs'], [
    ['super-pi', fmt(rate(a)) + errorsOf(a), ms(percentile(a.latencies, 50)), ms(percentile(a.latencies, 99)), fmt(cpuPerCall(a))],
    ['ws echo (floor)', fmt(rate(b)) + errorsOf(b), ms(percentile(b.latencies, 50)), ms(percentile(b.latencies, 99)), fmt(cpuPerCall(b))],
    ['super-pi ÷ echo', `${ratio(rate(a), rate(b))} (pairs ${range(pairRatios)})`, ratio(percentile(a.latencies, 50), percentile(b.latencies, 50)), ratio(percentile(a.latencies, 99), percentile(b.latencies, 99)), ratio(cpuPerCall(a), cpuPerCall(b))],
  ]));
  const http64 = levels.find((l) => l.clients === 64);
  if (http64) emit(`\nFor comparison, super-pi over Streamable HTTP with 64 sessions: ${fmt(rate(http64.cmp.a))} calls/s (WebSocket ÷ HTTP: ${ratio(rate(a), rate(http64.cmp.a))}).`);
  emit('');

  emit('## 3. Memory per idle session');
  emit('');
  const partial = mem.sp.hitDeadline || mem.sdk.hitDeadline;
  emit(`A fresh process of each server; ${MEMORY_WARMUP_SESSIONS} sessions opened first (and kept) so one-time costs are not counted, then ${mem.sp.sessions === mem.sdk.sessions ? fmt(mem.sp.sessions, 0) : `${fmt(mem.sp.sessions, 0)} (super-pi) and ${fmt(mem.sdk.sessions, 0)} (SDK)`} idle sessions (initialize + notifications/initialized, then nothing), ${OPEN_CONCURRENCY} at a time${partial ? ` — fewer than ${fmt(IDLE_SESSIONS, 0)}: opening stopped at its ${MEMORY_DEADLINE_MS / 1000} s deadline` : ''}. VmRSS of the server process (all threads) from /proc, ${SETTLE_MS / 1000} s after the last session; "slope": least-squares fit of RSS read after every ${fmt(MEMORY_CHUNK, 0)} sessions.`);
  emit('');
  const memRow = (m: MemoryResult) => [m.name, fmt(m.sessions, 0), fmt((m.sessions / m.openMs) * 1000), mb(m.rssStart), mb(m.rssBefore), mb(m.rssAfter), kb(m.perSession), kb(m.slope)];
  emit(table(['server', 'sessions', 'opened/s', 'RSS at start', 'RSS before', 'RSS after', 'per session', 'slope'], [
    memRow(mem.sp),
    memRow(mem.sdk),
    ['super-pi ÷ SDK', '', ratio((mem.sp.sessions / mem.sp.openMs), (mem.sdk.sessions / mem.sdk.openMs)), '', '', '', ratio(mem.sp.perSession, mem.sdk.perSession), ratio(mem.sp.slope, mem.sdk.slope)],
  ]));
  emit('');
  emit(`super-pi /health before: \`${JSON.stringify(mem.sp.healthBefore)}\``);
  emit('');
  emit(`super-pi /health after: \`${JSON.stringify(mem.sp.healthAfter)}\``);
  emit('');
  emit(`SDK peer sessions before / after: ${String(mem.sdk.healthBefore.sessions)} / ${String(mem.sdk.healthAfter.sessions)}`);
  emit('');

  const throughputRatio = http64 ? rate(http64.cmp.a) / rate(http64.cmp.b) : Number.NaN;
  const memoryRatio = mem.sp.perSession / mem.sdk.perSession;
  const throughputOk = throughputRatio >= THROUGHPUT_TARGET;
  const memoryOk = memoryRatio <= MEMORY_TARGET;
  emit('## Targets');
  emit('');
  emit(table(['target', 'measured', 'result'], [
    [`Streamable HTTP throughput at 64 sessions: super-pi ≥ ${THROUGHPUT_TARGET}× the SDK`, `${ratio(rate(http64?.cmp.a ?? emptySample()), rate(http64?.cmp.b ?? emptySample()))} (pairs ${http64 ? range(http64.cmp.pairRatios) : 'n/a'}; ceiling with this client: ${http64?.cmp.c ? ratio(rate(http64.cmp.c), rate(http64.cmp.b)) : 'n/a'})`, met(throughputOk)],
    ['Memory per idle session: super-pi ≤ ⅓ of the SDK', `${kb(mem.sp.perSession)} vs ${kb(mem.sdk.perSession)} = ${ratio(mem.sp.perSession, mem.sdk.perSession)}`, met(memoryOk)],
  ]));
  return { throughputOk, memoryOk };
}

// ---------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
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
    const cpu = os.cpus()[0]?.model.trim() ?? 'unknown';
    emit('# Streamable HTTP and WebSocket benchmark: super-pi vs the official SDK');
    emit('');
    emit(table(['', ''], [
      ['machine', cpu],
      ['cores', String(os.availableParallelism())],
      ['node', process.version],
      ['SDK', `@modelcontextprotocol/sdk ${(JSON.parse(await readFile(path.join(repoRoot, 'node_modules/@modelcontextprotocol/sdk/package.json'), 'utf8')) as { version: string }).version}, zod ${(JSON.parse(await readFile(path.join(repoRoot, 'node_modules/zod/package.json'), 'utf8')) as { version: string }).version}`],
      ['date', new Date().toISOString()],
      ['command', '`npm run bench:http`   (npm run build && tsx bench/http.ts)'],
      ['super-pi', `\`bin/super-pi.js --port 0 --workspace <tmp>\` (threads from ${superPiEntry()}; default threads: one scheduler thread per core, at least 2)`],
      ['SDK peer', '`bench/peers/sdk-http-server.ts` compiled to plain JS by esbuild: node:http, one McpServer + StreamableHTTPServerTransport per session, `read` = fs.readFile'],
      ['floors', '`bench/peers/http-floor-server.ts` (HTTP), `bench/peers/ws-echo-server.ts` (WebSocket), compiled the same way'],
      ['client', 'this process: node:http with a keep-alive Agent (not fetch: undici cost ~500 µs of client CPU per call on these 2 cores), same headers and reply parsing for every server; `ws` for WebSocket'],
    ]));
    emit('');

    progress('starting super-pi, the SDK peer, the HTTP floor and the echo server');
    const [superPi, sdk, floor, echo] = await Promise.all([started(startSuperPi(box.ws)), started(startSdk(box.ws)), started(startFloor(box.ws)), started(startEcho())]);
    const levels = await httpLevels(superPi, sdk, floor);
    const ws = await websocket(superPi, echo);
    await stopAll();

    progress('memory: fresh super-pi');
    const spFresh = await started(startSuperPi(box.ws));
    const spMem = await idleMemory(spFresh);
    await stopAll();
    progress('memory: fresh SDK peer');
    const sdkFresh = await started(startSdk(box.ws));
    const sdkMem = await idleMemory(sdkFresh);
    await stopAll();

    report(levels, ws, { sp: spMem, sdk: sdkMem });
    const totalMs = performance.now() - benchStarted;
    emit('');
    emit(`Run time: ${fmt(totalMs / 1000, 0)} s${totalMs > TIME_BUDGET_MS ? ` (over the ${TIME_BUDGET_MS / 60_000}-minute budget)` : ''}.`);
    await mkdir(path.join(here, 'results'), { recursive: true });
    await writeFile(path.join(here, 'results', 'http.md'), `${out.join('\n')}\n`);
    progress('wrote bench/results/http.md');
  } catch (err) {
    process.stderr.write(`bench/http.ts failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  } finally {
    await stopAll();
    await box?.cleanup();
  }
}

if (isMain(import.meta.url)) await main();
