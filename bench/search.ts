// super-pi's `grep` and `find` on a large generated tree (bench/lib/tree.ts: ~20,000 files, ~200 MB,
// nested, .gitignore'd parts) side by side with ripgrep and fd on the same tree, as ratios of medians.
//   - super-pi as a user gets it: one server process (`node bin/super-pi.js --stdio --workspace TREE`),
//     `tools/call grep` / `tools/call find` over stdio, wall time of each call from request to reply;
//   - the same tool body called in this process (src/tools/grep.ts, find.ts), which separates the search
//     itself from the protocol and the tool-pool thread hop;
//   - the walk alone (src/tools/walk.ts, no file read), which splits the body into walking and reading;
//   - the peer: `rg -n PATTERN .` (`-F` for the literal) and `fdfind --glob GLOB`, each spawned as a
//     process (spawn to exit, so the peer's figure includes its process start, measured alongside).
// Every side runs once untimed first (page cache, JIT, the tool thread), and that run's results are
// compared: super-pi and the peer must report the same `path:line` matches / the same paths, and no
// side may be truncated, or the bench fails. Then REPS rounds, the sides in turn within each round.
// Target (issue 6): super-pi's time ÷ the peer's ≤ 3 over stdio.
// Usage: npx tsx bench/search.ts [--quick]   (npm run build first: the server boots from dist/)

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findTool } from '../src/tools/find.ts';
import { grepTool } from '../src/tools/grep.ts';
import { walkTree } from '../src/tools/walk.ts';
import { type BenchOptions, type BenchRow, type BenchSection, type BenchSectionRunner, isMain } from './lib/report.ts';
import { RpcClient } from './lib/rpc-client.ts';
import { fmt, percentile, table } from './lib/stats.ts';
import { ensureTree, NEEDLES, type TreeManifest } from './lib/tree.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..');
const TARGET = 3;
const REPS = 9;
const QUICK_REPS = 3;
const CALL_TIMEOUT_MS = 60_000;
const MISSING = 'peer not installed (apt-get install ripgrep fd-find)';

interface Workload {
  /** Short label for the table. */
  readonly label: string;
  readonly tool: 'grep' | 'find';
  readonly args: Record<string, unknown>;
  readonly peerName: 'ripgrep' | 'fd';
  readonly peerArgs: readonly string[];
}

const WORKLOADS: readonly Workload[] = [
  { label: `grep regex \`${NEEDLES.regex}\``, tool: 'grep', args: { pattern: NEEDLES.regex }, peerName: 'ripgrep', peerArgs: ['-n', NEEDLES.regex, '.'] },
  { label: `grep literal \`${NEEDLES.literal}\``, tool: 'grep', args: { pattern: NEEDLES.literal, literal: true }, peerName: 'ripgrep', peerArgs: ['-n', '-F', NEEDLES.literal, '.'] },
  { label: `find \`${NEEDLES.glob}\``, tool: 'find', args: { pattern: NEEDLES.glob }, peerName: 'fd', peerArgs: ['--glob', NEEDLES.glob] },
];

/** What one run of a side found: `path:line` for grep, paths (no trailing `/`) for find; sorted. */
interface Found {
  readonly items: string[];
  readonly truncated: boolean;
}

interface Side {
  readonly name: 'stdio' | 'body' | 'walk' | 'peer';
  /** One run; resolves with what it found (null for the walk, which finds nothing). */
  readonly once: () => Promise<Found | null>;
  readonly ms: number[];
}

// ---------------------------------------------------------------------------------------------------
// The peers

/** The peer's executable, or null when it is not installed. */
function findPeer(peer: 'ripgrep' | 'fd'): string | null {
  for (const bin of peer === 'ripgrep' ? ['rg'] : ['fdfind', 'fd']) {
    const probe = spawnSync(bin, ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] });
    if (probe.status === 0 && (peer === 'ripgrep' ? /ripgrep/ : /fd/).test(String(probe.stdout))) return bin;
  }
  return null;
}

function peerVersion(bin: string): string {
  return String(spawnSync(bin, ['--version']).stdout).split('\n')[0]?.trim() ?? bin;
}

/** Median time to spawn `bin --version` and see it exit: the process-start share of a peer's figure. */
async function spawnFloorMs(bin: string, times: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    const started = performance.now();
    await runPeer(bin, ['--version'], repoRoot);
    samples.push(performance.now() - started);
  }
  return median(samples);
}

/** Spawns the peer in the tree and collects its stdout; rg exits 1 when nothing matched. */
function runPeer(bin: string, args: readonly string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => chunks.push(d));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0 || code === 1) resolve(Buffer.concat(chunks).toString('utf8'));
      else reject(new Error(`${bin} ${args.join(' ')} exited with ${code}: ${stderr.slice(0, 300)}`));
    });
  });
}

