// A `bash` command's process and memory bounds, with real bwrap and real processes. SAFE by construction:
// no test runs an unbounded fork bomb or allocation. Each starts at most twice a small bound of processes,
// or allocates in 1 MiB steps up to twice a small bound, and stops by itself, so a bound that failed to
// hold would cost the machine 80 sleeps or 128 MiB, not its life.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, rm, rmdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bashTool } from '../../../src/tools/bash.ts';
import { bashIsolation } from '../../../src/tools/bash-isolation.ts';
import { boundsMechanism, useBoundsMechanism, useCommandLimits } from '../../../src/tools/sandbox/bounds-probe.ts';
import type { BoundsMechanism } from '../../../src/tools/sandbox/bounds.ts';
import { closeOpenCgroups, COMMAND_CGROUP_PREFIX, sweepStaleCommandCgroups } from '../../../src/tools/sandbox/command-cgroup.ts';
import { discardSpares } from '../../../src/tools/sandbox/spare.ts';
import { context, inSandbox } from '../sandbox.ts';

const LIMIT = 40;
const MEMORY = 64 * 1024 * 1024;

/** Starts 2×LIMIT background sleeps in dash (bash retries a refused fork for half a minute), one line each. */
const FORK_LOOP = `exec /bin/sh -c 'i=0; while [ $i -lt ${2 * LIMIT} ]; do i=$((i+1)); sleep 30 & echo started; done; echo all-started'`;

/** Allocates 1 MiB at a time up to twice MEMORY, then stops (it never gets there under the bound). */
const ALLOCATE = `python3 -c 'b=[]\nfor i in range(${(2 * MEMORY) / (1024 * 1024)}): b.append(bytearray(1 << 20))\nprint("allocated all")'`;

async function cgroupMechanism(): Promise<Extract<BoundsMechanism, { kind: 'cgroup1' | 'cgroup2' }> | null> {
  if ((await bashIsolation()).kind !== 'bubblewrap') return null;
  const m = await boundsMechanism();
  return m.kind === 'cgroup1' || m.kind === 'cgroup2' ? m : null;
}

async function skipWithoutCgroup(what: string): Promise<boolean> {
  const m = await cgroupMechanism();
  if (m !== null) return false;
  const got = await boundsMechanism();
  console.log(`  (skipped ${what}: no writable cgroup here: ${'reason' in got ? got.reason : got.kind})`);
  return true;
}

/** Our command cgroups left in the mechanism's parents (none once every call has ended). */
async function ourCgroups(m: Extract<BoundsMechanism, { kind: 'cgroup1' | 'cgroup2' }>): Promise<string[]> {
  const parents = m.kind === 'cgroup2' ? [m.parent] : [m.pids, m.memory];
  const names = (await Promise.all(parents.map((p) => readdir(p)))).flat();
  return names.filter((n) => n.startsWith(`${COMMAND_CGROUP_PREFIX}${process.pid}-`) && !n.endsWith('-server'));
}

test.before(() => useCommandLimits({ maxProcesses: LIMIT, maxMemoryBytes: MEMORY }));
test.after(() => {
  discardSpares();
  useCommandLimits({});
});

test('this machine\'s mechanism is found once and named (root on cgroup v1 here: a cgroup per command)', async () => {
  const m = await boundsMechanism();
  console.log(`  (bounds mechanism: ${JSON.stringify(m)})`);
  assert.is(await boundsMechanism(), m);
  if (process.getuid?.() === 0 && m.kind !== 'cgroup1' && m.kind !== 'cgroup2') assert.is(m.kind, 'rlimit');
});

test('a command past the process bound is refused forks, the result names the bound, and the next call works', async () => {
  if (await skipWithoutCgroup('the process bound')) return;
  await inSandbox({}, async ({ ws }) => {
    const r = await bashTool({ command: FORK_LOOP }, context(ws));
    const started = r.text.split('\n').filter((l) => l === 'started').length;
    assert.ok(started < 2 * LIMIT && !r.text.includes('all-started'), r.text);
    assert.match(r.text, `The command reached BASH_MAX_PROCESSES (${LIMIT} processes): the kernel refused it`);
    assert.ok((r.structured?.notices as string[]).some((n) => n.includes('BASH_MAX_PROCESSES')));
    const next = await bashTool({ command: 'echo still serving' }, context(ws));
    assert.is(next.text, 'still serving\n');
    assert.not.ok(next.isError);
  });
});

test('a command past the memory bound is killed, the result names the bound, and the next call works', async () => {
  if (await skipWithoutCgroup('the memory bound')) return;
  if (spawnSync('python3', ['-c', '0']).status !== 0) {
    console.log('  (skipped the memory bound: no python3 to allocate with)');
    return;
  }
  await inSandbox({}, async ({ ws }) => {
    const r = await bashTool({ command: ALLOCATE }, context(ws));
    assert.not.match(r.text, 'allocated all');
    assert.ok(r.isError, r.text);
    assert.match(r.text, 'Killed: the command used more than BASH_MAX_MEMORY_BYTES (64 MiB)');
    const next = await bashTool({ command: 'echo still serving' }, context(ws));
    assert.is(next.text, 'still serving\n');
  });
});

