// The `super-pi` executable: runs (from the bundle when fresh), serves stdio with --stdio, prints help.

import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Module from 'node:module';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { bundleHash, codeCacheFileName } from '../../src/cli/code-cache.ts';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.join(repo, 'bin/super-pi.js');
const stdioExample = path.join(repo, 'examples/stdio.ts');

test('super-pi --stdio answers a request and exits when stdin closes', () => {
  const r = spawnSync(process.execPath, [bin, '--stdio', '--workspace', os.tmpdir()], {
    input: '{"jsonrpc":"2.0","id":1,"method":"ping"}\n', encoding: 'utf8', timeout: 30_000,
  });
  assert.is(r.status, 0, r.stderr);
  assert.is(r.stdout, '{"jsonrpc":"2.0","id":1,"result":{}}\n');
  assert.match(r.stderr, /bash isolation: (bubblewrap sandbox|no sandbox)/);
});

test('super-pi --help documents every flag on stdout, exit code 0, nothing on stderr', () => {
  const r = spawnSync(process.execPath, [bin, '--help'], { encoding: 'utf8', timeout: 30_000 });
  assert.is(r.status, 0);
  assert.is(r.stderr, '');
  assert.ok(r.stdout.startsWith('Usage: super-pi'), r.stdout);
  for (const flag of ['--workspace', '--harness', '--stdio', '--host', '--port', '--tokens', '--require-auth', '--allow-anonymous-writes', '--chaos', '--threads']) {
    assert.ok(r.stdout.includes(flag), `--help mentions ${flag}`);
  }
});

test('super-pi --version prints the version on stdout, exit code 0, nothing on stderr', () => {
  const r = spawnSync(process.execPath, [bin, '--version'], { encoding: 'utf8', timeout: 30_000 });
  assert.is(r.status, 0);
  assert.is(r.stderr, '');
  assert.match(r.stdout, /^super-pi \d+\.\d+\.\d+\n$/);
});

test('--help and --version in stdio mode (examples/stdio.ts) also print to stdout', () => {
  for (const flag of ['--help', '--version']) {
    const r = spawnSync(process.execPath, ['--import', 'tsx', stdioExample, flag], { encoding: 'utf8', timeout: 30_000, cwd: repo });
    assert.is(r.status, 0, r.stderr);
    assert.is(r.stderr, '', flag);
    assert.ok(r.stdout.startsWith(flag === '--help' ? 'Usage: super-pi' : 'super-pi '), r.stdout);
  }
});

test('an unknown flag is exit code 2 with the error and the usage on stderr, nothing on stdout', () => {
  const r = spawnSync(process.execPath, [bin, '--frobnicate'], { encoding: 'utf8', timeout: 30_000 });
  assert.is(r.status, 2);
  assert.is(r.stdout, '');
  assert.match(r.stderr, /Unknown option '--frobnicate'/);
  assert.match(r.stderr, /Usage: super-pi/);
});

test('a bad flag value is exit code 2 with the error on stderr, nothing on stdout', () => {
  const r = spawnSync(process.execPath, [bin, '--port', 'seventy'], { encoding: 'utf8', timeout: 30_000 });
  assert.is(r.status, 2);
  assert.is(r.stdout, '');
  assert.match(r.stderr, /^super-pi: --port takes 0-65535, not "seventy"/);
});

/** `super-pi --stdio` with SUPERPI_HOME set, answering one ping; debug log (what it did with the code cache) on stderr. */
function pingWithHome(home: string): { stdout: string; stderr: string; status: number | null } {
  return spawnSync(process.execPath, [bin, '--stdio', '--workspace', os.tmpdir(), '--log-level', 'debug'], {
    input: '{"jsonrpc":"2.0","id":1,"method":"ping"}\n', encoding: 'utf8', timeout: 30_000, env: { ...process.env, SUPERPI_HOME: home },
  });
}

