// Threat-model rule: a `bash` command gets no descriptor of the server's but its own stdio. A descriptor
// the server inherited from whatever started it (an MCP host, a supervisor, a shell that leaks one) and
// that is not close-on-exec would otherwise pass through bwrap into the sandbox: a file opened for writing
// outside the workspace becomes a write past the read-only root, a socket a way past the network policy.
// Caller classes: every caller that may run `bash`, and workspace content a command runs.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { closeSync, openSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bashIsolation } from '../../src/tools/bash-isolation.ts';
import { bashCall, groupGone, initialize, initialized, startStdio } from '../cli/stdio-process.ts';

/** The number the server gets the leaked descriptor at: past the ones Node itself marks close-on-exec at start. */
const LEAKED_FD = 40;

test('a descriptor the server inherited is not reachable from a sandboxed command', async () => {
  if ((await bashIsolation()).kind !== 'bubblewrap') {
    console.log('  (no bubblewrap sandbox here: inherited-descriptor rule not checked)');
    return;
  }
  // Outside /tmp: the sandbox's /tmp is a private one, which would stop a path there for the wrong reason.
  const base = await realpath(await mkdtemp('/var/tmp/superpi-fds-'));
  const ws = path.join(base, 'ws');
  await mkdir(ws);
  const outside = path.join(base, 'outside.log');
  await writeFile(outside, '');
  const fd = openSync(outside, 'a');
  const inherited: ('ignore' | number)[] = Array.from({ length: LEAKED_FD - 3 }, () => 'ignore' as const);
  const server = startStdio(process.execPath, ['--import', 'tsx', 'examples/stdio.ts', '--workspace', ws], process.env, [...inherited, fd]);
  closeSync(fd);
  try {
    server.send(initialize);
    await server.reply(1);
    server.send(initialized);
    // Straight at the number, and through /proc at every process of the sandbox that might hold it.
    server.send(bashCall(2, `echo LEAKED >&${LEAKED_FD}; for f in /proc/[0-9]*/fd/${LEAKED_FD}; do echo LEAKED-PROC >> "$f"; done; for f in /proc/[0-9]*/fd/*; do readlink "$f"; done`));
    const reply = await server.reply(2, 60_000);
    const text = JSON.stringify(reply);
    assert.ok(text.includes('"content"'), text);
    assert.is(await readFile(outside, 'utf8'), '', `the command wrote outside the workspace through the inherited descriptor; reply: ${text}`);
    // Open at all (the number may be taken, by /dev/null say), but not the file: no process of the sandbox holds it.
    assert.not.ok(text.includes(outside), `a process in the sandbox holds ${outside}: ${text}`);
  } finally {
    server.child.stdin.end();
    await Promise.race([server.exited, new Promise((r) => setTimeout(r, 10_000))]);
    server.cleanup();
    await groupGone(server.group, 10_000);
    await rm(base, { recursive: true, force: true });
  }
});

test.run();
