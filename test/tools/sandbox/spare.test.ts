// Spare sandboxes: the next command with the same launch runs in the one built after the previous command,
// a stale one is ended instead of used, their number is bounded, and a spare never hands one command's
// /tmp to the next.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ChildProcess } from 'node:child_process';
import { bashTool } from '../../../src/tools/bash.ts';
import { bashIsolation } from '../../../src/tools/bash-isolation.ts';
import { discardSpares, type Launch, launchCommand, spareCount, sparePid } from '../../../src/tools/sandbox/spare.ts';
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

test('the next command with the same launch runs in the spare built after the previous one, and leaves a new spare', async () => {
  const first = launchCommand(launch(), true, 1000);
  const spare = sparePid(launch());
  assert.ok(spare !== undefined && spare !== first.pid);
  assert.is(await runWith(first, 'one'), 'one\n');
  const second = launchCommand(launch(), true, 2000);
  assert.is(second.pid, spare);
  assert.is(await runWith(second, 'two'), 'two\n');
  assert.ok(sparePid(launch()) !== undefined && sparePid(launch()) !== spare);
});

test('a spare older than SPARE_SANDBOX_MAX_AGE_MS is ended, not used', async () => {
  const first = launchCommand(launch(), true, 0);
  await runWith(first, 'one');
  const stale = sparePid(launch());
  const next = launchCommand(launch(), false, SPARE_SANDBOX_MAX_AGE_MS + 1);
  assert.ok(next.pid !== stale);
  await runWith(next, 'two');
  assert.is(sparePid(launch()), undefined);
});

test('no more than MAX_SPARE_SANDBOXES spares wait, whatever the number of launches', async () => {
  const children = ['/', '/tmp', '/usr', '/bin', '/etc', '/var'].map((cwd) => launchCommand(launch(cwd), true, 0));
  assert.is(spareCount(), MAX_SPARE_SANDBOXES);
  await Promise.all(children.map((c) => runWith(c, 'x')));
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
