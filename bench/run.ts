// The benchmark suite behind `npm run bench`: builds dist/ (the server's threads boot from the bundle),
// then runs every section of issue 6 in order, each in its own child process with a time budget, prints
// a summary table and writes BENCHMARKS.md at the repository root.
//
// Each section is a module exporting `run: BenchSectionRunner` (bench/lib/report.ts). The child process
// imports it dynamically, so a missing module, a missing `run` or a failing run is reported as
// "failed: <error>" and the suite goes on; a section over its budget is stopped (its whole process
// group: the servers it started too) and reported the same way.
//
// Usage: npm run bench                          the whole suite; writes BENCHMARKS.md
//        npm run bench -- --quick               shorter runs (smoke test); writes nothing unless --out FILE
//        npm run bench -- --only isolation,recovery [--out FILE]

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BenchRow, BenchSection, BenchSectionRunner } from './lib/report.ts';
import { isMain } from './lib/report.ts';
import { fmt } from './lib/stats.ts';
import { distIsFresh } from '../src/server/thread-entries.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..');
const thisFile = fileURLToPath(import.meta.url);

interface SectionSpec {
  /** Short name, for --only and the summary table. */
  readonly name: string;
  /** Module under bench/. */
  readonly file: string;
  /** Wall time allowed, build excluded; past it the section's process group is stopped. */
  readonly budgetS: number;
  /** The issue's targets this section measures, listed as "not measured" if it fails. */
  readonly targets: readonly string[];
}

/** In order. The budgets add up to 1150 s, a bound on a stuck section; a whole run takes about 10–12 minutes with the build. */
export const SECTIONS: readonly SectionSpec[] = [
  { name: 'stdio', file: 'stdio.ts', budgetS: 70, targets: ['stdio, 64 in flight: ≥ 1.6× the SDK\'s calls/s', 'stdio, one at a time: p50 ≤ 1.2× the SDK\'s'] },
  { name: 'cold-start', file: 'cold-start.ts', budgetS: 80, targets: ['cold start to the initialize reply: ≤ ½ the SDK\'s', 'cold start to the first read reply: ≤ ½ the SDK\'s', 'idle stdio RSS after one call: ≤ the SDK\'s'] },
  { name: 'http', file: 'http-section.ts', budgetS: 210, targets: ['HTTP, 64 clients: ≥ 2.5× the SDK\'s calls/s', 'memory per idle session (10,000 open): ≤ ⅓ the SDK\'s'] },
  { name: 'isolation', file: 'isolation.ts', budgetS: 60, targets: ['ping p99 while another session runs a pathological grep and a 50 MB read: ≤ 3× the idle p99'] },
  { name: 'recovery', file: 'recovery.ts', budgetS: 40, targets: ['killed scheduler thread → next successful reply: < 200 ms'] },
  { name: 'search', file: 'search.ts', budgetS: 120, targets: ['grep and find on a large tree: within 3× ripgrep and fd'] },
  // Issue 22 sets no ratio: ping p99 while another session edits a 4 MB file or finds with a backtracking glob.
  { name: 'matching', file: 'matching.ts', budgetS: 90, targets: [] },
  // Issue 14 sets no target here, only figures side by side (ratios); skipped, with why, without PostgreSQL.
  { name: 'cluster', file: 'cluster.ts', budgetS: 120, targets: [] },
  // Issue 25: a stdio image read beside a text read of the same size, and ping p99 during image reads.
  { name: 'images', file: 'images.ts', budgetS: 90, targets: ['ping p99 (second session) during image reads: ≤ 1.5× the idle p99'] },
  { name: 'git-bomb', file: 'git-bomb.ts', budgetS: 90, targets: ['/health p99 while superpi://workspace is read with a 1 MB git bomb planted: < 50 ms', 'server RSS growth, same run: < 64 MB'] },
  // Issue 24: a 2026-07-28 client beside a 2025-06-18 one, the same call, stdio and HTTP.
  { name: 'eras', file: 'eras.ts', budgetS: 60, targets: ['2026-07-28 ÷ 2025-06-18: calls/s ≥ 1.0× and p50 ≤ 1.0×, stdio and HTTP'] },
  { name: 'bash-sandbox', file: 'bash-sandbox.ts', budgetS: 120, targets: ['bash `true` in the sandbox: p50 ≤ 1.0× the PID namespace\'s, never above 1.3×'] },
];
const SUITE_BUDGET_S = 1160;
/** After SIGTERM to a section's group, how long before SIGKILL. */
const KILL_GRACE_MS = 5000;

// ---------------------------------------------------------------------------------------------------
// Rendering (also used by the sections when they run alone)

