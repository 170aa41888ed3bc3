// A test that needs something npm does not install (here chromium) is reported skipped with the reason
// outside CI and fails with that reason in CI — and a missing requirement never surfaces as a TypeError
// from a cleanup hook that hides the reason.

import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { guarded } from './hang-guard.ts';
import { inCi, MissingRequirement, needs } from './requirements.ts';

const here = path.dirname(fileURLToPath(import.meta.url));

async function observerWithoutChromium(ci: string | undefined): Promise<{ code: number | null; output: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, OBSERVER_TEST_CHROMIUM: path.join(here, 'no-such-chromium'), NO_COLOR: '1', FORCE_COLOR: '0' };
  delete env.CI;
  if (ci !== undefined) env.CI = ci;
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'e2e/observer-browser.test.ts')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const code = await guarded(new Promise<number | null>((resolve) => child.on('close', resolve)), 'observer-browser without chromium', 60_000);
  return { code, output };
}

test('CI is on for CI=true or 1, off when unset, empty, 0 or false', () => {
  assert.ok(inCi({ CI: 'true' }));
  assert.ok(inCi({ CI: '1' }));
  assert.not.ok(inCi({}));
  assert.not.ok(inCi({ CI: '' }));
  assert.not.ok(inCi({ CI: 'false' }));
  assert.not.ok(inCi({ CI: '0' }));
});

test('needs: available runs; missing outside CI skips; missing in CI throws naming what and why', () => {
  assert.ok(needs('x', true, 'unused', { CI: 'true' }));
  assert.not.ok(needs('x', false, 'not installed', {}));
  assert.throws(() => needs('chromium', false, '/usr/bin/chromium is missing', { CI: 'true' }), (err: unknown) => err instanceof MissingRequirement && /needs chromium: \/usr\/bin\/chromium is missing/.test(err.message));
});

test('observer-browser without chromium outside CI: every test reported skipped with the reason, exit code 0, no TypeError', async () => {
  const { code, output } = await observerWithoutChromium(undefined);
  assert.is(code, 0, output);
  assert.match(output, '(skipped: needs chromium: ');
  assert.match(output, 'no-such-chromium is missing');
  assert.match(output, /^ {2}Skipped: +2$/m);
  assert.not.match(output, 'TypeError');
});

test('observer-browser without chromium in CI (CI=true): fails with the reason, not a TypeError from its cleanup', async () => {
  const { code, output } = await observerWithoutChromium('true');
  assert.is.not(code, 0, output);
  assert.match(output, 'needs chromium: ');
  assert.match(output, 'no-such-chromium is missing');
  assert.not.match(output, "reading 'cleanup'");
});

test.run();
