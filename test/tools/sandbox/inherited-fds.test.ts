// inheritableDescriptors finds what a child would inherit (a descriptor the process got without
// close-on-exec) and nothing Node opened itself; stdioWithoutInherited puts /dev/null over each of them.
// Run in a real child process that is given such a descriptor, as a leaking parent would give it.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const LEAKED = 33;

const probe = `
import { openSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { inheritableDescriptors, stdioWithoutInherited } from './src/tools/sandbox/inherited-fds.ts';
const own = openSync(process.argv[1], 'r');
const found = inheritableDescriptors(5);
const stdio = stdioWithoutInherited(['ignore', 'pipe', 'pipe']);
const seen = spawnSync('/bin/sh', ['-c', 'readlink /proc/self/fd/${LEAKED} || echo closed'], { stdio }).stdout.toString().trim();
console.log(JSON.stringify({ own, found, seen }));
`;

/** Runs the probe in a child that gets `fd` at number LEAKED, as a leaking parent would hand it over. */
function runProbe(file: string, fd: number): Promise<{ own: number; found: number[]; seen: string }> {
  const stdio = [...Array.from({ length: LEAKED }, (_, i) => (i === 1 ? 'pipe' : 'ignore') as 'pipe' | 'ignore'), fd];
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe, file], { cwd: repoRoot, stdio });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      try {
        resolve(JSON.parse(out) as { own: number; found: number[]; seen: string });
      } catch (err) {
        reject(new Error(`probe exited ${code} with ${JSON.stringify(out)}`, { cause: err }));
      }
    });
  });
}

test('finds a descriptor inherited without close-on-exec, not its own; a spawn gets /dev/null in its place', async () => {
  if (process.platform !== 'linux') return;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'superpi-fds-'));
  const file = path.join(dir, 'leaked.txt');
  await writeFile(file, '');
  const fd = openSync(file, 'a');
  try {
    const { own, found, seen } = await runProbe(file, fd);
    assert.ok(found.includes(LEAKED), `not found: ${JSON.stringify(found)}`);
    assert.not.ok(found.includes(own), `its own descriptor ${own} counted as inherited: ${JSON.stringify(found)}`);
    assert.equal(found, [...found].sort((a, b) => a - b));
    assert.is(seen, '/dev/null');
  } finally {
    closeSync(fd);
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