/** A markdown table, every column left-aligned (the cells here are mostly text). */
function textTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => `| ${headers.map((_, i) => (cells[i] ?? '').padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [line(headers), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

/** The ratio with 2 decimals, or 3 when 2 would round it onto the target's own figure (1.598 is not "1.60×" against "≥ 1.6×"). */
const ratioText = (r: number | null, target = '') => {
  if (r === null || !Number.isFinite(r)) return '';
  const two = fmt(r, r >= 10 ? 1 : 2);
  const bound = /([\d.]+)×/.exec(target)?.[1];
  return bound !== undefined && Number(two) === Number(bound) && r !== Number(bound) ? `${fmt(r, 3)}×` : `${two}×`;
};
const metText = (m: boolean | null) => (m === null ? '' : m ? 'yes' : '**no**');
const peerText = (row: BenchRow) => (row.peer ? (row.peerName ? `${row.peer} (${row.peerName})` : row.peer) : row.peerName);

/** One section as markdown: title, command, method, rows, notes. */
export function renderSection(section: BenchSection, level = 2): string {
  const h = '#'.repeat(level);
  return [
    `${h} ${section.title}`,
    '',
    `Command: \`${section.command}\``,
    '',
    section.method,
    '',
    textTable(['measure', 'super-pi', 'peer', 'ratio', 'target', 'met'], section.rows.map((r) => [r.measure, r.ours, peerText(r), ratioText(r.ratio, r.target), r.target, metText(r.met)])),
    '',
    ...section.notes.flatMap((n) => [n, '']),
  ].join('\n');
}

export function printSection(section: BenchSection): void {
  process.stdout.write(`${renderSection(section)}\n`);
}

// ---------------------------------------------------------------------------------------------------
// Child mode: one section, result as JSON in a file

interface ChildResult {
  readonly ok: boolean;
  readonly section?: BenchSection;
  readonly error?: string;
}

async function runChild(file: string, resultPath: string, quick: boolean): Promise<never> {
  const started = performance.now();
  let result: ChildResult;
  try {
    const mod = (await import(pathToFileURL(path.join(here, file)).href)) as { run?: unknown };
    if (typeof mod.run !== 'function') throw new Error(`bench/${file} exports no run function`);
    const progress = (line: string) => process.stderr.write(`  [${file} ${((performance.now() - started) / 1000).toFixed(0)} s] ${line.trim()}\n`);
    const section = await (mod.run as BenchSectionRunner)({ quick, progress });
    result = { ok: true, section };
  } catch (err) {
    process.stderr.write(`bench/${file} failed: ${(err as Error).stack ?? String(err)}\n`);
    result = { ok: false, error: (err as Error).message ?? String(err) };
  }
  await writeFile(resultPath, JSON.stringify(result));
  // Keep-alive sockets or timers a section left behind must not hold the suite.
  process.exit(result.ok ? 0 : 1);
}

// ---------------------------------------------------------------------------------------------------
// The suite

interface Outcome {
  readonly spec: SectionSpec;
  readonly seconds: number;
  readonly section: BenchSection | null;
  readonly error: string | null;
}

let current: ChildProcess | null = null;

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // the group is gone already
  }
}

async function runSection(spec: SectionSpec, quick: boolean, scratch: string): Promise<Outcome> {
  const resultPath = path.join(scratch, `${spec.name}.json`);
  const started = performance.now();
  // Its own process group (detached), so the section and every server it started can be stopped together.
  // Its own temp dir too: a section stopped at its budget cannot clean up after itself, the suite does.
  const tmp = path.join(scratch, spec.name);
  await mkdir(tmp, { recursive: true });
  const child = spawn(process.execPath, ['--import', 'tsx', thisFile, '--section', spec.file, '--result', resultPath, ...(quick ? ['--quick'] : [])], {
    cwd: repoRoot,
    detached: true,
    env: { ...process.env, TMPDIR: tmp },
    stdio: ['ignore', 2, 'inherit'],
  });
  current = child;
  let overBudget = false;
  let killTimer: NodeJS.Timeout | null = null;
  const budgetTimer = setTimeout(() => {
    overBudget = true;
    process.stderr.write(`  ${spec.name}: over its ${spec.budgetS} s budget; stopping it\n`);
    killGroup(child, 'SIGTERM');
    killTimer = setTimeout(() => killGroup(child, 'SIGKILL'), KILL_GRACE_MS);
  }, spec.budgetS * 1000);
  const code = await new Promise<number | null>((resolve) => {
    child.once('exit', (c) => resolve(c));
    child.once('error', (err) => {
      process.stderr.write(`  ${spec.name}: could not start: ${err.message}\n`);
      resolve(null);
    });
  });
  clearTimeout(budgetTimer);
  if (killTimer) clearTimeout(killTimer);
  // Whatever the section left running in its group (a server its cleanup missed) goes too.
  killGroup(child, 'SIGKILL');
  current = null;
  const seconds = (performance.now() - started) / 1000;
  await rm(tmp, { recursive: true, force: true });
  if (overBudget) return { spec, seconds, section: null, error: `over its ${spec.budgetS} s budget (stopped)` };
  try {
    const result = JSON.parse(await readFile(resultPath, 'utf8')) as ChildResult;
    if (result.ok && result.section) return { spec, seconds, section: result.section, error: null };
    return { spec, seconds, section: null, error: result.error ?? 'no result' };
  } catch {
    return { spec, seconds, section: null, error: `exited with code ${code} without a result` };
  }
}