test('with SUPERPI_HOME read-only (or impossible to create) the server still answers; it just has no code cache', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'superpi-bin-home-'));
  try {
    const readOnly = path.join(dir, 'read-only');
    mkdirSync(readOnly, { mode: 0o555 });
    chmodSync(readOnly, 0o555);
    writeFileSync(path.join(dir, 'file'), '');
    for (const home of [readOnly, path.join(dir, 'file', 'home')]) {
      const r = pingWithHome(home);
      assert.is(r.status, 0, r.stderr);
      assert.is(r.stdout, '{"jsonrpc":"2.0","id":1,"result":{}}\n', home);
      assert.match(r.stderr, /compiled without the code cache/, 'the bin ran the bundle (dist/ older than src/? node scripts/build.mjs)');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a garbage code cache: the server still answers, and replaces it with one the next start compiles from', () => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'superpi-bin-home-'));
  try {
    const name = codeCacheFileName(bundleHash(readFileSync(path.join(repo, 'dist/super-pi.cjs'), 'utf8')));
    mkdirSync(path.join(home, 'cache'), { mode: 0o700 });
    chmodSync(path.join(home, 'cache'), 0o700);
    writeFileSync(path.join(home, 'cache', name), 'garbage', { mode: 0o600 });
    const first = pingWithHome(home);
    assert.is(first.stdout, '{"jsonrpc":"2.0","id":1,"result":{}}\n', first.stderr);
    assert.match(first.stderr, /code cache/, 'the bin ran the bundle (dist/ older than src/? node scripts/build.mjs)');
    assert.match(first.stderr, /compiled without the code cache \{"why":"the cache file has no super-pi header/);
    assert.match(first.stderr, /code cache written/);
    // Node ≥ 22.1 also keeps its own compile cache of the thread bundles there, in `node/` (code-cache.ts).
    const nodeKeepsItsOwn = typeof (Module as { enableCompileCache?: unknown }).enableCompileCache === 'function';
    assert.equal(readdirSync(path.join(home, 'cache')).sort(), nodeKeepsItsOwn ? [name, 'node'].sort() : [name]);
    assert.is.not(readFileSync(path.join(home, 'cache', name), 'utf8'), 'garbage');
    const second = pingWithHome(home);
    assert.is(second.stdout, '{"jsonrpc":"2.0","id":1,"result":{}}\n', second.stderr);
    assert.match(second.stderr, /compiled from the code cache/);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test('without SUPERPI_HOME the code cache is in ~/.super-pi/cache (a fake HOME here: a test never writes the user\'s own)', () => {
  const fakeHome = mkdtempSync(path.join(os.tmpdir(), 'superpi-bin-fake-home-'));
  try {
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: fakeHome };
    delete env.SUPERPI_HOME;
    const r = spawnSync(process.execPath, [bin, '--stdio', '--workspace', os.tmpdir(), '--log-level', 'debug'], {
      input: '{"jsonrpc":"2.0","id":1,"method":"ping"}\n', encoding: 'utf8', timeout: 30_000, env,
    });
    assert.is(r.stdout, '{"jsonrpc":"2.0","id":1,"result":{}}\n', r.stderr);
    assert.match(r.stderr, /code cache written/, 'the bin ran the bundle (dist/ older than src/? node scripts/build.mjs)');
    const name = codeCacheFileName(bundleHash(readFileSync(path.join(repo, 'dist/super-pi.cjs'), 'utf8')));
    assert.ok(readdirSync(path.join(fakeHome, '.super-pi', 'cache')).includes(name), `${name} in ${fakeHome}/.super-pi/cache`);
  } finally {
    rmSync(fakeHome, { recursive: true, force: true });
  }
});

/**
 * Every code path the command loads on first use (the tool pool's piscina for grep and find, the bash
 * launcher's child_process) works when the bundle is compiled from the code cache, not only from its text:
 * a dynamic import() of a package in the cached script once failed every pooled call with
 * ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING, while ping and read (no lazy load) kept passing.
 */
test('with and without the code cache, the command runs grep, find (the tool pool), bash and read, and the git status thread', () => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'superpi-bin-home-'));
  const ws = mkdtempSync(path.join(os.tmpdir(), 'superpi-bin-ws-'));
  try {
    mkdirSync(path.join(ws, 'src'));
    writeFileSync(path.join(ws, 'src', 'needle.txt'), 'a haystack line\nthe NEEDLE-42 line\n');
    // A repository, so the workspace resource starts its git-status thread (dist/git-status-worker.js) from the bundle.
    const git = (...args: string[]) => spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd: ws, env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } });
    git('init', '-q');
    git('add', '.');
    git('commit', '-q', '-m', 'init');
    writeFileSync(path.join(ws, 'src', 'new.txt'), 'untracked\n');
    const calls = [
      { name: 'grep', arguments: { pattern: 'NEEDLE-42' } },
      { name: 'find', arguments: { pattern: '*.txt' } },
      { name: 'bash', arguments: { command: 'echo bash-ran' } },
      { name: 'read', arguments: { path: 'src/needle.txt' } },
    ];
    const input = [
      { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bin-test', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      ...calls.map((params, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params })),
      { jsonrpc: '2.0', id: calls.length + 1, method: 'resources/read', params: { uri: 'superpi://workspace' } },
    ].map((m) => JSON.stringify(m)).join('\n') + '\n';
    for (const run of ['compiled without the code cache', 'compiled from the code cache']) {
      const r = spawnSync(process.execPath, [bin, '--stdio', '--workspace', ws, '--log-level', 'debug'], {
        input, encoding: 'utf8', timeout: 60_000, env: { ...process.env, SUPERPI_HOME: home },
      });
      assert.match(r.stderr, new RegExp(run), `this start was ${run}`);
      const replies = new Map(r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: number; result?: { isError?: boolean; content: { text: string }[]; contents?: { text: string }[] } }).map((m) => [m.id, m]));
      assert.is(replies.size, calls.length + 2, `every request answered (${run}): ${r.stdout} ${r.stderr}`);
      assert.match(replies.get(calls.length + 1)?.result?.contents?.[0]?.text ?? '', /Git status:\n```\n\?\? src\/new\.txt\n```/, `the git status (${run})`);
      const text = (id: number) => {
        const reply = replies.get(id);
        assert.is(reply?.result?.isError, undefined, `${calls[id - 1]?.name} succeeded (${run}): ${JSON.stringify(reply)}`);
        return reply?.result?.content.map((c) => c.text).join('\n') ?? '';
      };
      assert.match(text(1), /needle\.txt.*NEEDLE-42/s);
      assert.match(text(2), /src\/needle\.txt/);
      assert.match(text(3), /bash-ran/);
      assert.match(text(4), /the NEEDLE-42 line/);
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
    rmSync(ws, { recursive: true, force: true });
  }
});

