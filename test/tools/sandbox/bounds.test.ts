// The choice of how a `bash` command is bounded, as pure data: the facts of a kind of machine in, the
// mechanism out; the parsers of /proc/self/cgroup and mountinfo; what a result says at a bound.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BASH_MAX_MEMORY_BYTES, BASH_MAX_PROCESSES, BASH_MEMORY_HOST_DIVISOR } from '../../../src/limits.ts';
import { type BoundsFacts, boundsNotices, boundsReport, chooseBoundsMechanism, defaultMemoryBytes, kernelAtLeast } from '../../../src/tools/sandbox/bounds.ts';
import { parseCgroupMounts, parseProcCgroup, settleMechanism } from '../../../src/tools/sandbox/bounds-probe.ts';

const GIB = 1024 * 1024 * 1024;

/** A machine with nothing: facts each case overrides. */
const bare: BoundsFacts = { uid: 1000, kernel: '6.8.0-45-generic', cgroup2: null, cgroup1: { pids: null, memory: null }, prlimit: '/usr/bin/prlimit' };

test('the defaults are the documented ones: 512 processes, 4 GiB capped at half the RAM', () => {
  assert.equal({ BASH_MAX_PROCESSES, BASH_MAX_MEMORY_BYTES, BASH_MEMORY_HOST_DIVISOR }, { BASH_MAX_PROCESSES: 512, BASH_MAX_MEMORY_BYTES: 4 * GIB, BASH_MEMORY_HOST_DIVISOR: 2 });
  assert.is(defaultMemoryBytes(4 * GIB, 32 * GIB, 2), 4 * GIB);
  assert.is(defaultMemoryBytes(4 * GIB, 4 * GIB, 2), 2 * GIB);
});

test('a delegated cgroup v2 with pids and memory comes first (systemd-run --user --scope -p Delegate=yes)', () => {
  const facts: BoundsFacts = { ...bare, cgroup2: { ownDir: '/sys/fs/cgroup/user.slice/run-1.scope', controllers: ['cpu', 'memory', 'pids'], writable: true } };
  assert.equal(chooseBoundsMechanism(facts), { kind: 'cgroup2', parent: '/sys/fs/cgroup/user.slice/run-1.scope' });
});

test('a cgroup v2 not delegated, or without the controllers, is passed over', () => {
  const notMine: BoundsFacts = { ...bare, cgroup2: { ownDir: '/sys/fs/cgroup/user.slice', controllers: ['memory', 'pids'], writable: false } };
  assert.is(chooseBoundsMechanism(notMine).kind, 'rlimit');
  const noControllers: BoundsFacts = { ...bare, cgroup2: { ownDir: '/sys/fs/cgroup/unified', controllers: [], writable: true } };
  const got = chooseBoundsMechanism(noControllers);
  assert.is(got.kind, 'rlimit');
  assert.match((got as { reason: string }).reason, 'no pids and memory controllers');
});

test('root on a v1 hierarchy: a cgroup per command in pids and memory', () => {
  const facts: BoundsFacts = { ...bare, uid: 0, cgroup1: { pids: { ownDir: '/sys/fs/cgroup/pids', writable: true }, memory: { ownDir: '/sys/fs/cgroup/memory/a', writable: true } } };
  assert.equal(chooseBoundsMechanism(facts), { kind: 'cgroup1', pids: '/sys/fs/cgroup/pids', memory: '/sys/fs/cgroup/memory/a' });
});

test('v1 hierarchies a user cannot write: RLIMIT_NPROC in the user namespace (kernel ≥ 5.14)', () => {
  const facts: BoundsFacts = { ...bare, cgroup1: { pids: { ownDir: '/sys/fs/cgroup/pids', writable: false }, memory: { ownDir: '/sys/fs/cgroup/memory', writable: false } } };
  const got = chooseBoundsMechanism(facts);
  assert.equal({ kind: got.kind, nproc: (got as { nproc: boolean }).nproc }, { kind: 'rlimit', nproc: true });
});

test('a kernel before 5.14 counts all the user\'s processes: no RLIMIT_NPROC, RLIMIT_DATA only', () => {
  const got = chooseBoundsMechanism({ ...bare, kernel: '5.10.0-28-amd64' });
  assert.equal({ kind: got.kind, nproc: (got as { nproc: boolean }).nproc }, { kind: 'rlimit', nproc: false });
  assert.match((got as { reason: string }).reason, '5.10.0-28-amd64');
});

test('root without a writable cgroup: RLIMIT_NPROC does not bind root, RLIMIT_DATA only', () => {
  const got = chooseBoundsMechanism({ ...bare, uid: 0 });
  assert.equal({ kind: got.kind, nproc: (got as { nproc: boolean }).nproc }, { kind: 'rlimit', nproc: false });
  assert.match((got as { reason: string }).reason, 'does not bind root');
});

