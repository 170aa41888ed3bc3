// What a stdio start loads before its first reply. The command is one CommonJS bundle
// (dist/super-pi.cjs, compiled from its V8 code cache), in which the code behind a dynamic `import()` —
// the HTTP and WebSocket transport with ws, isomorphic-git — is wrapped in a function that runs on first
// use; and child_process, worker_threads and crypto are loaded by their first call (scripts/build.mjs). So a
// host's stdio server evaluates none of them: checked on a real start, from the Node built-ins loaded
// when it writes its first reply. Needs dist/ (`npm test` builds it first).

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dist = path.join(repo, 'dist');

/** Preloaded into the server: at its first write to stdout, the built-ins loaded so far, and the files required, go to stderr. */
const PROBE = [
  'const write = process.stdout.write.bind(process.stdout);',
  'let seen = false;',
  'process.stdout.write = (...args) => {',
  "  if (!seen) { seen = true; process.stderr.write('LOADED ' + JSON.stringify(process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13))) + '\\n');",
  "    process.stderr.write('REQUIRED ' + JSON.stringify(Object.keys(require.cache)) + '\\n'); }",
  '  return write(...args);',
  '};',
].join('\n');

/** The files a stdio start had required when it wrote its reply (set by builtinsAtFirstReply). */
let requiredAtFirstReply: string[] = [];

/** The built-ins a stdio start had loaded when it wrote its reply to `initialize`. */
function builtinsAtFirstReply(): Set<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'superpi-stdio-start-'));
  try {
    const probe = path.join(dir, 'probe.cjs');
    writeFileSync(probe, PROBE);
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'stdio-start', version: '1' } } };
    const r = spawnSync(process.execPath, ['--require', probe, path.join(repo, 'bin/super-pi.js'), '--stdio', '--workspace', dir, '--log-level', 'debug'], {
      input: `${JSON.stringify(initialize)}\n`, encoding: 'utf8', timeout: 30_000, env: { ...process.env, SUPERPI_HOME: path.join(dir, 'home') },
    });
    assert.match(r.stdout, /^\{"jsonrpc":"2\.0","id":1,"result":\{"protocolVersion":"2025-06-18"/, r.stderr);
    // Logged by the bundle's start only: bin/super-pi.js ran dist/, not the source through tsx (dist/ older than src/).
    assert.match(r.stderr, /compiled (from|without) the code cache/, 'the start ran the bundle');
    const line = /^LOADED (.*)$/m.exec(r.stderr);
    assert.ok(line, r.stderr);
    const required = /^REQUIRED (.*)$/m.exec(r.stderr);
    assert.ok(required, r.stderr);
    requiredAtFirstReply = JSON.parse((required as RegExpExecArray)[1] as string) as string[];
    return new Set(JSON.parse((line as RegExpExecArray)[1] as string) as string[]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const loaded = builtinsAtFirstReply();

test('the probe sees the built-ins a start does load (its stdin pipe and the checkpoint codec)', () => {
  assert.ok(loaded.has('net'), 'net');
  assert.ok(loaded.has('v8'), 'v8');
});

test('a stdio start does not load the HTTP transport (node:http) or the WebSocket server', () => {
  assert.not.ok(loaded.has('http'), 'http');
  assert.not.ok(loaded.has('https'), 'https');
  assert.not.ok(loaded.has('zlib'), 'zlib (ws permessage-deflate)');
});

test('a stdio start runs no command and starts no thread: child_process and worker_threads are not loaded', () => {
  assert.not.ok(loaded.has('child_process'), 'child_process');
  assert.not.ok(loaded.has('dgram'), 'dgram (loaded with child_process)');
  assert.not.ok(loaded.has('worker_threads'), 'worker_threads');
});

test('a stdio start does not load sharp (the first image read does)', () => {
  assert.ok(requiredAtFirstReply.some((f) => f.endsWith(path.join('bin', 'super-pi.js'))), `the probe saw the command required: ${requiredAtFirstReply.join(', ')}`);
  assert.equal(requiredAtFirstReply.filter((f) => /node_modules\/(sharp|@img)\//.test(f)), []);
});

test('a stdio start does not load perf_hooks (the global `performance` is enough)', () => {
  assert.not.ok(loaded.has('perf_hooks'), 'perf_hooks');
});

test('a stdio start does not load node:crypto (random ids are made when first needed)', () => {
  assert.not.ok(loaded.has('crypto'), 'crypto');
});

test('the lazily loaded code is in the bundle, each behind the wrapper its dynamic import calls', () => {
  const bundle = readFileSync(path.join(dist, 'super-pi.cjs'), 'utf8');
  assert.ok(/"src\/transports\/http\.ts"\(\)\{/.test(bundle), 'the HTTP transport is wrapped');
  assert.ok(/\bfunction startHttpServer\b/.test(bundle), 'the HTTP transport is in the bundle');
  assert.ok(/node_modules\/ws\/lib\/websocket-server\.js"\(/.test(bundle), 'ws is a lazily required module');
  // isomorphic-git runs only in the git-status thread (a bundle of its own), never in the command's bundle.
  assert.not.ok(/node_modules\/isomorphic-git\//.test(bundle), 'isomorphic-git is not in the command bundle');
  assert.ok(/isomorphic-git/.test(readFileSync(path.join(dist, 'git-status-worker.js'), 'utf8')), 'isomorphic-git is in the git-status thread\'s bundle');
});

test.run();
