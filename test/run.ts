// Runs every `*.test.ts` under test/ in its own tsx process (isolation: e2e files start servers),
// two at a time, aggregates uvu's summaries and ends with the plain line `N passed, N failed`.
// Usage: npm test [-- filter...]   (filter: substring of the test file path; several: any of them)

import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { distIsFresh } from '../src/server/thread-entries.ts';
import { guardedHome, homeChanges, type HomeSnapshot, snapshotHome } from './home-guard.ts';

/** The folder searched for `*.test.ts`: this one, or SUPERPI_TEST_ROOT (the runner's own test points it at fixtures). */
const root = process.env.SUPERPI_TEST_ROOT ?? path.dirname(fileURLToPath(import.meta.url));
/** Test files run at once; the machine has two cores. */
const CONCURRENCY = Number(process.env.TEST_CONCURRENCY ?? 2);
/** A test file that runs longer than this is killed and counted as failed. */
const FILE_TIMEOUT_MS = Number(process.env.TEST_FILE_TIMEOUT_MS ?? 180_000);
/** A file whose header says `// runner-timeout-ms: N` (one that installs a package, say) gets N instead. */
const TIMEOUT_OVERRIDE = /^\/\/ runner-timeout-ms: (\d+)$/m;
/**
 * The servers the tests start keep their default store and code cache in SUPERPI_HOME (default
 * ~/.super-pi): a run gets a fresh one of its own, so it neither writes the user's real conversation store
 * nor meets a store another checkout's run migrated to a schema this one does not know. Set it to choose.
 */
const ownHome = process.env.SUPERPI_HOME === undefined ? await mkdtemp(path.join(os.tmpdir(), 'superpi-test-home-')) : null;
/**
 * The user's own ~/.super-pi, noted before the first file: a test that starts a server without the run's
 * SUPERPI_HOME (an SDK StdioClientTransport passes its child only a default environment) writes there,
 * and the run fails naming what changed. Not watched when SUPERPI_HOME itself names it (the run was told to use it).
 */
const realHome = guardedHome();
const realHomeBefore: HomeSnapshot | null = ownHome === null && path.resolve(process.env.SUPERPI_HOME ?? '') === realHome ? null : await snapshotHome(realHome);

async function findTests(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await findTests(full)));
    else if (entry.name.endsWith('.test.ts')) out.push(full);
  }
  return out.sort();
}

interface FileResult { file: string; passed: number; failed: number; skipped: number; output: string; code: number | null }

/** A committed `.only` hides every other test of its file, so a file that uses one fails as a whole. */
const ONLY_CALL = /^\s*(?:test|describe|it|[A-Za-z_$][\w$]*)\.only\(/m;

async function runFile(file: string): Promise<FileResult> {
  const source = await readFile(file, 'utf8');
  const result = await spawnFile(file, Number(TIMEOUT_OVERRIDE.exec(source)?.[1] ?? FILE_TIMEOUT_MS));
  if (ONLY_CALL.test(source)) {
    result.output += `\n[runner] ${path.relative(root, file)} uses .only, which hides its other tests; counted as a failure\n`;
    result.failed += 1;
  }
  return result;
}

function spawnFile(file: string, timeoutMs: number): Promise<FileResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file], {
      env: { ...process.env, ...(ownHome === null ? {} : { SUPERPI_HOME: ownHome }), NO_COLOR: '1', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => {
      output += `\n[runner] ${path.relative(root, file)} exceeded ${timeoutMs} ms and was killed\n`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      // uvu's summary lines only ("  Total:     3"), not a test's own output that happens to say "Total:".
      const total = sum(output, /^ {2}Total: +(\d+)$/gm);
      const passed = sum(output, /^ {2}Passed: +(\d+)$/gm);
      const skipped = sum(output, /^ {2}Skipped: +(\d+)$/gm);
      // uvu's Total counts the tests that ran (skipped ones are not in it), so failures are Total - Passed.
      let failed = Math.max(0, total - passed);
      // A file that crashed or exited non-zero without reporting a failure still counts as one.
      if (code !== 0 && failed === 0) failed = 1;
      // A file that ran no test at all proves nothing: it counts as a failure — unless it reported its tests
      // skipped (a requirement missing outside CI, with the reason printed: test/requirements.ts).
      if (total === 0 && failed === 0 && skipped === 0) {
        output += `\n[runner] ${path.relative(root, file)} ran no test\n`;
        failed = 1;
      }
      resolve({ file, passed, failed, skipped, output, code });
    });
  });
}

function sum(text: string, re: RegExp): number {
  let n = 0;
  for (const m of text.matchAll(re)) n += Number(m[1]);
  return n;
}

// Several filters run the files that match any of them (.ci/run's subset on other Node versions).
// `npm test` builds first (pretest); a run started directly may meet a dist/ older than src/.
if (process.env.SUPERPI_TEST_ROOT === undefined && !distIsFresh()) {
  process.stderr.write('[runner] dist/ is older than src/: the servers the tests start boot their threads from src/ through tsx, slower than a build (the chaos tests may then miss their deadlines). Run `npm run build` first.\n');
}
const filters = process.argv.slice(2);
// Matched against the path from the checkout (test/...), so a checkout folder's own name (wt-pgstore/) matches nothing.
const files = (await findTests(root)).filter((f) => filters.length === 0 || filters.some((filter) => path.relative(path.dirname(root), f).includes(filter)));
const results: FileResult[] = [];
let next = 0;
async function worker(): Promise<void> {
  while (next < files.length) {
    const file = files[next++] as string;
    const r = await runFile(file);
    results.push(r);
    const rel = path.relative(root, file);
    const skipped = r.skipped > 0 ? `, ${r.skipped} skipped` : '';
    process.stdout.write(`${r.failed === 0 ? 'ok  ' : 'FAIL'} ${rel}  (${r.passed} passed, ${r.failed} failed${skipped})\n`);
    if (r.failed > 0) process.stdout.write(r.output.replace(/^/gm, '    | ') + '\n');
  }
}
await Promise.all(Array.from({ length: Math.min(CONCURRENCY, files.length) }, worker));
if (ownHome !== null) await rm(ownHome, { recursive: true, force: true });
if (realHomeBefore !== null) {
  const changes = homeChanges(realHomeBefore, await snapshotHome(realHome));
  if (changes.length === 0) process.stdout.write(`ok   [runner] ${realHome} left as it was\n`);
  else {
    // A failed test in the closing line, as a file's failure is: CI reads only that line.
    results.push({ file: realHome, passed: 0, failed: 1, skipped: 0, output: '', code: 1 });
    process.stdout.write(`FAIL [runner] the run changed ${realHome}, the user's own store (a test started a server or opened a store without the run's SUPERPI_HOME, or something else wrote there meanwhile): ${changes.join(', ')}\n`);
  }
}
const passed = results.reduce((a, r) => a + r.passed, 0);
const failed = results.reduce((a, r) => a + r.failed, 0);
const skippedTotal = results.reduce((a, r) => a + r.skipped, 0);
if (files.length === 0) process.stdout.write('no test files found\n');
process.stdout.write(`${passed} passed, ${failed} failed, ${skippedTotal} skipped\n`);
process.exitCode = failed > 0 || files.length === 0 ? 1 : 0;