function build(): boolean {
  return spawnSync('npm', ['run', 'build'], { cwd: repoRoot, stdio: ['ignore', 2, 'inherit'] }).status === 0;
}

async function readVersion(pkg: string): Promise<string> {
  try {
    return (JSON.parse(await readFile(path.join(repoRoot, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

const gb = (bytes: number) => `${fmt(bytes / 1024 ** 3, 1)} GB`;

/** An error for a table cell: one line, at most 160 characters (the section's own part has it whole). */
const short = (error: string | null) => {
  const line = (error ?? 'no result').replace(/\s+/g, ' ');
  return line.length > 160 ? `${line.slice(0, 157)}...` : line;
};

function summaryRows(outcomes: readonly Outcome[]): string[][] {
  const rows: string[][] = [];
  for (const o of outcomes) {
    if (!o.section) {
      rows.push([o.spec.name, `failed: ${short(o.error)}`, '', '', '', '', '']);
      continue;
    }
    for (const r of o.section.rows) rows.push([o.spec.name, r.measure, r.ours, peerText(r), ratioText(r.ratio, r.target), r.target, metText(r.met)]);
  }
  return rows;
}

function report(outcomes: readonly Outcome[], run: { date: string; totalS: number; buildS: number; loadAvg: number; loadAvgEnd: number; sdk: string; quick: boolean; rebuilt: readonly string[] }): string {
  const cpus = os.cpus();
  const targets: string[][] = [];
  for (const o of outcomes) {
    if (!o.section) {
      for (const t of o.spec.targets) targets.push([o.spec.name, t, `section failed: ${short(o.error)}`, '', 'not measured']);
      continue;
    }
    for (const r of o.section.rows.filter((x) => x.target !== '')) {
      targets.push([o.spec.name, r.measure, `${r.ours}${r.peer ? ` vs ${r.peer}` : ''}${r.ratio !== null ? ` = ${ratioText(r.ratio, r.target)}` : ''}`, r.target, r.met === null ? '' : r.met ? 'met' : '**not met**']);
    }
  }
  const met = targets.filter((t) => t[4] === 'met').length;
  const unmeasured = targets.filter((t) => t[4] === 'not measured').length;
  const lines: string[] = [
    '# Benchmarks',
    '',
    `super-pi side by side with its peers, measured in the same run (issue 6). ${met} of ${targets.length} targets met${unmeasured > 0 ? ` (${unmeasured} not measured: a section failed)` : ''}. ` +
      `Ratios are computed pair by pair in the same run; absolute figures drift on a shared machine, ratios much less.` +
      `${run.quick ? ' **Quick run (shortened repetitions): a smoke test, not the reference figures.**' : ''}`,
    '',
    '## Targets',
    '',
    textTable(['section', 'target row', 'measured', 'target', 'result'], targets),
    '',
    '## Run',
    '',
    textTable(['', ''], [
      ['machine', cpus[0]?.model.trim() ?? 'unknown'],
      ['cores', String(os.availableParallelism())],
      ['memory', gb(os.totalmem())],
      ['node', process.version],
      ['SDK (peer)', `@modelcontextprotocol/sdk ${run.sdk}`],
      ['date', run.date],
      ['load average (1 min), start / end', `${fmt(run.loadAvg)} / ${fmt(run.loadAvgEnd)} (other work on the machine shows here)`],
      ['server threads boot from', `dist/, built by \`npm run build\` at the start${run.rebuilt.length > 0 ? `, and again before ${run.rebuilt.join(', ')} (src/ had changed during the run)` : ''}`],
      ['total run time', `${fmt(run.totalS, 0)} s (build ${fmt(run.buildS, 1)} s; budget ${SUITE_BUDGET_S} s)`],
    ]),
    '',
    '## Commands',
    '',
    '- The whole suite: `npm run bench` (`tsx bench/run.ts`: runs `npm run build` first, then each section in its own process).',
    ...outcomes.map((o) => `- ${o.spec.name}: \`${o.section?.command ?? `npm run build && npx tsx bench/${o.spec.file}`}\``),
    '',
    '## Time per section',
    '',
    textTable(['section', 'module', 'time', 'budget', 'result'], outcomes.map((o) => [o.spec.name, `bench/${o.spec.file}`, `${fmt(o.seconds, 0)} s`, `${o.spec.budgetS} s`, o.section ? 'ok' : `failed: ${short(o.error)}`])),
    '',
    '## Summary',
    '',
    textTable(['section', 'measure', 'super-pi', 'peer', 'ratio', 'target', 'met'], summaryRows(outcomes)),
    '',
  ];
  for (const o of outcomes) {
    if (o.section) lines.push(renderSection(o.section));
    else lines.push(`## ${o.spec.name}\n\nCommand: \`npm run build && npx tsx bench/${o.spec.file}\`\n\n**Failed**: ${o.error}\n`);
  }
  return `${lines.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd()}\n`;
}

async function suite(args: readonly string[]): Promise<number> {
  const began = performance.now();
  const quick = args.includes('--quick');
  const onlyAt = args.indexOf('--only');
  const only = onlyAt >= 0 ? new Set((args[onlyAt + 1] ?? '').split(',').filter(Boolean)) : null;
  const outAt = args.indexOf('--out');
  const outFile = outAt >= 0 ? path.resolve(args[outAt + 1] ?? '') : !quick && !only ? path.join(repoRoot, 'BENCHMARKS.md') : null;
  const specs = SECTIONS.filter((s) => !only || only.has(s.name));
  if (only && specs.length !== only.size) {
    process.stderr.write(`unknown section in --only; known: ${SECTIONS.map((s) => s.name).join(', ')}\n`);
    return 2;
  }
  const date = new Date().toISOString();
  const loadAvg = os.loadavg()[0] ?? Number.NaN;

  process.stderr.write('bench: npm run build\n');
  const built = build();
  const buildS = (performance.now() - began) / 1000;
  if (!built) {
    process.stderr.write(`bench: npm run build failed; the server's threads would boot from source, so the figures would not be the product's\n`);
    return 1;
  }

  const scratch = await mkdtemp(path.join(os.tmpdir(), 'superpi-bench-suite-'));
  const outcomes: Outcome[] = [];
  const rebuilt: string[] = [];
  try {
    for (const spec of specs) {
      // src/ may change while the suite runs (others work in this checkout): the threads would then boot
      // through tsx, slower than the product does. Rebuild, and say so in the report.
      if (!distIsFresh()) {
        process.stderr.write(`bench: src/ changed since the build; npm run build again before ${spec.name}\n`);
        rebuilt.push(spec.name);
        if (!build()) process.stderr.write('bench: the rebuild failed; this section runs its threads from source\n');
      }
      process.stderr.write(`bench: ${spec.name} (bench/${spec.file}, budget ${spec.budgetS} s)\n`);
      const outcome = await runSection(spec, quick, scratch);
      process.stderr.write(`bench: ${spec.name}: ${outcome.section ? 'done' : `failed: ${short(outcome.error)}`} in ${fmt(outcome.seconds, 0)} s\n`);
      outcomes.push(outcome);
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  const totalS = (performance.now() - began) / 1000;

  process.stdout.write(`\n${textTable(['section', 'measure', 'super-pi', 'peer', 'ratio', 'target', 'met'], summaryRows(outcomes))}\n\n`);
  process.stdout.write(`Total run time: ${fmt(totalS, 0)} s (budget ${SUITE_BUDGET_S} s)${totalS > SUITE_BUDGET_S ? ' — OVER BUDGET' : ''}.\n`);
  if (outFile) {
    await writeFile(outFile, report(outcomes, { date, totalS, buildS, loadAvg, loadAvgEnd: os.loadavg()[0] ?? Number.NaN, sdk: await readVersion('@modelcontextprotocol/sdk'), quick, rebuilt }));
    const shown = path.relative(process.cwd(), outFile);
    process.stdout.write(`Wrote ${shown && !shown.startsWith('..') ? shown : outFile}.\n`);
  } else {
    process.stdout.write('No report written (a quick or partial run; --out FILE writes one).\n');
  }
  return outcomes.every((o) => o.section !== null) ? 0 : 1;
}

if (isMain(import.meta.url)) {
  const args = process.argv.slice(2);
  const sectionAt = args.indexOf('--section');
  if (sectionAt >= 0) {
    const resultAt = args.indexOf('--result');
    await runChild(args[sectionAt + 1] ?? '', args[resultAt + 1] ?? '', args.includes('--quick'));
  } else {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.once(signal, () => {
        if (current) killGroup(current, 'SIGKILL');
        process.exit(130);
      });
    }
    process.exitCode = await suite(args);
  }
}
