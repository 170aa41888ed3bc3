// On a machine without PostgreSQL server binaries the PostgreSQL store tests are reported skipped, each
// of them, with the reason printed — never passed in silence. Simulated by pointing the binary search
// at an empty directory.

import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { guarded } from '../hang-guard.ts';
import { contractTestCount } from './contract.ts';
import { BIN_DIRS_ENV } from './postgres-server.ts';

const here = path.dirname(fileURLToPath(import.meta.url));

function withoutCi(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const copy = { ...env };
  delete copy.CI;
  return copy;
}

async function runWithoutPostgres(file: string, ci?: string): Promise<{ code: number | null; output: string }> {
  const empty = await mkdtemp(path.join(os.tmpdir(), 'superpi-no-pg-'));
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, file)], {
      // Outside CI: in CI (CI=true) a missing PostgreSQL fails instead (test/requirements.ts), checked below.
      env: { ...withoutCi(process.env), ...(ci === undefined ? {} : { CI: ci }), [BIN_DIRS_ENV]: empty, NO_COLOR: '1', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const code = await guarded(new Promise<number | null>((resolve) => child.on('close', resolve)), `${file} without PostgreSQL`, 60_000);
    return { code, output: output.replace(empty, '<empty>') };
  } finally {
    await rm(empty, { recursive: true, force: true });
  }
}

test('without PostgreSQL binaries every contract test is reported skipped, with the reason', async () => {
  const { code, output } = await runWithoutPostgres('postgres-contract.test.ts');
  assert.is(code, 0, output);
  assert.match(output, '(skipped: the PostgreSQL store contract needs a PostgreSQL server: no PostgreSQL server binaries (initdb and postgres) in <empty>');
  assert.match(output, new RegExp(`^ {2}Skipped: +${contractTestCount()}$`, 'm'));
  assert.match(output, /^ {2}Passed: +1$/m);
});

test('without PostgreSQL binaries the PostgreSQL store tests are reported skipped, with the reason', async () => {
  const { code, output } = await runWithoutPostgres('postgres-store.test.ts');
  assert.is(code, 0, output);
  assert.match(output, '(skipped: the PostgreSQL store tests need a PostgreSQL server: no PostgreSQL server binaries');
  const skipped = Number(/^ {2}Skipped: +(\d+)$/m.exec(output)?.[1]);
  assert.ok(skipped >= 10, output);
});

test('without PostgreSQL binaries in CI (CI=true) the PostgreSQL store tests fail, saying what is missing', async () => {
  const { code, output } = await runWithoutPostgres('postgres-contract.test.ts', 'true');
  assert.is.not(code, 0, output);
  assert.match(output, 'needs a PostgreSQL server: no PostgreSQL server binaries (initdb and postgres) in <empty>');
  assert.not.match(output, '(skipped:');
});

test.run();
