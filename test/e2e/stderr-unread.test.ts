// A stdio server whose host never reads its stderr still answers every request, and does not keep its
// unread log without end. On Linux, Node writes a stderr pipe asynchronously: a host that never reads it
// had every record kept in the server's memory (20 MB of records took 20 MB), so a chatty log (debug
// level, a client sending what is logged) grew the process without bound. Here a real server process at
// debug level, its stderr a pipe nobody reads, is sent about 13 MB of logged lines (stray responses, each
// logged with its 1 KB id) with pings among them: every ping is answered; once the test reads stderr, at
// most LOG_QUEUE_MAX_BYTES and what the kernel's buffers held came before one line saying how many records
// were dropped, and the log goes on after it.

import { spawn } from 'node:child_process';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeSandbox, repoRoot, type Sandbox } from './fixtures.ts';
import { guarded, pollUntil } from '../hang-guard.ts';
import { LOG_QUEUE_MAX_BYTES } from '../../src/limits.ts';

const RECORDS = 40_000;
const PING_EVERY = 400;
const PAD = 'x'.repeat(240);
const DROPPED = /super-pi warning: (\d+) log records? (?:was|were) dropped/;
/** More than any kernel's socket-pair buffers hold (a few hundred KiB on Linux); far less than the flood. */
const KERNEL_SLACK = 4 * 1024 * 1024;

const e2e = suite('a host that never reads stderr');
let box: Sandbox;

e2e.before(async () => {
  box = await makeSandbox();
});
e2e.after(async () => {
  await box?.cleanup();
});

/**
 * The two ways a never-read stderr went wrong. Through tsx, esbuild's service (a child given our stderr)
 * leaves the pipe in blocking mode: the first log write past the pipe's buffer blocked the server for good.
 * The bundle (`super-pi` as installed) leaves it non-blocking: every record waited in memory.
 */
const ENTRIES = [
  ['source through tsx (stderr left blocking)', ['--import', 'tsx', path.join(repoRoot, 'examples/stdio.ts')]],
  ['the bundle, bin/super-pi.js (stderr non-blocking)', [path.join(repoRoot, 'bin/super-pi.js'), '--stdio']],
] as const;

for (const [entry, start] of ENTRIES) e2e(`${entry}: every request is answered, and the unread log is bounded, then says how much it dropped`, async () => {
  const child = spawn(process.execPath, [...start, '--workspace', box.ws, '--log-level', 'debug'], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
  try {
    child.stderr.pause();
    const answered = new Set<string>();
    let pending = '';
    child.stdout.on('data', (d: Buffer) => {
      pending += d.toString();
      for (let i = pending.indexOf('\n'); i >= 0; i = pending.indexOf('\n')) {
        const m = JSON.parse(pending.slice(0, i)) as { id?: unknown };
        pending = pending.slice(i + 1);
        if (m.id !== undefined) answered.add(String(m.id));
      }
    });
    const send = async (m: unknown) => {
      if (!child.stdin.write(`${JSON.stringify(m)}\n`)) await new Promise((r) => child.stdin.once('drain', r));
    };
    await send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'stderr-unread', version: '1' } } });
    await pollUntil('the initialize answer', () => (answered.has('init') ? true : null), 30_000, 10);
    await send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    const pings: string[] = [];
    // A server blocked on its log stops reading stdin too: the sending is guarded as well.
    await guarded((async () => {
      for (let i = 0; i < RECORDS; i++) {
        // A response to no request the server asked: logged at debug level with its id, answered with nothing.
        await send({ jsonrpc: '2.0', id: `${PAD}${i}`, result: {} });
        if (i % PING_EVERY === 0) {
          pings.push(`ping-${i}`);
          await send({ jsonrpc: '2.0', id: `ping-${i}`, method: 'ping' });
        }
      }
    })(), 'sending the flood (the server reads its input)', 60_000);
    await pollUntil('every ping answered while stderr is not read', () => (pings.every((p) => answered.has(p)) ? true : null), 60_000, 20);

    // Now the host reads stderr: what waited, then the line saying what was dropped, then the log goes on.
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stderr.resume();
    const notice = await pollUntil('the line saying records were dropped', () => DROPPED.exec(err), 30_000, 20).catch(() => null);
    assert.ok(notice, `a line says records were dropped (read ${err.length} characters of stderr, none saying so)`);
    assert.ok(Number(notice[1]) > 0);
    assert.ok(notice.index < LOG_QUEUE_MAX_BYTES + KERNEL_SLACK, `${notice.index} characters came before the notice; at most ${LOG_QUEUE_MAX_BYTES} were to wait in the process`);
    await send({ jsonrpc: '2.0', id: 'marker-after-the-notice', result: {} });
    await pollUntil('a record logged after the notice', () => (err.includes('marker-after-the-notice') ? true : null), 30_000, 20);
    // What was written is whole lines: nothing was cut in the middle of a record.
    for (const line of err.trimEnd().split('\n')) assert.match(line, /^\d{4}-\d\d-\d\dT[\d:.]+Z super-pi \w+: /, line.slice(0, 120));
  } finally {
    child.kill('SIGKILL');
  }
});

e2e.run();
