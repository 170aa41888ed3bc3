// The command's V8 code cache (src/cli/code-cache.ts): where it lives, what names it, that a missing,
// garbage or unwritable cache only means a normal compile, and that it is written once, atomically.

import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { bundleHash, CODE_CACHE_ENV, codeCacheDir, codeCacheFile, codeCacheFileName, runBundle, writeCodeCache } from '../../src/cli/code-cache.ts';
import { storeHome } from '../../src/store/location.ts';

/** A CommonJS "bundle" with enough code for V8 to cache, which says what it was given. */
const BUNDLE = [
  "'use strict';",
  'const path = require("node:path");',
  'function shout(s) { return String(s).toUpperCase() + "!"; }',
  'module.exports = { base: path.basename(__filename), shout, url: typeof require.resolve };',
].join('\n');

function fixture(): { dir: string; bundle: string; env: NodeJS.ProcessEnv; cacheDir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'superpi-code-cache-'));
  const bundle = path.join(dir, 'bundle.cjs');
  writeFileSync(bundle, BUNDLE);
  const env = { SUPERPI_HOME: path.join(dir, 'home') };
  return { dir, bundle, env, cacheDir: path.join(dir, 'home', 'cache'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

function cacheFiles(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

test('the cache directory is `cache` in the home the store uses ($SUPERPI_HOME, else ~/.super-pi)', () => {
  for (const env of [{}, { SUPERPI_HOME: '/srv/pi' }, { SUPERPI_HOME: 'relative/home' }, { SUPERPI_HOME: '' }]) {
    assert.is(codeCacheDir(env), path.join(storeHome(env), 'cache'), JSON.stringify(env));
  }
  assert.is(codeCacheDir({ SUPERPI_HOME: '/srv/pi' }), '/srv/pi/cache');
  assert.is(codeCacheDir({}), path.join(os.homedir(), '.super-pi', 'cache'));
});

test('the cache file is named by the bundle hash, the Node version and the architecture', () => {
  assert.is(codeCacheFileName('0123456789abcdef', 'v20.20.2', 'x64'), 'super-pi-0123456789abcdef-v20.20.2-x64.v8cache');
  assert.is(codeCacheFileName('0123456789abcdef0123', 'v20.20.2', 'x64'), 'super-pi-0123456789abcdef-v20.20.2-x64.v8cache', 'the first 16 digits of the hash');
  assert.is(bundleHash('a'), 'ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb');
  assert.is.not(bundleHash('a'), bundleHash('b'));
});

test('the first start compiles without a cache and writes one (owner-only directory and file); the next start uses it', () => {
  const f = fixture();
  try {
    const first = runBundle(f.bundle, { env: f.env });
    assert.equal(first.exports, { base: 'bundle.cjs', shout: (first.exports as { shout: unknown }).shout, url: 'function' });
    assert.is((first.exports as { shout(s: string): string }).shout('hi'), 'HI!');
    assert.is(first.cache.used, false);
    assert.match(first.cache.skipped ?? '', /no cache directory/);
    assert.equal(first.cache.save(), { ok: true });
    assert.equal(first.cache.save(), { ok: false, reason: 'already written' });
    const name = codeCacheFileName(bundleHash(BUNDLE));
    assert.equal(cacheFiles(f.cacheDir), [name]);
    assert.is(statSync(f.cacheDir).mode & 0o777, 0o700);
    assert.is(statSync(path.join(f.cacheDir, name)).mode & 0o777, 0o600);

    const second = runBundle(f.bundle, { env: f.env });
    assert.is(second.cache.used, true);
    assert.is(second.cache.skipped, null);
    assert.is((second.exports as { shout(s: string): string }).shout('again'), 'AGAIN!');
    assert.equal(second.cache.save(), { ok: false, reason: 'this start used the cache' });
  } finally {
    f.cleanup();
  }
});

test('a garbage cache file is rejected, the bundle still runs, and the save replaces it with one the next start uses', () => {
  const f = fixture();
  try {
    const name = codeCacheFileName(bundleHash(BUNDLE));
    mkdirSync(f.cacheDir, { recursive: true, mode: 0o700 });
    // A header for this very bundle does not make garbage a cache: V8 rejects it. (First: once this
    // process compiled the bundle, V8 takes it from its own in-memory cache and looks at no data.)
    writeFileSync(path.join(f.cacheDir, name), codeCacheFile(bundleHash(BUNDLE), Buffer.from('not a V8 code cache')), { mode: 0o600 });
    const run = runBundle(f.bundle, { env: f.env });
    assert.is(run.cache.used, false);
    assert.match(run.cache.skipped ?? '', /rejected by V8/);
    writeFileSync(path.join(f.cacheDir, name), 'not a V8 code cache', { mode: 0o600 });
    const headless = runBundle(f.bundle, { env: f.env });
    assert.is(headless.cache.used, false);
    assert.match(headless.cache.skipped ?? '', /no super-pi header/);
    assert.is((run.exports as { shout(s: string): string }).shout('x'), 'X!');
    assert.equal(run.cache.save(), { ok: true });
    assert.is.not(readFileSync(path.join(f.cacheDir, name), 'utf8'), 'not a V8 code cache');
    assert.is(runBundle(f.bundle, { env: f.env }).cache.used, true);
  } finally {
    f.cleanup();
  }
});

test('a cache made for another build is not read: its name differs', () => {
  const f = fixture();
  try {
    runBundle(f.bundle, { env: f.env }).cache.save();
    writeFileSync(f.bundle, `${BUNDLE}\nmodule.exports.extra = 1;`);
    const run = runBundle(f.bundle, { env: f.env });
    assert.is(run.cache.used, false);
    assert.match(run.cache.skipped ?? '', /no cache file/);
  } finally {
    f.cleanup();
  }
});

test('writing a cache removes those of other builds for this Node version and architecture, not those of other Nodes', () => {
  const f = fixture();
  try {
    mkdirSync(f.cacheDir, { recursive: true, mode: 0o700 });
    const otherBuild = codeCacheFileName('00000000000000aa');
    const otherNode = codeCacheFileName('00000000000000aa', 'v1.0.0');
    for (const name of [otherBuild, otherNode, 'unrelated.txt']) writeFileSync(path.join(f.cacheDir, name), 'old', { mode: 0o600 });
    assert.equal(runBundle(f.bundle, { env: f.env }).cache.save(), { ok: true });
    assert.equal(cacheFiles(f.cacheDir).sort(), [codeCacheFileName(bundleHash(BUNDLE)), otherNode, 'unrelated.txt'].sort());
  } finally {
    f.cleanup();
  }
});

test(`${CODE_CACHE_ENV}=off neither reads nor writes the cache`, () => {
  const f = fixture();
  try {
    runBundle(f.bundle, { env: f.env }).cache.save();
    const off = runBundle(f.bundle, { env: { ...f.env, [CODE_CACHE_ENV]: 'off' } });
    assert.is(off.cache.used, false);
    assert.is(off.cache.skipped, `${CODE_CACHE_ENV}=off`);
    assert.equal(off.cache.save(), { ok: false, reason: `${CODE_CACHE_ENV}=off` });
    rmSync(f.cacheDir, { recursive: true });
    runBundle(f.bundle, { env: { ...f.env, [CODE_CACHE_ENV]: 'off' } }).cache.save();
    assert.equal(cacheFiles(f.cacheDir), []);
  } finally {
    f.cleanup();
  }
});

test('a home that cannot be created (its parent is a file) is no cache and no failure: the bundle runs, the save says why', () => {
  const f = fixture();
  try {
    writeFileSync(path.join(f.dir, 'file'), '');
    const env = { SUPERPI_HOME: path.join(f.dir, 'file', 'home') };
    const run = runBundle(f.bundle, { env });
    assert.is((run.exports as { shout(s: string): string }).shout('y'), 'Y!');
    const saved = run.cache.save();
    assert.is(saved.ok, false);
    assert.match(saved.ok ? '' : saved.reason, /cannot write the code cache .*ENOTDIR/);
  } finally {
    f.cleanup();
  }
});

test('the write is atomic: no temporary file is left, and an old cache is replaced whole', () => {
  const f = fixture();
  try {
    assert.equal(writeCodeCache(f.cacheDir, 'c.v8cache', Buffer.from('one')), { ok: true });
    assert.equal(writeCodeCache(f.cacheDir, 'c.v8cache', Buffer.from('two, longer')), { ok: true });
    assert.equal(cacheFiles(f.cacheDir), ['c.v8cache']);
    assert.is(readFileSync(path.join(f.cacheDir, 'c.v8cache'), 'utf8'), 'two, longer');
  } finally {
    f.cleanup();
  }
});

test.run();
