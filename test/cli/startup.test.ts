// The command line as a new user meets it: every start-up mistake is one line naming the flag, exit code
// 2, no stack; --help names every environment variable the code reads; the banner says where the observer
// and metrics are and who may do what; each example prints its own usage; `npm start` ends when signalled.

import { type ChildProcessByStdio, spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { usageFor } from '../../src/cli/options.ts';
import { repoRoot } from './stdio-process.ts';

const ws = mkdtempSync(path.join(os.tmpdir(), 'superpi-startup-'));
const home = mkdtempSync(path.join(os.tmpdir(), 'superpi-startup-home-'));
const env = { ...process.env, SUPERPI_HOME: home };
const BANNER_WITHIN_MS = 60_000;

function run(entry: 'server' | 'stdio', args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', `examples/${entry}.ts`, '--workspace', ws, ...args], { cwd: repoRoot, env, encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'pipe'] });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Exit code 2 and exactly one line on stderr, starting `super-pi:`, that matches `names`. */
function oneLineMistake(r: { status: number | null; stdout: string; stderr: string }, names: RegExp): void {
  assert.is(r.status, 2, r.stderr);
  const lines = r.stderr.trimEnd().split('\n');
  assert.is(lines.length, 1, `one line, got:\n${r.stderr}`);
  assert.match(lines[0] as string, /^super-pi: /);
  assert.match(lines[0] as string, names);
  assert.not.match(r.stderr, /\n\s+at /, 'no stack trace');
}

interface Started {
  readonly child: ChildProcessByStdio<null, Readable, Readable>;
  readonly banner: string;
  readonly port: number;
  /** SIGKILLs whatever is left of its process group. */
  cleanup(): void;
}

/** Starts `command` in a process group of its own and waits for the HTTP banner on its stdout. */
async function startHttp(command: string, args: readonly string[]): Promise<Started> {
  const child = spawn(command, [...args], { cwd: repoRoot, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const cleanup = (): void => {
    try {
      process.kill(-(child.pid as number), 'SIGKILL');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
    }
  };
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner within ${BANNER_WITHIN_MS} ms; stderr:\n${err}`)), BANNER_WITHIN_MS);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /Streamable HTTP\s+http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(out);
      if (m && out.includes('Host configuration:')) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`exited ${code} before its banner; stderr:\n${err}`)); });
  }).catch((e: unknown) => { cleanup(); throw e; });
  return { child, banner: out, port, cleanup };
}

/** True once `port` on 127.0.0.1 can be listened on again, polled until `withinMs`. */
async function portFreed(port: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    const free = await new Promise<boolean>((resolve) => {
      const probe = createServer();
      probe.once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (free) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

/** Every `SUPERPI_*` name in src/: what the code reads (a variable added without a --help line fails here). */
function envNamesInSource(): string[] {
  const names = new Set<string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts')) for (const m of readFileSync(full, 'utf8').matchAll(/\bSUPERPI_[A-Z0-9_]*[A-Z0-9]\b/g)) names.add(m[0]);
    }
  };
  walk(path.join(repoRoot, 'src'));
  return [...names].sort();
}

test('a second server on a taken port: exit code 2, one line naming --port and that another super-pi may hold it; the banner says where /observer and /metrics are and who may do what', async () => {
  const first = await startHttp(process.execPath, ['--import', 'tsx', 'examples/server.ts', '--workspace', ws, '--port', '0']);
  try {
    const r = run('server', ['--port', String(first.port)]);
    oneLineMistake(r, new RegExp(`--port ${first.port}: .*already in use.*another super-pi`));
    const base = `http://127.0.0.1:${first.port}`;
    assert.match(first.banner, `Observer         ${base}/observer`);
    assert.match(first.banner, `Metrics          ${base}/metrics`);
    assert.match(first.banner, 'Tokens: none configured.');
    assert.match(first.banner, 'Anonymous callers: read-only tools (--allow-anonymous-writes for write, edit, bash); no harness tasks (--allow-anonymous-tasks).');
    assert.match(first.banner, 'Add a token: a line "TOKEN PRINCIPAL" in a file given with --tokens FILE, or SUPERPI_TOKENS="TOKEN=PRINCIPAL"');
  } finally {
    first.cleanup();
  }
});

test('--host that does not resolve: exit code 2, one line naming --host', () => {
  oneLineMistake(run('server', ['--host', 'nonexistent.invalid', '--port', '0']), /^super-pi: --host nonexistent\.invalid: the name does not resolve/);
});

/** Runs as `nobody` (65534) where this process is root: a port below 1024 is then refused as for any user. */
const NOBODY = ['setpriv', '--reuid', '65534', '--regid', '65534', '--clear-groups'];

/** Why a port below 1024 cannot be refused here, or null when it can: root needs setpriv, and nobody must reach the checkout. */
function unprivilegedProblem(): string | null {
  if (process.getuid?.() !== 0) return null;
  const probe = spawnSync(NOBODY[0] as string, [...NOBODY.slice(1), process.execPath, '-e', `require('fs').accessSync(${JSON.stringify(path.join(repoRoot, 'node_modules', 'tsx', 'package.json'))})`], { stdio: 'ignore' });
  return probe.status === 0 ? null : 'running as root, and `setpriv` is missing or user nobody cannot read the checkout and its node_modules';
}

test('a port it may not bind (EACCES, port 1 as a user other than root): exit code 2, one line naming --port', () => {
  const problem = unprivilegedProblem();
  if (problem !== null) {
    console.log(`  (skipped the process-level case: ${problem}; test/cli/startup-messages.test.ts covers the line)`);
    return;
  }
  // nobody's own home and workspace: the store and the code cache are not written where it may not write.
  const own = mkdtempSync(path.join(os.tmpdir(), 'superpi-startup-nobody-'));
  chmodSync(own, 0o777);
  try {
    const as = process.getuid?.() === 0 ? NOBODY : [];
    const argv = [...as, process.execPath, '--import', 'tsx', 'examples/server.ts', '--workspace', ws, '--port', '1'];
    const r = spawnSync(argv[0] as string, argv.slice(1), { cwd: repoRoot, env: { ...env, SUPERPI_HOME: own, HOME: own }, encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'pipe'] });
    oneLineMistake({ status: r.status, stdout: r.stdout, stderr: r.stderr }, /^super-pi: --port 1: permission denied to listen on 127\.0\.0\.1:1 .*give a --port of 1024 or more/);
  } finally {
    rmSync(own, { recursive: true, force: true });
  }
});

test('--stdio with --port (and with --tokens), from either entry: exit code 2, one line naming the flag', () => {
  oneLineMistake(run('server', ['--stdio', '--port', '1']), /--port is for the HTTP server and means nothing with --stdio.*drop --port/);
  oneLineMistake(run('stdio', ['--port', '1']), /--port is for the HTTP server/);
  oneLineMistake(run('stdio', ['--tokens', 'tokens.txt']), /--tokens is for the HTTP server/);
});

test('a missing --tokens file: exit code 2, one line naming --tokens and the file', () => {
  const missing = path.join(ws, 'no-such-tokens.txt');
  oneLineMistake(run('server', ['--port', '0', '--tokens', missing]), new RegExp(`^super-pi: --tokens ${missing.replace(/[.\\/]/g, '\\$&')}: cannot be read \\(ENOENT\\)`));
});

test('--help lists every environment variable the code in src/ reads, each with a meaning', () => {
  const r = run('server', ['--help']);
  assert.is(r.status, 0, r.stderr);
  const names = envNamesInSource();
  assert.ok(names.includes('SUPERPI_MODEL_URL') && names.includes('SUPERPI_HOME'), `the scan finds the variables: ${names.join(', ')}`);
  const section = r.stdout.slice(r.stdout.indexOf('\nEnvironment'));
  for (const name of names) assert.match(section, new RegExp(`\\n  ${name} +\\S`), `--help's Environment section explains ${name}`);
});

test('examples/stdio.ts --help prints the stdio usage, not the HTTP one', () => {
  const r = run('stdio', ['--help']);
  assert.is(r.status, 0, r.stderr);
  const first = r.stdout.split('\n')[0] as string;
  assert.match(first, /^Usage: super-pi --stdio .*examples\/stdio\.ts: serves one MCP session over stdio/);
  assert.not.match(first, /Streamable HTTP/);
  const http = run('server', ['--help']);
  assert.match(http.stdout.split('\n')[0] as string, /^Usage: super-pi \[options\] .*Streamable HTTP and WebSocket/);
});

test('every example entry (examples/*.ts) answers --help with its own usage, on stdout, exit code 0', () => {
  const entries = readdirSync(path.join(repoRoot, 'examples')).filter((f) => f.endsWith('.ts')).sort();
  assert.ok(entries.includes('server.ts') && entries.includes('stdio.ts'), entries.join(', '));
  for (const entry of entries) {
    const transport = /\bmain\(process\.argv\.slice\(2\), '(stdio|http)'\)/.exec(readFileSync(path.join(repoRoot, 'examples', entry), 'utf8'))?.[1];
    assert.ok(transport === 'stdio' || transport === 'http', `${entry} runs the command line's main() for stdio or http`);
    const r = spawnSync(process.execPath, ['--import', 'tsx', `examples/${entry}`, '--help'], { cwd: repoRoot, env, encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'pipe'] });
    assert.is(r.status, 0, `${entry}: ${r.stderr}`);
    assert.is(r.stderr, '', entry);
    assert.is(r.stdout, `${usageFor(transport)}\n`, `${entry} prints the ${transport} usage`);
  }
});

test('SIGTERM to `npm start` (npm, a shell, tsx above the server) ends the HTTP server and frees its port', async () => {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const server = await startHttp(npm, ['start', '--silent', '--', '--workspace', ws, '--port', '0']);
  try {
    process.kill(server.child.pid as number, 'SIGTERM');
    assert.ok(await portFreed(server.port, 15_000), `port ${server.port} still held after SIGTERM to npm start`);
  } finally {
    server.cleanup();
  }
});

test.after(() => {
  rmSync(ws, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

test.run();
