// Threat model rule: the server runs no code another local user could have written. The command's V8
// code cache (src/cli/code-cache.ts) is code: V8 does not defend against crafted cache data, so a cache
// file, or the directory it is in, that another user owns or may write is neither read nor written —
// the bundle is compiled from its own text instead, and the start goes on.
// Caller classes: the local stdio user (whose home holds the cache) against other local users; no
// remote caller or workspace content reaches the cache.

import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { HANG_GUARD_MS } from '../hang-guard.ts';
import { bundleHash, codeCacheFileName, foreignWritable, readCodeCache, runBundle, writeCodeCache } from '../../src/cli/code-cache.ts';

const codeCacheModule = pathToFileURL(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/cli/code-cache.ts')).href;
const BUNDLE = "'use strict';\nmodule.exports = { answer: () => 42 };\n";

function fixture(): { bundle: string; env: NodeJS.ProcessEnv; cacheDir: string; name: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'superpi-cache-trust-'));
  const bundle = path.join(dir, 'bundle.cjs');
  writeFileSync(bundle, BUNDLE);
  return { bundle, env: { SUPERPI_HOME: dir }, cacheDir: path.join(dir, 'cache'), name: codeCacheFileName(bundleHash(BUNDLE)), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

test('a cache file others may write is not read; the bundle compiles from its text and runs', () => {
  const f = fixture();
  try {
    assert.equal(runBundle(f.bundle, { env: f.env }).cache.save(), { ok: true });
    chmodSync(path.join(f.cacheDir, f.name), 0o666);
    const run = runBundle(f.bundle, { env: f.env });
    assert.is(run.cache.used, false);
    assert.match(run.cache.skipped ?? '', /cache file is writable by others \(mode 666\)/);
    assert.is((run.exports as { answer(): number }).answer(), 42);
  } finally {
    f.cleanup();
  }
});

test('a cache file past 32 MiB (a real one is ~0.5 MB) is skipped, not read into memory; the bundle still runs', () => {
  const f = fixture();
  try {
    assert.equal(runBundle(f.bundle, { env: f.env }).cache.save(), { ok: true });
    // Sparse: the size is what is checked, before any byte is read.
    truncateSync(path.join(f.cacheDir, f.name), 32 * 1024 * 1024 + 1);
    const read = readCodeCache(f.cacheDir, f.name);
    assert.ok('skipped' in read, 'the oversized cache is skipped');
    assert.match('skipped' in read ? read.skipped : '', /larger than 33554432 bytes/);
    const run = runBundle(f.bundle, { env: f.env });
    assert.is(run.cache.used, false);
    assert.is((run.exports as { answer(): number }).answer(), 42);
  } finally {
    f.cleanup();
  }
});

test('a cache directory others may write is neither read nor written', () => {
  const f = fixture();
  try {
    assert.equal(runBundle(f.bundle, { env: f.env }).cache.save(), { ok: true });
    const before = readFileSync(path.join(f.cacheDir, f.name));
    chmodSync(f.cacheDir, 0o777);
    const run = runBundle(f.bundle, { env: f.env });
    assert.is(run.cache.used, false);
    assert.match(run.cache.skipped ?? '', /cache directory .* is writable by others \(mode 777\)/);
    const saved = writeCodeCache(f.cacheDir, f.name, Buffer.from('planted'));
    assert.is(saved.ok, false);
    assert.equal(readFileSync(path.join(f.cacheDir, f.name)), before);
  } finally {
    f.cleanup();
  }
});

test('a cache file or directory another user owns is not trusted, whatever its mode', () => {
  assert.is(foreignWritable({ uid: 1000, mode: 0o100600 }, 1000), null);
  assert.is(foreignWritable({ uid: 1001, mode: 0o100600 }, 1000), 'owned by uid 1001, not 1000');
  assert.is(foreignWritable({ uid: 1000, mode: 0o100620 }, 1000), 'writable by others (mode 620)');
  assert.is(foreignWritable({ uid: 1000, mode: 0o40702 }, 1000), 'writable by others (mode 702)');
});

test('a cache that is not a regular file is not read, and a FIFO in its place does not block the start', () => {
  const f = fixture();
  try {
    mkdirSync(path.join(f.cacheDir, f.name), { recursive: true, mode: 0o700 });
    chmodSync(f.cacheDir, 0o700);
    assert.equal(readCodeCache(f.cacheDir, f.name), { skipped: 'the cache is not a regular file' });
    rmSync(path.join(f.cacheDir, f.name), { recursive: true });
    execFileSync('mkfifo', ['-m', '600', path.join(f.cacheDir, f.name)]);
    // In a child with a time limit: a blocking open would hang this process for good.
    const child = spawnSync(process.execPath, ['--import', 'tsx', '-e', `import('${codeCacheModule}').then((m) => console.log(JSON.stringify(m.readCodeCache(${JSON.stringify(f.cacheDir)}, ${JSON.stringify(f.name)}))))`], { encoding: 'utf8', timeout: HANG_GUARD_MS });
    assert.is(child.status, 0, child.stderr);
    assert.equal(JSON.parse(child.stdout), { skipped: 'the cache is not a regular file' });
  } finally {
    f.cleanup();
  }
});

test.run();
