// A .gitignore is workspace content, and a walk tests every entry against its rules: the rules only RE2
// matches are applied up to IGNORE_MAX_GLOB_RULES, counted from the workspace root down, and `find` and
// `grep` say once which file had rules left out. A cloned repository's 10,000 wildcard rules held a
// tool-pool thread for seconds over 1,000 files; the call now answers, with the notice.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { findTool } from '../../src/tools/find.ts';
import { grepTool } from '../../src/tools/grep.ts';
import { ToolPool } from '../../src/tools/tool-pool.ts';
import { IGNORE_MAX_GLOB_RULES } from '../../src/limits.ts';
import { guarded } from '../hang-guard.ts';
import { inSandbox } from './sandbox.ts';

/** `count` rules only RE2 matches, none of which matches a file below. */
const wildcardRules = (count: number) => Array.from({ length: count }, (_, i) => `*q${i}*z`).join('\n');

const notices = (structured: unknown) => (structured as { notices: string[] }).notices;

test('the RE2 rules of a nested .gitignore past the budget its parents used are left out, and find and grep say which file', () =>
  inSandbox({
    '.gitignore': `${wildcardRules(IGNORE_MAX_GLOB_RULES)}\n`,
    'pkg/.gitignore': '*.t[x]t\nsecret\n',
    'pkg/a.txt': 'hello', 'pkg/secret': 'hello', 'pkg/b.md': 'hello',
  }, async ({ ctx }) => {
    for (const searchPath of ['.', 'pkg']) {
      const found = await findTool({ pattern: '*', path: searchPath }, ctx);
      // `*.t[x]t` is past the budget, so a.txt is listed; `secret`, looked up by name, is still applied.
      assert.equal((found.structured as { paths: string[] }).paths.filter((p) => p.startsWith('pkg/') && p !== 'pkg/'), ['pkg/.gitignore', 'pkg/a.txt', 'pkg/b.md']);
      const [notice] = notices(found.structured).filter((n) => n.includes('.gitignore'));
      assert.ok(notice?.startsWith('1 rule of pkg/.gitignore not applied (past IGNORE_MAX_GLOB_RULES'), String(notice));
      assert.ok(found.text.endsWith(`[${notice}]`), found.text);
    }
    const grepped = await grepTool({ pattern: 'hello' }, ctx);
    assert.equal(grepped.text.split('\n').filter((l) => l.startsWith('pkg/')), ['pkg/a.txt:1: hello', 'pkg/b.md:1: hello']);
    assert.ok(notices(grepped.structured).some((n) => n.startsWith('1 rule of pkg/.gitignore not applied')), grepped.text);
  }));

test('rules within the budget are all applied, and no notice is given', () =>
  inSandbox({
    '.gitignore': `${wildcardRules(IGNORE_MAX_GLOB_RULES - 1)}\n`,
    'pkg/.gitignore': '*.t[x]t\n',
    'pkg/a.txt': '', 'pkg/b.md': '',
  }, async ({ ctx }) => {
    const found = await findTool({ pattern: '*', path: 'pkg' }, ctx);
    assert.equal(found.structured, { paths: ['pkg/.gitignore', 'pkg/b.md'], truncated: false, notices: [] });
  }));

test('a cloned .gitignore of 10,000 wildcard rules over 1,000 files: find and grep on a pool thread answer, with the notice', async () => {
  const files: Record<string, string> = { '.gitignore': `${wildcardRules(10_000)}\n` };
  for (let d = 0; d < 10; d++) for (let f = 0; f < 100; f++) files[`d${d}/f${f}.txt`] = 'needle\n';
  await inSandbox(files, async ({ ws }) => {
    const pool = new ToolPool({ maxThreads: 1 });
    try {
      const ctx = { workspace: ws, signal: new AbortController().signal };
      const found = await guarded(pool.execute('find', { pattern: '*.txt', limit: 5000 }, 'super-pi-code', ctx), 'find under 10,000 wildcard rules');
      assert.is((found.structured as { paths: string[] }).paths.length, 1000);
      const expected = `${10_000 - IGNORE_MAX_GLOB_RULES} rules of .gitignore not applied (past IGNORE_MAX_GLOB_RULES: ${IGNORE_MAX_GLOB_RULES} wildcard rules from the workspace root down)`;
      assert.ok(notices(found.structured).some((n) => n.startsWith(expected)), found.text.slice(-400));
      const grepped = await guarded(pool.execute('grep', { pattern: 'needle', limit: 5000 }, 'super-pi-code', ctx), 'grep under 10,000 wildcard rules');
      assert.ok(notices(grepped.structured).some((n) => n.startsWith(expected)), grepped.text.slice(-400));
    } finally {
      await pool.destroy();
    }
  });
});

test.run();