test('the command reads images with sharp, kept outside the bundle: inline-sized and pooled (over 1 MiB), with and without the code cache', async () => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'superpi-bin-home-'));
  const ws = mkdtempSync(path.join(os.tmpdir(), 'superpi-bin-ws-'));
  try {
    const { default: sharp } = await import('sharp');
    writeFileSync(path.join(ws, 'small.png'), await sharp({ create: { width: 300, height: 200, channels: 3, background: '#123456' } }).png().toBuffer());
    const noise = await sharp(randomBytes(1000 * 700 * 3), { raw: { width: 1000, height: 700, channels: 3 } }).png({ compressionLevel: 1 }).toBuffer();
    assert.ok(noise.length > 1024 * 1024, 'large enough to run on the tool pool');
    writeFileSync(path.join(ws, 'large.png'), noise);
    const input = [
      { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bin-test', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read', arguments: { path: 'small.png' } } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'read', arguments: { path: 'large.png' } } },
    ].map((m) => JSON.stringify(m)).join('\n') + '\n';
    assert.ok(!readFileSync(path.join(repo, 'dist/super-pi.cjs'), 'utf8').includes('node_modules/sharp/'), 'sharp is not bundled');
    for (const run of ['compiled without the code cache', 'compiled from the code cache']) {
      const r = spawnSync(process.execPath, [bin, '--stdio', '--workspace', ws, '--log-level', 'debug'], {
        input, encoding: 'utf8', timeout: 60_000, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, SUPERPI_HOME: home },
      });
      assert.match(r.stderr, new RegExp(run), `this start was ${run}`);
      const replies = new Map(r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: number; result?: { isError?: boolean; content: { type: string; data?: string }[] } }).map((m) => [m.id, m]));
      for (const [id, width, height] of [[1, 300, 200], [2, 1000, 700]] as const) {
        const result = replies.get(id)?.result;
        assert.is(result?.isError, undefined, `read ${id} succeeded (${run}): ${JSON.stringify(result).slice(0, 300)}`);
        const meta = await sharp(Buffer.from(result?.content[1]?.data ?? '', 'base64')).metadata();
        assert.equal([meta.width, meta.height], [width, height], `read ${id} (${run})`);
      }
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
    rmSync(ws, { recursive: true, force: true });
  }
});

test.run();
