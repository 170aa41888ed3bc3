// Cold start: what a host waits for before the model can use a freshly spawned server — spawn → the
// `initialize` reply, → the `tools/list` reply, → the first `tools/call read` reply — and the idle memory
// of the server after that one call; super-pi side by side with the official SDK and a `node -e` floor in
// the same run, runs interleaved (A B C, then C B A, …) so drift cancels.
//   - super-pi: `node bin/super-pi.js --stdio --workspace <tmp>` (the esbuild bundle in dist/);
//   - the SDK: `node bench/peers/sdk-stdio-server.mjs --workspace <tmp>` (McpServer + StdioServerTransport);
//   - the floor: `node -e` with a few lines that answer the three requests: Node's own start-up.
// Targets: super-pi's p50 ≤ half the SDK's to the initialize reply and to the first read reply; its idle
// RSS ≤ the SDK's. super-pi's own start-up is split in two phases by the line it logs once the
// application is up ("serving MCP over stdio", stderr): loading its code and starting the supervision
// tree, then the session's connection actor (on the main thread for stdio) answering.
// Usage: npx tsx bench/cold-start.ts [--quick]   (needs dist/: `npm run build`; built here when stale)

import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type BenchOptions, type BenchRow, type BenchSection, type BenchSectionRunner, isMain } from './lib/report.ts';
import { fmt, nowUs, percentile, table } from './lib/stats.ts';
import { commandOf, ensureBuilt, FILE, FILE_TEXT, indexBundles, INITIALIZE_PARAMS, killAll, makeWorkspace, profileTable, readProfiles, type ServerSpec, sdkSpec, spawnNode, stopStdioChild, superPiSpec, Tail, type ThreadProfile } from './stdio.ts';

const TARGET = 0.5;
/** Idle RSS after one call: at most the SDK's. */
const RSS_TARGET = 1.0;
const RUNS = 15;
const QUICK_RUNS = 4;
/** No reply within this long fails the run. */
const REPLY_TIMEOUT_MS = 15_000;
/** After the first read reply, the server is left idle this long before its RSS is read. */
const IDLE_BEFORE_RSS_MS = 500;
/** The line super-pi logs (info, stderr) once its application is up, before the session answers. */
const READY_LINE = 'serving MCP over stdio';

/**
 * A floor with no framework: answers initialize, tools/list (no tools) and a read (the file's text, by
 * readFileSync from the workspace given as its argument), one line at a time.
 */
const FLOOR_SOURCE = [
  "const fs=require('fs'),path=require('path');let b='';process.stdin.setEncoding('utf8').on('data',(c)=>{b+=c;let i;while((i=b.indexOf('\\n'))>=0){",
  'const m=JSON.parse(b.slice(0,i));b=b.slice(i+1);if(m.id===undefined)continue;',
  "const result=m.method==='initialize'?{protocolVersion:m.params.protocolVersion,capabilities:{tools:{}},serverInfo:{name:'floor',version:'1.0.0'}}",
  ":m.method==='tools/list'?{tools:[]}:{content:[{type:'text',text:fs.readFileSync(path.join(process.argv[1],m.params.arguments.path),'utf8')}]};",
  "process.stdout.write(JSON.stringify({jsonrpc:'2.0',id:m.id,result})+'\\n')}});",
].join('');
const floorSpec = (ws: string): ServerSpec => ({ name: 'node -e', args: ['-e', FLOOR_SOURCE, ws] });

interface Sample {
  /** Spawn → the initialize reply, ms. */
  readonly replyMs: number;
  /** Spawn → the tools/list reply (sent with `notifications/initialized` once initialize is answered), ms. */
  readonly listMs: number;
  /** Spawn → the first `tools/call read` reply (sent once tools/list is answered), ms. */
  readonly readMs: number;
  /** Resident set size IDLE_BEFORE_RSS_MS after the read reply (every thread of the process), bytes. */
  readonly rssBytes: number;
  /** Spawn → READY_LINE on stderr, ms (super-pi only). */
  readonly readyMs: number | null;
  /** CPU time (user + system, every thread) the server had used when its initialize reply was read, ms; null off Linux. */
  readonly initCpuMs: number | null;
  /** The same when the first read reply was read. */
  readonly readCpuMs: number | null;
}

