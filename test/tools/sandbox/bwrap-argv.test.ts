// Golden argument lists: each policy turned into bwrap's command line, so a change to what a command may
// write, see or reach shows up here as a diff; the real-process tests (test/e2e/bash-sandbox.test.ts) prove what they mean.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, realpath, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BASH_SHM_MAX_BYTES, BASH_TMP_MAX_BYTES } from '../../../src/limits.ts';
import { bwrapArgv, EGRESS_NODE_IN_SANDBOX, EGRESS_SOCKET_IN_SANDBOX } from '../../../src/tools/sandbox/bwrap-argv.ts';
import { sandboxBridge } from '../../../src/tools/sandbox/egress-bridge.ts';

const BASE = ['/usr/bin/bwrap', '--unshare-user', '--disable-userns', '--cap-drop', 'ALL', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try'];
const FS = [
  '--die-with-parent', '--new-session', '--ro-bind', '/', '/',
  '--dev', '/dev', '--size', String(BASH_SHM_MAX_BYTES), '--tmpfs', '/dev/shm', '--remount-ro', '/dev',
  '--proc', '/proc', '--ro-bind-try', '/proc/sys', '/proc/sys', '--ro-bind-try', '/proc/sysrq-trigger', '/proc/sysrq-trigger',
  '--size', String(BASH_TMP_MAX_BYTES), '--tmpfs', '/tmp',
];

test('network off: own network namespace, the root read-only, /tmp private, the workspace writable after it', () => {
  assert.equal(bwrapArgv({ bwrap: '/usr/bin/bwrap', root: true, workspace: '/tmp/t/ws', mounts: [], network: { kind: 'none' } }), [
    ...BASE, '--unshare-net', ...FS, '--bind', '/tmp/t/ws', '/tmp/t/ws', '--chdir', '/tmp/t/ws', '--',
  ]);
});

test('network on: the host\'s network namespace is kept; not root: no --cap-drop (bwrap drops them itself)', () => {
  const argv = bwrapArgv({ bwrap: '/usr/bin/bwrap', root: false, workspace: '/w', mounts: [], network: { kind: 'host' } });
  assert.equal(argv, [...BASE.filter((a) => a !== '--cap-drop' && a !== 'ALL'), ...FS, '--bind', '/w', '/w', '--chdir', '/w', '--']);
});

test('hidden directories become read-only empty tmpfs, hidden files /dev/null; shallow first, a hide after a bind at equal depth', () => {
  const argv = bwrapArgv({
    bwrap: '/usr/bin/bwrap', root: true, workspace: '/home/u/ws', network: { kind: 'none' },
    mounts: [
      { kind: 'hide-file', path: '/home/u/.pgpass' },
      { kind: 'hide-dir', path: '/home/u/ws/.secrets' },
      { kind: 'writable', path: '/home/u/cache' },
      { kind: 'hide-dir', path: '/home/u/.ssh' },
      { kind: 'hide-file', path: '/etc/shadow' },
    ],
  });
  assert.equal(argv.slice(BASE.length + 1 + FS.length), [
    '--ro-bind', '/dev/null', '/etc/shadow',
    '--bind', '/home/u/cache', '/home/u/cache',
    '--bind', '/home/u/ws', '/home/u/ws',
    '--ro-bind', '/dev/null', '/home/u/.pgpass',
    '--tmpfs', '/home/u/.ssh', '--remount-ro', '/home/u/.ssh',
    '--tmpfs', '/home/u/ws/.secrets', '--remount-ro', '/home/u/ws/.secrets',
    '--chdir', '/home/u/ws', '--',
  ]);
});

const EGRESS = {
  socketPath: '/run/sp/egress.sock', bridgeNode: '/tmp/node22/bin/node', bridgeArgv: [EGRESS_NODE_IN_SANDBOX, '-e', 'bridge'], env: { HTTPS_PROXY: 'http://127.0.0.1:1' },
};

test('allow=HOSTS with the egress proxy: own network namespace, the proxy\'s socket and the bridge\'s Node (that file only, read-only) on the private /tmp, after every other mount', () => {
  const argv = bwrapArgv({
    bwrap: '/usr/bin/bwrap', root: true, workspace: '/tmp/t/ws', network: { kind: 'allow', hosts: ['example.com'] }, egress: EGRESS,
    mounts: [{ kind: 'hide-dir', path: '/home/u/.ssh' }],
  });
  assert.equal(argv, [
    ...BASE, '--unshare-net', ...FS, '--bind', '/tmp/t/ws', '/tmp/t/ws', '--tmpfs', '/home/u/.ssh', '--remount-ro', '/home/u/.ssh',
    '--bind', '/run/sp/egress.sock', EGRESS_SOCKET_IN_SANDBOX, '--ro-bind', '/tmp/node22/bin/node', EGRESS_NODE_IN_SANDBOX,
    '--chdir', '/tmp/t/ws', '--',
  ]);
});

test('network off or on: no bridge runs, so neither the socket nor the Node binary is bound, even with a proxy handed over', () => {
  for (const network of [{ kind: 'none' }, { kind: 'host' }] as const) {
    const argv = bwrapArgv({ bwrap: '/usr/bin/bwrap', root: true, workspace: '/w', mounts: [], network, egress: EGRESS });
    assert.not.ok(argv.includes(EGRESS_NODE_IN_SANDBOX), argv.join(' '));
    assert.not.ok(argv.includes(EGRESS_SOCKET_IN_SANDBOX), argv.join(' '));
  }
});

test('the sandbox\'s bridge runs the Node bound inside: its command names EGRESS_NODE_IN_SANDBOX, the bind\'s source is the real file behind a link', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'superpi-bridge-node-'));
  try {
    const link = path.join(dir, 'node');
    await symlink(process.execPath, link);
    const bridge = sandboxBridge(3128, link);
    assert.is(bridge.bridgeNode, await realpath(process.execPath));
    assert.is(bridge.bridgeArgv[0], EGRESS_NODE_IN_SANDBOX);
    assert.equal(bridge.bridgeArgv.slice(3), [EGRESS_SOCKET_IN_SANDBOX, '3128']);
    const argv = bwrapArgv({ bwrap: '/usr/bin/bwrap', root: true, workspace: '/w', mounts: [], network: { kind: 'allow', hosts: ['example.com'] }, egress: { socketPath: '/s', ...bridge, env: {} } });
    const bind = argv.indexOf('--ro-bind', argv.indexOf(EGRESS_SOCKET_IN_SANDBOX));
    assert.equal(argv.slice(bind, bind + 3), ['--ro-bind', bridge.bridgeNode, bridge.bridgeArgv[0]]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('allow=HOSTS without a proxy running: own network namespace and nothing bound (closed, not open)', () => {
  const argv = bwrapArgv({ bwrap: '/usr/bin/bwrap', root: true, workspace: '/w', mounts: [], network: { kind: 'allow', hosts: ['example.com'] } });
  assert.equal(argv, [...BASE, '--unshare-net', ...FS, '--bind', '/w', '/w', '--chdir', '/w', '--']);
});

test.run();
