// The test runner's closing line is what CI reads: it must count a failure as a failure whatever else a
// file does (skips, .only, no tests, a crash). Each case runs test/run.ts on a fixture folder of its own.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const here = path.dirname(fileURLToPath(import.meta.url));
const runner = path.join(here, '..', 'run.ts');
const uvu = pathToFileURL(path.join(here, '..', '..', 'node_modules', 'uvu', 'dist', 'index.mjs')).href;
const uvuAssert = pathToFileURL(path.join(here, '..', '..', 'node_modules', 'uvu', 'assert', 'index.mjs')).href;

interface RunResult { lastLine: string; code: number | null; output: string; home: string }

/**
 * Runs the runner on `files` with a fake HOME of its own (`prepare` fills its ~/.super-pi first): the
 * runner's guard on ~/.super-pi then watches that one, not the user's, which other runs may be writing.
 */
function runOn(files: Record<string, string>, prepare: (superPi: string) => void = () => {}): RunResult {
  const dir = mkdtempSync(path.join(tmpdir(), 'superpi-runner-'));
  const home = mkdtempSync(path.join(tmpdir(), 'superpi-runner-home-'));
  try {
    prepare(path.join(home, '.super-pi'));
    for (const [name, body] of Object.entries(files)) {
      writeFileSync(path.join(dir, name), `import { test } from '${uvu}';\nimport * as assert from '${uvuAssert}';\n${body}\ntest.run();\n`);
    }
    const r = spawnSync(process.execPath, ['--import', 'tsx', runner], {
      env: { ...process.env, SUPERPI_TEST_ROOT: dir, HOME: home }, encoding: 'utf8', timeout: 60_000,
    });
    const lines = r.stdout.trim().split('\n');
    return { lastLine: lines[lines.length - 1] ?? '', code: r.status, output: r.stdout + r.stderr, home };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  }
}

test('two failures and a skip are two failures, and the skip is shown', () => {
  const r = runOn({ 'a.test.ts': `test('p', () => assert.ok(true));\ntest('f1', () => assert.ok(false));\ntest('f2', () => assert.ok(false));\ntest.skip('s', () => {});` });
  assert.is(r.lastLine, '1 passed, 2 failed, 1 skipped', r.output);
  assert.is(r.code, 1);
});

test('a file that uses .only fails, whatever its tests do', () => {
  const r = runOn({ 'b.test.ts': `test('p', () => assert.ok(true));\ntest.only('o', () => assert.ok(true));` });
  assert.match(r.lastLine, /^\d+ passed, 1 failed/, r.output);
  assert.match(r.output, /uses \.only/);
  assert.is(r.code, 1);
});

test('a file with no test counts as a failure', () => {
  const r = runOn({ 'c.test.ts': '' });
  assert.is(r.lastLine, '0 passed, 1 failed, 0 skipped', r.output);
  assert.is(r.code, 1);
});

test('a file whose every test is reported skipped (a requirement missing outside CI) counts as skipped, not failed', () => {
  const r = runOn({ 'h.test.ts': `console.log('  (skipped: needs x: not here)');\ntest.skip('s1', () => {});\ntest.skip('s2', () => {});` });
  assert.is(r.lastLine, '0 passed, 0 failed, 2 skipped', r.output);
  assert.is(r.code, 0);
});

test('a file that throws before its summary counts as a failure', () => {
  const r = runOn({ 'd.test.ts': `test('p', () => assert.ok(true));\nthrow new Error('boom');` });
  assert.is(r.lastLine, '0 passed, 1 failed, 0 skipped', r.output);
  assert.is(r.code, 1);
});

test('passing files sum, and the run exits 0', () => {
  const r = runOn({ 'e.test.ts': `test('p', () => assert.ok(true));`, 'f.test.ts': `test('q', () => assert.ok(true));\ntest('r', () => assert.ok(true));` });
  assert.is(r.lastLine, '3 passed, 0 failed, 0 skipped', r.output);
  assert.is(r.code, 0);
});

test('a file that sets its own `// runner-timeout-ms:` is killed past it and counted as a failure', () => {
  const r = runOn({ 'g.test.ts': `// runner-timeout-ms: 1000\ntest('slow', () => new Promise((resolve) => setTimeout(resolve, 20_000)));` });
  assert.is(r.lastLine, '0 passed, 1 failed, 0 skipped', r.output);
  assert.match(r.output, /exceeded 1000 ms and was killed/);
});

// The guard on the user's own ~/.super-pi (the fake HOME's here): a fixture writes there as a server
// started without the run's SUPERPI_HOME would.
const writeInHome = (rel: string): string => `import { appendFileSync, mkdirSync } from 'node:fs';\nimport os from 'node:os';\nimport path from 'node:path';\nconst target = path.join(os.homedir(), '.super-pi', ${JSON.stringify(rel)});\nmkdirSync(path.dirname(target), { recursive: true });\nappendFileSync(target, 'x');\ntest('p', () => assert.ok(true));`;

test('a run that creates ~/.super-pi fails with one more failure, naming what it created', () => {
  const r = runOn({ 'i.test.ts': writeInHome('super-pi.db') });
  assert.is(r.lastLine, '1 passed, 1 failed, 0 skipped', r.output);
  assert.match(r.output, `FAIL [runner] the run changed ${path.join(r.home, '.super-pi')}`);
  assert.match(r.output, 'created the directory itself, created super-pi.db');
  assert.is(r.code, 1);
});

test('a run that writes an existing store and adds a cache entry fails, naming both', () => {
  const r = runOn({ 'j.test.ts': writeInHome('super-pi.db'), 'k.test.ts': writeInHome('cache/new.v8cache') }, (superPi) => {
    mkdirSync(path.join(superPi, 'cache'), { recursive: true });
    writeFileSync(path.join(superPi, 'super-pi.db'), 'db');
    writeFileSync(path.join(superPi, 'cache', 'old.v8cache'), 'old');
  });
  assert.is(r.lastLine, '2 passed, 1 failed, 0 skipped', r.output);
  assert.match(r.output, 'modified super-pi.db');
  assert.match(r.output, 'created cache/new.v8cache');
  assert.not.match(r.output, 'old.v8cache');
  assert.is(r.code, 1);
});

test('a run that leaves ~/.super-pi alone says so and counts nothing for it', () => {
  const r = runOn({ 'l.test.ts': `test('p', () => assert.ok(true));` }, (superPi) => {
    mkdirSync(superPi, { recursive: true });
    writeFileSync(path.join(superPi, 'super-pi.db'), 'db');
  });
  assert.is(r.lastLine, '1 passed, 0 failed, 0 skipped', r.output);
  assert.match(r.output, `ok   [runner] ${path.join(r.home, '.super-pi')} left as it was`);
  assert.is(r.code, 0);
});

test.run();