/**
 * CPU time a running process has used so far, every live thread, from /proc/<pid>/task/<tid>/schedstat
 * (nanoseconds on the CPU): the wall-clock times above count waiting for a core on a shared machine,
 * this does not. `resourceUsage` of a spawned child is only known once it has exited; schedstat is exact
 * while it runs (utime/stime in /proc/<pid>/stat tick at 10 ms). Null where there is no /proc.
 */
function cpuMsOf(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  let ns = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
  } catch (err) {
    // No /proc (not Linux), or a thread ended between the listing and its read: no figure rather than a wrong one.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  return ns / 1e6;
}

/**
 * What a host does with a new server: initialize at once; on its reply `notifications/initialized` and
 * tools/list; on that reply one `read`; each reply checked. Resolves with the time of each reply since `started`.
 */
function hostExchange(child: ChildProcess, started: number, stderr: Tail, name: string): Promise<{ replyMs: number; listMs: number; readMs: number; initCpuMs: number | null; readCpuMs: number | null }> {
  const send = (message: object) => child.stdin?.write(`${JSON.stringify(message)}\n`);
  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INITIALIZE_PARAMS });
  return new Promise((resolve, reject) => {
    let out = '';
    let replyMs = 0;
    let listMs = 0;
    let initCpuMs: number | null = null;
    const timer = setTimeout(() => reject(new Error(`${name}: the three replies did not come within ${REPLY_TIMEOUT_MS} ms; stderr: ${stderr}`)), REPLY_TIMEOUT_MS);
    const fail = (why: string) => {
      clearTimeout(timer);
      reject(new Error(`${name}: ${why}`));
    };
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      for (let nl = out.indexOf('\n'); nl !== -1; nl = out.indexOf('\n')) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        const at = (nowUs() - started) / 1000;
        const reply = JSON.parse(line) as { id?: unknown; result?: { protocolVersion?: unknown; tools?: unknown; content?: { text?: unknown }[]; isError?: unknown } };
        if (reply.id === 1) {
          if (reply.result?.protocolVersion !== INITIALIZE_PARAMS.protocolVersion) return fail(`unexpected initialize reply: ${line.slice(0, 300)}`);
          replyMs = at;
          send({ jsonrpc: '2.0', method: 'notifications/initialized' });
          send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
          initCpuMs = cpuMsOf(child.pid);
        } else if (reply.id === 2) {
          if (!Array.isArray(reply.result?.tools)) return fail(`unexpected tools/list reply: ${line.slice(0, 300)}`);
          listMs = at;
          send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'read', arguments: { path: FILE } } });
        } else if (reply.id === 3) {
          const text = reply.result?.content?.[0]?.text;
          if (reply.result?.isError || typeof text !== 'string' || !text.includes(FILE_TEXT.split('\n')[0] as string)) return fail(`unexpected read reply: ${line.slice(0, 300)}`);
          clearTimeout(timer);
          resolve({ replyMs, listMs, readMs: at, initCpuMs, readCpuMs: cpuMsOf(child.pid) });
        }
        // Anything else (a notification, a log line) is not a reply the host waits for.
      }
    });
    child.once('exit', (code, signal) => fail(`exited (${signal ?? code}) before its replies; stderr: ${stderr}`));
  });
}

/** One cold start, as a host does it (hostExchange); then the server idles, its RSS is read from /proc, and it is killed. */
async function coldStart(spec: ServerSpec): Promise<Sample> {
  const started = nowUs();
  const child: ChildProcess = spawnNode(spec.args);
  const stderr = new Tail();
  let readyMs: number | null = null;
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    if (readyMs === null && (stderr.toString() + d).includes(READY_LINE)) readyMs = (nowUs() - started) / 1000;
    stderr.push(d);
  });
  try {
    const marks = await hostExchange(child, started, stderr, spec.name);
    await new Promise((resolve) => setTimeout(resolve, IDLE_BEFORE_RSS_MS));
    const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
    const rssKb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]);
    if (!Number.isFinite(rssKb)) throw new Error(`${spec.name}: no VmRSS in /proc/${child.pid}/status`);
    return { ...marks, rssBytes: rssKb * 1024, readyMs };
  } finally {
    await new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }
}

const ms = (v: number) => `${fmt(v, v >= 100 ? 0 : 1)} ms`;
const x = (r: number) => `${fmt(r, 2)}×`;

const mb = (bytes: number) => `${fmt(bytes / 1024 / 1024, 1)} MB`;

