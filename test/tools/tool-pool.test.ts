// The tool pool on real piscina threads: same results as in-thread, a call that holds its thread is
// stopped by its deadline without stalling the main thread, and one principal cannot take every thread.

import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ThreadEntry } from '../../src/actors/thread-entry.ts';
import { ToolPool } from '../../src/tools/tool-pool.ts';
import { EDIT_INLINE_MAX_BYTES, EDIT_INLINE_MAX_TEXT_CHARS } from '../../src/limits.ts';
import { guarded } from '../hang-guard.ts';

/** Pool threads whose calls hold their thread for `args.holdMs` (see fixtures/held-tool-worker.mjs). */
const heldEntry: ThreadEntry = {
  url: pathToFileURL(path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'held-tool-worker.mjs')),
  execArgv: [],
  mode: 'built',
};

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
  assert.equal(r.structured, { matches: [{ path: 'a.txt', line: 2, text: 'beta' }], truncated: false, notices: [] });
});

test('a large read goes through the pool and is truncated with a continuation notice', async () => {
  const r = await pool.execute('read', { path: 'big.txt' }, 'super-pi-code', ctx());
  assert.not.ok(r.isError, r.text);
  assert.match(r.text, /offset=2001/);
});

test('an edit of a file over EDIT_INLINE_MAX_BYTES is matched on a pool thread and written here; a refusal comes back as an error', async () => {
  const big = path.join(ws, 'edit-big.txt');
  const lines = Array.from({ length: EDIT_INLINE_MAX_BYTES / 8 + 1 }, (_, i) => `l${String(i).padStart(6, '0')}`);
  await writeFile(big, `${lines.join('\n')}\n`);
  const fresh = new ToolPool({ maxThreads: 1 });
  try {
    const r = await fresh.execute('edit', { path: 'edit-big.txt', edits: [{ oldText: 'l000007\n', newText: 'seven\n' }, { oldText: 'l008000', newText: 'end' }] }, 'super-pi-code', ctx());
    assert.not.ok(r.isError, r.text);
    assert.is(fresh.threads, 1);
    const after = await readFile(big, 'utf8');
    assert.ok(after.startsWith('l000000\nl000001\nl000002\nl000003\nl000004\nl000005\nl000006\nseven\nl000008\n'));
    assert.ok(after.includes('\nend\n') && !after.includes('l008000'));
    assert.equal([r.structured?.replacements, r.structured?.firstChangedLine], [2, 8]);
    const refused = await fresh.execute('edit', { path: 'edit-big.txt', oldText: 'l0', newText: 'x' }, 'super-pi-code', ctx());
    assert.equal([refused.isError, refused.text.slice(0, 41)], [true, 'Found more than 100 occurrences of the ol']);
  } finally {
    await fresh.destroy();
  }
});

test('however the large file is named (`@`, a link, an absolute or roundabout path), its edit is matched on a pool thread; a small one stays here', async () => {
  const lines = Array.from({ length: EDIT_INLINE_MAX_BYTES / 8 + 1 }, (_, i) => `l${String(i).padStart(6, '0')}`);
  await mkdir(path.join(ws, 'named'), { recursive: true });
  await writeFile(path.join(ws, 'named', 'large.txt'), `${lines.join('\n')}\n`);
  await writeFile(path.join(ws, 'named', 'small.txt'), 'l000007\n');
  await symlink('large.txt', path.join(ws, 'named', 'link-to-large.txt'));
  await symlink('named', path.join(ws, 'named-dir-link'));
  // Every name the body resolves to named/large.txt: the size that routes the call must be that file's.
  const spellings = ['named/large.txt', '@named/large.txt', 'named/link-to-large.txt', '@named/link-to-large.txt', 'named-dir-link/large.txt',
    path.join(ws, 'named', 'large.txt'), `@${path.join(ws, 'named', 'large.txt')}`, 'named/../named/large.txt', './named/large.txt'];
  for (const [i, spelling] of spellings.entries()) {
    const fresh = new ToolPool({ maxThreads: 1 });
    try {
      const r = await fresh.execute('edit', { path: spelling, oldText: i === 0 ? 'l000007\n' : `edit ${i - 1}\n`, newText: `edit ${i}\n` }, 'super-pi-code', ctx());
      assert.not.ok(r.isError, `${spelling}: ${r.text}`);
      assert.is(fresh.threads, 1, `the edit of ${spelling} was matched on a pool thread`);
    } finally {
      await fresh.destroy();
    }
  }
  assert.ok((await readFile(path.join(ws, 'named', 'large.txt'), 'utf8')).includes(`\nedit ${spellings.length - 1}\nl000008\n`));
  const small = new ToolPool({ maxThreads: 1 });
  try {
    const r = await small.execute('edit', { path: '@named/small.txt', oldText: 'l000007', newText: 'seven' }, 'super-pi-code', ctx());
    assert.not.ok(r.isError, r.text);
    assert.is(small.threads, 0, 'a small file is matched in the calling thread');
    const read = await small.execute('read', { path: '@big.txt' }, 'super-pi-code', ctx());
    assert.match(read.text, /offset=2001/);
    assert.is(small.threads, 1, 'a large read named with @ goes through the pool');
  } finally {
    await small.destroy();
  }
});

