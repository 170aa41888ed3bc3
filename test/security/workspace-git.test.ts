// Threat model rule: no program or option is chosen by workspace content. Reading `superpi://workspace`
// (the workspace context: git branch and status) must never run a program named by the repository —
// core.fsmonitor, core.pager, core.sshCommand, hooks, diff.external, clean/process filters — nor take the
// workspace root itself for a repository (a `config` with core.worktree = . beside HEAD/objects/refs).
// Caller classes: workspace content (a cloned repository is attacker-controlled), and any caller who may
// `write` but not `bash` (a token principal; an anonymous caller may read the resource).

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, realpath, rename, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gatherWorkspaceContext } from '../../src/connection/workspace-context.ts';
import { GIT_STATUS_SKIPPED } from '../../src/tools/git-summary.ts';
import { guarded } from '../hang-guard.ts';
import { plantLooseBomb } from '../tools/fixtures/git-bombs.ts';

/** git for building fixtures only, with no user or system configuration, before any hostile key is written. */
function git(cwd: string, ...args: string[]): void {
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    stdio: 'ignore',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
  });
}

interface Scene { root: string; ws: string; markers: string }

async function scene(body: (s: Scene) => Promise<void>): Promise<void> {
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'super-pi-git-')));
  const s = { root, ws: path.join(root, 'ws'), markers: path.join(root, 'markers') };
  await mkdir(s.ws);
  await mkdir(s.markers);
  try {
    await body(s);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** A shell command that leaves the file `name` in the markers directory if anything ever runs it. */
const touch = (s: Scene, name: string): string => `touch '${path.join(s.markers, name)}'`;

async function assertNothingRan(s: Scene): Promise<void> {
  // fsmonitor and filters run synchronously inside `git status`; a little slack for any hook that forks.
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(await readdir(s.markers), [], 'a program named by the repository was run');
}

/** A committed repository with one tracked file, then modified on disk (so a status must look at its content). */
async function committedRepo(s: Scene): Promise<void> {
  git(s.ws, 'init', '-q');
  await writeFile(path.join(s.ws, 'a.txt'), 'one\n');
  await writeFile(path.join(s.ws, 'b.md'), 'doc\n');
  git(s.ws, 'add', '.');
  git(s.ws, 'commit', '-q', '-m', 'init');
  await writeFile(path.join(s.ws, 'a.txt'), 'one\ntwo\n');
  const later = new Date(Date.now() + 5000);
  await utimes(path.join(s.ws, 'b.md'), later, later);
}

test('a root that looks like a bare repository with core.worktree = . and core.fsmonitor runs nothing', () => scene(async (s) => {
  await writeFile(path.join(s.ws, 'HEAD'), 'ref: refs/heads/main\n');
  await mkdir(path.join(s.ws, 'objects'));
  await mkdir(path.join(s.ws, 'refs', 'heads'), { recursive: true });
  await writeFile(path.join(s.ws, 'config'), `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = "${touch(s, 'root-fsmonitor')}"\n`);
  await writeFile(path.join(s.ws, 'file.txt'), 'x\n');
  const context = await gatherWorkspaceContext(s.ws);
  await assertNothingRan(s);
  // The root is not a repository: only <root>/.git ever is.
  assert.is(context.git, null);
}));

test('.git/config keys that name programs (fsmonitor, pager, sshCommand, diff.external, filters) run nothing', () => scene(async (s) => {
  await committedRepo(s);
  await writeFile(path.join(s.ws, '.gitattributes'), '*.txt filter=evilclean diff=evildiff\n*.md filter=evilprocess\n');
  const config = [
    '[core]',
    `\tfsmonitor = "${touch(s, 'fsmonitor')}"`,
    `\tpager = "${touch(s, 'pager')}"`,
    `\tsshCommand = "${touch(s, 'ssh')}"`,
    '[diff]',
    `\texternal = "${touch(s, 'diff-external')}"`,
    '[diff "evildiff"]',
    `\ttextconv = "${touch(s, 'textconv')}; cat"`,
    '[filter "evilclean"]',
    `\tclean = "${touch(s, 'clean')}; cat"`,
    `\tsmudge = "${touch(s, 'smudge')}; cat"`,
    '[filter "evilprocess"]',
    `\tprocess = "${touch(s, 'process')}"`,
    '',
  ].join('\n');
  await writeFile(path.join(s.ws, '.git', 'config'), `[core]\n\trepositoryformatversion = 0\n\tbare = false\n${config}`);
  const context = await gatherWorkspaceContext(s.ws);
  await assertNothingRan(s);
  assert.is(context.git?.branch, 'main');
}));

test('hooks in .git/hooks (post-checkout, pre-commit, fsmonitor-watchman) run nothing, even with core.fsmonitor naming one', () => scene(async (s) => {
  await committedRepo(s);
  for (const hook of ['post-checkout', 'pre-commit', 'fsmonitor-watchman', 'post-index-change']) {
    const file = path.join(s.ws, '.git', 'hooks', hook);
    await writeFile(file, `#!/bin/sh\n${touch(s, `hook-${hook}`)}\n`);
    await chmod(file, 0o755);
  }
  await writeFile(path.join(s.ws, '.git', 'config'), `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = .git/hooks/fsmonitor-watchman\n\thooksPath = .git/hooks\n`);
  await gatherWorkspaceContext(s.ws);
  await assertNothingRan(s);
}));

test('a normal repository still shows its branch and short status', () => scene(async (s) => {
  await committedRepo(s);
  git(s.ws, 'checkout', '-q', '-b', 'feature');
  await writeFile(path.join(s.ws, 'new.txt'), 'new\n');
  const context = await gatherWorkspaceContext(s.ws);
  assert.is(context.git?.branch, 'feature');
  const status = context.git?.status ?? '';
  assert.ok(status.split('\n').includes(' M a.txt'), status);
  assert.ok(status.split('\n').includes('?? new.txt'), status);
  // b.md was only touched (same content): unchanged, as git says.
  assert.not.ok(status.includes('b.md'), status);
}));

test('a .git that is a file pointing elsewhere, or a symlink, is not followed', () => scene(async (s) => {
  const elsewhere = path.join(s.root, 'elsewhere');
  await mkdir(elsewhere);
  git(elsewhere, 'init', '-q');
  await writeFile(path.join(s.ws, '.git'), `gitdir: ${path.join(elsewhere, '.git')}\n`);
  assert.is((await gatherWorkspaceContext(s.ws)).git, null);
  await rm(path.join(s.ws, '.git'));
  execFileSync('ln', ['-s', path.join(elsewhere, '.git'), path.join(s.ws, '.git')]);
  assert.is((await gatherWorkspaceContext(s.ws)).git, null);
}));

/** The HEAD commit's loose object file, moved to `target` and replaced by a symlink to it. */
async function linkHeadCommit(s: Scene, target: string): Promise<void> {
  const oid = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: s.ws, encoding: 'utf8' }).trim();
  const file = path.join(s.ws, '.git', 'objects', oid.slice(0, 2), oid.slice(2));
  await rename(file, target);
  await symlink(target, file);
}