export const run: BenchSectionRunner = async (options: BenchOptions): Promise<BenchSection> => {
  const runs = options.quick ? QUICK_RUNS : RUNS;
  const progress = options.progress ?? ((line: string) => process.stderr.write(`  [cold-start] ${line}\n`));
  ensureBuilt(progress);
  const { ws, cleanup } = await makeWorkspace();
  const loadAtStart = os.loadavg()[0] ?? Number.NaN;
  try {
    const specs = [superPiSpec(ws), sdkSpec(ws), floorSpec(ws)];
    const [sp, sdk, floor] = specs as [ServerSpec, ServerSpec, ServerSpec];
    const samples = new Map<ServerSpec, Sample[]>(specs.map((s) => [s, []]));
    // super-pi must start from the bundle: rebuilt first whenever src/ changed since (not timed).
    let rebuilds = 0;
    const start = (spec: ServerSpec) => {
      if (spec === sp && ensureBuilt(progress)) rebuilds++;
      return coldStart(spec);
    };
    // One start of each first, not counted: the files are in the page cache for every measured start.
    for (const spec of specs) await start(spec);
    for (let i = 0; i < runs; i++) {
      progress(`run ${i + 1} of ${runs}`);
      for (const spec of i % 2 === 0 ? specs : [...specs].reverse()) samples.get(spec)?.push(await start(spec));
    }
    const loadAtEnd = os.loadavg()[0] ?? Number.NaN;
    const of = (s: ServerSpec, pick: (v: Sample) => number) => (samples.get(s) ?? []).map(pick);
    const p50 = (s: ServerSpec, pick: (v: Sample) => number) => percentile(of(s, pick), 50);
    const min = (s: ServerSpec, pick: (v: Sample) => number) => Math.min(...of(s, pick));
    const reply = (v: Sample) => v.replyMs;
    const list = (v: Sample) => v.listMs;
    const read = (v: Sample) => v.readMs;
    const initCpu = (v: Sample) => v.initCpuMs ?? Number.NaN;
    const readCpu = (v: Sample) => v.readCpuMs ?? Number.NaN;
    const hasCpu = [...samples.values()].every((list) => list.every((v) => v.initCpuMs !== null && v.readCpuMs !== null));
    const cpu = (s: ServerSpec, pick: (v: Sample) => number) => (hasCpu ? ms(p50(s, pick)) : 'n/a');
    const rss = (v: Sample) => v.rssBytes;
    const ready = (samples.get(sp) ?? []).map((v) => v.readyMs).filter((v): v is number => v !== null);
    const afterReady = (samples.get(sp) ?? []).filter((v) => v.readyMs !== null).map((v) => v.replyMs - (v.readyMs as number));

    const initRatio = p50(sp, reply) / p50(sdk, reply);
    const readRatio = p50(sp, read) / p50(sdk, read);
    const rssRatio = p50(sp, rss) / p50(sdk, rss);
    const met = { init: initRatio <= TARGET, read: readRatio <= TARGET, rss: rssRatio <= RSS_TARGET };
    const allMet = met.init && met.read && met.rss;
    let profile: { replyMs: number; threads: ThreadProfile[] } | null = null;
    if (!met.init || !met.read) {
      progress('a time target is missed: one more start of super-pi, profiled');
      try {
        profile = await profiledStart(ws, progress);
      } catch (err) {
        progress(`the profile failed: ${(err as Error).message}`);
      }
    }
    const rows: BenchRow[] = [
      { measure: 'cold start, spawn → initialize reply: p50', ours: ms(p50(sp, reply)), peer: ms(p50(sdk, reply)), peerName: 'SDK', ratio: initRatio, target: `≤ ${TARGET}×`, met: met.init },
      { measure: 'cold start, spawn → tools/list reply: p50', ours: ms(p50(sp, list)), peer: ms(p50(sdk, list)), peerName: 'SDK', ratio: p50(sp, list) / p50(sdk, list), target: '', met: null },
      { measure: 'cold start, spawn → first read reply: p50', ours: ms(p50(sp, read)), peer: ms(p50(sdk, read)), peerName: 'SDK', ratio: readRatio, target: `≤ ${TARGET}×`, met: met.read },
      { measure: 'idle stdio RSS after one call: p50', ours: mb(p50(sp, rss)), peer: mb(p50(sdk, rss)), peerName: 'SDK', ratio: rssRatio, target: `≤ ${RSS_TARGET}×`, met: met.rss },
      // CPU time is what a start costs, whatever else the machine runs: the figure to compare across runs on a shared machine.
      ...(hasCpu ? [
        { measure: 'CPU (user+sys) spawn → initialize reply: p50', ours: ms(p50(sp, initCpu)), peer: ms(p50(sdk, initCpu)), peerName: 'SDK', ratio: p50(sp, initCpu) / p50(sdk, initCpu), target: '', met: null },
        { measure: 'CPU (user+sys) spawn → first read reply: p50', ours: ms(p50(sp, readCpu)), peer: ms(p50(sdk, readCpu)), peerName: 'SDK', ratio: p50(sp, readCpu) / p50(sdk, readCpu), target: '', met: null },
        { measure: 'CPU (user+sys) spawn → first read reply: p50', ours: ms(p50(sp, readCpu)), peer: ms(p50(floor, readCpu)), peerName: 'node -e', ratio: p50(sp, readCpu) / p50(floor, readCpu), target: '', met: null },
      ] : []),
      { measure: 'cold start, spawn → initialize reply: min', ours: ms(min(sp, reply)), peer: ms(min(sdk, reply)), peerName: 'SDK', ratio: min(sp, reply) / min(sdk, reply), target: '', met: null },
      { measure: 'cold start, spawn → first read reply: p50', ours: ms(p50(sp, read)), peer: ms(p50(floor, read)), peerName: 'node -e', ratio: p50(sp, read) / p50(floor, read), target: '', met: null },
      { measure: 'idle stdio RSS after one call: p50', ours: mb(p50(sp, rss)), peer: mb(p50(floor, rss)), peerName: 'node -e', ratio: p50(sp, rss) / p50(floor, rss), target: '', met: null },
    ];
    const notes = [
      table(['server', 'initialize p50', 'tools/list p50', 'first read p50', 'first read min', 'first read max', 'CPU to initialize p50', 'CPU to first read p50', 'idle RSS p50', 'command'], specs.map((s) => [
        s.name, ms(p50(s, reply)), ms(p50(s, list)), ms(p50(s, read)), ms(min(s, read)), ms(Math.max(...of(s, read))), cpu(s, initCpu), cpu(s, readCpu), mb(p50(s, rss)),
        s === floor ? '`node -e <answer initialize, tools/list, read>`' : `\`${commandOf(s)}\``,
      ])),
      `Load average (1 min) ${fmt(loadAtStart, 2)} at the start of the section, ${fmt(loadAtEnd, 2)} at its end, on ${os.availableParallelism()} cores: under load every start waits for a core, the floor's too, so the ratios are the figures to compare across runs.`,
      ready.length > 0
        ? `super-pi's start-up in two phases (p50 of each): spawn → "${READY_LINE}" on stderr (Node's start, loading the bundle and what it imports, starting the supervision tree) ${ms(percentile(ready, 50))}; from there → the initialize reply (the session's connection actor, on the main thread for stdio, started and answering) ${ms(percentile(afterReady, 50))}.`
        : `super-pi did not log "${READY_LINE}": no phase split.`,
      ...(rebuilds > 0 ? [`src/ changed while this section ran: dist/ was rebuilt ${rebuilds} time${rebuilds > 1 ? 's' : ''} before a start of super-pi (so every start ran the bundle, but not all of them the same code).`] : []),
      ...(allMet ? [] : missedNote({ init: p50(sp, reply), read: p50(sp, read), sdkInit: p50(sdk, reply), sdkRead: p50(sdk, read), floorRead: p50(floor, read), rssRatio, ready: ready.length > 0 ? percentile(ready, 50) : null, afterReady: afterReady.length > 0 ? percentile(afterReady, 50) : null, profile })),
    ];
    return {
      title: 'Cold start: spawn → initialize, tools/list and first read replies, and idle RSS, super-pi vs the SDK',
      command: 'npx tsx bench/cold-start.ts',
      method: `Each start spawns \`node …\` with piped stdio and does what a host does: writes \`initialize\` at once; on its reply (id 1, the protocol version asked for) \`notifications/initialized\` and \`tools/list\`; on that reply one \`tools/call read\` of a ${Buffer.byteLength(FILE_TEXT)}-byte file (the reply must carry its text). Each reply's time is taken from the spawn, and with it (on Linux) the CPU time the server had used so far: user + system of every thread, from /proc/<pid>/task/*/schedstat. The server then idles ${IDLE_BEFORE_RSS_MS} ms, its RSS (VmRSS, every thread) is read from /proc, and it is killed. One start of each first (not counted, so every measured start finds its files in the page cache), then ${runs} rounds, each starting super-pi, the SDK peer and the \`node -e\` floor once, in alternating order (A B C, C B A, …).`,
      rows,
      notes,
    };
  } finally {
    await killAll();
    await cleanup();
  }
};