test('an edit of a small file whose texts pass EDIT_INLINE_MAX_TEXT_CHARS is matched on a pool thread too', async () => {
  const long = 'x'.repeat(EDIT_INLINE_MAX_TEXT_CHARS + 1);
  await writeFile(path.join(ws, 'edit-long.txt'), `head\n${long}\ntail\n`);
  const fresh = new ToolPool({ maxThreads: 1 });
  try {
    const r = await fresh.execute('edit', { path: 'edit-long.txt', oldText: long, newText: 'short' }, 'super-pi-code', ctx());
    assert.not.ok(r.isError, r.text);
    assert.is(fresh.threads, 1);
    assert.is(await readFile(path.join(ws, 'edit-long.txt'), 'utf8'), 'head\nshort\ntail\n');
  } finally {
    await fresh.destroy();
  }
});

test('a catastrophic-backtracking grep on the pool simply finishes: ^(a+)+$ over 40 a\'s and a b', async () => {
  const r = await pool.execute('grep', { pattern: '^(a+)+$', path: 'evil.txt' }, 'super-pi-code', ctx());
  assert.not.ok(r.isError, r.text);
  assert.is(r.text, 'No matches found');
});

test('a call that holds its thread is stopped at its deadline while the main thread keeps ticking', async () => {
  const held = new ToolPool({ maxThreads: 2, entry: heldEntry });
  try {
    const controller = new AbortController();
    let ticks = 0;
    let ticksAtDeadline = -1;
    const ticker = setInterval(() => ticks++, 20);
    setTimeout(() => {
      ticksAtDeadline = ticks;
      controller.abort(new Error('deadline passed'));
    }, 500);
    // The call holds its thread for ever: only the deadline ends it (the guard fails a hang).
    const r = await guarded(held.execute('grep', { id: 'forever' }, 'super-pi-code', ctx(controller.signal)), 'the held call');
    clearInterval(ticker);
    assert.is(r.isError, true);
    assert.match(r.text, /Stopped: deadline passed/);
    // Timers fire in order of expiry: a main thread that was free ran the 20 ms ticker before the 500 ms
    // deadline. How many times depends on the machine's load, so the check is that it ran at all.
    assert.ok(ticksAtDeadline >= 1, `main thread should keep running (ticks before the deadline: ${ticksAtDeadline})`);
    const after = await held.execute('grep', { id: 'next', holdMs: 0 }, 'super-pi-code', ctx());
    assert.is(after.text, 'next', 'the pool still serves after a thread was stopped');
  } finally {
    await held.destroy();
  }
});

test('by default a principal may run all pool threads but one', async () => {
  const held = new ToolPool({ maxThreads: 3, entry: heldEntry });
  assert.is(held.principalShare, 2);
  await held.destroy();
});

test('one principal cannot hold every thread: B\'s call runs while A\'s queue is still long', async () => {
  const held = new ToolPool({ maxThreads: 2, entry: heldEntry });
  try {
    const finished: string[] = [];
    const call = (principal: string, id: string, holdMs: number) =>
      held.executorFor({ principal, session: `${principal}-session` })('grep', { id, holdMs }, 'super-pi-code', ctx())
        .then((r) => { finished.push(r.text); });
    const a = [1, 2, 3, 4, 5].map((n) => call('token:alice', `A${n}`, 200));
    const b = call('token:bob', 'B', 0);
    await Promise.all([...a, b]);
    // Unshared, B would wait behind all five (two threads: A1+A2, A3+A4, A5+B) and finish last.
    assert.ok(finished.indexOf('B') <= 1, `B finished ${finished.indexOf('B') + 1}th: ${finished.join(' ')}`);
    // A's calls ran one at a time, in order.
    assert.equal(finished.filter((id) => id.startsWith('A')), ['A1', 'A2', 'A3', 'A4', 'A5']);
  } finally {
    await held.destroy();
  }
});

test('the sessions of one principal share its share (all anonymous callers are one principal): a second session waits, another principal does not', async () => {
  const held = new ToolPool({ maxThreads: 2, entry: heldEntry });
  try {
    const finished: string[] = [];
    const call = (principal: string, session: string, id: string, holdMs: number) =>
      held.executorFor({ principal, session })('grep', { id, holdMs }, 'super-pi-code', ctx()).then((r) => { finished.push(r.text); });
    const first = call('anonymous', 's1', 'anon-1', 300);
    const second = call('anonymous', 's2', 'anon-2', 0);
    const token = call('token:carol', 'c', 'carol', 0);
    await Promise.all([first, second, token]);
    assert.equal(finished, ['carol', 'anon-1', 'anon-2']);
  } finally {
    await held.destroy();
  }
});

test.run();
