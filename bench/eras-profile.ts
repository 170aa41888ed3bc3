// Where a 2026-07-28 call's server time goes, against a 2025-06-18 one (issue 24, item 6). Both eras'
// stdio servers run in this one process (dist/index.js `runStdio`, in-thread actors, streams instead of
// pipes), fed `tools/call read` lines 64 in flight, in alternating blocks (modern, legacy, legacy, modern …)
// so the machine's load falls on both alike. Per era: the process CPU per call (everything the server
// does for a call on its one thread, plus this driver's few string operations, the same for both), and
// from a V8 CPU profile of the same blocks, the self time per call of each function, grouped by stage.
// On a shared machine the absolute figures move with the load; the modern − legacy column is the point.
// With --http: one Streamable HTTP server under `node --cpu-prof` (every thread), 64 legacy sessions and
// 64 modern clients in alternating blocks, samples charged to the block they fell in.
// Usage: npm run build && npx tsx bench/eras-profile.ts [--http [--ms 2000] [--cpu] [--threads N]] [--blocks 8] [--calls 20000] [--top 25] [--root DIR]

import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { makeSandbox } from '../test/e2e/fixtures.ts';
import { checkReply, drive, FILE, FILE_TEXT, startSuperPi, type Target } from './http.ts';
import { type Era, type RunStdio, startInProcessStdio } from './lib/in-process-stdio.ts';
import { bounded, McpHttpSession, McpModernHttp } from './lib/mcp-http-client.ts';
import { fmt, nowUs, table } from './lib/stats.ts';
import { ensureBuilt, repoRoot } from './stdio.ts';

const IN_FLIGHT = 64;

const arg = (name: string, fallback: number): number => {
  const at = process.argv.indexOf(name);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
};

