// The tool pool on real piscina threads: same results as in-thread, and a runaway regex is stopped
// by its deadline without stalling the main thread.

import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ToolPool } from '../../src/runtime/tool-pool.ts';

let ws: string;
let pool: ToolPool;

test.before(async () => {
  ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-pool-')));
  await writeFile(path.join(ws, 'a.txt'), 'alpha\nbeta\ngamma\n');
  await writeFile(path.join(ws, 'evil.txt'), `${'a'.repeat(40)}b\n`);
  await writeFile(path.join(ws, 'big.txt'), 'line\n'.repeat(400_000));
  pool = new ToolPool({ maxThreads: 2 });
});

test.after(async () => {
  await pool.destroy();
  await rm(ws, { recursive: true, force: true });
});

const ctx = (signal = new AbortController().signal) => ({ workspace: ws, signal });

test('grep on the pool finds what grep in this thread finds', async () => {
  const r = await pool.execute('grep', { pattern: 'beta' }, 'super-pi-code', ctx());
  assert.not.ok(r.isError, r.text);
  assert.equal(r.structured, { matches: [{ path: 'a.txt', line: 2, text: 'beta' }], truncated: false });
});

test('a large read goes through the pool and is truncated with a continuation notice', async () => {
  const r = await pool.execute('read', { path: 'big.txt' }, 'super-pi-code', ctx());
  assert.not.ok(r.isError, r.text);
  assert.match(r.text, /offset=2001/);
});

test('a catastrophic regex is stopped at its deadline while the main thread keeps ticking', async () => {
  const controller = new AbortController();
  let ticks = 0;
  const ticker = setInterval(() => ticks++, 20);
  setTimeout(() => controller.abort(new Error('deadline passed')), 500);
  const started = Date.now();
  const r = await pool.execute('grep', { pattern: '^(a+)+$' }, 'super-pi-code', ctx(controller.signal));
  clearInterval(ticker);
  assert.is(r.isError, true);
  assert.match(r.text, /Stopped: deadline passed/);
  assert.ok(Date.now() - started < 3000, 'stopped promptly');
  assert.ok(ticks >= 15, `main thread should keep running (ticks: ${ticks})`);
  const after = await pool.execute('grep', { pattern: 'gamma' }, 'super-pi-code', ctx());
  assert.not.ok(after.isError, 'the pool still serves after a thread was stopped');
});

test.run();
