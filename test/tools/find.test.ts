import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Ajv } from 'ajv';
import { findDefinition } from '../../src/tools/definitions/find.ts';
import { findTool, type FindArgs } from '../../src/tools/find.ts';
import { context, failure, inSandbox, rejection } from './sandbox.ts';

const validateOutput = new Ajv().compile(findDefinition.outputSchema as object);

async function find(ws: string, args: FindArgs) {
  const outcome = await findTool(args, context(ws));
  assert.ok(validateOutput(outcome.structured), JSON.stringify(validateOutput.errors));
  return outcome;
}

test('find matches a slash-less glob against names at any depth, sorted, as workspace paths', () =>
  inSandbox({ 'z.ts': '', 'src/b.ts': '', 'src/a.ts': '', 'src/deep/c.ts': '', 'src/d.js': '', '.eslintrc.ts': '' }, async ({ ws }) => {
    const r = await find(ws, { pattern: '*.ts' });
    assert.is(r.text, '.eslintrc.ts\nsrc/a.ts\nsrc/b.ts\nsrc/deep/c.ts\nz.ts');
    assert.equal(r.structured, { paths: ['.eslintrc.ts', 'src/a.ts', 'src/b.ts', 'src/deep/c.ts', 'z.ts'], truncated: false, notices: [] });
  }));

test('find matches a glob with / against the path relative to the search directory', () =>
  inSandbox({ 'src/a.spec.ts': '', 'src/x/b.spec.ts': '', 'src/x/b.ts': '', 'lib/c.spec.ts': '' }, async ({ ws }) => {
    assert.equal((await find(ws, { pattern: 'src/**/*.spec.ts' })).structured?.paths, ['src/a.spec.ts', 'src/x/b.spec.ts']);
    assert.equal((await find(ws, { pattern: 'x/*.ts', path: 'src' })).structured?.paths, ['src/x/b.spec.ts', 'src/x/b.ts']);
  }));

test('find lists matching directories with a trailing slash', () =>
  inSandbox({ 'src/components/a.tsx': '', 'lib/components.md': '' }, async ({ ws }) => {
    assert.equal((await find(ws, { pattern: 'components*' })).structured?.paths, ['lib/components.md', 'src/components/']);
  }));

test('find respects the root and nested .gitignore files, with negation (!keep.log)', () =>
  inSandbox({
    '.gitignore': '*.log\n!keep.log\ndist/\n',
    'a.log': '', 'keep.log': '', 'dist/bundle.log': '',
    'pkg/.gitignore': 'local.log\n', 'pkg/local.log': '', 'pkg/keep.log': '',
    'node_modules/m/x.log': '', '.git/logs/HEAD.log': '',
  }, async ({ ws }) => {
    assert.equal((await find(ws, { pattern: '*.log' })).structured?.paths, ['keep.log', 'pkg/keep.log']);
  }));

test('find says "No files found matching pattern" when nothing matches', () =>
  inSandbox({ 'a.txt': '' }, async ({ ws }) => {
    const r = await find(ws, { pattern: '*.rs' });
    assert.is(r.text, 'No files found matching pattern');
    assert.equal(r.structured, { paths: [], truncated: false, notices: [] });
  }));

test('find stops at limit and tells how to get more', () =>
  inSandbox({ 'a.md': '', 'b.md': '', 'c.md': '', 'd.md': '' }, async ({ ws }) => {
    const r = await find(ws, { pattern: '*.md', limit: 2 });
    assert.is(r.text, 'a.md\nb.md\n\n[2 results limit reached. Use limit=4 for more, or refine pattern]');
    assert.equal(r.structured, { paths: ['a.md', 'b.md'], truncated: true, notices: ['2 results limit reached. Use limit=4 for more, or refine pattern'] });
  }));

test('find truncates its text output at 50KB and keeps the structured paths in step', async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 600; i++) files[`dir/${'n'.repeat(100)}${String(i).padStart(3, '0')}.txt`] = '';
  await inSandbox(files, async ({ ws }) => {
    const r = await find(ws, { pattern: '*.txt' });
    const [body] = r.text.split('\n\n');
    assert.ok(Buffer.byteLength(body as string) <= 50 * 1024);
    const shown = (body as string).split('\n').length;
    assert.ok(shown > 400 && shown < 600, `shown ${shown}`);
    assert.match(r.text, `[50.0KB output limit reached; showing ${shown} of 600 results.`);
    assert.is((r.structured?.paths as string[]).length, shown);
    assert.is(r.structured?.truncated, true);
  });
});

test('find does not follow a symlinked directory out of the workspace', () =>
  inSandbox({ 'a.ts': '' }, async ({ ws, outside }) => {
    await writeFile(path.join(outside, 'secret.ts'), '');
    await symlink(outside, path.join(ws, 'escape'));
    assert.equal((await find(ws, { pattern: '*.ts' })).structured?.paths, ['a.ts']);
    const err = await failure(findTool({ pattern: '*.ts', path: 'escape' }, context(ws)));
    assert.match(err.message, /outside the workspace/);
  }));

test('find refuses a path outside the workspace, a missing path and a file as path', () =>
  inSandbox({ 'a.ts': '' }, async ({ ws }) => {
    assert.match((await failure(findTool({ pattern: '*', path: '/etc' }, context(ws)))).message, /outside the workspace/);
    assert.is((await failure(findTool({ pattern: '*', path: 'missing' }, context(ws)))).message, 'Path not found: missing');
    assert.match((await failure(findTool({ pattern: '*', path: 'a.ts' }, context(ws)))).message, /is not a directory/);
  }));

test('find honours an aborted signal', () =>
  inSandbox({ 'a.ts': '' }, async ({ ws }) => {
    const controller = new AbortController();
    controller.abort(new Error('cancelled'));
    const thrown = await rejection(findTool({ pattern: '*' }, context(ws, { signal: controller.signal })));
    assert.is((thrown as Error).message, 'cancelled');
  }));

test('the find input schema accepts every documented parameter and rejects bad or unknown ones', () => {
  const validate = new Ajv({ strict: true }).compile(findDefinition.inputSchema);
  assert.ok(validate({ pattern: '*.ts', path: 'src', limit: 10 }), JSON.stringify(validate.errors));
  for (const bad of [{ pattern: '*.ts', limit: 0 }, { path: '.' }, { pattern: '*', type: 'file' }]) assert.not.ok(validate(bad), JSON.stringify(bad));
});

test.run();
