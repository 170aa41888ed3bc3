// A tool-pool thread must not write to the server's stdout, which under stdio carries protocol messages
// only, nor past the log's bound to its stderr: piscina makes its threads without `stdout: true, stderr: true`,
// so Node pipes a thread's console to the process's own streams. The thread's module captures its console
// instead (log/thread-output.ts): what is written (console.log of a library, say) comes to the main thread
// over the port it hands over, into the bounded log. Checked in a real worker thread that loads the module
// as a pooled thread does and then writes to stdout and stderr every way.

import { EventEmitter } from 'node:events';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BoundedSink, type QueuedStream } from '../../src/log/stderr-sink.ts';
import { forwardPortOutput, threadOutputHandshake } from '../../src/log/thread-output.ts';
import { guarded, pollUntil } from '../hang-guard.ts';

const WORKER_MODULE = fileURLToPath(new URL('../../src/tools/tool-pool-worker.ts', import.meta.url));

/** A log stream that takes everything at once. */
class Collected extends EventEmitter implements QueuedStream {
  readonly writableLength = 0;
  text = '';
  write(text: string): boolean {
    this.text += text;
    return true;
  }
}

async function outputOf(load: boolean): Promise<{ stdout: string; stderr: string; logged: string }> {
  const code = `
    const { register } = await import('tsx/esm/api');
    register();
    if (${load}) await import(${JSON.stringify(`file://${WORKER_MODULE}`)});
    console.log('written with console.log');
    console.error('written with console.error');
    process.stdout.write('written to process.stdout\\n');
    process.stderr.write(Buffer.from('written to process.stderr as bytes\\n'));
    process.emitWarning('a process warning');
  `;
  const worker = new Worker(code, { eval: true, stdout: true, stderr: true });
  const log = new Collected();
  worker.on('message', (message: unknown) => {
    const handshake = threadOutputHandshake(message);
    if (handshake !== null) forwardPortOutput(handshake, new BoundedSink(log));
  });
  let stdout = '';
  let stderr = '';
  worker.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  worker.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  await guarded(new Promise<void>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('exit', () => resolve());
  }), 'the thread exiting');
  if (load) await pollUntil('the warning in the log', () => (log.text.includes('a process warning') ? true : null), 10_000, 10);
  return { stdout, stderr, logged: log.text };
}

test('a thread that has not loaded the module writes to its own streams (the control)', async () => {
  const { stdout, stderr, logged } = await outputOf(false);
  assert.match(stdout, /written with console\.log/);
  assert.match(stderr, /written with console\.error/);
  assert.is(logged, '');
});

test('once the pooled-thread module is loaded, everything it writes comes over its port to the log; its own streams stay empty', async () => {
  const { stdout, stderr, logged } = await outputOf(true);
  assert.is(stdout, '');
  assert.is(stderr, '');
  for (const text of ['written with console.log', 'written with console.error', 'written to process.stdout', 'written to process.stderr as bytes', 'a process warning']) {
    assert.ok(logged.includes(text), `${text} reached the log: ${logged}`);
  }
});

test.run();
