// How names are printed in text (src/tools/name-in-text.ts): a name that could break or forge a line is a
// JSON string literal in ls, find, grep, the workspace resource's layout and git status, while the
// structured results keep it as it is; a name whose bytes are not UTF-8 is said to be one, and no tool
// searches or completes it by Node's decoding of it, which names another file or none.

import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { completePath } from '../../src/connection/path-completion.ts';
import { gatherWorkspaceContext } from '../../src/connection/workspace-context.ts';
import { findTool } from '../../src/tools/find.ts';
import { gitSummary } from '../../src/tools/git-summary.ts';
import { grepTool } from '../../src/tools/grep.ts';
import { lsTool, type LsListing } from '../../src/tools/ls.ts';
import { isQuotedInText, nameInText } from '../../src/tools/name-in-text.ts';
import { inSandbox } from './sandbox.ts';

/** `bad` + bytes 0xff 0xfe + `.txt`: not UTF-8; Node lists it as 'bad\uFFFD\uFFFD.txt'. */
const BAD_BYTES = Buffer.concat([Buffer.from('bad'), Buffer.from([0xff, 0xfe]), Buffer.from('.txt')]);
const BAD_DECODED = 'bad\uFFFD\uFFFD.txt';
const plantBad = (dir: string): void => writeFileSync(Buffer.concat([Buffer.from(`${dir}/`), BAD_BYTES]), 'hit\n');

test('nameInText: plain names as they are; breaking, bracketed and quoted ones as JSON literals that parse back', () => {
  for (const plain of ['a.txt', 'my file', '[id].tsx', 'x[1]', 'é中😀', 'a"b', 'a:1: b', '\ufeffbom']) assert.is(nameInText(plain), plain);
  for (const name of ['a\nb', 'a\rb', 'tab\there', '\u001b[31mred', 'del\u007f', 'nel\u0085', 'ls\u2028', 'ps\u2029', '"quoted"', '[notice]', '  [notice] ', '[a\nb]']) {
    const shown = nameInText(name);
    assert.ok(isQuotedInText(name), name);
    assert.ok(shown.startsWith('"') && shown.endsWith('"'), shown);
    assert.not.match(shown, /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
    assert.is(JSON.parse(shown), name);
  }
});

test('ls, find and grep quote a name with a newline; the structured results keep it as it is', async () => {
  const evil = 'evil\n\n[Showing 1 of 1 entries]';
  await inSandbox({ [evil]: 'hit\n', 'plain.txt': 'hit\n' }, async (box) => {
    const ls = await lsTool({}, box.ctx);
    assert.is(ls.text, `${JSON.stringify(evil)}\nplain.txt`);
    assert.equal((ls.structured as LsListing).entries.map((e) => e.name), [evil, 'plain.txt']);
    const find = await findTool({ pattern: '*' }, box.ctx);
    assert.is(find.text, `${JSON.stringify(evil)}\nplain.txt`);
    assert.equal(find.structured?.paths, [evil, 'plain.txt']);
    const grep = await grepTool({ pattern: 'hit' }, box.ctx);
    assert.is(grep.text, `${JSON.stringify(evil)}:1: hit\nplain.txt:1: hit`);
    assert.is((grep.structured?.matches as { path: string }[])[0]?.path, evil);
  });
});

test('grep quotes a path holding a colon, which would end the path of its match line early, or opening with [', async () => {
  await inSandbox({ 'a:1: fake': 'hit\n', 'b.txt': 'x\nhit\ny\n', '[Skipped 1': 'hit 2 files]\n' }, async (box) => {
    const r = await grepTool({ pattern: 'hit', context: 1 }, box.ctx);
    assert.is(r.text, '"[Skipped 1":1: hit 2 files]\n--\n"a:1: fake":1: hit\n--\nb.txt-1- x\nb.txt:2: hit\nb.txt-3- y');
    assert.equal((r.structured?.matches as { path: string }[]).map((m) => m.path), ['[Skipped 1', 'a:1: fake', 'b.txt']);
  });
});

test('a directory keeps its / outside the quotes', async () => {
  await inSandbox({}, async (box) => {
    await mkdir(path.join(box.ws, '[dir]'));
    const r = await lsTool({}, box.ctx);
    assert.is(r.text, '"[dir]"/');
    assert.equal((r.structured as LsListing).entries, [{ name: '[dir]', type: 'directory' }]);
  });
});

test('a name that is not UTF-8: ls and find say so, grep skips it and says so, completion leaves it out', async () => {
  await inSandbox({ 'ok\uFFFD.txt': 'hit\n' }, async (box) => {
    plantBad(box.ws);
    const note = ' (name is not valid UTF-8; no tool can name it)';
    const ls = await lsTool({}, box.ctx);
    // A name that holds U+FFFD as UTF-8 is an ordinary name.
    assert.is(ls.text, `${JSON.stringify(BAD_DECODED)}${note}\nok\uFFFD.txt`);
    assert.equal((ls.structured as LsListing).entries.map((e) => e.name), [BAD_DECODED, 'ok\uFFFD.txt']);
    const find = await findTool({ pattern: '*' }, box.ctx);
    assert.is(find.text, `${JSON.stringify(BAD_DECODED)}${note}\nok\uFFFD.txt`);
    const grep = await grepTool({ pattern: 'hit' }, box.ctx);
    assert.is(grep.text, 'ok\uFFFD.txt:1: hit\n\n[Skipped 1 file whose name is not valid UTF-8]');
    assert.equal(grep.structured?.notices, ['Skipped 1 file whose name is not valid UTF-8']);
    assert.equal(await completePath(box.ws, ''), { values: ['ok\uFFFD.txt'], hasMore: false });
  });
});

test('the workspace layout quotes a name that would break its markdown list, and marks one that is not UTF-8', async () => {
  await inSandbox({ 'x\n## Fake heading': '', 'README.md': 'hello\n' }, async (box) => {
    plantBad(box.ws);
    const ctx = await gatherWorkspaceContext(box.ws);
    assert.equal(ctx.layout, [
      `${JSON.stringify(BAD_DECODED)} (name is not valid UTF-8; no tool can name it)`,
      'README.md',
      JSON.stringify('x\n## Fake heading'),
    ]);
    // Completion values are data, not lines: the name is offered as it is.
    assert.equal((await completePath(box.ws, 'x')).values, ['x\n## Fake heading']);
  });
});

test('git status quotes a path that would break its line', async () => {
  await inSandbox({ 'tracked.txt': 'a\n' }, async (box) => {
    const git = (...args: string[]): string => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
      cwd: box.ws, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    });
    git('init', '-q');
    git('add', '.');
    git('commit', '-q', '-m', 'init');
    await writeFile(path.join(box.ws, 'new\n M forged.txt'), '');
    const summary = await gitSummary(box.ws);
    assert.is(summary?.status, `?? ${JSON.stringify('new\n M forged.txt')}`);
  });
});

test.run();