test('a symlink inside .git leading out of it, even into the work tree, is not followed: the status is skipped', () => scene(async (s) => {
  await committedRepo(s);
  await mkdir(path.join(s.ws, 'stash'));
  await linkHeadCommit(s, path.join(s.ws, 'stash', 'commit-object'));
  const status = (await gatherWorkspaceContext(s.ws)).git?.status ?? '';
  assert.ok(status.startsWith(GIT_STATUS_SKIPPED), status);
}));

test('a symlink inside .git leading outside the workspace is not followed: the status is skipped', () => scene(async (s) => {
  await committedRepo(s);
  await linkHeadCommit(s, path.join(s.root, 'elsewhere-object'));
  const status = (await gatherWorkspaceContext(s.ws)).git?.status ?? '';
  assert.ok(status.startsWith(GIT_STATUS_SKIPPED), status);
}));

test('a zlib bomb planted in .git by whoever writes the workspace is refused; the rest of the context is still there', () => scene(async (s) => {
  await committedRepo(s);
  const oid = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: s.ws, encoding: 'utf8' }).trim();
  await plantLooseBomb(s.ws, oid, 4_000_000_000, 64 * 1024 * 1024);
  const context = await guarded(gatherWorkspaceContext(s.ws), 'the workspace context with a bomb in .git');
  assert.is(context.git?.branch, 'main');
  assert.ok(context.git?.status?.startsWith(`${GIT_STATUS_SKIPPED}objects/${oid.slice(0, 2)}/`), String(context.git?.status));
  assert.ok(context.layout.includes('a.txt'), context.layout.join(','));
}));

test.run();
