// The uncaught-failure policy in a real server process (src/cli/main.ts installs src/cli/last-resort.ts):
// a planted uncaught exception or rejection is logged on one escaped line and the process exits with 1,
// instead of dying with a raw stack trace (or, for a rejection on some settings, carrying on).

import { spawn } from 'node:child_process';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { UNCAUGHT_MESSAGE } from '../../src/cli/last-resort.ts';
import { makeSandbox } from '../e2e/fixtures.ts';
import { repoRoot } from './stdio-process.ts';

const entry = path.join(repoRoot, 'test/cli/uncaught-process.ts');

async function plant(kind: 'exception' | 'rejection'): Promise<{ code: number | null; stderr: string }> {
  const box = await makeSandbox();
  const child = spawn(process.execPath, ['--import', 'tsx', entry, '--host', '127.0.0.1', '--port', '0', '--workspace', box.ws, '--log-level', 'error'], {
    cwd: repoRoot, env: { ...process.env, PLANT: kind }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const force = setTimeout(() => child.kill('SIGKILL'), 30_000);
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        if (/Streamable HTTP\s+http:/.test(stdout)) resolve();
      });
      void exited.then((code) => reject(new Error(`exited ${code} before listening: ${stderr}`)));
    });
    child.kill('SIGUSR2');
    return { code: await exited, stderr };
  } finally {
    clearTimeout(force);
    await box.cleanup();
  }
}

test('an uncaught exception: one escaped log line naming it, then exit code 1', async () => {
  const { code, stderr } = await plant('exception');
  assert.is(code, 1, stderr);
  const line = stderr.split('\n').find((l) => l.includes(UNCAUGHT_MESSAGE)) ?? '';
  assert.match(line, 'planted failure\\nforged second line');
  assert.match(line, '"kind":"exception"');
  assert.not.match(stderr, /^forged second line/m, 'the error\'s own line break did not start a line');
});

test('an unhandled rejection: the same policy, exit code 1', async () => {
  const { code, stderr } = await plant('rejection');
  assert.is(code, 1, stderr);
  assert.match(stderr, UNCAUGHT_MESSAGE);
  assert.match(stderr, '"kind":"rejection"');
  assert.match(stderr, 'planted rejection');
});

test.run();