/** The stage a function's self time belongs to (by name; anything unnamed here is "other"). */
const STAGES: readonly (readonly [string, RegExp])[] = [
  ['GC', /^\(garbage collector\)$/],
  ['parse (JSON.parse of the line; readFrame, handleMcpLineSliced, the _meta cache)', /^(readFrame|readParsed|handleMcpLineSliced|parse|parseMessageText|#withKept|#learn|deepFreeze)$/],
  ['depth walk (nestsDeeperThan)', /^(nestsDeeperThan|deeper)$/],
  ['sorting and _meta (isModernRequest, readModernContext, keptClientInfo)', /^(isModernRequest|readModernContext|keptClientInfo|metaOf|metaField|isModernVersion)$/],
  ['modern view (viewFor, restore, handleModern*)', /^(viewFor|restore|handleModernRequest|handleModernEffectResult)$/],
  ['result shaping (shapeModernResult, serverInfoMeta)', /^(shapeModernResult|serverInfoMeta)$/],
  ['core bookkeeping (addPending, removePending, handle*, callTool, startTool, settleInline, fold)', /^(addPending|removePending|handleMessage|handleRequest|handleParsedMessage|handleEffectResult|foldEffectResult|withClientLogs|callTool|startTool|settleInline|runInline|classify|isInFlight|idKey|reply|fail|answer|toolResult|readRetry|checkToolArguments|decideForCaller|harnessById|effectiveHarness|callerOf|progressTokenOf|identityChanged|coreStep|handle)$/],
  ['encode (resultLine, JSON.stringify)', /^(resultLine|stringify)$/],
  ['session and actor hop (receiveFrame, trackLine, #output, mailbox)', /^(receiveFrame|trackLine|#output|#acknowledge|#sendTo|#settleWork|#flush|#post|#receive|receive|cast|emit|drain|#drain|run|turn|deliver|rememberParsed|parsedValueOf)$/],
  ['read tool (confined open, fstat, read, close)', /^(readSmallFileSync|openConfined|readSteps|resolveComponents|resolveWithStats|refuseNonRegular|scan|render|truncate.*|lstat|fstat|open|read|close|readlink|readlinkSync|realpathSync|procPath|normalizeString|resolve|join|relative)$/],
  ['stdio framing and write (LineFramer, writePending, streams)', /^(push|write|writePending|send|writeUtf8String|writeOrBuffer|_write|onwrite|afterWrite.*|emit|addChunk|readableAddChunk.*|onData|feed|#feed|lines)$/],
];

function stageOf(name: string): string {
  for (const [stage, pattern] of STAGES) if (pattern.test(name)) return stage;
  return 'other';
}

/** One in-process stdio server for `era` (bench/lib/in-process-stdio.ts), `IN_FLIGHT` calls at a time. */
function startEra(ws: string, era: Era, runStdio: RunStdio) {
  return startInProcessStdio(runStdio, ws, era, IN_FLIGHT, 'bench-eras');
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number; readonly columnNumber: number };
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
  readonly startTime: number;
}

/** One era's block of calls, timed on the monotonic clock the profiler also uses. */
interface Window {
  readonly era: Era;
  readonly from: number;
  readonly until: number;
}

/** Self time (µs) by function within each era's windows, over one profile; `prefix` names the thread. */
function attribute(profile: Profile, windows: readonly Window[], into: Record<Era, Map<string, number>>, prefix = ''): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  let t = profile.startTime;
  let w = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    while (w < windows.length && t > (windows[w] as Window).until) w++;
    const win = windows[w];
    if (win === undefined || t < win.from) continue;
    const frame = byId.get(profile.samples[i] as number)?.callFrame;
    if (frame === undefined || frame.functionName === '(idle)' || frame.functionName === 'atomicsWaitLoop') continue;
    const name = prefix + (frame.functionName || `(anonymous ${path.basename(frame.url)}:${frame.lineNumber + 1}:${frame.columnNumber + 1})`);
    into[win.era].set(name, (into[win.era].get(name) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
}

/** The tables: CPU per call, self time per call by stage and by function, modern against legacy. */
function report(totals: Record<Era, { calls: number; cpuUs: number; wallUs: number }>, self: Record<Era, Map<string, number>>, top: number): void {
  const per = (era: Era, us: number) => us / totals[era].calls;
  const cpu = (era: Era) => per(era, totals[era].cpuUs);
  process.stdout.write(`server CPU per call: modern ${fmt(cpu('modern'), 1)} µs, legacy ${fmt(cpu('legacy'), 1)} µs: ${fmt(cpu('modern') / cpu('legacy'), 2)}×\n`);
  process.stdout.write(`calls/s: modern ${fmt((totals.modern.calls / totals.modern.wallUs) * 1e6, 0)}, legacy ${fmt((totals.legacy.calls / totals.legacy.wallUs) * 1e6, 0)}\n\n`);
  const stages = new Map<string, { m: number; l: number }>();
  const names = new Set([...self.modern.keys(), ...self.legacy.keys()]);
  const bare = (n: string) => n.replace(/^\[[^\]]*\] /, '');
  const rows = [...names].map((n) => {
    const m = per('modern', self.modern.get(n) ?? 0);
    const l = per('legacy', self.legacy.get(n) ?? 0);
    const stage = stageOf(bare(n));
    const s = stages.get(stage) ?? { m: 0, l: 0 };
    stages.set(stage, { m: s.m + m, l: s.l + l });
    return { n, m, l };
  });
  const sampled = { m: rows.reduce((a, r) => a + r.m, 0), l: rows.reduce((a, r) => a + r.l, 0) };
  const stageRows = [...stages].sort((a, b) => b[1].m - b[1].l - (a[1].m - a[1].l)).map(([s, v]) => [s, fmt(v.m, 2), fmt(v.l, 2), fmt(v.m - v.l, 2)]);
  stageRows.push(['all sampled', fmt(sampled.m, 2), fmt(sampled.l, 2), fmt(sampled.m - sampled.l, 2)]);
  process.stdout.write(`by stage (self µs per call, from the profile)\n${table(['stage', 'modern', 'legacy', 'modern − legacy'], stageRows)}\n\n`);
  const byDiff = rows.sort((a, b) => Math.abs(b.m - b.l) - Math.abs(a.m - a.l)).slice(0, top);
  process.stdout.write(`largest differences by function (self µs per call)\n${table(['function', 'stage', 'modern', 'legacy', 'modern − legacy'], byDiff.map((r) => [r.n.slice(0, 70), stageOf(bare(r.n)).replace(/ \(.*$/, ''), fmt(r.m, 2), fmt(r.l, 2), fmt(r.m - r.l, 2)]))}\n`);
}

/** CPU time of one thread of a process, user + system, µs (/proc/<pid>/task/<tid>/stat; 100 ticks a second). */
function threadCpuMicros(pid: number, tid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / 100) * 1e6;
}

function allThreadsCpu(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) out.set(Number(tid), threadCpuMicros(pid, Number(tid)));
  return out;
}

const eraOf = (b: number): Era => (b % 4 === 0 || b % 4 === 3 ? 'modern' : 'legacy');
const blocks = arg('--blocks', 8);
const top = arg('--top', 25);
// --root: another checkout's build (its dist/), to profile a baseline with this same driver.
const rootAt = process.argv.indexOf('--root');
const root = rootAt < 0 ? repoRoot : path.resolve(process.argv[rootAt + 1] as string);
if (root === repoRoot) ensureBuilt((l) => process.stderr.write(`${l}\n`));
const sandbox = await makeSandbox();
await writeFile(path.join(sandbox.ws, FILE), FILE_TEXT);
try {
  if (process.argv.includes('--http')) await profileHttp(sandbox.ws);
  else await profileStdio(sandbox.ws);
} finally {
  await sandbox.cleanup();
}

/** Both eras' stdio servers in this process, profiled through the inspector. */
async function profileStdio(ws: string): Promise<void> {
  const { runStdio } = await import(pathToFileURL(path.join(root, 'dist', 'index.js')).href) as { runStdio: (o: object) => Promise<unknown> };
  const calls = arg('--calls', 20_000);
  const eras = { modern: await startEra(ws, 'modern', runStdio), legacy: await startEra(ws, 'legacy', runStdio) };
  const inspector = new Session();
  try {
    for (const era of ['modern', 'legacy'] as const) await eras[era].block(calls / 2);
    inspector.connect();
    await inspector.post('Profiler.enable');
    await inspector.post('Profiler.setSamplingInterval', { interval: 100 });
    await inspector.post('Profiler.start');
    const windows: Window[] = [];
    const totals = { modern: { calls: 0, cpuUs: 0, wallUs: 0 }, legacy: { calls: 0, cpuUs: 0, wallUs: 0 } };
    for (let b = 0; b < blocks; b++) {
      const era = eraOf(b);
      const from = nowUs();
      const r = await eras[era].block(calls);
      windows.push({ era, from, until: nowUs() });
      totals[era].calls += calls;
      totals[era].cpuUs += r.cpuUs;
      totals[era].wallUs += r.wallUs;
    }
    const { profile } = await inspector.post('Profiler.stop') as unknown as { profile: Profile };
    const self = { modern: new Map<string, number>(), legacy: new Map<string, number>() };
    attribute(profile, windows, self);
    report(totals, self, top);
  } finally {
    inspector.disconnect();
    await Promise.all([eras.modern.stop(), eras.legacy.stop()]);
  }
}

/**
 * One HTTP server (`node --cpu-prof bin/super-pi.js`, every thread profiled), 64 legacy sessions and 64
 * modern clients driven in alternating blocks; each thread's samples charged to the block they fell in.
 */
async function profileHttp(ws: string): Promise<void> {
  const ms = arg('--ms', 2000);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'superpi-eras-prof-'));
  let target: Target | null = null;
  try {
    // --cpu only: the per-thread CPU split without the profiler's own cost on every thread.
    // --threads N: the server's scheduler threads (0: its actors on the main thread, one profile for all).
    const threadsAt = process.argv.indexOf('--threads');
    const serverArgs = threadsAt < 0 ? [] : ['--threads', process.argv[threadsAt + 1] as string];
    target = await startSuperPi(ws, serverArgs, process.argv.includes('--cpu') ? [] : ['--cpu-prof', '--cpu-prof-dir', dir]);
    const url = target.url;
    const legacy = await bounded(IN_FLIGHT, IN_FLIGHT, () => McpHttpSession.open(url));
    const modern = Array.from({ length: IN_FLIGHT }, () => new McpModernHttp(url));
    const call = (era: Era) => async (w: number) => {
      const client = era === 'modern' ? modern[w] as McpModernHttp : legacy[w] as McpHttpSession;
      checkReply(await client.call('read', { path: FILE }));
    };
    for (const era of ['modern', 'legacy'] as const) await drive(target.pid, IN_FLIGHT, ms / 2, call(era));
    const windows: Window[] = [];
    const totals = { modern: { calls: 0, cpuUs: 0, wallUs: 0 }, legacy: { calls: 0, cpuUs: 0, wallUs: 0 } };
    const mainCpu = { modern: 0, legacy: 0 };
    const byThread = new Map<number, Record<Era, number>>();
    for (let b = 0; b < blocks; b++) {
      const era = eraOf(b);
      const from = nowUs();
      const main0 = threadCpuMicros(target.pid, target.pid);
      const threads0 = allThreadsCpu(target.pid);
      const sample = await drive(target.pid, IN_FLIGHT, ms, call(era));
      mainCpu[era] += threadCpuMicros(target.pid, target.pid) - main0;
      for (const [tid, us] of allThreadsCpu(target.pid)) {
        const t = byThread.get(tid) ?? { modern: 0, legacy: 0 };
        t[era] += us - (threads0.get(tid) ?? 0);
        byThread.set(tid, t);
      }
      windows.push({ era, from, until: nowUs() });
      if (sample.errors > 0) throw new Error(`${era}: ${sample.errors} errors, the first: ${sample.firstError}`);
      totals[era].calls += sample.calls;
      totals[era].cpuUs += sample.serverCpuUs;
      totals[era].wallUs += sample.elapsedMs * 1000;
    }
    const perCall = (era: Era, us: number) => fmt(us / totals[era].calls, 1);
    process.stdout.write(`server CPU per call by thread: main ${perCall('modern', mainCpu.modern)} µs vs ${perCall('legacy', mainCpu.legacy)} µs; the other threads ${perCall('modern', totals.modern.cpuUs - mainCpu.modern)} µs vs ${perCall('legacy', totals.legacy.cpuUs - mainCpu.legacy)} µs\n`);
    process.stdout.write(`${table(['thread (tid)', 'modern µs/call', 'legacy µs/call'], [...byThread].filter(([, v]) => v.modern + v.legacy > 0).map(([tid, v]) => [String(tid), perCall('modern', v.modern), perCall('legacy', v.legacy)]))}\n`);
    await Promise.all(legacy.map((s) => s.close()));
    await target.stop();
    target = null;
    const self = { modern: new Map<string, number>(), legacy: new Map<string, number>() };
    for (const file of (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile'))) {
      const profile = JSON.parse(await readFile(path.join(dir, file), 'utf8')) as Profile;
      // CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile: thread 0 is the main thread.
      const thread = /\.0\.\d+\.cpuprofile$/.test(file) ? 'main' : 'thread';
      attribute(profile, windows, self, `[${thread}] `);
    }
    report(totals, self, top);
  } finally {
    await target?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
