// The workspace's git branch and short status, read without running git: the same lines `git status
// --short` prints for each kind of change, a detached HEAD without a branch, and the line limit; and the
// bounds of the thread it runs in: hostile objects (zlib bombs, a huge pack entry, a deep delta chain)
// refused before they are inflated, a stuck thread terminated at its deadline.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { mkdtemp, realpath, rm, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { GIT_STATUS_SKIPPED, gitSummary } from '../../src/tools/git-summary.ts';
import { GIT_DELTA_MAX_DEPTH, GIT_STATUS_DEADLINE_MS, GIT_STATUS_LINES } from '../../src/limits.ts';
import { FakeClock } from '../../src/time/fake-clock.ts';
import { guarded } from '../hang-guard.ts';
import { committedRepo, plantDeltaChain, plantLooseBomb, plantPackBomb } from './fixtures/git-bombs.ts';

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
  });
}

async function repo(body: (ws: string) => Promise<void>): Promise<void> {
  const ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'super-pi-gitsum-')));
  try {
    git(ws, 'init', '-q');
    for (const name of ['kept.txt', 'modified.txt', 'staged.txt', 'both.txt', 'deleted.txt', 'removed.txt', 'untracked-again.txt']) {
      await writeFile(path.join(ws, name), `${name}\n`);
    }
    git(ws, 'add', '.');
    git(ws, 'commit', '-q', '-m', 'init');
    await body(ws);
  } finally {
    await rm(ws, { recursive: true, force: true });
  }
}

test('short status matches git status --short for each kind of change', () => repo(async (ws) => {
  await writeFile(path.join(ws, 'modified.txt'), 'changed\n');
  await writeFile(path.join(ws, 'staged.txt'), 'changed\n');
  git(ws, 'add', 'staged.txt');
  await writeFile(path.join(ws, 'both.txt'), 'staged\n');
  git(ws, 'add', 'both.txt');
  await writeFile(path.join(ws, 'both.txt'), 'and again\n');
  await unlink(path.join(ws, 'deleted.txt'));
  git(ws, 'rm', '-q', 'removed.txt');
  git(ws, 'rm', '-q', '--cached', 'untracked-again.txt');
  await writeFile(path.join(ws, 'added.txt'), 'new\n');
  git(ws, 'add', 'added.txt');
  await writeFile(path.join(ws, 'new.txt'), 'new\n');
  const expected = git(ws, '--no-optional-locks', 'status', '--short', '--no-renames').split('\n').filter((l) => l !== '');
  const summary = await gitSummary(ws);
  assert.is(summary?.branch, 'main');
  assert.equal((summary?.status ?? '').split('\n').sort(), expected.sort());
}));

test('a detached HEAD has no branch', () => repo(async (ws) => {
  git(ws, 'checkout', '-q', '--detach');
  assert.is((await gitSummary(ws))?.branch, null);
}));

test(`more than ${GIT_STATUS_LINES} changes are cut with a count`, () => repo(async (ws) => {
  for (let i = 0; i < GIT_STATUS_LINES + 7; i++) await writeFile(path.join(ws, `n${String(i).padStart(3, '0')}.txt`), 'x');
  const lines = ((await gitSummary(ws))?.status ?? '').split('\n');
  assert.is(lines.length, GIT_STATUS_LINES + 1);
  assert.is(lines[GIT_STATUS_LINES], '... and 7 more');
}));

test('a workspace without .git has no git summary', async () => {
  const ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'super-pi-gitsum-')));
  try {
    assert.is(await gitSummary(ws), null);
  } finally {
    await rm(ws, { recursive: true, force: true });
  }
});

/** A fresh repository with one commit, for a hostile change to its HEAD commit. */
async function bare(body: (ws: string, oid: string) => Promise<void>): Promise<void> {
  const ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'super-pi-gitbomb-')));
  try {
    await body(ws, await committedRepo(ws));
  } finally {
    await rm(ws, { recursive: true, force: true });
  }
}

/** 64 MB of zeros: ~64 KB deflated. isomorphic-git alone inflates all of it, synchronously, before it checks anything. */
const BOMB_ZEROS = 64 * 1024 * 1024;