test('a command\'s cgroup is gone once it has ended (a timed-out one too), and a spare\'s at the server\'s stop', async () => {
  const m = await cgroupMechanism();
  if (m === null) return void (await skipWithoutCgroup('cgroup removal'));
  await inSandbox({}, async ({ ws }) => {
    // From none: the earlier tests' spares and lingering cgroups removed as at a stop.
    discardSpares();
    await closeOpenCgroups();
    assert.equal(await ourCgroups(m), []);
    const r = await bashTool({ command: 'sleep 30 & sleep 30', timeout: 1 }, context(ws));
    assert.ok(r.structured?.timedOut, r.text);
    // Left: only the spare's, built for the next command (one name, in each v1 hierarchy); the stop removes it.
    const left = new Set(await ourCgroups(m));
    assert.ok(left.size <= 1, [...left].join(' '));
    discardSpares();
    await closeOpenCgroups();
    assert.equal(await ourCgroups(m), []);
  });
});

test('the startup sweep removes a stale cgroup of a server that is gone, and leaves a foreign one and a live server\'s', async () => {
  const m = await cgroupMechanism();
  if (m === null) return void (await skipWithoutCgroup('the stale cgroup sweep'));
  const parent = m.kind === 'cgroup2' ? m.parent : m.pids;
  const gone = spawnSync('true').pid as number;
  const stale = path.join(parent, `${COMMAND_CGROUP_PREFIX}${gone}-7`);
  const live = path.join(parent, `${COMMAND_CGROUP_PREFIX}${process.ppid}-7`);
  const foreign = path.join(parent, `not-super-pi-${gone}-7`);
  for (const dir of [stale, live, foreign]) await mkdir(dir);
  try {
    // The sweep runs at the probe: start it afresh.
    useBoundsMechanism(undefined);
    await boundsMechanism();
    const left = await readdir(parent);
    assert.not.ok(left.includes(path.basename(stale)), 'the stale cgroup is still there');
    assert.ok(left.includes(path.basename(live)) && left.includes(path.basename(foreign)), left.join(' '));
    assert.equal(sweepStaleCommandCgroups([parent], m.kind === 'cgroup2' ? 2 : 1), []);
  } finally {
    for (const dir of [stale, live, foreign]) await rmdir(dir).catch(() => undefined);
  }
});

test('a server that is not root: RLIMIT_NPROC in each command\'s user namespace, however many processes the user has elsewhere', async () => {
  if (process.getuid?.() !== 0 || spawnSync('setpriv', ['--version']).status !== 0) {
    console.log('  (skipped: needs root and setpriv to run a server as user 65534)');
    return;
  }
  const asNobody = ['--reuid=65534', '--regid=65534', '--clear-groups'];
  const needed = [path.resolve('src/tools/bash.ts'), fileURLToPath(import.meta.resolve('tsx'))];
  if (needed.some((file) => spawnSync('setpriv', [...asNobody, 'test', '-r', file]).status !== 0)) {
    console.log('  (skipped: user 65534 cannot read the checkout)');
    return;
  }
  const home = await mkdtemp(path.join(os.tmpdir(), 'super-pi-nobody-'));
  await chmod(home, 0o777);
  // As that user, LIMIT + 10 processes outside any command first: set on bwrap, RLIMIT_NPROC would count
  // them and refuse to build the sandbox at all; set inside, it counts the command's alone.
  const script = `
    const { spawn } = await import('node:child_process');
    const outside = Array.from({ length: ${LIMIT + 10} }, () => spawn('sleep', ['60'], { stdio: 'ignore' }));
    try {
      const probe = await import(${JSON.stringify(path.resolve('src/tools/sandbox/bounds-probe.ts'))});
      const spare = await import(${JSON.stringify(path.resolve('src/tools/sandbox/spare.ts'))});
      probe.useCommandLimits({ maxProcesses: ${LIMIT} });
      const { bashTool } = await import(${JSON.stringify(path.resolve('src/tools/bash.ts'))});
      const r = await bashTool({ command: ${JSON.stringify(FORK_LOOP)} }, { workspace: ${JSON.stringify(home)}, signal: new AbortController().signal });
      const next = await bashTool({ command: 'echo still serving' }, { workspace: ${JSON.stringify(home)}, signal: new AbortController().signal });
      spare.discardSpares();
      console.log(JSON.stringify({ mechanism: await probe.boundsMechanism(), text: r.text, next: next.text }));
    } finally {
      for (const p of outside) p.kill('SIGKILL');
    }`;
  try {
    const child = spawn('setpriv', [...asNobody, process.execPath, '--import', 'tsx', '--input-type=module', '-e', script], { env: { ...process.env, HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.is(code, 0, err);
    const got = JSON.parse(out.trim().split('\n').pop() as string) as { mechanism: BoundsMechanism; text: string; next: string };
    if (got.mechanism.kind !== 'rlimit' || !got.mechanism.nproc) {
      console.log(`  (skipped: as user 65534 the mechanism here is ${JSON.stringify(got.mechanism)})`);
      return;
    }
    const started = got.text.split('\n').filter((l) => l === 'started').length;
    assert.ok(started > 0 && started < 2 * LIMIT && !got.text.includes('all-started'), got.text);
    assert.is(got.next, 'still serving\n');
  } finally {
    await rm(home, { recursive: true, force: true });
  }
});

test.run();
