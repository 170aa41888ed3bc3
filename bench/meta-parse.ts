// A fixed amount of one era's stdio work, for an instruction counter (issue 24 item 6: what a 2026-07-28
// call costs the core against a 2025-06-18 one). One in-process stdio server (a build's `runStdio`,
// bench/lib/in-process-stdio.ts) for one era, a warm-up block, then `--calls` `tools/call read`s, 64 in
// flight; it prints nothing but a summary line. Count the whole process twice, with `--calls N` and with
// `--calls 0` (the same warm-up), and divide the difference by N: instructions per call, which the load of
// other work on the machine hardly moves (wall-clock and CPU time it does).
// Usage: npm run build && valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//   node --import tsx bench/meta-parse.ts --era modern|legacy [--calls 20000] [--warmup 20000] [--root DIR]
// (perf stat -e instructions:u in place of valgrind where the kernel exposes the counter; this VM does not.)

import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { makeSandbox } from '../test/e2e/fixtures.ts';
import { FILE, FILE_TEXT } from './http.ts';
import { type Era, type RunStdio, startInProcessStdio } from './lib/in-process-stdio.ts';
import { repoRoot } from './stdio.ts';

const arg = (name: string, fallback: string): string => {
  const at = process.argv.indexOf(name);
  return at < 0 ? fallback : (process.argv[at + 1] as string);
};
const era = arg('--era', 'modern') as Era;
if (era !== 'modern' && era !== 'legacy') throw new Error(`--era must be modern or legacy, not ${String(era)}`);
const calls = Number(arg('--calls', '20000'));
const warmup = Number(arg('--warmup', '20000'));
const root = path.resolve(arg('--root', repoRoot));

const sandbox = await makeSandbox();
try {
  await writeFile(path.join(sandbox.ws, FILE), FILE_TEXT);
  const { runStdio } = await import(pathToFileURL(path.join(root, 'dist', 'index.js')).href) as { runStdio: RunStdio };
  const server = await startInProcessStdio(runStdio, sandbox.ws, era, 64, 'bench-meta-parse');
  if (warmup > 0) await server.block(warmup);
  const r = calls > 0 ? await server.block(calls) : { cpuUs: 0, wallUs: 0 };
  await server.stop();
  process.stdout.write(`${era}: ${calls} calls after ${warmup} warm-up, ${calls > 0 ? (r.cpuUs / calls).toFixed(1) : '-'} µs CPU per call (${root})\n`);
} finally {
  await sandbox.cleanup();
}
