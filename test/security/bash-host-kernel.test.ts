// Threat-model rule: a sandboxed `bash` command changes nothing of the host's kernel and holds no more
// of the host's memory in its private filesystems than the named limits. A server running as root runs
// its commands as uid 0 (mapped to the host's root, without capabilities): the kernel lets that uid write
// /proc/sys (sysctls check the uid, not a capability), so a writable /proc/sys is a write to the host
// (kernel.core_pattern names a program the kernel then runs as root, outside every namespace). The
// sandbox's /tmp and /dev are tmpfs, memory that no process owns: unbounded, one command could fill the
// host's RAM and the OOM killer would end the server instead.
// Caller classes: every caller that may run `bash`, and workspace content a command runs.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import path from 'node:path';
import { BASH_SHM_MAX_BYTES, BASH_TMP_MAX_BYTES } from '../../src/limits.ts';
import { bashIsolation } from '../../src/tools/bash-isolation.ts';
import { bashCall, groupGone, initialize, initialized, startStdio, type StdioProcess } from '../cli/stdio-process.ts';

const sandboxed = (await bashIsolation()).kind === 'bubblewrap';
if (!sandboxed) console.log('  (no bubblewrap sandbox here: host-kernel rules not checked)');

let base: string;
let server: StdioProcess;
let nextId = 2;

test.before(async () => {
  if (!sandboxed) return;
  // Outside /tmp: the sandbox's /tmp is a private one.
  base = await realpath(await mkdtemp('/var/tmp/superpi-kernel-'));
  const ws = path.join(base, 'ws');
  await mkdir(ws);
  server = startStdio(process.execPath, ['--import', 'tsx', 'examples/stdio.ts', '--workspace', ws]);
  server.send(initialize);
  await server.reply(1);
  server.send(initialized);
});

test.after(async () => {
  if (!sandboxed) return;
  server.child.stdin.end();
  await Promise.race([server.exited, new Promise((r) => setTimeout(r, 10_000))]);
  server.cleanup();
  await groupGone(server.group, 10_000);
  await rm(base, { recursive: true, force: true });
});

async function bash(command: string): Promise<string> {
  const id = nextId++;
  server.send(bashCall(id, command));
  const reply = (await server.reply(id, 60_000)) as { result?: { content?: { text?: string }[] } };
  const text = reply.result?.content?.[0]?.text;
  assert.type(text, 'string', JSON.stringify(reply));
  return text as string;
}

test('no sysctl of the host can be written from inside: /proc/sys is read-only (a no-op write of the same value is refused)', async () => {
  if (!sandboxed) return;
  // Writes back the value it reads, so even where the rule is broken the host keeps its setting.
  const out = await bash([
    'for f in /proc/sys/kernel/printk_ratelimit_burst /proc/sys/kernel/core_pattern /proc/sys/vm/drop_caches /proc/sys/kernel/hostname; do',
    '  if [ -w "$f" ]; then echo "WRITABLE $f"; fi',
    'done',
    'v=$(cat /proc/sys/kernel/printk_ratelimit_burst) && (echo "$v" > /proc/sys/kernel/printk_ratelimit_burst) 2>/dev/null && echo WROTE-SYSCTL',
    '[ -e /proc/sysrq-trigger ] && [ -w /proc/sysrq-trigger ] && echo WRITABLE-SYSRQ',
    'echo checked',
  ].join('\n'));
  assert.ok(out.includes('checked'), out);
  assert.not.ok(out.includes('WRITABLE'), out);
  assert.not.ok(out.includes('WROTE-SYSCTL'), out);
});

test('sysctls are still readable, and the network ones are the sandbox\'s own namespace', async () => {
  if (!sandboxed) return;
  const out = await bash('cat /proc/sys/kernel/pid_max; ls /proc/sys/net/ipv4/conf');
  assert.ok(/^\d+\n/.test(out), out);
  assert.ok(/^lo$/m.test(out), out);
  assert.not.ok(/^eth|^ens|^enp/m.test(out), out);
});

/** Bytes a filesystem holds in all, as `stat -f` reports it inside the sandbox (blocks × fundamental block size). */
function capacity(line: string | undefined): number {
  const [blocks, size] = (line ?? '').trim().split(' ').map(Number);
  return (blocks as number) * (size as number);
}

test('the private /tmp holds at most BASH_TMP_MAX_BYTES and /dev/shm BASH_SHM_MAX_BYTES; /dev itself takes no new file', async () => {
  if (!sandboxed) return;
  const over = BASH_SHM_MAX_BYTES / (1024 * 1024) + 1;
  const out = await bash([
    "stat -f -c '%b %S' /tmp /dev/shm",
    `head -c ${over}M /dev/zero > /dev/shm/fill 2>/dev/null || echo SHM-FULL`,
    'rm -f /dev/shm/fill',
    '(: > /dev/planted) 2>/dev/null && echo DEV-WRITTEN',
    'echo ok > /tmp/t && cat /tmp/t && echo ok > /dev/shm/t && cat /dev/shm/t && echo x > /dev/null && echo devices-ok',
  ].join('\n'));
  const [tmp, shm] = out.split('\n');
  assert.is(capacity(tmp), BASH_TMP_MAX_BYTES, out);
  assert.is(capacity(shm), BASH_SHM_MAX_BYTES, out);
  assert.ok(out.includes('SHM-FULL'), out);
  assert.not.ok(out.includes('DEV-WRITTEN'), out);
  assert.ok(out.includes('ok\nok\ndevices-ok'), out);
});

test.run();