/**
 * One start of super-pi under `node --cpu-prof` (every thread writes its profile when the process ends
 * normally, so stdin is closed after the replies): each thread's busy time from spawn to the first read reply.
 */
async function profiledStart(ws: string, progress: (line: string) => void): Promise<{ replyMs: number; threads: ThreadProfile[] }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'superpi-bench-prof-'));
  try {
    const spec = superPiSpec(ws);
    ensureBuilt(progress);
    const started = nowUs();
    const child = spawnNode(['--cpu-prof', '--cpu-prof-dir', dir, ...spec.args]);
    const stderr = new Tail();
    child.stderr?.setEncoding('utf8').on('data', (d: string) => stderr.push(d));
    await hostExchange(child, started, stderr, 'profiled super-pi');
    const reply = nowUs();
    const bundles = indexBundles();
    await stopStdioChild(child, 20_000);
    return { replyMs: (reply - started) / 1000, threads: readProfiles(dir, bundles, { untilUs: reply }) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** What the figures and the profile say about a missed target, and what it would take. */
function missedNote(m: { init: number; read: number; sdkInit: number; sdkRead: number; floorRead: number; rssRatio: number; ready: number | null; afterReady: number | null; profile: { replyMs: number; threads: ThreadProfile[] } | null }): string[] {
  const lines = [
    `**Target missed**: initialize p50 ${ms(m.init)} against the SDK's ${ms(m.sdkInit)} (${x(m.init / m.sdkInit)}, target ≤ ${TARGET}×); first read ${ms(m.read)} against ${ms(m.sdkRead)} (${x(m.read / m.sdkRead)}, target ≤ ${TARGET}×); idle RSS ${x(m.rssRatio)} the SDK's (target ≤ ${RSS_TARGET}×). Node alone answers the read in ${ms(m.floorRead)} here, so half the SDK leaves super-pi ${ms(Math.max(0, m.sdkRead / 2 - m.floorRead))} above bare Node${m.ready !== null && m.afterReady !== null ? `; super-pi's application is up ${ms(m.ready)} after the spawn, and the initialize reply comes ${ms(m.afterReady)} after that` : ''}.`,
  ];
  if (m.profile) {
    const t = m.profile.threads;
    const total = t.reduce((a, th) => a + th.busyMs, 0);
    lines.push(`A profiled start (\`node --cpu-prof\`, first read reply after ${ms(m.profile.replyMs)} under the profiler) shows ${t.length} thread${t.length === 1 ? '' : 's'} running before that reply — ${t.map((th) => th.role).join(', ')} — busy ${ms(total)} of CPU between them on ${os.availableParallelism()} cores. Each thread's busy time up to the reply:`);
    lines.push(profileTable(t, 6));
  }
  lines.push([
    'Done so far: a stdio server runs its connection actor on the main thread and starts no thread before its first pooled call (in-thread scheduler mode, `--threads 0`, the stdio default); the command is bundled on its own, and what a start does not use loads on first use: the HTTP and WebSocket transport, prom-client, piscina, grep and find (RE2, globs, .gitignore rules), the SQLite driver, isomorphic-git; tool arguments are checked by Ajv code generated ahead of time (no Ajv at run time); checkpoints use node:v8 (no msgpackr); the bash isolation probe (a fork) runs after the first exchanges; and a session whose first actor is still booting answers `initialize` itself (src/connection/session.ts).',
    'The command is one CommonJS bundle compiled from a V8 code cache in $SUPERPI_HOME/cache (written by the first start of a build: the uncounted start above), and child_process, worker_threads and crypto load on first call (README, Cold start: the code cache).',
    'What is left is Node\'s own start-up, deserialising the cached code and evaluating the bundle on the main thread (xstate with the supervisors, the runtime, the core, the tools) before stdin is read; from a checkout, bin/super-pi.js also checks that dist/ is newer than every file in src/.',
  ].join(' '));
  return lines;
}

if (isMain(import.meta.url)) {
  const { printSection } = await import('./run.ts');
  printSection(await run({ quick: process.argv.includes('--quick') }));
}
