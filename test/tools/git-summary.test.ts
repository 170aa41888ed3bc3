// The workspace's git branch and short status, read without running git: the same lines `git status
// --short` prints for each kind of change, a detached HEAD without a branch, and the line limit.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { mkdtemp, realpath, rm, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gitSummary } from '../../src/tools/git-summary.ts';
import { GIT_STATUS_LINES } from '../../src/limits.ts';

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

test.run();
