// The `super-pi` executable: runs (from the bundle when fresh), serves stdio with --stdio, prints help.

import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/super-pi.js');

test('super-pi --stdio answers a request and exits when stdin closes', () => {
  const r = spawnSync(process.execPath, [bin, '--stdio', '--workspace', os.tmpdir()], {
    input: '{"jsonrpc":"2.0","id":1,"method":"ping"}\n', encoding: 'utf8', timeout: 30_000,
  });
  assert.is(r.status, 0, r.stderr);
  assert.is(r.stdout, '{"jsonrpc":"2.0","id":1,"result":{}}\n');
});

test('super-pi --help documents every flag, on stderr', () => {
  const r = spawnSync(process.execPath, [bin, '--help'], { encoding: 'utf8', timeout: 30_000 });
  assert.is(r.status, 0);
  assert.is(r.stdout, '');
  for (const flag of ['--workspace', '--harness', '--stdio', '--host', '--port', '--tokens', '--require-auth', '--allow-anonymous-writes', '--chaos', '--threads']) {
    assert.ok(r.stderr.includes(flag), `--help mentions ${flag}`);
  }
});

test('an unknown flag is exit code 2 with the usage', () => {
  const r = spawnSync(process.execPath, [bin, '--frobnicate'], { encoding: 'utf8', timeout: 30_000 });
  assert.is(r.status, 2);
  assert.match(r.stderr, /Unknown option '--frobnicate'/);
});

test.run();
