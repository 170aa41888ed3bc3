import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { compileGlob, walkTree, type WalkEntry } from '../../src/tools/walk.ts';
import { inSandbox, rejection } from './sandbox.ts';

async function collect(iterable: AsyncIterable<WalkEntry>): Promise<string[]> {
  const out: string[] = [];
  for await (const e of iterable) out.push(e.kind === 'directory' ? `${e.path}/` : e.path);
  return out;
}

test('walk yields workspace-relative POSIX paths depth-first in name order, never the start itself', () =>
  inSandbox({ 'b.txt': '', 'a/z.txt': '', 'a/c/d.txt': '', '.hidden': '' }, async ({ ws }) => {
    assert.equal(await collect(walkTree(ws, ws)), ['.hidden', 'a/', 'a/c/', 'a/c/d.txt', 'a/z.txt', 'b.txt']);
  }));

test('walk always skips .git/ and node_modules/', () =>
  inSandbox({ '.git/HEAD': 'ref', 'node_modules/x/index.js': '', 'sub/node_modules/y.js': '', 'src/a.ts': '' }, async ({ ws }) => {
    assert.equal(await collect(walkTree(ws, ws)), ['src/', 'src/a.ts', 'sub/']);
  }));

test('walk honours the root .gitignore, directory patterns and negation (!keep.log)', () =>
  inSandbox({
    '.gitignore': '*.log\n!keep.log\nbuild/\n',
    'app.log': '', 'keep.log': '', 'build/out.js': '', 'src/deep.log': '', 'src/main.ts': '',
  }, async ({ ws }) => {
    assert.equal(await collect(walkTree(ws, ws)), ['.gitignore', 'keep.log', 'src/', 'src/main.ts']);
  }));

test('a nested .gitignore applies to its own subtree only and can override its parent', () =>
  inSandbox({
    '.gitignore': '*.tmp\n',
    'pkg/.gitignore': 'secret.txt\n!wanted.tmp\n',
    'pkg/secret.txt': '', 'pkg/wanted.tmp': '', 'pkg/other.tmp': '',
    'secret.txt': '', 'root.tmp': '',
  }, async ({ ws }) => {
    assert.equal(await collect(walkTree(ws, ws)), ['.gitignore', 'pkg/', 'pkg/.gitignore', 'pkg/wanted.tmp', 'secret.txt']);
  }));

test('a walk started in a subdirectory still applies the .gitignore files above it', () =>
  inSandbox({ '.gitignore': '*.gen.ts\n', 'src/a.ts': '', 'src/a.gen.ts': '', 'src/lib/b.gen.ts': '' }, async ({ ws }) => {
    assert.equal(await collect(walkTree(ws, path.join(ws, 'src'))), ['src/a.ts', 'src/lib/']);
  }));

test('a symlinked directory pointing out of the workspace is listed but not followed', () =>
  inSandbox({ 'in.txt': '' }, async ({ ws, outside }) => {
    await writeFile(path.join(outside, 'secret.txt'), 'secret');
    await symlink(outside, path.join(ws, 'escape'));
    const entries: WalkEntry[] = [];
    for await (const e of walkTree(ws, ws)) entries.push(e);
    assert.equal(entries.map((e) => [e.path, e.kind]), [['escape', 'symlink'], ['in.txt', 'file']]);
  }));

test('the walk stops at its entry cap and says so', () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 20; i++) files[`f${String(i).padStart(2, '0')}.txt`] = '';
  return inSandbox(files, async ({ ws }) => {
    const tree = walkTree(ws, ws, { maxEntries: 5 });
    const seen = await collect(tree);
    assert.is(seen.length, 5);
    assert.is(tree.capped, true);
    const whole = walkTree(ws, ws);
    assert.is((await collect(whole)).length, 20);
    assert.is(whole.capped, false);
  });
});

test('an aborted signal ends the walk with the abort reason', () =>
  inSandbox({ 'a.txt': '', 'b.txt': '' }, async ({ ws }) => {
    const controller = new AbortController();
    controller.abort(new Error('stop now'));
    const thrown = await rejection(collect(walkTree(ws, ws, { signal: controller.signal })));
    assert.instance(thrown, Error);
    assert.is((thrown as Error).message, 'stop now');
  }));

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

test('batches() yields the same entries in the same order, each with its name, and stops at an abort between batches', () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 600; i++) files[`d${i % 3}/f${String(i).padStart(3, '0')}.txt`] = '';
  return inSandbox(files, async ({ ws }) => {
    const batched: WalkEntry[] = [];
    for await (const batch of walkTree(ws, ws).batches()) batched.push(...batch);
    const single: WalkEntry[] = [];
    for await (const e of walkTree(ws, ws)) single.push(e);
    assert.equal(batched, single);
    assert.is(batched.length, 603);
    assert.ok(batched.every((e) => e.name === path.posix.basename(e.path) && e.absolute === path.join(ws, e.path)));
    const controller = new AbortController();
    let seen = 0;
    const thrown = await rejection((async () => {
      for await (const batch of walkTree(ws, ws, { signal: controller.signal }).batches()) {
        seen += batch.length;
        controller.abort(new Error('enough'));
      }
    })());
    assert.is((thrown as Error).message, 'enough');
    assert.ok(seen > 0 && seen < 603, String(seen));
  });
});

test('compileGlob matches a name equal to the glob, as picomatch does, and refuses an empty glob', () => {
  assert.ok(compileGlob('[id].ts')('pages/[id].ts', ''));
  assert.ok(compileGlob('[id].ts')('pages/i.ts', ''));
  assert.throws(() => compileGlob('./'), /invalid glob/);
});

test.run();
