// The reviewer's scenario for the node's output budget (MAX_NODE_OUTPUT_BACKLOG_BYTES): one client opens
// N WebSocket sessions, each sends M `tools/call read` of a 300 KB file and then reads nothing. Prints the
// server's RSS (VmRSS, sampled every 100 ms) before, at its peak, and at the end, and the warnings the
// server logged. A measurement, not a test: nothing is asserted.
// Usage: npm run build && npx tsx bench/unread-output.ts [--sessions 12] [--calls 20000] [--seconds 35] [--read] [--root DIR] [-- server flags...]

import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { WebSocket } from 'ws';
import { makeSandbox, startHttpServerProcess } from '../test/e2e/fixtures.ts';

const { values: opts, positionals } = parseArgs({
  options: { sessions: { type: 'string', default: '12' }, calls: { type: 'string', default: '20000' }, seconds: { type: 'string', default: '35' }, read: { type: 'boolean', default: false }, root: { type: 'string' } },
  allowPositionals: true,
});
const sessions = Number(opts.sessions);
const calls = Number(opts.calls);
const seconds = Number(opts.seconds);

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const line = (i: number) => `line ${String(i).padStart(5, '0')} ${'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL'}`;

const box = await makeSandbox();
await writeFile(path.join(box.ws, 'big.txt'), Array.from({ length: 6000 }, (_, i) => line(i)).join('\n') + '\n');
// --root DIR: another built checkout's server (the tree before a change), this one's by default.
const server = await startHttpServerProcess(box.ws, positionals, {}, 'bundle', ...(opts.root === undefined ? [] : [path.resolve(opts.root)]));
const pid = server.child.pid as number;
const sockets: WebSocket[] = [];
try {
  const before = rssMb(pid);
  let closed = 0;
  await Promise.all(Array.from({ length: sessions }, async () => {
    const ws = new WebSocket(server.wsUrl, 'mcp');
    sockets.push(ws);
    ws.on('error', () => {});
    ws.once('close', () => closed++);
    await new Promise<void>((resolve, reject) => ws.once('open', () => resolve()).once('error', reject));
    const initialized = new Promise<void>((resolve) => ws.once('message', () => resolve()));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'unread', version: '1' } } }));
    await initialized;
    ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    // From here the client reads nothing: its socket is paused, so the server's replies pile up.
    // (--read: a control run, the same calls from clients that do read their answers.)
    if (!opts.read) (ws as unknown as { _socket: { pause(): void } })._socket.pause();
    for (let i = 0; i < calls; i++) ws.send(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'read', arguments: { path: 'big.txt' } } }));
  }));
  let peak = before;
  let peakAt = 0;
  const started = Date.now();
  const samples: string[] = [];
  while (Date.now() - started < seconds * 1000) {
    await new Promise((r) => setTimeout(r, 100));
    const now = rssMb(pid);
    if (now > peak) {
      peak = now;
      peakAt = Date.now() - started;
    }
    if ((Date.now() - started) % 5000 < 100) samples.push(`${((Date.now() - started) / 1000).toFixed(1)} s: ${now.toFixed(0)} MB`);
  }
  const warnings = server.stderr().split('\n').filter((l) => / (warning|error):/.test(l) && !l.includes('bash'));
  console.log(`server flags: ${positionals.join(' ') || '(defaults)'}; ${sessions} sessions × ${calls} reads of a 300 KB file, ${opts.read ? 'read' : 'not read'}`);
  console.log(`RSS before: ${before.toFixed(0)} MB; peak: ${peak.toFixed(0)} MB at ${(peakAt / 1000).toFixed(1)} s; at ${seconds} s: ${rssMb(pid).toFixed(0)} MB`);
  console.log(`samples: ${samples.join(', ')}`);
  console.log(`client sockets closed by the server: ${closed} of ${sessions}`);
  console.log(`warnings logged: ${warnings.length}`);
  for (const w of warnings.slice(0, 20)) console.log(`  ${w.slice(0, 300)}`);
} finally {
  for (const ws of sockets) ws.terminate();
  await server.stop();
  await box.cleanup();
}