test('no prlimit and no cgroup: none, and why', () => {
  const got = chooseBoundsMechanism({ ...bare, prlimit: null });
  assert.is(got.kind, 'none');
  assert.match((got as { reason: string }).reason, 'prlimit');
});

test('a cgroup v2 that cannot be set up (processes it cannot move) falls to the next mechanism, saying why', () => {
  const facts: BoundsFacts = { ...bare, cgroup2: { ownDir: '/sys/fs/cgroup/x', controllers: ['memory', 'pids'], writable: true } };
  const got = settleMechanism(facts, () => {
    throw new Error('EBUSY');
  });
  assert.is(got.kind, 'rlimit');
  assert.match((got as { reason: string }).reason, 'could not be set up (EBUSY)');
});

test('kernel versions compare by major and minor', () => {
  assert.ok(kernelAtLeast('5.14.0', [5, 14]));
  assert.ok(kernelAtLeast('6.1.0-rc1', [5, 14]));
  assert.not.ok(kernelAtLeast('5.13.19', [5, 14]));
  assert.not.ok(kernelAtLeast('4.19.0', [5, 14]));
  assert.not.ok(kernelAtLeast('garbage', [5, 14]));
});

test('mountinfo and /proc/self/cgroup: v1 controllers, v2 root, escaped mount points', () => {
  const mounts = parseCgroupMounts([
    '39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids',
    '32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct',
    '41 31 0:38 /sub /sys/fs/cgroup/my\\040dir rw,relatime shared:9 - cgroup2 cgroup2 rw',
    '22 1 8:1 / / rw - ext4 /dev/sda1 rw',
  ].join('\n'));
  assert.equal(mounts.map((m) => [m.fsType, m.mountPoint, m.root, m.options.includes('pids')]), [
    ['cgroup', '/sys/fs/cgroup/pids', '/', true],
    ['cgroup', '/sys/fs/cgroup/cpu,cpuacct', '/', false],
    ['cgroup2', '/sys/fs/cgroup/my dir', '/sub', false],
  ]);
  const own = parseProcCgroup('8:pids:/\n4:memory:/process_api/abc\n0::/user.slice/x.scope\n');
  assert.equal([own.get('pids'), own.get('memory'), own.get('')], ['/', '/process_api/abc', '/user.slice/x.scope']);
});

test('a result names the bound it met, from the kernel\'s counts', () => {
  const limits = { maxProcesses: 40, maxMemoryBytes: 64 * 1024 * 1024 };
  assert.equal(boundsNotices({ refusedForks: 0, oomKills: 0 }, limits), []);
  assert.equal(boundsNotices({ refusedForks: 3, oomKills: 1 }, limits), [
    'The command reached BASH_MAX_PROCESSES (40 processes): the kernel refused it 3 forks',
    'Killed: the command used more than BASH_MAX_MEMORY_BYTES (64 MiB): the kernel ended 1 of its processes',
  ]);
});

test('boundsReport: what /health shows per mechanism, the limits in force and never a path', () => {
  const limits = { maxProcesses: 7, maxMemoryBytes: 1024 };
  assert.equal(boundsReport({ kind: 'cgroup2', parent: '/sys/fs/cgroup/user.slice/x' }, limits), { kind: 'cgroup2', maxProcesses: 7, maxMemoryBytes: 1024, memoryPer: 'command' });
  assert.equal(boundsReport({ kind: 'cgroup1', pids: '/sys/fs/cgroup/pids/x', memory: '/sys/fs/cgroup/memory/x' }, limits), { kind: 'cgroup1', maxProcesses: 7, maxMemoryBytes: 1024, memoryPer: 'command' });
  assert.equal(boundsReport({ kind: 'rlimit', prlimit: '/usr/bin/prlimit', nproc: true, reason: 'no cgroup' }, limits), { kind: 'rlimit', maxProcesses: 7, maxMemoryBytes: 1024, memoryPer: 'process', reason: 'no cgroup' });
  assert.equal(boundsReport({ kind: 'rlimit', prlimit: '/usr/bin/prlimit', nproc: false, reason: 'old kernel' }, limits), { kind: 'rlimit', maxProcesses: null, maxMemoryBytes: 1024, memoryPer: 'process', reason: 'old kernel' });
  assert.equal(boundsReport({ kind: 'none', reason: 'not Linux' }, limits), { kind: 'none', maxProcesses: null, maxMemoryBytes: null, reason: 'not Linux' });
});

test.run();
