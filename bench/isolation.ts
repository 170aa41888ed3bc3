// Isolation: does one session's heavy work slow another session down? One super-pi HTTP server
// process, two Streamable HTTP sessions. Session A sends `ping` one at a time, back to back, and
// records each latency. Baseline blocks: A alone. Loaded blocks: A while session B runs, over and
// over, a pathological `grep` (`(a+)+$` over lines of a's ending in "b": catastrophic backtracking for a
// backtracking engine, stopped by the tool deadline; grep's RE2 ends it in linear time, so today it is a
// loop of full scans) and a `read` of a 50 MB file (two loops, so both are in flight at
// once). Target (issue 6): A's p99 under load at most 3× its p99 with nothing else running.
// Blocks alternate baseline, loaded, baseline, loaded, so drift on the shared machine hits both.
// Usage: npm run build && tsx bench/isolation.ts [--quick]

import { readdirSync, readFileSync } from 'node:fs';
import { open, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { schedulerEntry } from '../src/server/thread-entries.ts';
import { toolPoolEntry } from '../src/tools/tool-pool-entry.ts';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from '../test/e2e/fixtures.ts';
import { type JsonRpcReply, McpHttpSession } from './lib/mcp-http-client.ts';
import { type BenchOptions, type BenchRow, type BenchSection, type BenchSectionRunner, isMain } from './lib/report.ts';
import { fmt, percentile, sleep, table } from './lib/stats.ts';

const TARGET_RATIO = 3;
/** The deadline of one tool call on the server (whole seconds): a pathological grep on a backtracking engine would end at it. */
const TOOL_TIMEOUT_S = 2;
const PATHOLOGICAL_PATTERN = '(a+)+$';
/** 1,000 a's then "b": `(a+)+$` tries every way to split the run of a's before it fails, 2^n of them (it never ends). */
const PATHOLOGICAL_LINE = `${'a'.repeat(1000)}b`;
const PATHOLOGICAL_LINES = 200;
const BIG_FILE_BYTES = 50 * 1024 * 1024;
const BIG_LINE = 'the quick brown fox jumps over the lazy dog, and a line of a 50 MB file that read has to count';
const GREP_FILE = 'pathological.txt';
const BIG_FILE = 'big.txt';

interface Plan {
  readonly blockMs: number;
  readonly rounds: number;
  readonly warmupMs: number;
  /** After a loaded block: B's calls have ended; the pool replaces the thread the deadline stopped. */
  readonly settleMs: number;
}

/** What a CPU profile and a priority experiment showed; measured apart from this run, so dated. */
const PROFILE_NOTE = 'The verdict depends on how quiet the machine is. Over 13 full runs of this section on 2026-12-02 the pooled ratio ranged 1.2–7.2×: the six runs whose idle p99 was 2 ms or more (other work on the machine) all met it (1.2–2.5×); of the seven whose idle p99 was about 1 ms or less, five missed (3.6–7.2×) and two met narrowly (2.3×, 2.8×). Treat the target as not reliably met. ' +
  'Why the loaded p99 rises: not because anything of session B blocks the main thread. ' +
  'A CPU profile of the server (`node --cpu-prof`, 6 s idle then 6 s loaded) shows the main thread doing A\'s pings (HTTP parsing, `postMessage` to and from the scheduler thread, `writev`) and, for B, only the pool dispatch (`ToolPool.#runPooled`, piscina\'s `_addNewWorker` after a deadline stopped a thread) and B\'s 50 KB replies: the main thread\'s CPU per ping grows under load (table above: also because a thread that keeps losing its core runs colder), but what that adds up to is a few per cent of a core. ' +
  'The grep and the read run on the tool-pool threads, which together keep more than one of the 2 cores busy ("other server threads CPU"), so the main thread, the scheduler threads and the client wait for a core: "main waiting for a core" rises under load (on a quiet machine from tens of ms per second to hundreds), and a ping that waits one kernel time slice takes milliseconds. ' +
  'Splitting B\'s load (one run each, quiet machine): grep alone 0.8–1.0×, the 50 MB read alone 1.6–2.1× (it keeps a pool thread near 100% of a core: each read scans 50 MB to count lines for its notice), both 2.5×. ' +
  'What it would take, measured: run the tool-pool threads at a lower OS priority. Renicing the server\'s busy pool threads to nice 10 from outside (`os.setPriority(tid, 10)`) gave 1.47× and 2.46× (main waiting for a core under load 118–148 ms/s), against 5.62× and 6.91× (298–350 ms/s) in the runs alternated with them. ' +
  'The change, in `src/tools/tool-pool-worker.ts` at module load (each pool thread runs it once): `try { const tid = Number(readlinkSync(\'/proc/thread-self\').split(\'/\').pop()); os.setPriority(tid, 10); } catch { /* not Linux: normal priority */ }` — on Linux nice is per thread, so only that pool thread drops (checked in a worker thread); `bash` children are spawned by the main thread and keep normal priority. ' +
  'Fewer pool threads is no answer: with `--tool-threads 1` the ratio stayed (1.69× vs 1.55× in one pair of runs) and every read waited behind the grep until its deadline. ' +
  'Separately, a pool thread stopped at a deadline is replaced by booting a new one (~0.1–0.3 s of CPU from dist/, over 1 s through tsx), and while the pool\'s only live thread runs a grep, a large read waits for that boot.';

const FULL: Plan = { blockMs: 3000, rounds: 4, warmupMs: 1500, settleMs: 1000 };
const QUICK: Plan = { blockMs: 2000, rounds: 1, warmupMs: 500, settleMs: 800 };

/** CPU time of each thread of a process, in microseconds, from /proc/<pid>/task/<tid>/stat. */
export function threadCpu(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(tid), ((Number(fields[11]) + Number(fields[12])) / 100) * 1e6);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

/** On-CPU and run-queue wait time of each thread of a process, in microseconds, from /proc/<pid>/task/<tid>/schedstat. */
function threadSched(pid: number): Map<number, { cpu: number; wait: number }> {
  const out = new Map<number, { cpu: number; wait: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const [cpu, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ');
      out.set(Number(tid), { cpu: Number(cpu) / 1000, wait: Number(wait) / 1000 });
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

interface CpuSplit {
  /** The main thread (tid = pid): HTTP, routing, effects, the tool pool's dispatch. */
  main: number;
  /** The main thread's time runnable but waiting for a core. */
  mainWait: number;
  /** Every other thread: scheduler workers, tool-pool threads, libuv, V8 helpers. */
  others: number;
  /** This (client) process's main thread: time waiting for a core. */
  clientWait: number;
}

/**
 * Samples a process's threads every 100 ms while a block runs, so a thread that ends within the block
 * (a pool thread stopped at the deadline) still counts up to its last sample.
 */
function sampleThreads(pid: number): () => CpuSplit {
  const first = new Map<number, { cpu: number; wait: number }>();
  const last = new Map<number, { cpu: number; wait: number }>();
  for (const [tid, v] of threadSched(pid)) {
    first.set(tid, v);
    last.set(tid, v);
  }
  const take = () => {
    for (const [tid, v] of threadSched(pid)) {
      // A thread born within the block counts from zero.
      if (!first.has(tid)) first.set(tid, { cpu: 0, wait: 0 });
      last.set(tid, v);
    }
  };
  const client0 = threadSched(process.pid).get(process.pid) ?? { cpu: 0, wait: 0 };
  const timer = setInterval(take, 100);
  return () => {
    clearInterval(timer);
    take();
    const split: CpuSplit = { main: 0, mainWait: 0, others: 0, clientWait: 0 };
    for (const [tid, v] of last) {
      const f = first.get(tid) ?? { cpu: 0, wait: 0 };
      if (tid === pid) {
        split.main += v.cpu - f.cpu;
        split.mainWait += v.wait - f.wait;
      } else {
        split.others += v.cpu - f.cpu;
      }
    }
    split.clientWait = (threadSched(process.pid).get(process.pid)?.wait ?? 0) - client0.wait;
    return split;
  };
}

async function makeBigFile(file: string): Promise<number> {
  const line = `${BIG_LINE}\n`;
  const chunk = Buffer.from(line.repeat(Math.floor((1024 * 1024) / line.length)));
  const handle = await open(file, 'w');
  let written = 0;
  try {
    while (written < BIG_FILE_BYTES) {
      const piece = chunk.subarray(0, Math.min(chunk.length, BIG_FILE_BYTES - written));
      await handle.write(piece);
      written += piece.length;
    }
  } finally {
    await handle.close();
  }
  return Math.ceil(written / line.length);
}

function pingOk(reply: JsonRpcReply): void {
  if (reply.error || reply.result === undefined) throw new Error(`ping failed: ${JSON.stringify(reply).slice(0, 300)}`);
}

interface Block {
  readonly latencies: number[];
  readonly elapsedMs: number;
  readonly cpu: CpuSplit;
}

/** A's pings, one at a time, for `ms`. */
async function pingFor(a: McpHttpSession, pid: number, ms: number): Promise<Block> {
  const latencies: number[] = [];
  const sampled = sampleThreads(pid);
  const started = performance.now();
  const end = started + ms;
  while (performance.now() < end) {
    const t0 = performance.now();
    pingOk(await a.request('ping'));
    latencies.push(performance.now() - t0);
  }
  const elapsedMs = performance.now() - started;
  return { latencies, elapsedMs, cpu: sampled() };
}

interface Load {
  greps: number;
  reads: number;
  /** Reads answered "Stopped" at the deadline (queued behind a pool thread's boot, or slow): no real work done. */
  readsStopped: number;
  grepMs: number[];
  readMs: number[];
  firstGrep: string | null;
  firstRead: string | null;
}

/** Session B's two loops (grep, read) until `stop()`; resolves once the calls in flight have ended. */
function startLoad(b: McpHttpSession, load: Load): { started: Promise<void>; stop: () => Promise<void> } {
  let running = true;
  let began: () => void = () => {};
  const started = new Promise<void>((resolve) => (began = resolve));
  let first = 2;
  const loop = async (kind: 'grep' | 'read') => {
    while (running) {
      const t0 = performance.now();
      const request = kind === 'grep'
        ? b.request('tools/call', { name: 'grep', arguments: { pattern: PATHOLOGICAL_PATTERN, path: GREP_FILE } })
        : b.request('tools/call', { name: 'read', arguments: { path: BIG_FILE } });
      if (--first === 0) began();
      const reply = await request;
      const text = reply.result?.content?.[0]?.text ?? JSON.stringify(reply);
      if (kind === 'grep') {
        // With a backtracking engine this pattern never finishes and every call ends at the deadline; grep
        // runs RE2 (linear time), so it ends by itself, having scanned the file. Either way it is load on
        // the tool pool while A pings. A reply that is neither (a protocol error) stops the benchmark.
        if (reply.result === undefined) throw new Error(`the grep failed: ${text.slice(0, 300)}`);
        load.greps++;
        load.grepMs.push(performance.now() - t0);
        load.firstGrep ??= text;
      } else {
        if (reply.result?.isError && /deadline/.test(text)) {
          load.readsStopped++;
          continue;
        }
        if (reply.error || reply.result?.isError) throw new Error(`read of the 50 MB file failed: ${text.slice(0, 300)}`);
        load.reads++;
        load.readMs.push(performance.now() - t0);
        load.firstRead ??= text.slice(text.lastIndexOf('\n') + 1);
      }
    }
  };
  const loops = Promise.all([loop('grep'), loop('read')]);
  // A failed loop is reported by stop(); until then the rejection must not count as unhandled.
  loops.catch(() => {});
  return {
    started,
    stop: async () => {
      running = false;
      await loops;
    },
  };
}

export const run: BenchSectionRunner = async (options: BenchOptions = {}): Promise<BenchSection> => {
  const plan = options.quick ? QUICK : FULL;
  const progress = options.progress ?? ((line: string) => process.stderr.write(`  ${line}\n`));
  let box: Sandbox | null = null;
  let server: RunningServer | null = null;
  const sessions: McpHttpSession[] = [];
  try {
    box = await makeSandbox();
    await writeFile(path.join(box.ws, GREP_FILE), `${Array.from({ length: PATHOLOGICAL_LINES }, () => PATHOLOGICAL_LINE).join('\n')}\n`);
    const bigLines = await makeBigFile(path.join(box.ws, BIG_FILE));
    progress(`isolation: starting super-pi (--tool-timeout ${TOOL_TIMEOUT_S})`);
    // The server decides the same way, at the same moment: dist/ when it is at least as new as src/.
    const entryModes = `scheduler threads from ${schedulerEntry().mode === 'built' ? 'dist/' : 'src/ through tsx'}, tool-pool threads from ${toolPoolEntry().mode === 'built' ? 'dist/' : 'src/ through tsx (dist/ was stale: each pool thread boots ~1 s slower)'}`;
    server = await startHttpServerProcess(box.ws, ['--tool-timeout', String(TOOL_TIMEOUT_S)]);
    const pid = server.child.pid as number;
    const a = await McpHttpSession.open(server.url);
    sessions.push(a);
    const b = await McpHttpSession.open(server.url);
    sessions.push(b);

    // Warm-up: A's path, then one call of each of B's kinds (starts the pool threads).
    await pingFor(a, pid, plan.warmupMs);
    const warm: Load = { greps: 0, reads: 0, readsStopped: 0, grepMs: [], readMs: [], firstGrep: null, firstRead: null };
    const warmLoad = startLoad(b, warm);
    await warmLoad.started;
    await warmLoad.stop();
    await sleep(plan.settleMs);

    const baseline: Block[] = [];
    const loaded: Block[] = [];
    const load: Load = { greps: 0, reads: 0, readsStopped: 0, grepMs: [], readMs: [], firstGrep: null, firstRead: null };
    for (let round = 0; round < plan.rounds; round++) {
      progress(`isolation: round ${round + 1}/${plan.rounds}: baseline ${plan.blockMs / 1000} s`);
      baseline.push(await pingFor(a, pid, plan.blockMs));
      progress(`isolation: round ${round + 1}/${plan.rounds}: loaded ${plan.blockMs / 1000} s`);
      const background = startLoad(b, load);
      await background.started;
      loaded.push(await pingFor(a, pid, plan.blockMs));
      await background.stop();
      await sleep(plan.settleMs);
    }

    const all = (blocks: Block[]) => blocks.flatMap((x) => x.latencies);
    const base = all(baseline);
    const busy = all(loaded);
    const p = (xs: number[], q: number) => percentile(xs, q);
    const ratioP99 = p(busy, 99) / p(base, 99);
    const ratioP50 = p(busy, 50) / p(base, 50);
    const met = ratioP99 <= TARGET_RATIO;
    const ms = (v: number) => `${fmt(v, v >= 10 ? 1 : 2)} ms`;
    const cpuShare = (blocks: Block[], key: keyof CpuSplit) => blocks.reduce((acc, x) => acc + x.cpu[key], 0) / blocks.reduce((acc, x) => acc + x.elapsedMs * 1000, 0);
    const pct = (v: number) => `${fmt(v * 100, 0)}%`;
    const windowS = loaded.reduce((s, x) => s + x.elapsedMs, 0) / 1000;

    const rows: BenchRow[] = [
      { measure: 'ping p50 while another session runs grep + 50 MB read', ours: ms(p(busy, 50)), peer: ms(p(base, 50)), peerName: 'same server, idle', ratio: ratioP50, target: '', met: null },
      { measure: 'ping p99 while another session runs grep + 50 MB read', ours: ms(p(busy, 99)), peer: ms(p(base, 99)), peerName: 'same server, idle', ratio: ratioP99, target: `≤ ${TARGET_RATIO}×`, met },
      { measure: 'session B calls during the loaded blocks', ours: `${load.greps} grep + ${load.reads} read${load.readsStopped > 0 ? ` (+${load.readsStopped} read stopped at the deadline)` : ''} in ${fmt(windowS, 1)} s`, peer: '', peerName: '', ratio: null, target: '', met: null },
    ];

    const notes: string[] = [];
    const blockRow = (label: string, lat: number[], cpu: CpuSplit, elapsedMs: number): string[] => {
      const us = elapsedMs * 1000;
      return [label, fmt(lat.length, 0), ms(p(lat, 50)), ms(p(lat, 99)), ms(Math.max(...lat)), pct(cpu.main / us), `${fmt(cpu.main / lat.length, 0)} µs`,
        `${fmt(cpu.mainWait / elapsedMs, 1)} ms/s`, pct(cpu.others / us), `${fmt(cpu.clientWait / elapsedMs, 1)} ms/s`];
    };
    const sum = (blocks: Block[]): CpuSplit => blocks.reduce((acc, x) => ({ main: acc.main + x.cpu.main, mainWait: acc.mainWait + x.cpu.mainWait, others: acc.others + x.cpu.others, clientWait: acc.clientWait + x.cpu.clientWait }), { main: 0, mainWait: 0, others: 0, clientWait: 0 });
    const elapsed = (blocks: Block[]) => blocks.reduce((acc, x) => acc + x.elapsedMs, 0);
    notes.push(table(['block', 'pings', 'p50', 'p99', 'max', 'server main CPU', 'main CPU per ping', 'main waiting for a core', 'other server threads CPU', 'client waiting for a core'], [
      ...baseline.map((x, i) => blockRow(`baseline ${i + 1}`, x.latencies, x.cpu, x.elapsedMs)),
      ...loaded.map((x, i) => blockRow(`loaded ${i + 1}`, x.latencies, x.cpu, x.elapsedMs)),
      blockRow('all baseline', base, sum(baseline), elapsed(baseline)),
      blockRow('all loaded', busy, sum(loaded), elapsed(loaded)),
    ]));
    notes.push(`Per round, loaded p99 ÷ baseline p99: ${baseline.map((x, i) => `${fmt(p((loaded[i] as Block).latencies, 99) / p(x.latencies, 99), 2)}×`).join(', ')} (the target row pools every block of each kind). ` +
      `Thread columns from /proc/<pid>/task/<tid>/schedstat, sampled every 100 ms (a pool thread stopped at a deadline counts up to its last sample): CPU as a share of one core; "waiting for a core": time the thread was runnable but not running, per second of the block ("client" is this process's main thread, which sends the pings). ` +
      `Session B's calls: grep ${load.greps}× (deadline ${TOOL_TIMEOUT_S} s; p50 ${ms(p(load.grepMs, 50))}; reply "${(load.firstGrep ?? '').slice(0, 120)}"), ` +
      `read ${load.reads}× (p50 ${ms(p(load.readMs, 50))}, max ${ms(Math.max(...load.readMs))}; it returns the first 50 KB of lines and counts every line of the ${fmt(BIG_FILE_BYTES / 1024 / 1024, 0)} MB file for its notice: "${load.firstRead ?? ''}", ${fmt(bigLines, 0)} lines written). Thread entries: ${entryModes}.`);
    notes.push(PROFILE_NOTE);
    if (!met) {
      const all = { base: sum(baseline), busy: sum(loaded) };
      notes.push(`**Target missed** (loaded p99 ${fmt(ratioP99, 2)}× the idle p99). In this run the server's main thread waited for a core ${fmt(all.busy.mainWait / elapsed(loaded), 0)} ms/s under load against ${fmt(all.base.mainWait / elapsed(baseline), 0)} ms/s idle, the client ${fmt(all.busy.clientWait / elapsed(loaded), 0)} against ${fmt(all.base.clientWait / elapsed(baseline), 0)} ms/s, ` +
        `while the main thread's CPU per ping went from ${fmt(all.base.main / base.length, 0)} to ${fmt(all.busy.main / busy.length, 0)} µs — even counted wholly against session B, ${fmt((Math.max(0, all.busy.main / busy.length - all.base.main / base.length) * busy.length) / elapsed(loaded), 0)} ms of main-thread CPU per second, against ${fmt(all.busy.others / elapsed(loaded), 0)} ms/s on the other server threads: the pings wait for a core that the pool threads hold, not for work on the main thread. What it would take: the paragraph above.`);
    }
    return {
      title: 'Isolation: ping in one session while another runs a pathological grep and a 50 MB read',
      command: 'npm run build && npx tsx bench/isolation.ts',
      method: `One super-pi HTTP server process (\`examples/server.ts --tool-timeout ${TOOL_TIMEOUT_S}\`, default threads: 2 scheduler threads, 2 tool-pool threads on this machine) and two Streamable HTTP sessions, driven from this process. ` +
        `Session A sends \`ping\` one at a time, back to back, and records every latency. Session B runs two loops at once: \`grep\` of \`${PATHOLOGICAL_PATTERN}\` over a file of ${PATHOLOGICAL_LINES} lines of ${fmt(PATHOLOGICAL_LINE.length - 1, 0)} a's and a "b" (catastrophic backtracking that never finishes, so each call runs on a tool-pool thread until the ${TOOL_TIMEOUT_S} s deadline stops the thread), and \`read\` of a ${fmt(BIG_FILE_BYTES / 1024 / 1024, 0)} MB text file (no offset: the first 50 KB of lines come back, and every line is counted for the notice; it runs on the pool since the file is over 1 MiB). ` +
        `After a warm-up, ${plan.rounds} round(s) of a ${plan.blockMs / 1000} s baseline block (A alone) then a ${plan.blockMs / 1000} s loaded block (A while B runs); B's calls are let finish and the pool settles ${plan.settleMs} ms between rounds. Ratio: loaded ÷ idle.`,
      rows,
      notes,
    };
  } finally {
    await Promise.all(sessions.map((s) => s.close().catch(() => {})));
    if (server) await stopServer(server);
    await box?.cleanup();
  }
};

/** SIGTERM, then SIGKILL if the server has not exited within 10 s. */
async function stopServer(server: RunningServer): Promise<void> {
  const child = server.child;
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  try {
    await server.stop();
  } finally {
    clearTimeout(timer);
  }
}

if (isMain(import.meta.url)) {
  const { printSection } = await import('./run.ts');
  printSection(await run({ quick: process.argv.includes('--quick') }));
}
