// The `super-pi` executable: runs (from the bundle when fresh), serves stdio with --stdio, prints help.

import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.join(repo, 'bin/super-pi.js');
const stdioExample = path.join(repo, 'examples/stdio.ts');

test('super-pi --stdio answers a request and exits when stdin closes', () => {
  const r = spawnSync(process.execPath, [bin, '--stdio', '--workspace', os.tmpdir()], {
    input: '{"jsonrpc":"2.0","id":1,"method":"ping"}\n', encoding: 'utf8', timeout: 30_000,
  });
  assert.is(r.status, 0, r.stderr);
  assert.is(r.stdout, '{"jsonrpc":"2.0","id":1,"result":{}}\n');
  assert.match(r.stderr, /bash isolation: (PID namespace|process group)/);
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

test.run();
