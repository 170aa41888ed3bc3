// The cost of `bash` in its sandbox: the same tool calls under the bubblewrap sandbox and under the PID
// namespace alone (what `bash` used before issue 23), alternated in one run so drift on the shared machine
// hits both. `true` measures the start of a command; a 10 MB output measures the pipes.
// Target (issue 23): p50 of `true` sandboxed ≤ 1.0× the PID namespace's, never above 1.3×.
// Usage: tsx bench/bash-sandbox.ts [--quick]

import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bashTool } from '../src/tools/bash.ts';
import { type BashIsolation, findExecutable, probeBashIsolation, SYSTEM_BIN_DIRS, useBashIsolation } from '../src/tools/bash-isolation.ts';
import { type BenchOptions, type BenchRow, type BenchSection, type BenchSectionRunner, isMain } from './lib/report.ts';
import { fmt, percentile } from './lib/stats.ts';

const TARGET = 1.0;
const CEILING = 1.3;
const BIG_OUTPUT = 'head -c 10485760 /dev/zero | tr "\\0" a';

/** Today's isolation before the sandbox: the PID namespace the probe used to pick, as root or in a user namespace. */
async function pidNamespace(): Promise<BashIsolation> {
  const unshare = await findExecutable('unshare', SYSTEM_BIN_DIRS);
  const setpriv = await findExecutable('setpriv', SYSTEM_BIN_DIRS);
  if (unshare === null) throw new Error('unshare not found: nothing to compare with');
  const root = process.getuid?.() === 0;
  const flags = [...(root ? [] : ['--user', '--map-root-user']), '--pid', '--fork', '--kill-child', '--mount-proc'];
  return { kind: 'pid-namespace', reason: 'the benchmark', launcher: [...(setpriv === null ? [] : [setpriv, '--pdeathsig', 'KILL']), unshare, ...flags], userNamespace: !root, diesWithServer: setpriv !== null };
}

/** Before each measured call, as a model reads a result before its next call (both isolations get it). */
const PAUSE_MS = 100;

async function time(command: string, workspace: string): Promise<number> {
  await new Promise((r) => setTimeout(r, PAUSE_MS));
  const t0 = process.hrtime.bigint();
  const r = await bashTool({ command }, { workspace, signal: new AbortController().signal });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.isError) throw new Error(`${command}: ${r.text}`);
  return ms;
}

export const run: BenchSectionRunner = async (options: BenchOptions = {}): Promise<BenchSection> => {
  const progress = options.progress ?? ((line: string) => process.stderr.write(`  ${line}\n`));
  const sandbox = await probeBashIsolation();
  if (sandbox.kind !== 'bubblewrap') throw new Error(`no bubblewrap sandbox here: ${sandbox.reason}`);
  const plain = await pidNamespace();
  const rounds = options.quick ? 10 : 60;
  const bigRounds = options.quick ? 3 : 10;
  const workspace = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-bench-bash-')));
  const samples = new Map<string, number[]>([['sandbox true', []], ['pid true', []], ['sandbox big', []], ['pid big', []]]);
  const add = (key: string, ms: number): void => void (samples.get(key) as number[]).push(ms);
  try {
    for (const isolation of [sandbox, plain]) {
      useBashIsolation(isolation);
      for (let i = 0; i < 3; i++) await time('true', workspace);
    }
    for (let i = 0; i < rounds; i++) {
      // Alternate which goes first, so neither always follows the other.
      for (const [name, isolation] of i % 2 === 0 ? [['sandbox', sandbox], ['pid', plain]] as const : [['pid', plain], ['sandbox', sandbox]] as const) {
        useBashIsolation(isolation);
        add(`${name} true`, await time('true', workspace));
        if (i < bigRounds) add(`${name} big`, await time(BIG_OUTPUT, workspace));
      }
    }
    progress(`${rounds} rounds of true, ${bigRounds} of 10 MB`);
  } finally {
    useBashIsolation(sandbox);
    await rm(workspace, { recursive: true, force: true });
  }
  const p = (key: string, q: number): number => percentile(samples.get(key) as number[], q);
  const ratio = p('sandbox true', 50) / p('pid true', 50);
  const bigRatio = p('sandbox big', 50) / p('pid big', 50);
  const rows: BenchRow[] = [
    { measure: 'bash `true`: p50', ours: `${fmt(p('sandbox true', 50), 1)} ms`, peer: `${fmt(p('pid true', 50), 1)} ms`, peerName: 'PID namespace only', ratio, target: `≤ ${TARGET}× (never > ${CEILING}×)`, met: ratio <= TARGET },
    { measure: 'bash `true`: p90', ours: `${fmt(p('sandbox true', 90), 1)} ms`, peer: `${fmt(p('pid true', 90), 1)} ms`, peerName: 'PID namespace only', ratio: p('sandbox true', 90) / p('pid true', 90), target: '', met: null },
    { measure: 'bash 10 MB of output: p50', ours: `${fmt(p('sandbox big', 50), 1)} ms`, peer: `${fmt(p('pid big', 50), 1)} ms`, peerName: 'PID namespace only', ratio: bigRatio, target: '', met: null },
  ];
  return {
    title: 'bash in its sandbox (issue 23)',
    command: 'npm run bench -- --only bash-sandbox',
    method: `The \`bash\` tool body called in-process, ${rounds} rounds of \`true\` and ${bigRounds} of a 10 MB output (\`${BIG_OUTPUT}\`), each round once under the bubblewrap sandbox and once under the PID namespace alone (\`setpriv --pdeathsig KILL unshare --pid --fork --kill-child --mount-proc\`, what bash used before), alternating which goes first, with a ${PAUSE_MS} ms pause before each call (a model reading the result; the sandbox builds its spare for the next command then).`,
    rows,
    notes: [],
  };
};

if (isMain(import.meta.url)) {
  const section = await run({ quick: process.argv.includes('--quick') });
  console.log(JSON.stringify(section.rows, null, 2));
}
