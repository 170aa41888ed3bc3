// Spare sandboxes: the next command with the same launch runs in the one built after the previous command,
// a stale one is ended instead of used, their number is bounded, and a spare never hands one command's
// /tmp to the next.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ChildProcess } from 'node:child_process';
import { bashTool } from '../../../src/tools/bash.ts';
import { bashIsolation } from '../../../src/tools/bash-isolation.ts';
import { discardSpares, keepSpare, type Launch, launchCommand, spareCount, sparePid } from '../../../src/tools/sandbox/spare.ts';
import { MAX_SPARE_SANDBOXES, SPARE_SANDBOX_MAX_AGE_MS } from '../../../src/limits.ts';
import { context, inSandbox } from '../sandbox.ts';

/** A stand-in for the stopper: prints the command it is given on fd 4. */
const launch = (cwd = '/'): Launch => ({ file: '/bin/sh', args: ['-c', 'read -r c <&4; echo "$c"'], env: { PATH: '/usr/bin:/bin' }, cwd });

async function runWith(child: ChildProcess, command: string): Promise<string> {
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  (child.stdio[4] as NodeJS.WritableStream).end(`${command}\n`);
  await new Promise((r) => child.once('close', r));
  return out;
}

test.after.each(() => discardSpares());

test('the next command with the same launch runs in the spare kept after the previous one; one spare per launch', async () => {
  const first = launchCommand(launch(), 1000);
  assert.is(await runWith(first, 'one'), 'one\n');
  keepSpare(launch(), 1000);
  keepSpare(launch(), 1000);
  assert.is(spareCount(), 1);
  const spare = sparePid(launch());
  assert.ok(spare !== undefined && spare !== first.pid);
  const second = launchCommand(launch(), 2000);
  assert.is(second.pid, spare);
  assert.is(sparePid(launch()), undefined, 'a spare serves one command');
  assert.is(await runWith(second, 'two'), 'two\n');
});

test('a spare older than SPARE_SANDBOX_MAX_AGE_MS is ended, not used', async () => {
  keepSpare(launch(), 0);
  const stale = sparePid(launch());
  const next = launchCommand(launch(), SPARE_SANDBOX_MAX_AGE_MS + 1);
  assert.ok(stale !== undefined && next.pid !== stale);
  await runWith(next, 'two');
  assert.is(sparePid(launch()), undefined);
});

test('no more than MAX_SPARE_SANDBOXES spares wait, whatever the number of launches', () => {
  for (const cwd of ['/', '/tmp', '/usr', '/bin', '/etc', '/var']) keepSpare(launch(cwd), 0);
  assert.is(spareCount(), MAX_SPARE_SANDBOXES);
  assert.is(sparePid(launch('/')), undefined, 'the oldest went first');
  assert.ok(sparePid(launch('/var')) !== undefined);
});

test('a sandboxed command never sees the /tmp of the command before it (each spare has its own)', async () => {
  if ((await bashIsolation()).kind !== 'bubblewrap') return;
  await inSandbox({}, async ({ ws }) => {
    await bashTool({ command: 'echo left-behind > /tmp/mark' }, context(ws));
    const r = await bashTool({ command: 'cat /tmp/mark 2>&1 || true' }, context(ws));
    assert.not.ok(r.text.includes('left-behind'), r.text);
  });
});

test.run();
