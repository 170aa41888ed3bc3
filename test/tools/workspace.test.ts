// Workspace confinement: every way out (dot-dot, absolute paths, prefix siblings, symlinks of every
// shape) is refused with a clear error, by the resolver and by each tool body; links inside still work.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { lstat, mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ToolContext } from '../../src/tools/contract.ts';
import fc from 'fast-check';
import { displayPath, isCanonicalAbsolute, isInside, isPlainRelative, openWorkspace, resolveInWorkspace, resolveInWorkspaceSync, WorkspaceError } from '../../src/tools/workspace.ts';
import { readSmallFileSync, readTool } from '../../src/tools/read.ts';
import { writeTool } from '../../src/tools/write.ts';
import { editTool } from '../../src/tools/edit.ts';
import { lsTool } from '../../src/tools/ls.ts';
import { context, failure, sandboxPerTest } from './sandbox.ts';

const OUTSIDE_MESSAGE = /is outside the workspace .*; only paths inside it can be used$/;
const LINK_MESSAGE = /is a symbolic link that leads outside the workspace; refused$/;

const box = sandboxPerTest(test);
let ctx: ToolContext;

test.before.each(async () => {
  await writeFile(path.join(box.outside, 'secret.txt'), 'top secret\n');
  // Opened the way the server opens its workspace, so the tool bodies get what they get in use.
  ctx = context(await openWorkspace(box.ws));
});

/** The message of the ToolError a refused path must give. */
const refusal = async (p: Promise<unknown>): Promise<string> => (await failure(p)).message;