const stripDot = (p: string) => (p.startsWith('./') ? p.slice(2) : p);

function parsePeer(tool: 'grep' | 'find', stdout: string): Found {
  const lines = stdout.split('\n').filter((l) => l !== '');
  if (tool === 'find') return { items: lines.map((l) => stripDot(l).replace(/\/$/, '')).sort(), truncated: false };
  // rg -n: path:line:text
  const items = lines.map((l) => {
    const m = /^(.*?):(\d+):/.exec(l);
    if (!m) throw new Error(`unexpected rg output line: ${l.slice(0, 200)}`);
    return `${stripDot(m[1] as string)}:${m[2]}`;
  });
  return { items: items.sort(), truncated: false };
}

// ---------------------------------------------------------------------------------------------------
// super-pi

function parseStructured(tool: 'grep' | 'find', structured: unknown): Found {
  const s = structured as { matches?: { path: string; line: number }[]; paths?: string[]; truncated: boolean };
  const items = tool === 'grep'
    ? (s.matches ?? []).map((m) => `${m.path}:${m.line}`)
    : (s.paths ?? []).map((p) => p.replace(/\/$/, ''));
  return { items: items.sort(), truncated: s.truncated };
}

interface Server {
  readonly call: (tool: string, args: Record<string, unknown>) => Promise<unknown>;
  readonly entry: string;
  stop(): Promise<void>;
}

/** Whether bin/super-pi.js will run the bundle (dist/ at least as new as src/) or the source through tsx. */
function serverEntry(): 'dist/ (built)' | 'src/ through tsx (dist/ is stale: run npm run build)' {
  const bundle = path.join(repoRoot, 'dist', 'super-pi.cjs');
  const newest = (dir: string): number => {
    let t = 0;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, e.name);
      t = Math.max(t, e.isDirectory() ? newest(full) : statSync(full).mtimeMs);
    }
    return t;
  };
  return existsSync(bundle) && statSync(bundle).mtimeMs >= newest(path.join(repoRoot, 'src')) ? 'dist/ (built)' : 'src/ through tsx (dist/ is stale: run npm run build)';
}

