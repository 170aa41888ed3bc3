// A tool-pool thread must not write to the server's stdout, which under stdio carries protocol messages
// only: piscina makes its threads without `stdout: true`, so a thread's stdout is the process's own. The
// thread's module sends what is written there (console.log of a library, say) to stderr. Checked in a real
// worker thread that loads the module as a pooled thread does and then writes to stdout both ways.

import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const WORKER_MODULE = fileURLToPath(new URL('../../src/tools/tool-pool-worker.ts', import.meta.url));

async function outputOf(load: boolean): Promise<{ stdout: string; stderr: string }> {
  const code = `
    const { register } = await import('tsx/esm/api');
    register();
    if (${load}) await import(${JSON.stringify(`file://${WORKER_MODULE}`)});
    console.log('written with console.log');
    process.stdout.write('written to process.stdout\\n');
  `;
  const worker = new Worker(code, { eval: true, stdout: true, stderr: true });
  let stdout = '';
  let stderr = '';
  worker.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  worker.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  await new Promise<void>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('exit', () => resolve());
  });
  return { stdout, stderr };
}

test('a thread that has not loaded the module writes to stdout (the control)', async () => {
  const { stdout } = await outputOf(false);
  assert.match(stdout, /written with console\.log/);
});

test('once the pooled-thread module is loaded, stdout writes go to stderr and stdout stays empty', async () => {
  const { stdout, stderr } = await outputOf(true);
  assert.is(stdout, '');
  assert.match(stderr, /written with console\.log/);
  assert.match(stderr, /written to process\.stdout/);
});

test.run();
