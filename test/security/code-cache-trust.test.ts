// Threat model rule: the server runs no code another local user — or a cloned repository — could have
// written. The command's V8 code cache (src/cli/code-cache.ts) is code: V8 does not defend against crafted
// cache data and checks a cache only against its source's length, so a cache file, or any directory on
// the way to it, that another user owns or may write, a symbolic link anywhere on that path (~/.super-pi
// linked into a repository), a relative SUPERPI_HOME (a repository the server was started in), and a
// cache compiled from another source of the same length are all refused — the bundle is compiled from
// its own text instead, and the start goes on.
// Caller classes: the local stdio user (whose home holds the cache) against other local users and against
// workspace content (a repository shipping a cache); no remote caller reaches the cache.

import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { HANG_GUARD_MS } from '../hang-guard.ts';
import { bundleHash, codeCacheFileName, foreignWritable, readCodeCache, runBundle, writeCodeCache } from '../../src/cli/code-cache.ts';
import { untrustedAncestor } from '../../src/cli/trusted-path.ts';

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
    const read = readCodeCache(f.cacheDir, f.name, bundleHash(BUNDLE));
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
    assert.equal(readCodeCache(f.cacheDir, f.name, bundleHash(BUNDLE)), { skipped: 'the cache is not a regular file' });
    rmSync(path.join(f.cacheDir, f.name), { recursive: true });
    execFileSync('mkfifo', ['-m', '600', path.join(f.cacheDir, f.name)]);
    // In a child with a time limit: a blocking open would hang this process for good.
    const child = spawnSync(process.execPath, ['--import', 'tsx', '-e', `import('${codeCacheModule}').then((m) => console.log(JSON.stringify(m.readCodeCache(${JSON.stringify(f.cacheDir)}, ${JSON.stringify(f.name)}, ${JSON.stringify(bundleHash(BUNDLE))}))))`], { encoding: 'utf8', timeout: HANG_GUARD_MS });
    assert.is(child.status, 0, child.stderr);
    assert.equal(JSON.parse(child.stdout), { skipped: 'the cache is not a regular file' });
  } finally {
    f.cleanup();
  }
});

/** A bundle of BUNDLE's length that answers something else: V8 would take BUNDLE's cache for it. */
const SAME_LENGTH = BUNDLE.replace('42', '43');
const answer = (run: { exports: unknown }) => (run.exports as { answer(): number }).answer();

test('a cache compiled from another source of the same length is refused by its header, not run', () => {
  const f = fixture();
  try {
    assert.is(SAME_LENGTH.length, BUNDLE.length);
    const other = path.join(path.dirname(f.bundle), 'other.cjs');
    writeFileSync(other, SAME_LENGTH);
    // The other source's cache, under this bundle's name (a stale build hash would put it there); its
    // function compiled, so the cache holds code that answers 43.
    const planted = runBundle(other, { env: f.env, hash: bundleHash(BUNDLE) });
    assert.is(answer(planted), 43);
    assert.equal(planted.cache.save(), { ok: true });
    const run = runBundle(f.bundle, { env: f.env, hash: bundleHash(BUNDLE) });
    assert.is(run.cache.used, false, 'V8 alone would have accepted it: the lengths match');
    assert.match(run.cache.skipped ?? '', /compiled from another source/);
    assert.is(answer(run), 42);
  } finally {
    f.cleanup();
  }
});

test('a home reached through a symbolic link (~/.super-pi linked into a cloned repository) is neither read nor written', () => {
  const f = fixture();
  try {
    // A legit cache in the real directory, then the home becomes a link to it.
    assert.equal(runBundle(f.bundle, { env: f.env }).cache.save(), { ok: true });
    const root = path.dirname(f.cacheDir);
    const repo = path.join(root, 'repo');
    mkdirSync(repo, { mode: 0o700 });
    renameSync(f.cacheDir, path.join(repo, 'cache'));
    const link = path.join(root, 'linked-home');
    symlinkSync(repo, link);
    const run = runBundle(f.bundle, { env: { SUPERPI_HOME: link } });
    assert.is(run.cache.used, false);
    assert.match(run.cache.skipped ?? '', /linked-home is a symbolic link/);
    assert.match(run.cache.distrusted ?? '', /symbolic link/, 'reported as a trust refusal (a warning)');
    assert.is(answer(run), 42);
    const saved = run.cache.save();
    assert.is(saved.ok, false);
    // Deeper in the path too: the link is an ancestor of the home.
    const deeper = runBundle(f.bundle, { env: { SUPERPI_HOME: path.join(link, 'nested') } });
    assert.match(deeper.cache.skipped ?? '', /linked-home is a symbolic link/);
    assert.is(deeper.cache.save().ok, false);
    assert.throws(() => readFileSync(path.join(repo, 'nested', 'cache', f.name)), /ENOENT/, 'nothing created through the link');
  } finally {
    f.cleanup();
  }
});

test('a group- or world-writable (not sticky) directory on the way to the cache makes it untrusted', () => {
  const f = fixture();
  try {
    const shared = path.join(path.dirname(f.cacheDir), 'shared');
    mkdirSync(shared, { mode: 0o700 });
    const env = { SUPERPI_HOME: path.join(shared, 'home') };
    assert.equal(runBundle(f.bundle, { env }).cache.save(), { ok: true });
    assert.is(runBundle(f.bundle, { env }).cache.used, true, 'used while the way to it is private');
    chmodSync(shared, 0o770);
    const run = runBundle(f.bundle, { env });
    assert.is(run.cache.used, false);
    assert.match(run.cache.skipped ?? '', /shared, on the way to the cache directory, is writable by others \(mode 770\) and not sticky/);
    assert.is(answer(run), 42);
    // Sticky (as /tmp): others cannot rename or remove what is in it, so the path holds.
    chmodSync(shared, 0o1777);
    assert.is(runBundle(f.bundle, { env }).cache.used, true);
  } finally {
    f.cleanup();
  }
});

test('an ancestor directory must be the user\'s or root\'s, and writable by no one else unless sticky', () => {
  assert.is(untrustedAncestor({ uid: 1000, mode: 0o40755 }, 1000), null);
  assert.is(untrustedAncestor({ uid: 0, mode: 0o40755 }, 1000), null);
  assert.is(untrustedAncestor({ uid: 0, mode: 0o41777 }, 1000), null);
  assert.is(untrustedAncestor({ uid: 1001, mode: 0o40755 }, 1000), 'owned by uid 1001, neither 1000 nor root');
  assert.is(untrustedAncestor({ uid: 1000, mode: 0o40775 }, 1000), 'writable by others (mode 775) and not sticky');
});

test('a relative SUPERPI_HOME (a repository the server was started in could ship a cache) is neither read nor written', () => {
  const f = fixture();
  const cwd = process.cwd();
  try {
    assert.equal(runBundle(f.bundle, { env: f.env }).cache.save(), { ok: true });
    process.chdir(path.dirname(f.cacheDir));
    const run = runBundle(f.bundle, { env: { SUPERPI_HOME: '.' } });
    assert.is(run.cache.used, false, 'the cache in ./cache is not used');
    assert.match(run.cache.distrusted ?? '', /SUPERPI_HOME is a relative path \(\.\); the code cache is only used under an absolute one/);
    assert.is(answer(run), 42);
    assert.equal(run.cache.save(), { ok: false, reason: run.cache.distrusted });
  } finally {
    process.chdir(cwd);
    f.cleanup();
  }
});

test.run();
