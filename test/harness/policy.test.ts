import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { allHarnesses, harnessById } from '../../src/harness/catalog.ts';
import { decidePath, decideTool, loadout } from '../../src/harness/policy.ts';
import { toolNames } from '../../src/tools/definition.ts';

test('every harness has a rule for every tool', () => {
  for (const h of allHarnesses) for (const t of toolNames) assert.ok(h.policy[t], `${h.id} lacks a rule for ${t}`);
});

test('super-pi-code has all eight tools', () => {
  assert.equal(loadout(harnessById('super-pi-code')), [...toolNames]);
});

test('super-pi-planner cannot write, edit or run commands', () => {
  const planner = harnessById('super-pi-planner');
  for (const t of ['write', 'edit', 'bash'] as const) assert.is(decideTool(planner, t).verdict, 'deny');
  assert.equal(loadout(planner), ['read', 'grep', 'find', 'ls']);
});

test('super-pi-assistant has no filesystem tools', () => {
  const a = harnessById('super-pi-assistant');
  for (const t of ['read', 'write', 'edit', 'bash', 'grep', 'find', 'ls'] as const) assert.is(decideTool(a, t).verdict, 'deny');
});

test('super-pi-librarian never asks, since no person is present', () => {
  const lib = harnessById('super-pi-librarian');
  for (const t of toolNames) assert.is.not(decideTool(lib, t).verdict, 'ask', `${t} must not ask`);
});

test('a denial names the harness and the rule', () => {
  assert.is(decideTool(harnessById('super-pi-planner'), 'bash').rule, 'super-pi-planner: bash is denied (the planner cannot run commands)');
});

test('path rules: code may not write inside .git; the librarian writes only under .superpi/library', () => {
  const code = harnessById('super-pi-code');
  assert.is(decidePath(code, 'write', '.git/config').verdict, 'deny');
  assert.is(decidePath(code, 'write', '.gitignore').verdict, 'allow');
  // A repository nested in the workspace: its .git holds hooks and config git runs as much as the top one's.
  for (const p of ['sub/.git/hooks/pre-commit', 'a/b/.git/config', 'vendor/lib/.git', '.git']) {
    assert.is(decidePath(code, 'write', p).verdict, 'deny', p);
    assert.is(decidePath(code, 'edit', p).verdict, 'deny', p);
    assert.match(decidePath(code, 'write', p).rule, 'under any .git');
  }
  for (const p of ['sub/.gitignore', 'sub/.github/workflows/ci.yml', 'x.git/config', 'sub/a.git', 'sub/.git-blame-ignore-revs']) {
    assert.is(decidePath(code, 'write', p).verdict, 'allow', p);
  }
  assert.is(decidePath(code, 'edit', 'src/a.ts').verdict, 'allow');
  const lib = harnessById('super-pi-librarian');
  assert.is(decidePath(lib, 'write', '.superpi/library/notes.md').verdict, 'allow');
  assert.is(decidePath(lib, 'write', '.superpi/libraryX/notes.md').verdict, 'deny');
  assert.match(decidePath(lib, 'edit', 'src/a.ts').rule, /super-pi-librarian: edit under the workspace is denied/);
});

test.run();
