// A tool-pool thread's console output reaches the log through the bounded queue, in a real child process
// whose stderr its parent does not read (a host that never reads our stderr), with a real pool thread that
// writes 64 MiB to its stderr in one call. Before, Node piped a pooled thread's stderr to process.stderr past
// every bound (piscina makes its threads without `stderr: true`): the main thread held all of it (256 MB
// written, 256 MB of array buffers held), or blocked on a blocking stderr, and the call was never answered,
// since piscina waits for the thread's stderr to flush. Now the call is answered, the main thread holds
// next to nothing of it, and every piece either reached stderr or is counted in a line saying it was dropped.

import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { guarded, pollUntil } from '../hang-guard.ts';

const HOST = fileURLToPath(new URL('./fixtures/noisy-pool-host.ts', import.meta.url));
const MB = 64;
/** The noisy worker writes lines of 64 KiB: sixteen per MiB, each one piece of the thread's output. */
const PIECES = MB * 16;
const children: ChildProcess[] = [];

test.after(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
});

test('a pool thread writing 64 MiB to stderr that nobody reads: the call is answered, the main thread holds little, the drop is counted', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', HOST, String(MB)], { stdio: ['pipe', 'pipe', 'pipe'] });
  children.push(child);
  // Nobody reads the child's stderr until the call has been answered.
  child.stderr?.pause();
  let stdout = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  const line = await pollUntil('the call answered', () => (stdout.includes('\n') ? stdout.split('\n')[0] as string : null), 60_000);
  const { text, heldBytes } = JSON.parse(line) as { text: string; heldBytes: number };
  assert.is(text, 'written');
  assert.ok(heldBytes < 16 * 1024 * 1024, `the main thread holds ${heldBytes} bytes more outside its heap after ${MB} MiB written`);

  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stderr?.resume();
  await pollUntil('a line saying what was dropped', () => (/dropped/.test(stderr) ? true : null), 30_000);
  child.stdin?.end();
  await guarded(new Promise((resolve) => child.once('exit', resolve)), 'the child exiting');

  const lines = stderr.split('\n');
  const delivered = lines.filter((l) => l.length === 64 * 1024 - 1 && /^x+$/.test(l)).length;
  const reports = lines.filter((l) => / dropped: /.test(l));
  const counted = reports.reduce((sum, l) => sum + Number(/\{"dropped":(\d+)\}/.exec(l)?.[1] ?? Number.NaN), 0);
  assert.ok(delivered > 0 && delivered < PIECES, `${delivered} of ${PIECES} pieces reached stderr`);
  assert.ok(reports.length <= 2, `one line per bounded stage at most, not one per piece: ${reports.length}`);
  assert.is(delivered + counted, PIECES, `every piece reached stderr or is counted: ${reports.join(' | ')}`);
});

test.run();
