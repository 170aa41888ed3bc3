import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { compileGlob, walkTree, type WalkEntry } from '../../src/tools/walk.ts';

async function workspace(files: Record<string, string>): Promise<string> {
  const ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'walk-test-')));
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(ws, rel)), { recursive: true });
    await writeFile(path.join(ws, rel), content);
  }
  return ws;
}

async function collect(iterable: AsyncIterable<WalkEntry>): Promise<string[]> {
  const out: string[] = [];
  for await (const e of iterable) out.push(e.kind === 'directory' ? `${e.path}/` : e.path);
  return out;
}

test('walk yields workspace-relative POSIX paths depth-first in name order, never the start itself', async () => {
  const ws = await workspace({ 'b.txt': '', 'a/z.txt': '', 'a/c/d.txt': '', '.hidden': '' });
  try {
    assert.equal(await collect(walkTree(ws, ws)), ['.hidden', 'a/', 'a/c/', 'a/c/d.txt', 'a/z.txt', 'b.txt']);
  } finally {
    await rm(ws, { recursive: true, force: true });
  }
});

test('walk always skips .git/ and node_modules/', async () => {
  const ws = await workspace({ '.git/HEAD': 'ref', 'node_modules/x/index.js': '', 'sub/node_modules/y.js': '', 'src/a.ts': '' });
  try {
    assert.equal(await collect(walkTree(ws, ws)), ['src/', 'src/a.ts', 'sub/']);
  } finally {
    await rm(ws, { recursive: true, force: true });
  }
});

test('walk honours the root .gitignore, directory patterns and negation (!keep.log)', async () => {
  const ws = await workspace({
    '.gitignore': '*.log\n!keep.log\nbuild/\n',
    'app.log': '', 'keep.log': '', 'build/out.js': '', 'src/deep.log': '', 'src/main.ts': '',
  });
  try {
    assert.equal(await collect(walkTree(ws, ws)), ['.gitignore', 'keep.log', 'src/', 'src/main.ts']);
  } finally {
    await rm(ws, { recursive: true, force: true });
  }
});

test('a nested .gitignore applies to its own subtree only and can override its parent', async () => {
  const ws = await workspace({
    '.gitignore': '*.tmp\n',
    'pkg/.gitignore': 'secret.txt\n!wanted.tmp\n',
    'pkg/secret.txt': '', 'pkg/wanted.tmp': '', 'pkg/other.tmp': '',
    'secret.txt': '', 'root.tmp': '',
  });
  try {
    assert.equal(await collect(walkTree(ws, ws)), ['.gitignore', 'pkg/', 'pkg/.gitignore', 'pkg/wanted.tmp', 'secret.txt']);
  } finally {
    await rm(ws, { recursive: true, force: true });
  }
});

test('a walk started in a subdirectory still applies the .gitignore files above it', async () => {
  const ws = await workspace({ '.gitignore': '*.gen.ts\n', 'src/a.ts': '', 'src/a.gen.ts': '', 'src/lib/b.gen.ts': '' });
  try {
    assert.equal(await collect(walkTree(ws, path.join(ws, 'src'))), ['src/a.ts', 'src/lib/']);
  } finally {
    await rm(ws, { recursive: true, force: true });
  }
});

test('a symlinked directory pointing out of the workspace is listed but not followed', async () => {
  const outside = await realpath(await mkdtemp(path.join(os.tmpdir(), 'walk-outside-')));
  const ws = await workspace({ 'in.txt': '' });
  try {
    await writeFile(path.join(outside, 'secret.txt'), 'secret');
    await symlink(outside, path.join(ws, 'escape'));
    const entries: WalkEntry[] = [];
    for await (const e of walkTree(ws, ws)) entries.push(e);
    assert.equal(entries.map((e) => [e.path, e.kind]), [['escape', 'symlink'], ['in.txt', 'file']]);
  } finally {
    await rm(ws, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  }
});

test('the walk stops at its entry cap and says so', async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 20; i++) files[`f${String(i).padStart(2, '0')}.txt`] = '';
  const ws = await workspace(files);
  try {
    const tree = walkTree(ws, ws, { maxEntries: 5 });
    const seen = await collect(tree);
    assert.is(seen.length, 5);
    assert.is(tree.capped, true);
    const whole = walkTree(ws, ws);
    assert.is((await collect(whole)).length, 20);
    assert.is(whole.capped, false);
  } finally {
    await rm(ws, { recursive: true, force: true });
  }
});

test('an aborted signal ends the walk with the abort reason', async () => {
  const ws = await workspace({ 'a.txt': '', 'b.txt': '' });
  try {
    const controller = new AbortController();
    controller.abort(new Error('stop now'));
    let thrown: unknown;
    try {
      await collect(walkTree(ws, ws, { signal: controller.signal }));
    } catch (err) {
      thrown = err;
    }
    assert.instance(thrown, Error);
    assert.is((thrown as Error).message, 'stop now');
  } finally {
    await rm(ws, { recursive: true, force: true });
  }
});

test('a walk start outside the workspace is refused', () => {
  assert.throws(() => walkTree('/tmp/ws', '/tmp/other'), /outside the workspace/);
});

test('compileGlob matches a slash-less pattern against the name at any depth', () => {
  const m = compileGlob('*.ts');
  assert.ok(m('a.ts', ''));
  assert.ok(m('src/deep/b.ts', ''));
  assert.ok(m('.config.ts', ''));
  assert.not.ok(m('src/b.tsx', ''));
});

test('compileGlob matches a pattern with / against the path from the search directory or the workspace', () => {
  const m = compileGlob('src/**/*.spec.ts');
  assert.ok(m('src/a.spec.ts', ''));
  assert.ok(m('src/x/y/a.spec.ts', ''));
  assert.not.ok(m('lib/src/a.spec.ts', ''));
  const rel = compileGlob('lib/*.ts');
  assert.ok(rel('pkg/lib/a.ts', 'pkg'));
  assert.not.ok(rel('pkg/lib/a.ts', ''));
});

test.run();