test('a loose object declaring 4 GB (a zlib bomb) is refused by its header: the status is a note naming it', () => bare(async (ws, oid) => {
  await plantLooseBomb(ws, oid, 4_000_000_000, BOMB_ZEROS);
  const summary = await guarded(gitSummary(ws), 'git status of a zlib bomb');
  assert.is(summary?.branch, 'main');
  assert.ok(summary?.status?.startsWith(GIT_STATUS_SKIPPED), String(summary?.status));
  assert.ok(summary?.status?.includes(`objects/${oid.slice(0, 2)}/${oid.slice(2)} declares`), String(summary?.status));
}));

test('a loose object whose header understates what it inflates to is stopped at what it declared', () => bare(async (ws, oid) => {
  await plantLooseBomb(ws, oid, 200, BOMB_ZEROS);
  const status = (await guarded(gitSummary(ws), 'git status of a lying header'))?.status ?? '';
  assert.ok(status.startsWith(GIT_STATUS_SKIPPED) && status.includes('inflates past'), status);
}));

test('a pack entry declaring 4 GB is refused before isomorphic-git reads the pack', () => bare(async (ws, oid) => {
  await plantPackBomb(ws, oid, 4_000_000_000, BOMB_ZEROS);
  const status = (await guarded(gitSummary(ws), 'git status of a pack bomb'))?.status ?? '';
  assert.ok(status.startsWith(GIT_STATUS_SKIPPED) && status.includes('pack-hostile.pack at offset 12 declares'), status);
}));

test(`a delta chain deeper than ${GIT_DELTA_MAX_DEPTH} is refused`, () => bare(async (ws, oid) => {
  await plantDeltaChain(ws, oid, GIT_DELTA_MAX_DEPTH + 1);
  const deep = (await guarded(gitSummary(ws), 'git status of a deep delta chain'))?.status ?? '';
  assert.ok(deep.startsWith(GIT_STATUS_SKIPPED) && deep.includes(`delta chain deeper than ${GIT_DELTA_MAX_DEPTH}`), deep);
}));

test('a shallow delta chain in a pack is read: the status is computed', () => bare(async (ws, oid) => {
  await plantDeltaChain(ws, oid, 10);
  assert.is((await guarded(gitSummary(ws), 'git status of a shallow delta chain'))?.status, '');
}));

test('a status that would inflate more in all than one status may is skipped, naming the limit', () => bare(async (ws) => {
  const status = (await guarded(gitSummary(ws, { maxInflatedBytes: 100 }), 'git status over its inflate budget'))?.status ?? '';
  assert.ok(status.startsWith(GIT_STATUS_SKIPPED) && status.includes('GIT_STATUS_MAX_INFLATED_BYTES'), status);
}));

test('a status thread stuck in synchronous code is terminated at its deadline, the caller keeps running, and the next status works', () => bare(async (ws) => {
  const clock = new FakeClock();
  const spinning = { url: pathToFileURL(path.join(import.meta.dirname, 'fixtures', 'spinning-git-worker.mjs')), execArgv: [], mode: 'built' as const };
  const pending = gitSummary(ws, { clock, entry: spinning });
  let settled = false;
  void pending.then(() => (settled = true));
  // The deadline is armed once the thread starts: wait for it (this thread is free to run meanwhile).
  for (let turns = 0; clock.pendingTimers === 0; turns++) {
    assert.ok(turns < 10_000, 'the deadline timer was never armed');
    await new Promise((r) => setTimeout(r, 1));
  }
  // Many turns of this thread's event loop pass while the status thread spins: it blocks no one.
  for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
  assert.is(settled, false);
  clock.advance(GIT_STATUS_DEADLINE_MS);
  const status = (await guarded(pending, 'a status past its deadline'))?.status ?? '';
  assert.is(status, `${GIT_STATUS_SKIPPED}it passed its ${GIT_STATUS_DEADLINE_MS} ms deadline (GIT_STATUS_DEADLINE_MS)`);
  assert.is((await guarded(gitSummary(ws), 'the status after a terminated one'))?.status, '');
}));

test.run();