async function exists(p: string): Promise<boolean> {
  try {
    await lstat(p);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

test('resolves a relative path, "." and an absolute path inside the workspace', async () => {
  await writeFile(path.join(box.ws, 'a.txt'), 'a');
  assert.is(await resolveInWorkspace(box.ws, 'a.txt'), path.join(box.ws, 'a.txt'));
  assert.is(await resolveInWorkspace(box.ws, '.'), box.ws);
  assert.is(await resolveInWorkspace(box.ws, path.join(box.ws, 'a.txt')), path.join(box.ws, 'a.txt'));
  assert.is(await resolveInWorkspace(box.ws, 'sub/../a.txt'), path.join(box.ws, 'a.txt'));
});

test('resolves a path that does not exist yet, for write', async () => {
  assert.is(await resolveInWorkspace(box.ws, 'new/dir/file.ts'), path.join(box.ws, 'new/dir/file.ts'));
});

test('refuses an empty path and one containing a NUL byte', async () => {
  assert.is(await refusal(resolveInWorkspace(box.ws, '')), 'path must be a non-empty string');
  assert.is(await refusal(resolveInWorkspace(box.ws, 'a\0b')), 'path must not contain NUL bytes');
});

test('refuses ../x', async () => {
  const message = await refusal(resolveInWorkspace(box.ws, '../outside/secret.txt'));
  assert.match(message, /^path \.\.\/outside\/secret\.txt is outside the workspace/);
  assert.match(message, OUTSIDE_MESSAGE);
});

test('refuses a/../../x', async () => {
  await mkdir(path.join(box.ws, 'a'));
  assert.match(await refusal(resolveInWorkspace(box.ws, 'a/../../outside/secret.txt')), OUTSIDE_MESSAGE);
});

test('refuses an absolute path outside the workspace', async () => {
  assert.match(await refusal(resolveInWorkspace(box.ws, path.join(box.outside, 'secret.txt'))), OUTSIDE_MESSAGE);
  assert.match(await refusal(resolveInWorkspace(box.ws, '/etc/passwd')), OUTSIDE_MESSAGE);
});

test('refuses a sibling whose name merely starts with the workspace name', async () => {
  await mkdir(path.join(box.root, 'ws-evil'));
  await writeFile(path.join(box.root, 'ws-evil/file'), 'evil');
  assert.match(await refusal(resolveInWorkspace(box.ws, path.join(box.root, 'ws-evil/file'))), OUTSIDE_MESSAGE);
  assert.is(isInside(box.ws, path.join(box.root, 'ws-evil/file')), false);
  assert.is(isInside(box.ws, path.join(box.ws, '..foo')), true);
});

test('refuses a symlink to a file outside', async () => {
  await symlink(path.join(box.outside, 'secret.txt'), path.join(box.ws, 'leak'));
  assert.match(await refusal(resolveInWorkspace(box.ws, 'leak')), LINK_MESSAGE);
});

test('refuses a path below a symlink to a directory outside', async () => {
  await symlink(box.outside, path.join(box.ws, 'door'));
  assert.match(await refusal(resolveInWorkspace(box.ws, 'door/secret.txt')), LINK_MESSAGE);
  assert.match(await refusal(resolveInWorkspace(box.ws, 'door/not-yet-there.txt')), LINK_MESSAGE);
});

test('refuses a dangling symlink whose target is outside; write through it creates nothing outside', async () => {
  await symlink(path.join(box.outside, 'planted.txt'), path.join(box.ws, 'trap'));
  assert.match(await refusal(resolveInWorkspace(box.ws, 'trap')), LINK_MESSAGE);
  assert.match(await refusal(writeTool({ path: 'trap', content: 'pwned' }, ctx)), LINK_MESSAGE);
  assert.is(await exists(path.join(box.outside, 'planted.txt')), false);
  assert.equal(await readdir(box.outside), ['secret.txt']);
});

test('refuses a symlink chain that ends outside', async () => {
  await symlink(path.join(box.outside, 'secret.txt'), path.join(box.ws, 'hop2'));
  await symlink('hop2', path.join(box.ws, 'hop1'));
  await symlink('hop1', path.join(box.ws, 'start'));
  assert.match(await refusal(resolveInWorkspace(box.ws, 'start')), LINK_MESSAGE);
});

test('refuses a relative symlink that climbs out with ..', async () => {
  await mkdir(path.join(box.ws, 'sub'));
  await symlink('../../outside/secret.txt', path.join(box.ws, 'sub/up'));
  assert.match(await refusal(resolveInWorkspace(box.ws, 'sub/up')), LINK_MESSAGE);
});

test('refuses a symlink loop as too many levels of links', async () => {
  await symlink('ping', path.join(box.ws, 'pong'));
  await symlink('pong', path.join(box.ws, 'ping'));
  await symlink('self', path.join(box.ws, 'self'));
  assert.is(await refusal(resolveInWorkspace(box.ws, 'ping')), 'path ping has too many levels of symbolic links');
  assert.is(await refusal(resolveInWorkspace(box.ws, 'self/below')), 'path self/below has too many levels of symbolic links');
});

test('a chain of 40 symlinks (Linux\'s own limit) resolves; 41 is too many levels', async () => {
  await writeFile(path.join(box.ws, 'end.txt'), 'end\n');
  // link1 -> end.txt, link2 -> link1, …: following linkN takes N hops.
  for (let i = 1; i <= 41; i++) await symlink(i === 1 ? 'end.txt' : `link${i - 1}`, path.join(box.ws, `link${i}`));
  assert.is(await resolveInWorkspace(box.ws, 'link40'), path.join(box.ws, 'end.txt'));
  assert.is(await refusal(resolveInWorkspace(box.ws, 'link41')), 'path link41 has too many levels of symbolic links');
});

test('a path ending in / or /. names a directory: a file there is "Not a directory", as in POSIX', async () => {
  await writeFile(path.join(box.ws, 'a.txt'), 'a\n');
  await mkdir(path.join(box.ws, 'dir'));
  for (const p of ['a.txt/', 'a.txt//', 'a.txt/.']) {
    assert.is(await refusal(resolveInWorkspace(box.ws, p)), `Not a directory: ${p} (a path ending in '/' names a directory, and ${p.replace(/\/+$/, '')} is a file)`);
  }
  assert.is(await resolveInWorkspace(box.ws, 'dir/'), path.join(box.ws, 'dir'));
  assert.is(await resolveInWorkspace(box.ws, 'dir/.'), path.join(box.ws, 'dir'));
  // Not yet there: nothing to contradict, so a directory may be made there.
  assert.is(await resolveInWorkspace(box.ws, 'new/'), path.join(box.ws, 'new'));
});

test('a leading @ (how a person names a file to the model) is dropped; the root shows as "."', async () => {
  await writeFile(path.join(box.ws, 'a.txt'), 'a\n');
  assert.is(await resolveInWorkspace(box.ws, '@a.txt'), path.join(box.ws, 'a.txt'));
  assert.is(await resolveInWorkspace(box.ws, 'x@a.txt'), path.join(box.ws, 'x@a.txt'));
  assert.is(displayPath(box.ws, box.ws), '.');
});

test('the workspace itself must exist and be a directory', async () => {
  const missing = path.join(box.outside, 'missing');
  const file = path.join(box.outside, 'secret.txt');
  for (const [dir, message] of [[missing, `workspace ${missing} does not exist`], [file, `workspace ${file} is not a directory`]] as const) {
    const err = await openWorkspace(dir).then(() => undefined, (e: unknown) => e);
    assert.instance(err, WorkspaceError);
    assert.is((err as WorkspaceError).name, 'WorkspaceError');
    assert.is((err as WorkspaceError).message, message);
  }
});

test('follows symlinks that stay inside the workspace: file, directory, relative with .., chains', async () => {
  await mkdir(path.join(box.ws, 'lib/deep'), { recursive: true });
  await writeFile(path.join(box.ws, 'lib/deep/util.ts'), 'export const x = 1;\n');
  await symlink('lib/deep/util.ts', path.join(box.ws, 'util-link.ts'));
  await symlink('lib', path.join(box.ws, 'lib-link'));
  await symlink('../lib/deep', path.join(box.ws, 'lib/deep-alias'));
  await symlink('util-link.ts', path.join(box.ws, 'chain.ts'));
  const target = path.join(box.ws, 'lib/deep/util.ts');
  assert.is(await resolveInWorkspace(box.ws, 'util-link.ts'), target);
  assert.is(await resolveInWorkspace(box.ws, 'lib-link/deep/util.ts'), target);
  assert.is(await resolveInWorkspace(box.ws, 'lib/deep-alias/util.ts'), target);
  assert.is(await resolveInWorkspace(box.ws, 'chain.ts'), target);
  assert.is(displayPath(box.ws, target), 'lib/deep/util.ts');
  assert.is((await readTool({ path: 'lib-link/deep/util.ts' }, ctx)).text, 'export const x = 1;\n');
  await editTool({ path: 'chain.ts', oldText: '1', newText: '2' }, ctx);
  assert.is(await readFile(target, 'utf8'), 'export const x = 2;\n');
  assert.is((await lsTool({ path: 'lib-link' }, ctx)).text, 'deep/\ndeep-alias/');
});

test('read refuses every escape', async () => {
  await symlink(path.join(box.outside, 'secret.txt'), path.join(box.ws, 'leak'));
  await symlink(box.outside, path.join(box.ws, 'door'));
  assert.match(await refusal(readTool({ path: '../outside/secret.txt' }, ctx)), OUTSIDE_MESSAGE);
  assert.match(await refusal(readTool({ path: path.join(box.outside, 'secret.txt') }, ctx)), OUTSIDE_MESSAGE);
  assert.match(await refusal(readTool({ path: 'leak' }, ctx)), LINK_MESSAGE);
  assert.match(await refusal(readTool({ path: 'door/secret.txt' }, ctx)), LINK_MESSAGE);
});

test('write refuses every escape and creates nothing outside', async () => {
  await symlink(box.outside, path.join(box.ws, 'door'));
  assert.match(await refusal(writeTool({ path: '../outside/new.txt', content: 'x' }, ctx)), OUTSIDE_MESSAGE);
  assert.match(await refusal(writeTool({ path: path.join(box.root, 'ws-evil/file'), content: 'x' }, ctx)), OUTSIDE_MESSAGE);
  assert.match(await refusal(writeTool({ path: 'door/new.txt', content: 'x' }, ctx)), LINK_MESSAGE);
  assert.match(await refusal(writeTool({ path: 'door/sub/dir/new.txt', content: 'x' }, ctx)), LINK_MESSAGE);
  assert.equal(await readdir(box.outside), ['secret.txt']);
  assert.is(await exists(path.join(box.root, 'ws-evil')), false);
});

test('edit refuses every escape and leaves the outside file unchanged', async () => {
  await symlink(path.join(box.outside, 'secret.txt'), path.join(box.ws, 'leak'));
  assert.match(await refusal(editTool({ path: '../outside/secret.txt', oldText: 'top', newText: 'no' }, ctx)), OUTSIDE_MESSAGE);
  assert.match(await refusal(editTool({ path: 'leak', oldText: 'top', newText: 'no' }, ctx)), LINK_MESSAGE);
  assert.is(await readFile(path.join(box.outside, 'secret.txt'), 'utf8'), 'top secret\n');
});

test('ls refuses every escape', async () => {
  await symlink(box.outside, path.join(box.ws, 'door'));
  assert.match(await refusal(lsTool({ path: '..' }, ctx)), OUTSIDE_MESSAGE);
  assert.match(await refusal(lsTool({ path: box.outside }, ctx)), OUTSIDE_MESSAGE);
  assert.match(await refusal(lsTool({ path: 'door' }, ctx)), LINK_MESSAGE);
});

test('the synchronous resolver and the inline read refuse every escape exactly as the asynchronous ones do', async () => {
  await mkdir(path.join(box.ws, 'sub'));
  await mkdir(path.join(box.root, 'ws-evil'));
  await writeFile(path.join(box.root, 'ws-evil/file'), 'evil');
  await writeFile(path.join(box.ws, 'inside.txt'), 'in\n');
  await symlink(path.join(box.outside, 'secret.txt'), path.join(box.ws, 'leak'));
  await symlink(box.outside, path.join(box.ws, 'door'));
  await symlink(path.join(box.outside, 'planted.txt'), path.join(box.ws, 'trap'));
  await symlink('leak', path.join(box.ws, 'hop'));
  await symlink('../../outside/secret.txt', path.join(box.ws, 'sub/up'));
  await symlink('ping', path.join(box.ws, 'pong'));
  await symlink('pong', path.join(box.ws, 'ping'));
  await symlink('inside.txt', path.join(box.ws, 'ok-link'));
  const paths = ['', 'a\0b', '../outside/secret.txt', 'sub/../../outside/secret.txt', path.join(box.outside, 'secret.txt'), '/etc/passwd',
    path.join(box.root, 'ws-evil/file'), 'leak', 'door/secret.txt', 'door/not-yet.txt', 'trap', 'hop', 'sub/up', 'ping', 'ok-link', '@inside.txt', 'missing/x'];
  const settle = (f: () => unknown): string => {
    try {
      return `ok ${JSON.stringify(f())}`;
    } catch (err) {
      return `${(err as Error).name}: ${(err as Error).message}`;
    }
  };
  const settleAsync = (p: Promise<unknown>): Promise<string> => p.then((v) => `ok ${JSON.stringify(v)}`, (err: Error) => `${err.name}: ${err.message}`);
  for (const p of paths) {
    assert.is(settle(() => resolveInWorkspaceSync(box.ws, p)), await settleAsync(resolveInWorkspace(box.ws, p)), `resolve ${JSON.stringify(p)}`);
    assert.is(settle(() => readSmallFileSync({ path: p }, box.ws, 1 << 20)), await settleAsync(readTool({ path: p }, ctx)), `read ${JSON.stringify(p)}`);
  }
  assert.is(readSmallFileSync({ path: 'ok-link' }, box.ws, 1 << 20)?.text, 'in\n');
});

// The resolver skips path.resolve and path.relative for a path of plain names (every read asks): such a
// path must be exactly what they would make of it, and anything else must take the long way.
test('property: a path taken as plain names is what path.resolve and path.relative make of it', () => {
  const part = fc.constantFrom('a', 'b.txt', '.', '..', '...', '.hidden', '..x', 'x..', '', ' ', '\\', '@', 'é');
  fc.assert(fc.property(fc.array(part, { maxLength: 6 }), fc.boolean(), fc.constantFrom('/ws', '/', '/a/b'), (parts, leading, root) => {
    const p = (leading ? '/' : '') + parts.join('/');
    if (!isPlainRelative(p)) {
      assert.ok(p === '' || p.startsWith('/') || p.split('/').some((c) => c === '' || c === '.' || c === '..'), `refused a plain path: ${p}`);
      return;
    }
    assert.is(path.relative(root, path.resolve(root, p)), p);
    assert.is(path.join(root, p), root === '/' ? `/${p}` : `${root}/${p}`);
  }), { numRuns: 2000 });
});

test('property: isInside of two canonical paths (its prefix test) answers as path.relative does, for any root and candidate', () => {
  const part = fc.constantFrom('a', 'ws', 'ws-evil', 'wsx', '.', '..', '...', '.hidden', '..x', 'x..', '', ' ', '(deleted)');
  const absolute = fc.array(part, { maxLength: 5 }).map((parts) => `/${parts.join('/')}`);
  const byRelative = (root: string, candidate: string) => {
    const rel = path.relative(root, candidate);
    return rel === '' || (!path.isAbsolute(rel) && rel !== '..' && !rel.startsWith('../'));
  };
  fc.assert(fc.property(absolute, absolute, (root, candidate) => {
    assert.is(isInside(root, candidate), byRelative(root, candidate), `${root} ⊇ ${candidate}`);
    // A candidate built below the root, and the root's sibling with the root's name as a prefix.
    assert.is(isInside(root, `${root === '/' ? '' : root}/x`), true);
    assert.is(isInside(root, `${root}-evil/x`), byRelative(root, `${root}-evil/x`));
    // Canonical means path.resolve leaves it unchanged.
    assert.is(isCanonicalAbsolute(candidate), path.resolve(candidate) === candidate, candidate);
  }), { numRuns: 2000 });
});

test('a plain path still resolves through symlinks and is refused when one leads out', async () => {
  await mkdir(path.join(box.ws, 'dir'));
  await writeFile(path.join(box.ws, 'dir', 'f.txt'), 'in\n');
  await symlink(box.outside, path.join(box.ws, 'out'));
  await symlink('dir', path.join(box.ws, 'in'));
  assert.ok(isPlainRelative('out/secret.txt') && isPlainRelative('in/f.txt'));
  assert.match(await refusal(readTool({ path: 'out/secret.txt' }, ctx)), LINK_MESSAGE);
  assert.throws(() => readSmallFileSync({ path: 'out/secret.txt' }, ctx.workspace, 1 << 20), LINK_MESSAGE);
  assert.is(readSmallFileSync({ path: 'in/f.txt' }, ctx.workspace, 1 << 20)?.text, 'in\n');
});

test.run();
