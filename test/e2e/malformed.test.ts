// End to end over raw stdio: malformed input gets the right JSON-RPC error, the server keeps serving,
// and stdout carries nothing but protocol messages.

import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { allGone, atLeast, killLeftovers, uniqueSleep } from '../tools/processes.ts';
import { makeSandbox, repoRoot, type Sandbox, stdioEntry } from './fixtures.ts';

interface RawServer {
  child: ChildProcessWithoutNullStreams;
  /** Every stdout line so far, raw. */
  lines: string[];
  stderr: () => string;
  /** Waits for the next stdout message whose id is `id` (or, with id undefined, the next message). */
  next(match: (msg: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  send(data: string | Buffer): void;
}

function startRaw(ws: string, args: string[] = []): RawServer {
  const child = spawn(process.execPath, ['--import', 'tsx', stdioEntry, '--workspace', ws, ...args], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let stderr = '';
  let buf = '';
  const waiters: { match: (m: Record<string, unknown>) => boolean; resolve: (m: Record<string, unknown>) => void; from: number }[] = [];
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) !== -1) {
      lines.push(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
    for (const w of [...waiters]) {
      for (let i = w.from; i < lines.length; i++) {
        const msg = JSON.parse(lines[i] as string) as Record<string, unknown>;
        if (w.match(msg)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(msg);
          break;
        }
      }
    }
  });
  return {
    child,
    lines,
    stderr: () => stderr,
    send: (data) => child.stdin.write(data),
    next(match, timeoutMs = 10_000) {
      for (const l of lines) {
        const msg = JSON.parse(l) as Record<string, unknown>;
        if (match(msg)) return Promise.resolve(msg);
      }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching message within ${timeoutMs} ms; stderr: ${stderr}`)), timeoutMs);
        waiters.push({ match, from: 0, resolve: (m) => { clearTimeout(timer); resolve(m); } });
      });
    },
  };
}

const byId = (id: unknown) => (m: Record<string, unknown>) => m.id === id && m.method === undefined;
const errorCode = (m: Record<string, unknown>) => (m.error as { code: number }).code;

const raw = suite('malformed input over stdio');
let box: Sandbox;
let s: RawServer;

raw.before(async () => {
  box = await makeSandbox();
  s = startRaw(box.ws, ['--max-message-bytes', String(1024 * 1024)]);
  s.send(`${JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })}\n`);
  await s.next(byId('init'));
  s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
});

raw.after(async () => {
  s.child.stdin.end();
  await new Promise((r) => s.child.once('exit', r));
  await box.cleanup();
});

raw('broken JSON gets -32700 with id null', async () => {
  s.send('{"jsonrpc": "2.0", "id": 1, "method": \n');
  const m = await s.next((x) => x.id === null && errorCode(x) === -32700);
  assert.match((m.error as { message: string }).message, /Parse error/);
});

raw('wrong types get -32600 or -32602; wrong tool arguments an isError result (SEP-1303)', async () => {
  s.send(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 42 })}\n`);
  s.send(`${JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'read', arguments: { path: ['a'] } } })}\n`);
  s.send(`${JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 7 } })}\n`);
  assert.is(errorCode(await s.next(byId(2))), -32600);
  const badArguments = await s.next(byId(3));
  assert.is((badArguments.result as { isError?: boolean } | undefined)?.isError, true, JSON.stringify(badArguments));
  assert.is(errorCode(await s.next(byId(4))), -32602);
});

raw('a 10 MB line gets -32600 naming the limit, and the next line is served', async () => {
  const huge = `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"pad":"${'x'.repeat(10 * 1024 * 1024)}"}}\n`;
  s.send(huge);
  s.send(`${JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'ping' })}\n`);
  const err = await s.next((x) => x.id === null && errorCode(x) === -32600);
  assert.match((err.error as { message: string }).message, /exceeds the limit of 1048576 bytes/);
  assert.equal((await s.next(byId(6))).result, {});
});

raw('invalid UTF-8 gets -32700, and the server keeps serving', async () => {
  s.send(Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":7,"method":"ping","x":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}\n')]));
  s.send(`${JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'ping' })}\n`);
  await s.next((x) => x.id === null && errorCode(x) === -32700 && /UTF-8/.test((x.error as { message: string }).message));
  assert.equal((await s.next(byId(8))).result, {});
});

raw('a batch array is -32600 in 2025-06-18', async () => {
  s.send(`[${JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping' })}]\n`);
  const m = await s.next((x) => x.id === null && errorCode(x) === -32600 && /batch/.test((x.error as { message: string }).message));
  assert.ok(m);
});

raw('stdout carried only JSON-RPC messages', async () => {
  s.send(`${JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'bash', arguments: { command: 'echo to-stdout; echo to-stderr >&2' } } })}\n`);
  await s.next(byId(10));
  assert.ok(s.lines.length >= 10);
  for (const line of s.lines) {
    const msg = JSON.parse(line) as { jsonrpc?: string };
    assert.is(msg.jsonrpc, '2.0', `not a protocol message: ${line.slice(0, 200)}`);
  }
  assert.match(s.stderr(), /serving MCP over stdio/);
});

raw.run();

const lifetime = suite('process lifetime');

lifetime('exits when the host closes stdin, killing a running command', async () => {
  const box2 = await makeSandbox();
  const srv = startRaw(box2.ws);
  srv.send(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })}\n`);
  await srv.next(byId(1));
  // Found by a unique marker: the PIDs a command sees are its PID namespace's, not ours.
  const marker = uniqueSleep();
  srv.send(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'bash', arguments: { command: `sleep ${marker} & wait` } } })}\n`);
  await atLeast(marker, 1);
  const exited = new Promise<number | null>((r) => srv.child.once('exit', (code) => r(code)));
  srv.child.stdin.end();
  const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 8000))]);
  if (code === 'timeout') srv.child.kill('SIGKILL');
  assert.is(code, 0, `server did not exit cleanly; stderr: ${srv.stderr()}`);
  assert.ok(await allGone(marker, 3000), 'the command started by bash was killed');
  killLeftovers(marker);
  await box2.cleanup();
});

lifetime('refuses a workspace that does not exist, with a clear message and exit code 2', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', stdioEntry, '--workspace', '/nonexistent/superpi'], { cwd: repoRoot });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise((r) => child.once('exit', r));
  assert.is(code, 2);
  assert.match(err, /workspace .* does not exist/);
});

lifetime.run();