async function startServer(workspace: string): Promise<Server> {
  const entry = serverEntry();
  const child: ChildProcess = spawn(process.execPath, [path.join(repoRoot, 'bin', 'super-pi.js'), '--stdio', '--workspace', workspace, '--log-level', 'warning'], {
    cwd: repoRoot,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const client = new RpcClient();
  let pending = '';
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (d: string) => {
    pending += d;
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      if (line.trim() !== '') client.receive(line);
    }
  });
  client.attach((line) => child.stdin?.write(`${line}\n`));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.stdin?.end();
    child.kill('SIGTERM');
    await exited;
    clearTimeout(timer);
  };
  try {
    const init = await Promise.race([
      client.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench-search', version: '1.0.0' } }, 30_000),
      exited.then(() => {
        throw new Error(`the server exited at start: ${stderr}`);
      }),
    ]);
    if (init.error) throw new Error(`initialize: ${init.error.message}`);
    child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    entry,
    stop,
    async call(tool, args) {
      const reply = await client.request('tools/call', { name: tool, arguments: args }, CALL_TIMEOUT_MS);
      const result = reply.result as { isError?: boolean; structuredContent?: unknown; content?: { text?: string }[] } | undefined;
      if (reply.error || !result || result.isError) throw new Error(`tools/call ${tool}: ${JSON.stringify(reply.error ?? result?.content).slice(0, 300)}; server stderr: ${stderr.slice(-500)}`);
      return result.structuredContent;
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// The run

async function timed(side: Side): Promise<void> {
  const started = performance.now();
  await side.once();
  side.ms.push(performance.now() - started);
}

function sameOrThrow(label: string, ours: Found, peer: Found, peerName: string): void {
  const a = new Set(ours.items);
  const b = new Set(peer.items);
  const onlyOurs = ours.items.filter((x) => !b.has(x));
  const onlyPeer = peer.items.filter((x) => !a.has(x));
  if (onlyOurs.length > 0 || onlyPeer.length > 0 || ours.items.length !== peer.items.length) {
    throw new Error(`${label}: super-pi and ${peerName} disagree (${ours.items.length} vs ${peer.items.length}); only super-pi: ${onlyOurs.slice(0, 5).join(', ') || '-'}; only ${peerName}: ${onlyPeer.slice(0, 5).join(', ') || '-'}`);
  }
}

const ms = (v: number) => `${fmt(v, v >= 100 ? 0 : 1)} ms`;
const median = (xs: readonly number[]) => percentile(xs, 50);

export const run: BenchSectionRunner = async (options: BenchOptions = {}) => {
  const progress = options.progress ?? ((line: string) => process.stderr.write(`  ${line}\n`));
  const reps = options.quick ? QUICK_REPS : REPS;
  const loadAtStart = os.loadavg()[0] ?? Number.NaN;
  const tree = ensureTree({ progress });
  const ws = tree.root;
  progress(`search tree ${tree.cached ? 'reused' : 'generated'} in ${(tree.ms / 1000).toFixed(1)} s: ${ws}`);
  const peers = { ripgrep: findPeer('ripgrep'), fd: findPeer('fd') };
  const server = await startServer(ws);
  progress(`server up (${server.entry})`);
  const rows: BenchRow[] = [];
  const detail: string[][] = [];
  const checks: string[] = [];
  const spawnFloor: string[] = [];
  const ctx = { workspace: ws, signal: new AbortController().signal };
  try {
    for (const w of WORKLOADS) {
      const peerBin = peers[w.peerName];
      const body = w.tool === 'grep' ? grepTool : findTool;
      const sides: Side[] = [
        { name: 'stdio', ms: [], once: async () => parseStructured(w.tool, await server.call(w.tool, w.args)) },
        { name: 'body', ms: [], once: async () => parseStructured(w.tool, (await body(w.args as never, ctx)).structured) },
        {
          name: 'walk', ms: [], once: async () => {
            for await (const batch of walkTree(ws, ws).batches()) void batch;
            return null;
          },
        },
      ];
      if (peerBin) sides.push({ name: 'peer', ms: [], once: async () => parsePeer(w.tool, await runPeer(peerBin, w.peerArgs, ws)) });
      // Warm-up: one untimed run per side, whose results are checked.
      const found = new Map<string, Found | null>();
      for (const side of sides) found.set(side.name, await side.once());
      const stdio = found.get('stdio') as Found;
      const inProcess = found.get('body') as Found;
      if (stdio.truncated || inProcess.truncated) throw new Error(`${w.label}: super-pi's result is truncated; the workload must fit the tool's limits`);
      if (stdio.items.length === 0) throw new Error(`${w.label}: super-pi found nothing`);
      sameOrThrow(`${w.label} (stdio vs body)`, stdio, inProcess, 'the in-process body');
      const peerFound = found.get('peer');
      if (peerFound) {
        sameOrThrow(w.label, stdio, peerFound, w.peerName);
        checks.push(`${w.label}: ${stdio.items.length} ${w.tool === 'grep' ? 'matches' : 'paths'}, the same on both sides`);
      } else {
        checks.push(`${w.label}: ${stdio.items.length} ${w.tool === 'grep' ? 'matches' : 'paths'} (${w.peerName} not installed: not compared)`);
      }
      progress(`${w.label}: ${stdio.items.length} results; ${reps} rounds`);
      for (let r = 0; r < reps; r++) {
        // Rotate the order, so no side always runs right after another's page-cache or CPU footprint.
        for (let k = 0; k < sides.length; k++) await timed(sides[(r + k) % sides.length] as Side);
      }
      const med = (name: Side['name']) => {
        const side = sides.find((s) => s.name === name);
        return side ? median(side.ms) : Number.NaN;
      };
      const peerMs = med('peer');
      const peerName = peerBin ? `${w.peerName}, ${path.basename(peerBin)} process` : w.peerName;
      const ratio = (v: number) => (peerBin ? v / peerMs : null);
      const stdioRatio = ratio(med('stdio'));
      rows.push({
        measure: `${w.label}: tools/call over stdio, median`,
        ours: ms(med('stdio')),
        peer: peerBin ? ms(peerMs) : MISSING,
        peerName,
        ratio: stdioRatio,
        target: `≤ ${TARGET}×`,
        met: stdioRatio === null ? null : stdioRatio <= TARGET,
      });
      rows.push({
        measure: `${w.label}: tool body in-process, median`,
        ours: ms(med('body')),
        peer: peerBin ? ms(peerMs) : MISSING,
        peerName,
        ratio: ratio(med('body')),
        target: '',
        met: null,
      });
      for (const side of sides) {
        const sorted = [...side.ms].sort((a, b) => a - b);
        detail.push([w.label, side.name === 'peer' ? `${path.basename(peerBin ?? '')} process` : side.name === 'walk' ? 'walk only (in-process)' : side.name === 'body' ? 'tool body (in-process)' : 'tools/call over stdio',
          ms(sorted[0] as number), ms(median(sorted)), ms(sorted[sorted.length - 1] as number)]);
      }
      progress(`${w.label}: stdio ${ms(med('stdio'))}, body ${ms(med('body'))}, walk ${ms(med('walk'))}, ${w.peerName} ${peerBin ? ms(peerMs) : 'missing'}`);
    }
    for (const bin of Object.values(peers)) if (bin) spawnFloor.push(`${path.basename(bin)} ${ms(await spawnFloorMs(bin, reps))}`);
  } finally {
    await server.stop();
  }
  const m: TreeManifest = tree.manifest;
  const notes = [
    table(['search tree', ''], [
      ['files', `${m.files.toLocaleString('en-US')} in ${m.directories.toLocaleString('en-US')} directories, ${fmt(m.bytes / 2 ** 20, 0)} MB`],
      ['ignored by .gitignore (root and nested, with a negation)', `${m.ignoredFiles.toLocaleString('en-US')} files, ${fmt(m.ignoredBytes / 2 ** 20, 0)} MB`],
      ['binary files (NUL in the first bytes; skipped by both)', String(m.binaryFiles)],
      ['cache', `${tree.cached ? 'reused' : 'generated now'} (${tree.cached ? `generated in ${fmt(m.generationMs / 1000, 1)} s earlier` : `${fmt(tree.ms / 1000, 1)} s`}), ${path.dirname(ws)}`],
      ['peers', [peers.ripgrep ? peerVersion(peers.ripgrep) : 'ripgrep: not installed', peers.fd ? peerVersion(peers.fd) : 'fd: not installed'].join('; ')],
      ['super-pi server', `\`node bin/super-pi.js --stdio\`, running ${server.entry}`],
      // On a busy machine the peers cannot spread over both cores, which favours super-pi's ratio.
      ['load average (1 min), start → end', `${fmt(loadAtStart)} → ${fmt(os.loadavg()[0] ?? Number.NaN)} on ${os.availableParallelism()} cores`],
    ]),
    `Checked before timing: ${checks.join('; ')}.`,
    ...(spawnFloor.length > 0 ? [`Process start included in the peers' figures: spawning \`--version\` and seeing it exit takes ${spawnFloor.join(', ')} here (median).`] : []),
    table(['workload', 'side', 'min', 'median', 'max'], detail),
  ];
  const missed = rows.filter((r) => r.met === false);
  if (missed.length > 0) notes.push(profileNote(missed));
  return {
    title: 'Search: grep and find on a large tree vs ripgrep and fd',
    command: 'npx tsx bench/search.ts [--quick]',
    method: [
      `A generated tree (${m.files.toLocaleString('en-US')} files, ${fmt(m.bytes / 2 ** 20, 0)} MB, nested, mixed extensions, deterministic from a seed, cached under the OS temp directory) is searched for a regex that ${m.regexNeedleFiles} files match, a literal that ${m.literalNeedleFiles} match, and a glob that ${m.protoFiles} files match, so no output limit ends a search early.`,
      'super-pi is measured as a user gets it: one `node bin/super-pi.js --stdio` server, each `tools/call` timed from request to reply; and its tool body called in this process, to separate the search from the protocol and the tool-thread hop.',
      'ripgrep (`rg -n PATTERN .`, `-F` for the literal) and fd (`fdfind --glob GLOB`) run in the tree as processes, timed spawn to exit (so their process start is included; its size is in the notes).',
      `Each side runs once untimed (page cache warm; its results are compared: the same matches and paths on both sides, or the bench fails), then ${reps} rounds with the sides in rotating order; medians.`,
    ].join(' '),
    rows,
    notes,
  } satisfies BenchSection;
};

function profileNote(missed: readonly BenchRow[]): string {
  return [
    `**Target missed** (${missed.map((r) => r.measure.split(':')[0]).join(', ')}).`,
    'The detail table splits super-pi\'s time: "walk only" is the directory walk with its .gitignore checks; "tool body" adds reading every file and the search; "tools/call over stdio" adds the protocol and the hop to a tool-pool thread.',
    'A CPU profile of the grep body on this tree (`node --cpu-prof`, five calls, measured while writing this bench) puts the time in system calls and the walk, not in matching:',
    'read 18%, open 11%, fstat 5% (plus 2% building its Date fields), close 4%, readdir 7%; the `ignore` package\'s per-path checks and result cache about 20%; the byte search for the required literal 6%; garbage collection 4%. Files without the literal are never decoded or split into lines.',
    'ripgrep and fd walk and read on every core, super-pi on one tool-pool thread per call (an asynchronous read through libuv\'s pool measured 3-4x slower than these synchronous calls).',
    'What it would take: split one call over two tool-pool threads (the walk feeding file batches to a second thread; src/tools/tool-pool.ts would hand the body a way to run a sub-task), and a gitignore matcher without a per-path result cache.',
  ].join(' ');
}

if (isMain(import.meta.url)) {
  const { printSection } = await import('./run.ts');
  printSection(await run({ quick: process.argv.includes('--quick') }));
}
